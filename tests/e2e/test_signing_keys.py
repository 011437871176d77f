"""Asymmetric signing keys through supabase-py: a token signed by the previous key (RS256) keeps
working on a server that now signs with a new key (ES256) and lists the old one for verification;
`auth.get_claims()` verifies tokens locally from the published JWKS. scripts/e2e starts the two
servers (ONBOARD_KEYS_OLD_URL, ONBOARD_KEYS_NEW_URL) on the shared cluster.
"""
import base64
import json
import os

import httpx
import pytest
from supabase import ClientOptions, create_client

from conftest import ANON_KEY, unique_email

OLD_URL = os.environ.get("ONBOARD_KEYS_OLD_URL")
NEW_URL = os.environ.get("ONBOARD_KEYS_NEW_URL")
pytestmark = pytest.mark.skipif(not (OLD_URL and NEW_URL), reason="needs the key-rotation servers of scripts/e2e")


def client(url):
    return create_client(url, ANON_KEY, options=ClientOptions(auto_refresh_token=False, persist_session=False))


def header(token: str) -> dict:
    part = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_a_token_of_the_previous_key_passes_after_the_rotation():
    before = client(OLD_URL)
    session = before.auth.sign_up({"email": unique_email("keys"), "password": "Secret-pass-1"}).session
    assert header(session.access_token)["alg"] == "RS256"
    old_kid = header(session.access_token)["kid"]

    after = client(NEW_URL)
    # Local verification from the JWKS the rotated server publishes (the old key is listed).
    claims = after.auth.get_claims(jwt=session.access_token)
    assert claims["claims"]["sub"] == session.user.id
    published = httpx.get(f"{NEW_URL}/auth/v1/.well-known/jwks.json").json()["keys"]
    assert old_kid in [key["kid"] for key in published]
    assert all("d" not in key for key in published)
    # REST and Auth on the rotated server accept it.
    after.postgrest.auth(session.access_token)
    rows = after.table("user_profiles").select("id").execute().data
    assert rows == [{"id": session.user.id}]
    assert after.auth.get_user(session.access_token).user.id == session.user.id

    # A new sign-in there is signed by the new key, and the old server (which does not know
    # the new key) refuses it.
    fresh = after.auth.sign_up({"email": unique_email("keys"), "password": "Secret-pass-1"}).session
    assert header(fresh.access_token)["alg"] == "ES256"
    refused = httpx.get(f"{OLD_URL}/rest/v1/user_profiles?select=id", headers={"apikey": ANON_KEY, "Authorization": f"Bearer {fresh.access_token}"})
    assert refused.status_code == 401
