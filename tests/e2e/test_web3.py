"""Web3 sign-in (`POST /auth/v1/token?grant_type=web3`) with wallets from independent libraries:
eth-account signs Sign-In with Ethereum messages (EIP-191 `personal_sign`), solders signs Sign-In
with Solana messages (Ed25519), both written as supabase-js writes them. The session then works
with the real supabase-py client. scripts/e2e turns both chains on and allows the app's URI.
"""
import base64
import uuid
from datetime import datetime, timedelta, timezone

import httpx
from eth_account import Account
from eth_account.messages import encode_defunct
from solders.keypair import Keypair

from conftest import ANON_KEY, URL, new_client

DOMAIN = "wallet.e2e.example"
URI = f"https://{DOMAIN}/login"


def iso(offset_seconds: float = 0) -> str:
    moment = datetime.now(timezone.utc) + timedelta(seconds=offset_seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def siwe(address: str, issued_offset: float = 0, domain: str = DOMAIN) -> str:
    # supabase-js's createSiweMessage, the address lower-cased as it writes it.
    return (
        f"{domain} wants you to sign in with your Ethereum account:\n{address.lower()}\n\nSign in to the e2e app\n\n"
        f"URI: {URI}\nVersion: 1\nChain ID: 1\nNonce: {uuid.uuid4().hex}\nIssued At: {iso(issued_offset)}"
    )


def siws(address: str) -> str:
    # supabase-js's signMessage path of signInWithSolana.
    return "\n".join(
        [
            f"{DOMAIN} wants you to sign in with your Solana account:",
            address,
            "",
            "Sign in to the e2e app",
            "",
            "Version: 1",
            f"URI: {URI}",
            f"Issued At: {iso()}",
            "Chain ID: solana:devnet",
            f"Nonce: {uuid.uuid4().hex}",
        ]
    )


def web3(chain: str, message: str, signature: str) -> httpx.Response:
    return httpx.post(
        f"{URL}/auth/v1/token?grant_type=web3",
        headers={"apikey": ANON_KEY, "Content-Type": "application/json"},
        json={"chain": chain, "message": message, "signature": signature},
        timeout=10,
    )


def eth_sign(account, message: str) -> str:
    return "0x" + account.sign_message(encode_defunct(text=message)).signature.hex().removeprefix("0x")


def check_session(session: dict, chain: str, address: str) -> str:
    """The user's id, after checking the session with supabase-py."""
    user = session["user"]
    identity = user["identities"][0]
    assert identity["provider"] == "web3"
    assert identity["id"] == f"web3:{chain}:{address}"
    assert user["app_metadata"]["provider"] == "web3"
    client = new_client()
    client.auth.set_session(session["access_token"], session["refresh_token"])
    current = client.auth.get_user()
    assert current.user.id == user["id"]
    assert [i.provider for i in current.user.identities] == ["web3"]
    # The refresh token rotates (the access token may be the same within one second).
    refreshed = client.auth.refresh_session()
    assert refreshed.session.refresh_token != session["refresh_token"]
    assert refreshed.user.id == user["id"]
    return user["id"]


def test_ethereum_wallet_signs_in_with_eth_account():
    account = Account.create()
    message = siwe(account.address)
    response = web3("ethereum", message, eth_sign(account, message))
    assert response.status_code == 200, response.text
    user_id = check_session(response.json(), "ethereum", account.address.lower())

    # A second message finds the same user; the first, replayed, is refused.
    again = siwe(account.address)
    second = web3("ethereum", again, eth_sign(account, again))
    assert second.status_code == 200, second.text
    assert second.json()["user"]["id"] == user_id
    replayed = web3("ethereum", message, eth_sign(account, message))
    assert replayed.status_code == 400
    assert replayed.json() == {"error": "invalid_grant", "error_description": "Signed Ethereum message has already been used"}


def test_ethereum_refusals():
    account = Account.create()
    other = Account.create()
    message = siwe(account.address)
    forged = web3("ethereum", message, eth_sign(other, message))
    assert forged.status_code == 400
    assert forged.json() == {"error": "invalid_grant", "error_description": "Signature does not match address in message"}
    stale = siwe(account.address, issued_offset=-3600)
    old = web3("ethereum", stale, eth_sign(account, stale))
    assert old.json() == {"error": "invalid_grant", "error_description": "Ethereum message was issued too long ago"}
    foreign = siwe(account.address, domain="evil.example")
    elsewhere = web3("ethereum", foreign, eth_sign(account, foreign))
    assert elsewhere.json()["error_description"] == (
        "Signed Ethereum message is using a Domain that does not match the one in URI which is not allowed on this server"
    )


def test_solana_wallet_signs_in_with_solders():
    keypair = Keypair()
    address = str(keypair.pubkey())
    message = siws(address)
    signature = bytes(keypair.sign_message(message.encode()))
    # supabase-js sends the signature base64url without padding.
    encoded = base64.urlsafe_b64encode(signature).decode().rstrip("=")
    response = web3("solana", message, encoded)
    assert response.status_code == 200, response.text
    user_id = check_session(response.json(), "solana", address)

    again = siws(address)
    padded = base64.b64encode(bytes(keypair.sign_message(again.encode()))).decode()
    second = web3("solana", again, padded)
    assert second.status_code == 200, second.text
    assert second.json()["user"]["id"] == user_id

    forged = web3("solana", siws(address), base64.b64encode(bytes(Keypair().sign_message(b"x"))).decode())
    assert forged.json() == {"error": "invalid_grant", "error_description": "Signature does not match address in message"}
