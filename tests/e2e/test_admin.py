"""The Auth admin API through supabase-py's `auth.admin`: app_metadata and email_confirm, bans,
generated links (answered, not mailed), invitations (mailed) and the newest-first user list."""
import os

import pytest
from supabase import ClientOptions, create_client
from supabase_auth.errors import AuthApiError

from conftest import SERVICE_ROLE_KEY, URL, new_client, unique_email

MAIL_DIR = os.environ.get("ONBOARD_MAIL_DIR")


@pytest.fixture
def admin():
    if not SERVICE_ROLE_KEY:
        pytest.skip("no SERVICE_ROLE_KEY")
    return create_client(URL, SERVICE_ROLE_KEY, options=ClientOptions(auto_refresh_token=False, persist_session=False)).auth.admin


def test_app_metadata_email_confirm_and_ban(admin):
    email = unique_email("admin")
    created = admin.create_user({"email": email, "password": "Secret-pass-1", "app_metadata": {"plan": "pro"}}).user
    assert created.app_metadata["plan"] == "pro" and created.email_confirmed_at is None
    updated = admin.update_user_by_id(created.id, {"app_metadata": {"tier": 2}, "email_confirm": True}).user
    assert updated.app_metadata["plan"] == "pro" and updated.app_metadata["tier"] == 2
    assert updated.email_confirmed_at is not None
    c = new_client()
    assert c.auth.sign_in_with_password({"email": email, "password": "Secret-pass-1"}).user.id == created.id

    banned = admin.update_user_by_id(created.id, {"ban_duration": "24h"}).user
    assert banned.banned_until is not None
    with pytest.raises(AuthApiError) as raised:
        new_client().auth.sign_in_with_password({"email": email, "password": "Secret-pass-1"})
    assert raised.value.code == "user_banned"
    with pytest.raises(AuthApiError) as raised:
        c.auth.get_user()
    assert raised.value.code == "user_banned"
    admin.update_user_by_id(created.id, {"ban_duration": "none"})
    assert new_client().auth.sign_in_with_password({"email": email, "password": "Secret-pass-1"}).session is not None


def test_generate_link_answers_tokens_that_verify(admin):
    email = unique_email("link")
    signup = admin.generate_link({"type": "signup", "email": email, "password": "Secret-pass-1", "options": {"data": {"source": "ops"}}})
    assert signup.properties.verification_type == "signup"
    assert signup.properties.hashed_token in signup.properties.action_link
    assert signup.user.email == email and signup.user.user_metadata["source"] == "ops"
    c = new_client()
    verified = c.auth.verify_otp({"type": "signup", "token_hash": signup.properties.hashed_token})
    assert verified.user.id == signup.user.id and verified.user.email_confirmed_at is not None

    magic = admin.generate_link({"type": "magiclink", "email": email})
    assert magic.properties.verification_type == "magiclink" and len(magic.properties.email_otp) == 6
    assert new_client().auth.verify_otp({"type": "magiclink", "email": email, "token": magic.properties.email_otp}).session is not None

    invited = admin.generate_link({"type": "invite", "email": unique_email("invite")})
    assert invited.user.invited_at is not None
    assert new_client().auth.verify_otp({"type": "invite", "token_hash": invited.properties.hashed_token}).session is not None

    with pytest.raises(AuthApiError) as raised:
        admin.generate_link({"type": "recovery", "email": unique_email("nobody")})
    assert raised.value.code == "user_not_found"
    if MAIL_DIR:  # nothing of this was mailed
        import glob
        import json
        sent = [json.load(open(name, encoding="utf-8"))["to"] for name in glob.glob(os.path.join(MAIL_DIR, "*.json"))]
        assert not any(email in to for to in sent)


@pytest.mark.skipif(not MAIL_DIR, reason="no SMTP sink (ONBOARD_MAIL_DIR) in this run")
def test_invitation_is_mailed_and_signs_in(admin):
    from test_mail import open_link, wait_for_mail

    email = unique_email("invitee")
    user = admin.invite_user_by_email(email, {"data": {"family": "Lee"}}).user
    assert user.invited_at is not None and user.user_metadata["family"] == "Lee"
    mail = wait_for_mail(email)
    assert "type=invite" in mail.link
    location = open_link(mail.link)
    assert "access_token=" in location and "type=invite" in location
    with pytest.raises(AuthApiError) as raised:
        admin.invite_user_by_email(email)
    assert raised.value.code == "email_exists"


def test_users_are_listed_newest_first(admin):
    first = admin.create_user({"email": unique_email("older")}).user
    second = admin.create_user({"email": unique_email("newer")}).user
    page = admin.list_users(page=1, per_page=2)
    assert [u.id for u in page] == [second.id, first.id]
