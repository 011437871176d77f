"""FamilySync's step 2 through supabase-py: two parents on two clients onboard one child together."""
import pytest
from postgrest.exceptions import APIError

from conftest import new_client, unique_email


def sign_up(name: str):
    c = new_client()
    response = c.auth.sign_up({"email": unique_email("fam"), "password": "Secret-pass-1", "options": {"data": {"full_name": name}}})
    assert response.session is not None
    return c, response.user.id


def test_two_parents_onboard_one_child_together():
    mum, mum_id = sign_up("Mum")
    dad, dad_id = sign_up("Dad")
    outsider, _ = sign_up("Someone Else")

    family = mum.rpc("create_family", {"name": "The Parents"}).execute().data
    code = family["invite_code"]
    assert len(code) == 11 and code[5] == "-"

    # Dad types the code as he reads it: lower case, no dash.
    joined = dad.rpc("join_family", {"code": code.replace("-", "").lower()}).execute().data
    assert [m["full_name"] for m in joined["members"]] == ["Mum", "Dad"]
    assert all("email" not in m for m in joined["members"])

    # Mum adds the child; Dad fills in goals and topics on his phone.
    child = mum.table("children").insert({"user_id": mum_id, "name": "Kit", "birthday": "2020-02-02"}).select("*").single().execute().data
    dad.table("children").update({"goals": ["sleep", "patience"], "topics": ["a", "b", "c"]}).eq("id", child["id"]).execute()
    seen_by_mum = mum.table("children").select("goals,topics").eq("id", child["id"]).single().execute().data
    assert seen_by_mum == {"goals": ["sleep", "patience"], "topics": ["a", "b", "c"]}
    # Mum finishes her onboarding with the shared child.
    mum.table("user_profiles").update({"onboarding_state": "REVIEW", "current_child_id": child["id"]}).eq("id", mum_id).execute()
    done = mum.rpc("complete_onboarding", {}).execute().data
    assert done["onboarding_state"] == "COMPLETE"

    # Nobody else sees any of it, and a wrong code is a 404.
    assert outsider.table("children").select("*").execute().data == []
    assert outsider.table("families").select("*").execute().data == []
    with pytest.raises(APIError) as wrong:
        outsider.rpc("join_family", {"code": "AAAAA-BBBBB"}).execute()
    assert wrong.value.code == "PT404"

    # Dad leaves: the child is out of his reach at once.
    dad.rpc("leave_family", {}).execute()
    assert dad.table("children").select("*").execute().data == []
    assert len(mum.table("children").select("*").execute().data) == 1
