"""The Eko seed app's onboarding, call for call, through supabase-py."""
import datetime

import httpx
import pytest
from postgrest.exceptions import APIError
from supabase_auth.errors import AuthApiError

from conftest import ANON_KEY, URL, new_client, unique_email


def test_full_onboarding_flow(signed_up):
    c, user, password = signed_up
    uid = user.id

    # The trigger created the profile.
    profile = c.table("user_profiles").select("*").eq("id", uid).single().execute().data
    assert profile["onboarding_state"] == "NOT_STARTED"
    assert profile["current_child_id"] is None
    assert "T" in profile["created_at"] and profile["created_at"].endswith("+00:00")

    # Step 1: user info → display name in user metadata, state advances.
    updated = c.auth.update_user({"data": {"full_name": "Ada Lovelace"}})
    assert updated.user.user_metadata["full_name"] == "Ada Lovelace"
    rows = c.table("user_profiles").update({"onboarding_state": "USER_INFO"}).eq("id", uid).execute().data
    assert rows[0]["onboarding_state"] == "USER_INFO"
    c.table("user_profiles").update({"onboarding_state": "CHILD_INFO"}).eq("id", uid).execute()

    # Step 2: child info — insert(...).select().single() answers one object.
    child = (
        c.table("children")
        .insert({"user_id": uid, "name": "Maya", "age": 6, "birthday": "2019-05-14"})
        .select("*")
        .single()
        .execute()
        .data
    )
    assert child["name"] == "Maya" and child["birthday"] == "2019-05-14"
    assert child["goals"] == [] and child["topics"] == []
    assert child["temperament_talkative"] == 5
    child_id = child["id"]

    c.table("user_profiles").update({"onboarding_state": "GOALS", "current_child_id": child_id}).eq("id", uid).execute()
    # Steps 3–5: goals, topics, dispositions.
    c.table("children").update({"goals": ["patience", "sharing"]}).eq("id", child_id).execute()
    c.table("user_profiles").update({"onboarding_state": "TOPICS"}).eq("id", uid).execute()
    c.table("children").update({"topics": ["feelings", "school", "friends"]}).eq("id", child_id).execute()
    c.table("user_profiles").update({"onboarding_state": "DISPOSITIONS"}).eq("id", uid).execute()
    got = (
        c.table("children")
        .update({"temperament_talkative": 7, "temperament_sensitivity": 3, "temperament_accountability": 9})
        .eq("id", child_id)
        .execute()
        .data
    )
    assert got[0]["temperament_accountability"] == 9
    c.table("user_profiles").update({"onboarding_state": "REVIEW"}, returning="minimal").eq("id", uid).execute()

    # The RPC the app reads at launch.
    rows = c.rpc("get_user_with_profile", {"p_user_id": uid}).execute().data
    assert rows == [
        {
            "user_id": uid,
            "email": user.email,
            "display_name": "Ada Lovelace",
            "onboarding_state": "REVIEW",
            "current_child_id": child_id,
        }
    ]

    # Completion is recorded by the server, atomically.
    c.rpc("complete_onboarding", {}).execute()
    profile = c.table("user_profiles").select("*").eq("id", uid).single().execute().data
    assert profile["onboarding_state"] == "COMPLETE"
    assert profile["current_child_id"] is None
    assert profile["onboarding_completed_at"] is not None

    # Resume after logout: sign in again and find the state.
    c.auth.sign_out()
    again = new_client()
    again.auth.sign_in_with_password({"email": user.email, "password": password})
    state = again.table("user_profiles").select("onboarding_state").eq("id", uid).single().execute().data
    assert state == {"onboarding_state": "COMPLETE"}


def test_second_user_sees_and_changes_nothing(signed_up):
    a, user_a, _ = signed_up
    child = a.table("children").insert({"user_id": user_a.id, "name": "Only A's"}).execute().data[0]

    b = new_client()
    b.auth.sign_up({"email": unique_email("b"), "password": "Secret-pass-2"})
    assert b.table("children").select("*").execute().data == []
    assert b.table("user_profiles").select("*").eq("id", user_a.id).execute().data == []
    assert b.table("children").update({"name": "stolen"}).eq("id", child["id"]).execute().data == []
    assert b.table("children").delete().eq("id", child["id"]).execute().data == []
    with pytest.raises(APIError) as error:
        b.table("children").insert({"user_id": user_a.id, "name": "planted"}).execute()
    assert error.value.code == "42501"
    assert b.rpc("get_user_with_profile", {"p_user_id": user_a.id}).execute().data == []
    # A's row is untouched.
    assert a.table("children").select("name").eq("id", child["id"]).single().execute().data == {"name": "Only A's"}


def test_anonymous_first_then_upgrade_in_place():
    c = new_client()
    response = c.auth.sign_in_anonymously()
    assert response.user.is_anonymous is True
    uid = response.user.id
    c.table("children").insert({"user_id": uid, "name": "Saved before sign-up"}).execute()

    email = unique_email("upgrade")
    upgraded = c.auth.update_user({"email": email, "password": "Upgrade-pass-1"})
    assert upgraded.user.id == uid
    assert upgraded.user.is_anonymous is False
    assert upgraded.user.email == email

    fresh = new_client()
    fresh.auth.sign_in_with_password({"email": email, "password": "Upgrade-pass-1"})
    names = [row["name"] for row in fresh.table("children").select("name").execute().data]
    assert names == ["Saved before sign-up"]


def test_refresh_rotates_and_sign_out_revokes(signed_up):
    c, _, _ = signed_up
    first = c.auth.get_session()
    refreshed = c.auth.refresh_session()
    assert refreshed.session.refresh_token != first.refresh_token
    assert c.auth.get_user().user.id == first.user.id
    c.auth.sign_out()
    other = new_client()
    with pytest.raises(AuthApiError) as error:
        other.auth.refresh_session(refreshed.session.refresh_token)
    assert error.value.code == "refresh_token_not_found"


def test_auth_errors_have_gotrue_codes(signed_up):
    _, user, _ = signed_up
    c = new_client()
    with pytest.raises(AuthApiError) as error:
        c.auth.sign_in_with_password({"email": user.email, "password": "wrong"})
    assert error.value.code == "invalid_credentials" and error.value.status == 400
    with pytest.raises(AuthApiError) as error:
        c.auth.sign_up({"email": user.email, "password": "Secret-pass-1"})
    assert error.value.code == "user_already_exists"


def test_rest_errors_have_postgrest_codes(signed_up):
    c, user, _ = signed_up
    with pytest.raises(APIError) as error:
        c.table("children").select("*").eq("id", "00000000-0000-4000-8000-000000000000").single().execute()
    assert error.value.code == "PGRST116"
    with pytest.raises(APIError) as error:
        c.table("children").insert({"user_id": user.id, "name": "x", "temperament_talkative": 11}).execute()
    assert error.value.code == "23514"
    tomorrow = (datetime.date.today() + datetime.timedelta(days=2)).isoformat()
    with pytest.raises(APIError) as error:
        c.table("children").insert({"user_id": user.id, "name": "x", "birthday": tomorrow}).execute()
    assert error.value.code == "23514"
    with pytest.raises(APIError) as error:
        c.table("user_profiles").update({"onboarding_state": "NOPE"}).eq("id", user.id).execute()
    assert error.value.code == "23514"
    with pytest.raises(APIError) as error:
        c.rpc("complete_onboarding", {}).execute()  # no child yet
    assert error.value.code is not None and error.value.message


def test_counts_and_head(signed_up):
    c, user, _ = signed_up
    c.table("children").insert([{"user_id": user.id, "name": n} for n in ("A", "B", "C")]).execute()
    counted = c.table("children").select("*", count="exact").order("name").limit(2).execute()
    assert counted.count == 3 and [r["name"] for r in counted.data] == ["A", "B"]
    head = c.table("children").select("*", count="exact", head=True).execute()
    assert head.count == 3
    filtered = c.table("children").select("name").in_("name", ["A", "C"]).order("name", desc=True).execute()
    assert [r["name"] for r in filtered.data] == ["C", "A"]


def test_delete_account_removes_everything(signed_up):
    c, user, password = signed_up
    c.table("children").insert({"user_id": user.id, "name": "Gone soon"}).execute()
    c.rpc("delete_account", {}).execute()
    fresh = new_client()
    with pytest.raises(AuthApiError):
        fresh.auth.sign_in_with_password({"email": user.email, "password": password})


def test_anon_key_alone_reads_nothing_and_writes_nothing():
    c = new_client()
    assert c.table("children").select("*").execute().data == []
    with pytest.raises(APIError) as error:
        c.table("children").insert({"user_id": "00000000-0000-4000-8000-000000000000", "name": "x"}).execute()
    assert error.value.code == "42501"
    # No API key at all: the gateway's answer.
    response = httpx.get(f"{URL}/rest/v1/children")
    assert response.status_code == 401
    assert response.json()["message"] == "No API key found in request"
