"""GoTrue's e-mail flows driven by the real supabase-py client (PKCE by default), with the mails
read from real SMTP servers (tests/smtp/sink.py) that scripts/e2e starts.

The main server (ONBOARD_URL) auto-confirms sign-ups and mails over plain SMTP; the confirming
server (ONBOARD_CONFIRM_URL) waits for the confirmation link and mails over STARTTLS with AUTH;
the third (ONBOARD_DOWN_URL) has a mail server that is down.
"""
import email
import email.policy
import glob
import json
import os
import re
import subprocess
import time
import uuid

import httpx
import pytest
from supabase import Client, ClientOptions, create_client
from supabase_auth.errors import AuthApiError

from conftest import ANON_KEY, URL, new_client, unique_email

MAIL_DIR = os.environ.get("ONBOARD_MAIL_DIR")
CONFIRM_URL = os.environ.get("ONBOARD_CONFIRM_URL")
CONFIRM_MAIL_DIR = os.environ.get("ONBOARD_CONFIRM_MAIL_DIR")
DOWN_URL = os.environ.get("ONBOARD_DOWN_URL")
DOWN_LOG = os.environ.get("ONBOARD_DOWN_LOG")
DATABASE = os.environ.get("ONBOARD_DB")

pytestmark = pytest.mark.skipif(not MAIL_DIR, reason="no SMTP sink (ONBOARD_MAIL_DIR) in this run")
SITE = "http://127.0.0.1:3000"


def client_for(url: str) -> Client:
    return create_client(url, ANON_KEY, options=ClientOptions(auto_refresh_token=False, persist_session=False))


def wait_until(condition, timeout=60.0, what="condition"):
    """Polls until `condition()` is truthy and returns it (never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Mail:
    def __init__(self, record: dict):
        self.envelope_to = record["to"]
        self.tls = record["tls"]
        self.user = record["user"]
        message = email.message_from_string(record["data"], policy=email.policy.default)
        self.subject = str(message["Subject"])
        self.sender = str(message["From"])
        self.html = message.get_content()
        links = re.findall(r'href="([^"]+)"', self.html)
        self.link = links[0].replace("&amp;", "&") if links else None
        codes = re.findall(r"<strong>(\d{6})</strong>", self.html)
        self.code = codes[0] if codes else None


def mails(folder: str, to: str) -> list:
    found = []
    for name in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(name, encoding="utf-8") as handle:
            record = json.load(handle)
        if to in record["to"]:
            found.append(Mail(record))
    return found


def wait_for_mail(to: str, count: int = 1, folder: str = None) -> Mail:
    folder = folder or MAIL_DIR
    got = wait_until(lambda: (lambda m: m if len(m) >= count else None)(mails(folder, to)), what=f"mail #{count} to {to}")
    return got[-1]


def open_link(link: str) -> str:
    """Follows the mailed link as a browser's first step and returns the redirect target."""
    response = httpx.get(link, follow_redirects=False)
    assert response.status_code == 303, response.text
    return response.headers["location"]


def query_param(url: str, name: str) -> str:
    match = re.search(r"[?&]" + name + r"=([^&#]+)", url)
    return match.group(1) if match else None


def psql(sql: str) -> None:
    subprocess.run(["psql", DATABASE, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql], check=True, capture_output=True)


def admin_confirmed_user(url: str, address: str, password: str) -> None:
    response = httpx.post(f"{url}/auth/v1/admin/users", json={"email": address, "password": password, "email_confirm": True},
                          headers={"apikey": ANON_KEY, "Authorization": f"Bearer {os.environ['SERVICE_ROLE_KEY']}"})
    assert response.status_code == 200, response.text


def test_password_recovery_by_link_with_pkce(signed_up):
    c, user, password = signed_up
    c.auth.reset_password_for_email(user.email, {"redirect_to": f"{SITE}/reset"})
    mail = wait_for_mail(user.email)
    assert mail.subject == "Reset your password" and "Onboard e2e" in mail.sender and not mail.tls
    assert "token=pkce_" in mail.link and mail.code
    target = open_link(mail.link)
    assert target.startswith(f"{SITE}/reset?code=")
    session = c.auth.exchange_code_for_session({"auth_code": query_param(target, "code")}).session
    assert session.access_token and session.user.email == user.email
    c.auth.update_user({"password": "Recovered-pass-2"})

    fresh = new_client()
    assert fresh.auth.sign_in_with_password({"email": user.email, "password": "Recovered-pass-2"}).session
    with pytest.raises(AuthApiError) as old:
        new_client().auth.sign_in_with_password({"email": user.email, "password": password})
    assert old.value.code == "invalid_credentials"
    # The link is single use: opened again it redirects with GoTrue's error.
    again = open_link(mail.link)
    assert "error_code=otp_expired" in again


def test_password_recovery_by_code_wrong_reused_and_expired(signed_up):
    c, user, password = signed_up
    c.auth.reset_password_for_email(user.email)
    mail = wait_for_mail(user.email)
    wrong = "000000" if mail.code != "000000" else "000001"
    with pytest.raises(AuthApiError) as error:
        c.auth.verify_otp({"email": user.email, "token": wrong, "type": "recovery"})
    assert error.value.code == "otp_expired" and error.value.status == 403
    response = c.auth.verify_otp({"email": user.email, "token": mail.code, "type": "recovery"})
    assert response.session and response.user.email == user.email
    with pytest.raises(AuthApiError) as reused:
        new_client().auth.verify_otp({"email": user.email, "token": mail.code, "type": "recovery"})
    assert reused.value.code == "otp_expired"

    # A newer mail replaces the older, and a code expires (MAILER_OTP_EXP, an hour).
    other = new_client()
    wait_until(lambda: _sent(other, user.email), what="the per-address interval to pass")
    second = wait_for_mail(user.email, count=2)
    psql(f"UPDATE auth.one_time_tokens SET created_at = now() - interval '2 hours' WHERE relates_to = '{user.email}'")
    with pytest.raises(AuthApiError) as expired:
        other.auth.verify_otp({"email": user.email, "token": second.code, "type": "recovery"})
    assert expired.value.code == "otp_expired"


def _sent(c: Client, address: str) -> bool:
    try:
        c.auth.reset_password_for_email(address)
        return True
    except AuthApiError as error:
        assert error.code == "over_email_send_rate_limit", error.code
        return False


def test_magic_link_and_otp_sign_in():
    c = new_client()
    with pytest.raises(AuthApiError) as refused:
        c.auth.sign_in_with_otp({"email": unique_email("nobody"), "options": {"should_create_user": False}})
    assert refused.value.code == "otp_disabled"

    address = unique_email("magic")
    c.auth.sign_in_with_otp({"email": address, "options": {"data": {"full_name": "Mag Ic"}, "email_redirect_to": f"{SITE}/welcome"}})
    mail = wait_for_mail(address)
    assert mail.subject == "Your sign-in link" and "type=magiclink" in mail.link
    target = open_link(mail.link)
    assert target.startswith(f"{SITE}/welcome?code=")
    session = c.auth.exchange_code_for_session({"auth_code": query_param(target, "code")}).session
    assert session.user.user_metadata.get("full_name") == "Mag Ic"

    # The code of the next mail signs in on another device.
    other = new_client()
    wait_until(lambda: _otp_sent(other, address), what="the per-address interval to pass")
    code = wait_for_mail(address, count=2).code
    signed_in = other.auth.verify_otp({"email": address, "token": code, "type": "email"})
    assert signed_in.session and signed_in.user.email == address


def _otp_sent(c: Client, address: str) -> bool:
    try:
        c.auth.sign_in_with_otp({"email": address})
        return True
    except AuthApiError as error:
        assert error.code == "over_email_send_rate_limit", error.code
        return False


def test_email_change_confirmed_by_mail(signed_up):
    c, user, password = signed_up
    new_address = unique_email("changed")
    updated = c.auth.update_user({"email": new_address})
    assert updated.user.email == user.email and updated.user.new_email == new_address
    to_new = wait_for_mail(new_address)
    to_old = wait_for_mail(user.email)
    assert to_new.subject == "Confirm your new email address" and to_old.code != to_new.code
    # Autoconfirm is on here: one confirmation completes the change (GoTrue's rule).
    response = c.auth.verify_otp({"email": new_address, "token": to_new.code, "type": "email_change"})
    assert response.user.email == new_address
    assert new_client().auth.sign_in_with_password({"email": new_address, "password": password}).session


def test_reauthentication_nonce_for_old_sessions(signed_up):
    c, user, password = signed_up
    # A session younger than 24 hours changes the password without a code.
    c.auth.update_user({"password": "Young-session-2"})
    psql(f"UPDATE auth.sessions SET created_at = now() - interval '25 hours' WHERE user_id = '{user.id}'")
    with pytest.raises(AuthApiError) as needed:
        c.auth.update_user({"password": "Old-session-3"})
    assert needed.value.code == "reauthentication_needed"
    c.auth.reauthenticate()
    mail = wait_for_mail(user.email)
    assert mail.subject == f"{mail.code} is your verification code" and mail.link is None
    c.auth.update_user({"password": "Old-session-3", "nonce": mail.code})
    assert new_client().auth.sign_in_with_password({"email": user.email, "password": "Old-session-3"}).session


@pytest.mark.skipif(not CONFIRM_URL, reason="no confirming server in this run")
def test_sign_up_confirmed_by_link_over_starttls():
    c = client_for(CONFIRM_URL)
    address = unique_email("confirm")
    response = c.auth.sign_up({"email": address, "password": "Confirm-pass-1", "options": {"email_redirect_to": f"{SITE}/confirmed"}})
    assert response.session is None and response.user.email == address and response.user.email_confirmed_at is None
    with pytest.raises(AuthApiError) as early:
        client_for(CONFIRM_URL).auth.sign_in_with_password({"email": address, "password": "Confirm-pass-1"})
    assert early.value.code == "email_not_confirmed"
    with pytest.raises(AuthApiError) as soon:
        c.auth.resend({"type": "signup", "email": address})
    assert soon.value.code == "over_email_send_rate_limit" and soon.value.status == 429

    mail = wait_for_mail(address, folder=CONFIRM_MAIL_DIR)
    assert mail.tls and mail.user == "onboard" and mail.subject == "Confirm your email address"
    target = open_link(mail.link)
    assert target.startswith(f"{SITE}/confirmed?code=")
    session = c.auth.exchange_code_for_session({"auth_code": query_param(target, "code")}).session
    assert session.user.email_confirmed_at is not None
    assert client_for(CONFIRM_URL).auth.sign_in_with_password({"email": address, "password": "Confirm-pass-1"}).session


@pytest.mark.skipif(not CONFIRM_URL, reason="no confirming server in this run")
def test_secure_email_change_needs_both_addresses():
    c = client_for(CONFIRM_URL)
    old_address, new_address = unique_email("old"), unique_email("new")
    admin_confirmed_user(CONFIRM_URL, old_address, "Change-pass-1")
    c.auth.sign_in_with_password({"email": old_address, "password": "Change-pass-1"})
    c.auth.update_user({"email": new_address})
    to_old = wait_for_mail(old_address, folder=CONFIRM_MAIL_DIR)
    to_new = wait_for_mail(new_address, folder=CONFIRM_MAIL_DIR)
    halfway = c.auth.verify_otp({"email": old_address, "token": to_old.code, "type": "email_change"})
    assert halfway.session is None and halfway.user is None  # {"msg":…,"code":"200"}
    done = c.auth.verify_otp({"email": new_address, "token": to_new.code, "type": "email_change"})
    assert done.session and done.user.email == new_address


@pytest.mark.skipif(not DOWN_URL, reason="no server with a dead mail server in this run")
def test_a_mail_server_that_is_down_never_fails_the_request():
    c = client_for(DOWN_URL)
    address = unique_email("down")
    assert c.auth.sign_up({"email": address, "password": "Down-pass-1"}).session
    started = time.monotonic()
    client_for(DOWN_URL).auth.reset_password_for_email(address)
    assert time.monotonic() - started < 5, "the request waited for the mail server"

    # The mail stays in the outbox and is tried again later (2, 10, 60, 300 s, then given up):
    # the first failed attempt is counted and logged with the address.
    def retried() -> bool:
        metrics = httpx.get(f"{DOWN_URL}/metrics").text
        return "onboard_mail_retries_total 0" not in metrics and "onboard_mail_retries_total" in metrics
    wait_until(retried, timeout=90, what="the failed attempt in /metrics")

    def logged() -> bool:
        with open(DOWN_LOG, encoding="utf-8") as handle:
            log = handle.read()
        return "mail delivery failed; trying again" in log and address in log
    wait_until(logged, timeout=30, what="the failed attempt in the log")
