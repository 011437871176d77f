"""Test id_token providers for the end-to-end run: an Apple-like (ES256) and a Google-like (RS256)
signing key. `python provider_keys.py DIR` writes each provider's private key (DIR/<name>.pem)
and its public JWKS (DIR/<name>-jwks.json), which the server reads as APPLE_JWKS / GOOGLE_JWKS.
The tests sign id_tokens with the private keys (`sign`)."""
import json
import os
import sys
import time
import uuid

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

PROVIDERS = {
    "apple": {"alg": "ES256", "kid": "e2e-apple", "iss": "https://appleid.apple.com", "aud": "com.onboard.e2e"},
    "google": {"alg": "RS256", "kid": "e2e-google", "iss": "https://accounts.google.com", "aud": "e2e.apps.googleusercontent.com"},
}


def write(folder: str) -> None:
    os.makedirs(folder, exist_ok=True)
    for name, spec in PROVIDERS.items():
        if spec["alg"] == "ES256":
            key = ec.generate_private_key(ec.SECP256R1())
            public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
        else:
            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
        public.update({"kid": spec["kid"], "alg": spec["alg"], "use": "sig"})
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        with open(os.path.join(folder, f"{name}.pem"), "wb") as out:
            out.write(pem)
        with open(os.path.join(folder, f"{name}-jwks.json"), "w") as out:
            json.dump({"keys": [public]}, out)


def sign(folder: str, provider: str, subject: str = None, email: str = None, verified: bool = True) -> str:
    """An id_token of `provider` for `subject` (a new one by default) with `email`."""
    spec = PROVIDERS[provider]
    with open(os.path.join(folder, f"{provider}.pem"), "rb") as key:
        private = serialization.load_pem_private_key(key.read(), password=None)
    now = int(time.time())
    claims = {
        "iss": spec["iss"], "aud": spec["aud"], "sub": subject or str(uuid.uuid4()), "iat": now, "exp": now + 600,
        # Apple sends email_verified as a string.
        "email_verified": ("true" if verified else "false") if provider == "apple" else verified,
    }
    if email:
        claims["email"] = email
    return jwt.encode(claims, private, algorithm=spec["alg"], headers={"kid": spec["kid"]})


if __name__ == "__main__":
    write(sys.argv[1])
