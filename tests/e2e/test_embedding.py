"""Resource embedding through supabase-py: a profile with its current child, a family with its members;
JSON paths, spreads and counts as supabase-py writes them; writes answered with their embeds."""
import pytest
from postgrest.exceptions import APIError

from conftest import new_client, unique_email


def sign_up(name: str):
    c = new_client()
    response = c.auth.sign_up({"email": unique_email("emb"), "password": "Secret-pass-1", "options": {"data": {"full_name": name}}})
    assert response.session is not None
    return c, response.user.id


def test_profile_with_its_current_child():
    mum, mum_id = sign_up("Mum")
    child = mum.table("children").insert({"user_id": mum_id, "name": "Kit", "age": 5}).execute().data[0]
    mum.table("user_profiles").update({"current_child_id": child["id"]}).eq("id", mum_id).execute()
    row = mum.table("user_profiles").select("*, children!current_child_id(*)").eq("id", mum_id).single().execute().data
    assert row["id"] == mum_id
    assert row["children"]["id"] == child["id"] and row["children"]["name"] == "Kit" and row["children"]["age"] == 5
    # Someone else embeds nothing of it.
    other, _ = sign_up("Other")
    assert other.table("user_profiles").select("id, children!current_child_id(name)").eq("id", mum_id).execute().data == []


def test_family_with_its_members():
    mum, mum_id = sign_up("Mum")
    dad, dad_id = sign_up("Dad")
    outsider, _ = sign_up("Outsider")
    code = mum.rpc("create_family", {"name": "The Parents"}).execute().data["invite_code"]
    dad.rpc("join_family", {"code": code}).execute()
    family = dad.table("families").select("name, family_members(user_id, role)").execute().data
    assert len(family) == 1 and family[0]["name"] == "The Parents"
    members = sorted((m["user_id"], m["role"]) for m in family[0]["family_members"])
    assert members == sorted([(mum_id, "owner"), (dad_id, "parent")])
    owners = dad.table("families").select("name, family_members!inner(user_id)").eq("family_members.role", "owner").execute().data
    assert owners == [{"name": "The Parents", "family_members": [{"user_id": mum_id}]}]
    assert outsider.table("families").select("*, family_members(*)").execute().data == []


def test_json_paths_spreads_and_counts():
    mum, mum_id = sign_up("Mum")
    child = mum.table("children").insert({"user_id": mum_id, "name": "Kit", "age": 5, "goals": ["patience", "kindness"]}).execute().data[0]
    mum.table("user_profiles").update({"current_child_id": child["id"]}).eq("id", mum_id).execute()
    # A JSON path into the text[] column, in select (aliased) and in a filter.
    rows = mum.table("children").select("name, first_goal:goals->>0").eq("goals->>1", "kindness").execute().data
    assert rows == [{"name": "Kit", "first_goal": "patience"}]
    assert mum.table("children").select("goals->0").execute().data == [{"goals": "patience"}]
    # The current child spread into the profile.
    profile = mum.table("user_profiles").select("id, ...children!current_child_id(child_name:name, age)").execute().data
    assert profile == [{"id": mum_id, "child_name": "Kit", "age": 5}]
    # `rel(count)` counts the embedded rows the caller may see; someone else counts nothing.
    assert mum.table("children").select("name, user_profiles(count)").execute().data == [{"name": "Kit", "user_profiles": [{"count": 1}]}]
    other, _ = sign_up("Other")
    assert other.table("children").select("count").execute().data == [{"count": 0}]
    # Aggregate functions are off unless PGRST_DB_AGGREGATES_ENABLED=true, as in PostgREST.
    with pytest.raises(APIError) as refused:
        mum.table("children").select("age.sum()").execute()
    assert refused.value.code == "PGRST123"


def test_writes_answer_with_their_embeds():
    """`.insert(…).select("*, rel(*)")` and `.update(…).select(…)` as supabase-py sends them (POST/PATCH with
    `select` and `Prefer: return=representation`): the written rows with their embeds, of what the caller may read."""
    mum, mum_id = sign_up("Mum")
    dad, _ = sign_up("Dad")
    kit = mum.table("children").insert({"user_id": mum_id, "name": "Kit", "age": 5}).select("name, user_profiles(id)").execute().data
    assert kit == [{"name": "Kit", "user_profiles": []}]
    child_id = mum.table("children").select("id").eq("name", "Kit").execute().data[0]["id"]
    profile = (
        mum.table("user_profiles").update({"current_child_id": child_id}).eq("id", mum_id)
        .select("id, current:children!current_child_id(name, age)").execute().data
    )
    assert profile == [{"id": mum_id, "current": {"name": "Kit", "age": 5}}]
    renamed = mum.table("children").update({"name": "Kitty"}).eq("id", child_id).select("name, user_profiles(id)").execute().data
    assert renamed == [{"name": "Kitty", "user_profiles": [{"id": mum_id}]}]
    # Dad, in Mum's family, may update her child, but his answer embeds nothing of her profile.
    code = mum.rpc("create_family", {"name": "The Parents"}).execute().data["invite_code"]
    dad.rpc("join_family", {"code": code}).execute()
    seen = dad.table("children").update({"age": 6}).eq("id", child_id).select("name, age, user_profiles(id)").execute().data
    assert seen == [{"name": "Kitty", "age": 6, "user_profiles": []}]
