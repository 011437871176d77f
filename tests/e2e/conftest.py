"""End-to-end tests: the real supabase-py client against a running `onboard serve`.

scripts/e2e starts the server and exports ONBOARD_URL, ANON_KEY, SERVICE_ROLE_KEY.
"""
import os
import uuid

import pytest
from supabase import Client, ClientOptions, create_client

URL = os.environ.get("ONBOARD_URL", "http://127.0.0.1:54321")
ANON_KEY = os.environ["ANON_KEY"]
SERVICE_ROLE_KEY = os.environ.get("SERVICE_ROLE_KEY", "")


def new_client() -> Client:
    # Default options: PKCE flow, as the apps use.
    return create_client(URL, ANON_KEY, options=ClientOptions(auto_refresh_token=False, persist_session=False))


def unique_email(prefix: str = "e2e") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}@example.com"


@pytest.fixture
def client() -> Client:
    return new_client()


@pytest.fixture
def signed_up():
    """A client signed up (auto-confirmed) as a fresh user; returns (client, user, password)."""
    c = new_client()
    email = unique_email()
    password = "Secret-pass-1"
    response = c.auth.sign_up({"email": email, "password": password, "options": {"data": {"full_name": "Ada Parent"}}})
    assert response.session is not None, "auto-confirmed sign-up must return a session"
    return c, response.user, password
