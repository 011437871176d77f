"""Onboarding integrity through supabase-py: the database keeps the onboarding data whole whatever
the client sends. One test (or more) per rule, each failure case checked to leave the row unchanged."""
import datetime
import os
import subprocess

import httpx
import pytest
from postgrest.exceptions import APIError
from supabase import ClientOptions, create_client

from conftest import ANON_KEY, SERVICE_ROLE_KEY, URL, new_client, unique_email

DATABASE = os.environ.get("ONBOARD_DB")


def sign_up(name: str = "Ada Parent"):
    c = new_client()
    response = c.auth.sign_up({"email": unique_email("integrity"), "password": "Secret-pass-1", "options": {"data": {"full_name": name}}})
    assert response.session is not None
    return c, response.user


def service_client():
    assert SERVICE_ROLE_KEY, "scripts/e2e exports SERVICE_ROLE_KEY"
    return create_client(URL, SERVICE_ROLE_KEY, options=ClientOptions(auto_refresh_token=False, persist_session=False))


def profile(c, uid: str) -> dict:
    return c.table("user_profiles").select("*").eq("id", uid).single().execute().data


def add_child(c, name: str, goals=("patience",), topics=("school", "friends", "feelings")) -> dict:
    return c.table("children").insert({"name": name, "goals": list(goals), "topics": list(topics)}).execute().data[0]


def psql(sql: str) -> str:
    assert DATABASE, "scripts/e2e exports ONBOARD_DB"
    done = subprocess.run(["psql", DATABASE, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def patch_status(c, uid: str, body: dict) -> httpx.Response:
    """The raw PATCH the Eko app's completeOnboarding() sends, for the HTTP status."""
    token = c.auth.get_session().access_token
    return httpx.patch(
        f"{URL}/rest/v1/user_profiles?id=eq.{uid}",
        headers={"apikey": ANON_KEY, "Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        json=body,
    )


# Rule 1: entering COMPLETE by any path runs complete_onboarding()'s checks.


def test_patch_to_complete_without_children_is_refused_and_changes_nothing():
    c, user = sign_up()
    c.table("user_profiles").update({"onboarding_state": "REVIEW"}).eq("id", user.id).execute()
    before = profile(c, user.id)

    response = patch_status(c, user.id, {"onboarding_state": "COMPLETE"})
    assert response.status_code == 400
    assert response.json() == {
        "code": "P0001",
        "message": "Add at least one child before completing onboarding",
        "details": "no_children",
        "hint": "Add a child first.",
    }
    with pytest.raises(APIError) as error:
        c.table("user_profiles").update({"onboarding_state": "COMPLETE"}).eq("id", user.id).execute()
    assert error.value.code == "P0001" and error.value.details == "no_children"
    # An upsert is no way around it either.
    with pytest.raises(APIError) as error:
        c.table("user_profiles").upsert({"id": user.id, "onboarding_state": "COMPLETE"}).execute()
    assert error.value.details == "no_children"
    assert profile(c, user.id) == before


def test_patch_to_complete_checks_each_child_like_the_rpc():
    c, user = sign_up()
    add_child(c, "Maya")
    leo = add_child(c, "Leo", goals=[])
    before = profile(c, user.id)

    with pytest.raises(APIError) as by_patch:
        c.table("user_profiles").update({"onboarding_state": "COMPLETE"}).eq("id", user.id).execute()
    with pytest.raises(APIError) as by_rpc:
        c.rpc("complete_onboarding", {}).execute()
    assert by_patch.value.code == by_rpc.value.code == "P0001"
    assert by_patch.value.details == by_rpc.value.details == "goals_count"
    assert by_patch.value.message == by_rpc.value.message == "Choose 1 to 3 goals for Leo (0 chosen)"
    assert by_patch.value.hint == by_rpc.value.hint == f"Give child {leo['id']} between 1 and 3 goals."

    c.table("children").update({"goals": ["sharing"], "topics": ["school"]}).eq("id", leo["id"]).execute()
    with pytest.raises(APIError) as topics:
        c.table("user_profiles").update({"onboarding_state": "COMPLETE"}).eq("id", user.id).execute()
    assert topics.value.details == "topics_count" and "Leo" in topics.value.message and leo["id"] in topics.value.hint
    assert profile(c, user.id) == before

    # Valid children: the app's PATCH completes, and the database stamps the time (not the client).
    c.table("children").update({"topics": ["school", "friends", "sleep"]}).eq("id", leo["id"]).execute()
    done = (
        c.table("user_profiles")
        .update({"onboarding_state": "COMPLETE", "onboarding_completed_at": "2001-01-01T00:00:00Z"})
        .eq("id", user.id)
        .execute()
        .data[0]
    )
    assert done["onboarding_state"] == "COMPLETE"
    assert not done["onboarding_completed_at"].startswith("2001")


def test_service_role_may_set_complete_directly():
    c, user = sign_up()
    admin = service_client()
    done = admin.table("user_profiles").update({"onboarding_state": "COMPLETE"}).eq("id", user.id).execute().data[0]
    assert done["onboarding_state"] == "COMPLETE" and done["onboarding_completed_at"] is not None
    assert profile(c, user.id)["onboarding_state"] == "COMPLETE"


# Rule 2: COMPLETE is final for users; the service role may reset it; earlier states move freely.


def test_complete_is_final_for_the_user():
    c, user = sign_up()
    add_child(c, "Maya")
    c.rpc("complete_onboarding", {}).execute()
    before = profile(c, user.id)

    response = patch_status(c, user.id, {"onboarding_state": "NOT_STARTED"})
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "P0001" and body["details"] == "onboarding_complete_final", body
    for state in ["USER_INFO", "CHILD_INFO", "GOALS", "TOPICS", "DISPOSITIONS", "REVIEW"]:
        with pytest.raises(APIError) as error:
            c.table("user_profiles").update({"onboarding_state": state}).eq("id", user.id).execute()
        assert error.value.code == "P0001" and error.value.details == "onboarding_complete_final"
    assert profile(c, user.id) == before
    # Saving COMPLETE again is not leaving it.
    again = c.table("user_profiles").update({"onboarding_state": "COMPLETE"}).eq("id", user.id).execute().data[0]
    assert again["onboarding_completed_at"] == before["onboarding_completed_at"]


def test_service_role_may_reset_a_completed_user():
    c, user = sign_up()
    add_child(c, "Maya")
    stamp = c.rpc("complete_onboarding", {}).execute().data["onboarding_completed_at"]
    reset = service_client().table("user_profiles").update({"onboarding_state": "REVIEW"}).eq("id", user.id).execute().data[0]
    assert reset["onboarding_state"] == "REVIEW"
    assert reset["onboarding_completed_at"] == stamp


def test_states_before_complete_move_freely():
    c, user = sign_up()
    for state in ["REVIEW", "NOT_STARTED", "GOALS", "USER_INFO", "DISPOSITIONS", "CHILD_INFO", "TOPICS", "USER_INFO"]:
        rows = c.table("user_profiles").update({"onboarding_state": state}).eq("id", user.id).execute().data
        assert rows[0]["onboarding_state"] == state


# Rule 3: children.user_id defaults to the caller; timestamps are the server's.


def test_child_without_user_id_is_the_callers():
    c, user = sign_up()
    child = c.table("children").insert({"name": "Maya"}).execute().data[0]
    assert child["user_id"] == user.id
    # Several at once, and through select() as supabase-py chains it.
    rows = c.table("children").insert([{"name": "Leo"}, {"name": "Kit"}]).execute().data
    assert [r["user_id"] for r in rows] == [user.id, user.id]

    other, other_user = sign_up("Other")
    with pytest.raises(APIError) as error:
        c.table("children").insert({"user_id": other_user.id, "name": "Planted"}).execute()
    assert error.value.code == "42501"
    assert other.table("children").select("*").execute().data == []
    assert len(c.table("children").select("id").execute().data) == 3


def test_client_timestamps_are_ignored():
    c, user = sign_up()
    now = datetime.datetime.now(datetime.timezone.utc)
    child = c.table("children").insert({"name": "Maya", "created_at": "2001-01-01T00:00:00Z", "updated_at": "2001-01-01T00:00:00Z"}).execute().data[0]
    created = datetime.datetime.fromisoformat(child["created_at"])
    assert abs((created - now).total_seconds()) < 300, child["created_at"]
    assert child["updated_at"] == child["created_at"]

    changed = c.table("children").update({"created_at": "2030-01-01T00:00:00Z", "age": 4}).eq("id", child["id"]).execute().data[0]
    assert changed["created_at"] == child["created_at"] and changed["age"] == 4

    before = profile(c, user.id)
    updated = (
        c.table("user_profiles")
        .update({"created_at": "2001-01-01T00:00:00Z", "updated_at": "2001-01-01T00:00:00Z", "onboarding_state": "USER_INFO"})
        .eq("id", user.id)
        .execute()
        .data[0]
    )
    assert updated["created_at"] == before["created_at"]
    assert not updated["updated_at"].startswith("2001")


# Rule 4: completion counts the children the user may read through the family.


def test_co_parent_completes_with_the_familys_children():
    mum, mum_user = sign_up("Mum")
    dad, dad_user = sign_up("Dad")
    code = mum.rpc("create_family", {"name": "The Parents"}).execute().data["invite_code"]
    dad.rpc("join_family", {"code": code}).execute()
    kit = add_child(mum, "Kit", topics=["school"])

    # Dad created no child; the family's child counts, with its checks.
    with pytest.raises(APIError) as error:
        dad.rpc("complete_onboarding", {}).execute()
    assert error.value.details == "topics_count" and "Kit" in error.value.message
    assert profile(dad, dad_user.id)["onboarding_state"] == "NOT_STARTED"
    dad.table("children").update({"topics": ["school", "friends", "sleep"]}).eq("id", kit["id"]).execute()
    assert dad.rpc("complete_onboarding", {}).execute().data["onboarding_state"] == "COMPLETE"
    # And by the app's PATCH for Mum.
    assert mum.table("user_profiles").update({"onboarding_state": "COMPLETE"}).eq("id", mum_user.id).execute().data[0]["onboarding_state"] == "COMPLETE"

    # Someone outside the family still has no child to count.
    outsider, outsider_user = sign_up("Outsider")
    with pytest.raises(APIError) as error:
        outsider.table("user_profiles").update({"onboarding_state": "COMPLETE"}).eq("id", outsider_user.id).execute()
    assert error.value.details == "no_children"


# Rule 5: the owner's account deletion hands the family over; an empty family goes.


def test_owner_deleting_the_account_hands_the_family_to_the_earliest_member():
    owner, _ = sign_up("Owner")
    first, first_user = sign_up("First")
    second, _ = sign_up("Second")
    code = owner.rpc("create_family", {"name": "Handed Over"}).execute().data["invite_code"]
    first.rpc("join_family", {"code": code}).execute()
    second.rpc("join_family", {"code": code}).execute()
    child = add_child(second, "Kit")

    owner.rpc("delete_account", {}).execute()
    family = first.rpc("get_family", {}).execute().data
    roles = {m["user_id"]: m["role"] for m in family["members"]}
    assert roles[first_user.id] == "owner" and list(roles.values()).count("owner") == 1 and len(roles) == 2
    # The new owner does what only an owner can.
    renewed = first.rpc("regenerate_invite_code", {}).execute().data
    assert renewed["invite_code"] != code
    assert [r["id"] for r in first.table("children").delete().eq("id", child["id"]).execute().data] == [child["id"]]
    # The other member still cannot.
    with pytest.raises(APIError) as error:
        second.rpc("regenerate_invite_code", {}).execute()
    assert error.value.details == "not_family_owner"


def test_last_members_account_deletion_deletes_the_family():
    owner, _ = sign_up("Owner")
    member, _ = sign_up("Member")
    family = owner.rpc("create_family", {"name": "Soon Gone"}).execute().data
    member.rpc("join_family", {"code": family["invite_code"]}).execute()
    admin = service_client()
    owner.rpc("delete_account", {}).execute()
    assert admin.table("families").select("id").eq("id", family["id"]).execute().data == [{"id": family["id"]}]
    member.rpc("delete_account", {}).execute()
    assert admin.table("families").select("id").eq("id", family["id"]).execute().data == []


# Rule 6: one read of the profile with all the user's children; children(*) unchanged.


def test_profile_with_all_children_in_one_read():
    mum, mum_user = sign_up("Mum")
    dad, _ = sign_up("Dad")
    code = mum.rpc("create_family", {"name": "The Parents"}).execute().data["invite_code"]
    dad.rpc("join_family", {"code": code}).execute()
    kit = add_child(mum, "Kit")
    ada = add_child(dad, "Ada")
    mum.table("user_profiles").update({"current_child_id": kit["id"]}).eq("id", mum_user.id).execute()

    row = mum.table("user_profiles").select("*, all_children(*)").eq("id", mum_user.id).single().execute().data
    assert [c["id"] for c in row["all_children"]] == [kit["id"], ada["id"]]
    assert row["all_children"][1]["name"] == "Ada"
    # children(*) still follows current_child_id: the current child, as before.
    current = mum.table("user_profiles").select("*, children(*)").eq("id", mum_user.id).single().execute().data
    assert current["children"]["id"] == kit["id"]
    # After completion the current child is gone, the children are not.
    mum.rpc("complete_onboarding", {}).execute()
    both = mum.table("user_profiles").select("children(name), all_children(name)").eq("id", mum_user.id).single().execute().data
    assert both == {"children": None, "all_children": [{"name": "Kit"}, {"name": "Ada"}]}
    # Someone else reads none of it.
    other, _ = sign_up("Other")
    assert other.table("user_profiles").select("id, all_children(*)").eq("id", mum_user.id).execute().data == []


# Rule 7: account deletion keeps the onboarding analytics without the person.


# The analytics schema is not exposed through REST: this test reads it with psql (scripts/e2e
# exports ONBOARD_DB; the replicas run does not).
@pytest.mark.skipif(not DATABASE, reason="no database URL (ONBOARD_DB) in this run")
def test_account_deletion_keeps_the_analytics_without_the_person():
    c, user = sign_up()
    for state in ["USER_INFO", "CHILD_INFO", "GOALS", "TOPICS", "DISPOSITIONS", "REVIEW"]:
        c.table("user_profiles").update({"onboarding_state": state}).eq("id", user.id).execute()
    add_child(c, "Maya")
    c.rpc("complete_onboarding", {}).execute()

    # The window holds this user's sign-up alone (the suite runs one test at a time).
    signed_up = psql(f"SELECT created_at FROM auth.users WHERE id = '{user.id}'")
    window = f"'{signed_up}'::timestamptz, '{signed_up}'::timestamptz + interval '1 microsecond'"
    questions = [
        f"SELECT json_agg(f ORDER BY f.step_no) FROM analytics.funnel({window}, 'provider') f",
        f"SELECT json_agg(f ORDER BY f.step_no) FROM analytics.drop_off({window}, NULL, 0) f",
        f"SELECT json_agg(f ORDER BY f.step_no) FROM analytics.step_durations({window}, 'day') f",
        f"SELECT json_agg(f ORDER BY f.step_no) FROM analytics.state_counts({window}, 'week') f",
        f"SELECT json_agg(f) FROM analytics.children_per_completed_user({window}, NULL) f",
        f"SELECT count(*) FROM analytics.onboarding_transitions WHERE at >= '{signed_up}'",
    ]
    before = [psql(q) for q in questions]
    assert '"step":"COMPLETE","users_reached":1' in before[0].replace(" ", ""), before[0]
    history = psql(f"SELECT count(*) FROM analytics.onboarding_transitions WHERE user_id = '{user.id}'")
    assert history == "8"

    c.rpc("delete_account", {}).execute()

    assert psql(f"SELECT count(*) FROM auth.users WHERE id = '{user.id}'") == "0"
    # No row keeps the user id or the e-mail; the history is under a random id of former_users.
    assert psql(f"SELECT count(*) FROM analytics.onboarding_transitions WHERE user_id = '{user.id}'") == "0"
    assert psql(f"SELECT count(*) FROM analytics.onboarding_progress WHERE user_id = '{user.id}'") == "0"
    kept = psql(
        "SELECT json_build_object('t', (SELECT json_agg(t) FROM analytics.onboarding_transitions t),"
        " 'p', (SELECT json_agg(p) FROM analytics.onboarding_progress p), 'f', (SELECT json_agg(f) FROM analytics.former_users f))"
    )
    assert user.id not in kept and user.email not in kept
    former = psql(
        "SELECT f.id FROM analytics.former_users f JOIN analytics.onboarding_transitions t ON t.user_id = f.id"
        f" WHERE f.signed_up_at = '{signed_up}' GROUP BY f.id HAVING count(*) = 8"
    )
    assert former and former != user.id
    # Every question answers as before.
    assert [psql(q) for q in questions] == before
