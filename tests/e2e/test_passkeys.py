"""Passkeys (`/auth/v1/passkeys/…`) with an independent software authenticator: soft-webauthn
(python-fido2's CBOR and COSE, cryptography's P-256 keys) registers a credential for a signed-up
user and signs in with it; the session then works with the real supabase-py client. A replayed
assertion and one for another origin are refused with GoTrue's errors. scripts/e2e turns
passkeys on for the relying party below.
"""
import base64
import json

import httpx
from soft_webauthn import SoftWebauthnDevice

from conftest import ANON_KEY, SERVICE_ROLE_KEY, URL, new_client, unique_email

RP_ID = "passkey.e2e.example"
ORIGIN = f"https://{RP_ID}"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def headers(token: str = ANON_KEY) -> dict:
    return {"apikey": ANON_KEY, "Authorization": f"Bearer {token}", "X-Supabase-Api-Version": "2024-01-01"}


def post(path: str, body: dict, token: str = ANON_KEY) -> httpx.Response:
    return httpx.post(f"{URL}/auth/v1/passkeys/{path}", json=body, headers=headers(token))


def as_json(credential: dict) -> dict:
    """soft-webauthn's PublicKeyCredential (bytes) in the browser's JSON serialization."""
    return {
        "id": b64url(credential["rawId"]),
        "rawId": b64url(credential["rawId"]),
        "type": credential["type"],
        "response": {name: b64url(value) for name, value in credential["response"].items()},
        "clientExtensionResults": {},
    }


def creation_options(options: dict) -> dict:
    public_key = dict(options)
    public_key["challenge"] = unb64url(options["challenge"])
    public_key["user"] = dict(options["user"], id=unb64url(options["user"]["id"]))
    return {"publicKey": public_key}


def request_options(options: dict) -> dict:
    return {"publicKey": dict(options, challenge=unb64url(options["challenge"]))}


def register() -> tuple:
    client = new_client()
    signed = client.auth.sign_up({"email": unique_email("passkey"), "password": "Secret-pass-1"})
    token = signed.session.access_token
    options = post("registration/options", {}, token)
    assert options.status_code == 200, options.text
    body = options.json()
    assert body["options"]["rp"] == {"id": RP_ID, "name": "onboard e2e"}
    device = SoftWebauthnDevice()
    attestation = device.create(creation_options(body["options"]), ORIGIN)
    verified = post("registration/verify", {"challenge_id": body["challenge_id"], "credential": as_json(attestation)}, token)
    assert verified.status_code == 200, verified.text
    assert verified.json()["friendly_name"] == "Passkey"
    return device, signed.user, token


def authentication_options() -> dict:
    response = post("authentication/options", {})
    assert response.status_code == 200, response.text
    return response.json()


def test_register_then_sign_in_and_use_the_session_with_supabase_py():
    device, user, token = register()
    listed = httpx.get(f"{URL}/auth/v1/passkeys", headers=headers(token))
    assert listed.status_code == 200 and [p["friendly_name"] for p in listed.json()] == ["Passkey"]
    admin = httpx.get(f"{URL}/auth/v1/admin/users/{user.id}/passkeys", headers=headers(SERVICE_ROLE_KEY))
    assert admin.status_code == 200 and [p["id"] for p in admin.json()] == [p["id"] for p in listed.json()]

    options = authentication_options()
    assertion = device.get(request_options(options["options"]), ORIGIN)
    signed_in = post("authentication/verify", {"challenge_id": options["challenge_id"], "credential": as_json(assertion)})
    assert signed_in.status_code == 200, signed_in.text
    session = signed_in.json()
    assert session["user"]["id"] == user.id
    claims = json.loads(unb64url(session["access_token"].split(".")[1]))
    assert [entry["method"] for entry in claims["amr"]] == ["passkey"]

    client = new_client()
    client.auth.set_session(session["access_token"], session["refresh_token"])
    assert client.auth.get_user().user.id == user.id


def test_a_replayed_assertion_and_another_origin_are_refused():
    device, _, _ = register()
    options = authentication_options()
    assertion = as_json(device.get(request_options(options["options"]), ORIGIN))
    assert post("authentication/verify", {"challenge_id": options["challenge_id"], "credential": assertion}).status_code == 200
    replayed = post("authentication/verify", {"challenge_id": options["challenge_id"], "credential": assertion})
    assert replayed.status_code == 400
    assert replayed.json() == {"code": "webauthn_challenge_not_found", "message": "Challenge not found or already used"}

    options = authentication_options()
    elsewhere = as_json(device.get(request_options(options["options"]), "https://evil.example"))
    refused = post("authentication/verify", {"challenge_id": options["challenge_id"], "credential": elsewhere})
    assert refused.status_code == 400
    assert refused.json() == {"code": "webauthn_verification_failed", "message": "Credential verification failed"}
