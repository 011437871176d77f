"""Linked identities through supabase-py: an anonymous user upgraded in place by Apple (same user
id, its onboarding data kept), Google linked to and unlinked from an e-mail user, and the
refusals. id_tokens are signed by the run's test provider keys (provider_keys.py).

supabase-py 2.34.1 has no id_token form of `link_identity` (its `link_identity` is the browser
OAuth redirect); the link is the call supabase-js' `linkIdentity({provider, token})` and
supabase-swift's `linkIdentityWithIdToken` make: `POST /token?grant_type=id_token` with
`link_identity: true` and the session's bearer. Everything else goes through supabase-py."""
import os
import uuid

import httpx
import pytest
from supabase_auth.errors import AuthApiError

import provider_keys
from conftest import ANON_KEY, URL, new_client, unique_email

KEYS = os.environ.get("E2E_PROVIDER_KEYS")
pytestmark = pytest.mark.skipif(not KEYS, reason="no test id_token providers (E2E_PROVIDER_KEYS) in this run")


def link(access_token: str, provider: str, id_token: str) -> httpx.Response:
    return httpx.post(
        f"{URL}/auth/v1/token", params={"grant_type": "id_token"},
        json={"provider": provider, "id_token": id_token, "link_identity": True},
        headers={"apikey": ANON_KEY, "Authorization": f"Bearer {access_token}", "X-Supabase-Api-Version": "2024-01-01"})


def test_anonymous_user_upgrades_to_apple_in_place():
    c = new_client()
    anonymous = c.auth.sign_in_anonymously({"options": {"data": {"nickname": "Sam"}}})
    user_id = anonymous.user.id
    assert anonymous.user.is_anonymous
    # Onboarding data written while anonymous.
    c.table("children").insert({"name": "Kid", "goals": ["sleep"]}).execute()
    c.table("user_profiles").update({"onboarding_state": "USER_INFO"}).eq("id", user_id).execute()

    subject = str(uuid.uuid4())
    email = unique_email("apple")
    response = link(anonymous.session.access_token, "apple", provider_keys.sign(KEYS, "apple", subject, email))
    assert response.status_code == 200, response.text
    session = response.json()
    c.auth.set_session(session["access_token"], session["refresh_token"])

    user = c.auth.get_user().user
    assert user.id == user_id
    assert not user.is_anonymous
    assert user.email == email and user.email_confirmed_at is not None
    assert user.user_metadata["nickname"] == "Sam"
    assert user.app_metadata["providers"] == ["apple"]
    identities = c.auth.get_user_identities().identities
    assert [(i.provider, i.id) for i in identities] == [("apple", subject)]
    assert c.table("children").select("name, goals").execute().data == [{"name": "Kid", "goals": ["sleep"]}]
    assert c.table("user_profiles").select("onboarding_state").eq("id", user_id).execute().data == [{"onboarding_state": "USER_INFO"}]

    # Its only identity cannot be unlinked.
    with pytest.raises(AuthApiError) as raised:
        c.auth.unlink_identity(identities[0])
    assert raised.value.code == "single_identity_not_deletable"

    # Another device signing in with the same Apple account gets the same user.
    other = new_client()
    again = other.auth.sign_in_with_id_token({"provider": "apple", "token": provider_keys.sign(KEYS, "apple", subject, email)})
    assert again.user.id == user_id


def test_google_linked_to_an_email_user_and_unlinked(signed_up):
    c, user, _ = signed_up
    session = c.auth.get_session()
    gmail = unique_email("gmail")
    response = link(session.access_token, "google", provider_keys.sign(KEYS, "google", email=gmail))
    assert response.status_code == 200, response.text
    assert response.json()["user"]["id"] == user.id
    identities = c.auth.get_user_identities().identities
    assert sorted(i.provider for i in identities) == ["email", "google"]
    assert c.auth.get_user().user.email == user.email  # the user keeps its address
    google = next(i for i in identities if i.provider == "google")
    c.auth.unlink_identity(google)
    after = c.auth.get_user().user
    assert [i.provider for i in after.identities] == ["email"]
    assert after.app_metadata["providers"] == ["email"]


def test_an_identity_of_another_user_is_refused():
    owner = new_client()
    subject = str(uuid.uuid4())
    owner.auth.sign_in_with_id_token({"provider": "apple", "token": provider_keys.sign(KEYS, "apple", subject, unique_email("owner"))})
    c = new_client()
    anonymous = c.auth.sign_in_anonymously()
    response = link(anonymous.session.access_token, "apple", provider_keys.sign(KEYS, "apple", subject, unique_email("other")))
    assert response.status_code == 422
    assert response.json()["code"] == "identity_already_exists"
    assert c.auth.get_user().user.is_anonymous
