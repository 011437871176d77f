"""Phone sign-in through supabase-py: sign-up with a number and password, a code by SMS (the
server's SMS_TEST_OTP numbers get fixed codes and no SMS), verification, password sign-in by
number, and a phone change. The Swift tests send real codes through a fake Twilio."""
import pytest
from supabase_auth.errors import AuthApiError

from conftest import new_client, unique_email

# The servers scripts/e2e and scripts/replicas start have these numbers and codes
# (SMS_TEST_OTP, from scripts/serve-lib.sh).
SIGN_UP = ("+15550001001", "111111")
OTP = ("+15550001002", "222222")
CHANGE = ("+15550001003", "333333")


def digits(number: str) -> str:
    return number.lstrip("+")


def test_sign_up_with_a_number_waits_for_its_code():
    c = new_client()
    number, code = SIGN_UP
    response = c.auth.sign_up({"phone": number, "password": "Secret-pass-1"})
    assert response.session is None and response.user.phone == digits(number)
    with pytest.raises(AuthApiError) as raised:
        c.auth.sign_in_with_password({"phone": number, "password": "Secret-pass-1"})
    assert raised.value.code == "phone_not_confirmed"

    verified = c.auth.verify_otp({"phone": number, "token": code, "type": "sms"})
    assert verified.session is not None and verified.user.phone_confirmed_at is not None
    assert [identity.provider for identity in verified.user.identities] == ["phone"]
    signed_in = new_client().auth.sign_in_with_password({"phone": number, "password": "Secret-pass-1"})
    assert signed_in.session is not None and signed_in.user.id == verified.user.id


def test_a_code_is_single_use_and_a_wrong_one_is_refused():
    c = new_client()
    number, code = OTP
    c.auth.sign_in_with_otp({"phone": number})
    with pytest.raises(AuthApiError) as wrong:
        c.auth.verify_otp({"phone": number, "token": "000000", "type": "sms"})
    assert wrong.value.code == "otp_expired"
    assert c.auth.verify_otp({"phone": number, "token": code, "type": "sms"}).session is not None
    with pytest.raises(AuthApiError) as reused:
        new_client().auth.verify_otp({"phone": number, "token": code, "type": "sms"})
    assert reused.value.code == "otp_expired"


def test_a_phone_change_is_confirmed_by_the_code_to_the_new_number():
    c = new_client()
    c.auth.sign_up({"email": unique_email("phone"), "password": "Secret-pass-1"})
    number, code = CHANGE
    pending = c.auth.update_user({"phone": number})
    assert pending.user.phone in ("", None) and pending.user.new_phone == digits(number)
    changed = c.auth.verify_otp({"phone": number, "token": code, "type": "phone_change"})
    assert changed.user.phone == digits(number) and changed.user.phone_confirmed_at is not None
    providers = changed.user.app_metadata["providers"]
    assert providers == ["email", "phone"]
