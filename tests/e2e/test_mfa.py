"""Multi-factor authentication (TOTP) through supabase-py's auth.mfa API, codes from pyotp."""
import os
import subprocess
import time

import pyotp
import pytest
from supabase_auth.errors import AuthApiError

from conftest import new_client, unique_email

DATABASE = os.environ.get("ONBOARD_DB")


def psql(sql: str, **variables: str) -> str:
    """Runs `sql` as the database owner; `:'name'` in it is the bound value of `name`."""
    command = ["psql", DATABASE, "-v", "ON_ERROR_STOP=1", "-q", "-t", "-A"]
    for name, value in variables.items():
        command += ["-v", f"{name}={value}"]
    return subprocess.run(command, input=sql, check=True, capture_output=True, text=True).stdout.strip()


def signed_up():
    c = new_client()
    email = unique_email("mfa")
    response = c.auth.sign_up({"email": email, "password": "Secret-pass-1"})
    assert response.session is not None
    return c, response.user, email


def enroll(c, name="Authenticator"):
    factor = c.auth.mfa.enroll({"factor_type": "totp", "friendly_name": name, "issuer": "Onboard e2e"})
    assert factor.type == "totp"
    return factor, pyotp.TOTP(factor.totp.secret)


def error_code(raised) -> str:
    return raised.value.code


def test_enroll_challenge_verify_reaches_aal2_and_refresh_keeps_it():
    c, user, email = signed_up()
    factor, totp = enroll(c)
    assert factor.friendly_name == "Authenticator"
    parsed = pyotp.parse_uri(factor.totp.uri)
    assert parsed.secret == factor.totp.secret and parsed.issuer == "Onboard e2e" and parsed.name == email
    assert parsed.digits == 6 and parsed.interval == 30
    assert factor.totp.qr_code.startswith("data:image/svg+xml;utf-8,<svg")

    level = c.auth.mfa.get_authenticator_assurance_level()
    assert level.current_level == "aal1" and level.next_level == "aal1"
    assert [f.status for f in c.auth.mfa.list_factors().all] == ["unverified"]

    challenge = c.auth.mfa.challenge({"factor_id": factor.id})
    assert challenge.expires_at > time.time()
    verified = c.auth.mfa.verify({"factor_id": factor.id, "challenge_id": challenge.id, "code": totp.now()})
    assert verified.access_token and verified.user.id == user.id

    level = c.auth.mfa.get_authenticator_assurance_level()
    assert level.current_level == "aal2" and level.next_level == "aal2"
    assert [m.method for m in level.current_authentication_methods] == ["totp", "password"]
    factors = c.auth.mfa.list_factors()
    assert [f.id for f in factors.totp] == [factor.id] and factors.totp[0].status == "verified"

    refreshed = c.auth.refresh_session()
    assert refreshed.session.refresh_token != verified.refresh_token
    assert c.auth.mfa.get_authenticator_assurance_level().current_level == "aal2"


def test_wrong_reused_and_expired_codes():
    c, _, _ = signed_up()
    factor, totp = enroll(c)
    challenge = c.auth.mfa.challenge({"factor_id": factor.id})
    wrong = "000000" if totp.now() != "000000" else "111111"
    with pytest.raises(AuthApiError) as raised:
        c.auth.mfa.verify({"factor_id": factor.id, "challenge_id": challenge.id, "code": wrong})
    assert error_code(raised) == "mfa_verification_failed"

    code = totp.now()
    c.auth.mfa.verify({"factor_id": factor.id, "challenge_id": challenge.id, "code": code})
    # The same code again, on a new challenge: used.
    with pytest.raises(AuthApiError) as raised:
        c.auth.mfa.challenge_and_verify({"factor_id": factor.id, "code": code})
    assert error_code(raised) == "mfa_verification_failed"
    # The same challenge again.
    with pytest.raises(AuthApiError) as raised:
        c.auth.mfa.verify({"factor_id": factor.id, "challenge_id": challenge.id, "code": totp.at(time.time() + 30)})
    assert error_code(raised) == "mfa_ip_address_mismatch"

    stale = c.auth.mfa.challenge({"factor_id": factor.id})
    psql("UPDATE auth.mfa_challenges SET created_at = now() - interval '10 minutes' WHERE id = :'id'", id=stale.id)
    with pytest.raises(AuthApiError) as raised:
        c.auth.mfa.verify({"factor_id": factor.id, "challenge_id": stale.id, "code": totp.at(time.time() + 30)})
    assert error_code(raised) == "mfa_challenge_expired"


def test_phone_and_webauthn_factors_are_not_offered():
    c, _, _ = signed_up()
    with pytest.raises(AuthApiError) as raised:
        c.auth.mfa.enroll({"factor_type": "phone", "phone": "+15550100"})
    assert error_code(raised) == "mfa_phone_enroll_not_enabled"


def test_unenroll_needs_aal2_and_lowers_the_session():
    c, user, email = signed_up()
    factor, totp = enroll(c)
    c.auth.mfa.challenge_and_verify({"factor_id": factor.id, "code": totp.now()})

    other = new_client()
    other.auth.sign_in_with_password({"email": email, "password": "Secret-pass-1"})
    level = other.auth.mfa.get_authenticator_assurance_level()
    assert level.current_level == "aal1" and level.next_level == "aal2"
    with pytest.raises(AuthApiError) as raised:
        other.auth.mfa.unenroll({"factor_id": factor.id})
    assert error_code(raised) == "insufficient_aal"

    assert c.auth.mfa.unenroll({"factor_id": factor.id}).id == factor.id
    c.auth.refresh_session()
    level = c.auth.mfa.get_authenticator_assurance_level()
    assert level.current_level == "aal1" and level.next_level == "aal1"
    assert c.auth.mfa.list_factors().all == []


def test_admin_lists_and_deletes_factors():
    from conftest import SERVICE_ROLE_KEY, URL
    from supabase import ClientOptions, create_client

    c, user, _ = signed_up()
    factor, _ = enroll(c)
    admin = create_client(URL, SERVICE_ROLE_KEY, options=ClientOptions(auto_refresh_token=False, persist_session=False))
    listed = admin.auth.admin.mfa.list_factors({"user_id": user.id})
    assert [(f.id, f.status) for f in listed] == [(factor.id, "unverified")]
    deleted = admin.auth.admin.mfa.delete_factor({"user_id": user.id, "id": factor.id})
    assert deleted.id == factor.id
    assert admin.auth.admin.mfa.list_factors({"user_id": user.id}) == []


@pytest.fixture(scope="module")
def aal2_table():
    """A table whose policy answers a user's rows only to an aal2 session, created through the
    database owner's connection, the REST schema cache reloaded."""
    if not DATABASE:
        pytest.skip("no ONBOARD_DB in this run")
    psql(
        """
        CREATE TABLE IF NOT EXISTS public.e2e_mfa_vault (id serial PRIMARY KEY, owner uuid NOT NULL, note text NOT NULL);
        ALTER TABLE public.e2e_mfa_vault ENABLE ROW LEVEL SECURITY;
        DROP POLICY IF EXISTS vault_aal2 ON public.e2e_mfa_vault;
        CREATE POLICY vault_aal2 ON public.e2e_mfa_vault FOR SELECT TO authenticated
            USING (owner = auth.uid() AND (auth.jwt() ->> 'aal') = 'aal2');
        NOTIFY pgrst, 'reload schema';
        """
    )
    probe = new_client()
    deadline = time.time() + 30
    while True:
        try:
            probe.table("e2e_mfa_vault").select("id").execute()
            break
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    yield "e2e_mfa_vault"
    psql("DROP TABLE public.e2e_mfa_vault; NOTIFY pgrst, 'reload schema';")


def test_a_policy_requiring_aal2_answers_rows_only_then(aal2_table):
    c, user, _ = signed_up()
    psql("INSERT INTO public.e2e_mfa_vault (owner, note) VALUES (:'owner', 'the family plan')", owner=user.id)
    assert c.table(aal2_table).select("note").execute().data == []

    factor, totp = enroll(c)
    verified = c.auth.mfa.challenge_and_verify({"factor_id": factor.id, "code": totp.now()})
    c.postgrest.auth(verified.access_token)
    assert c.table(aal2_table).select("note").execute().data == [{"note": "the family plan"}]

    # A new aal1 sign-in of the same user sees nothing.
    other = new_client()
    other.auth.sign_in_with_password({"email": user.email, "password": "Secret-pass-1"})
    assert other.table(aal2_table).select("note").execute().data == []
