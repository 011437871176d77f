"""An OpenID Connect provider on loopback for the browser test of the OAuth redirect flow
(tests/e2e/browse_oauth.py): `python oidc_provider.py PORT` serves issuers
`http://127.0.0.1:PORT/<name>` for the names in ISSUERS, each with its discovery document, a
sign-in page at its authorization endpoint (an e-mail field and a button; the form sends the
browser back to the server's callback with a code), a token endpoint exchanging each code once
for an id_token signed with the issuer's own RS256 key, and its JWKS. It also serves the app
the flow ends on (`/app`): a page that shows the fragment or query it was given.

Run by scripts/dashboard-e2e (not by pytest: its name does not start with test_)."""
import html
import json
import secrets
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

CLIENT_ID = "e2e-oauth-client"
SECRET = "e2e-oauth-secret"
ISSUERS = ["idp", "other"]
KEYS = {name: rsa.generate_private_key(public_exponent=65537, key_size=2048) for name in ISSUERS}
GRANTS = {}
LOCK = threading.Lock()

APP_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>e2e app</title></head>
<body><h1 id="landed">Landed</h1><pre id="params"></pre>
<script>document.getElementById("params").textContent = location.hash.slice(1) || location.search.slice(1);</script>
</body></html>"""


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="application/json", headers=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def fields(self):
        parsed = urllib.parse.urlsplit(self.path)
        values = dict(urllib.parse.parse_qsl(parsed.query))
        if self.command == "POST":
            length = int(self.headers.get("Content-Length") or 0)
            values.update(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
        return parsed.path.strip("/").split("/"), values

    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route()

    def route(self):
        parts, values = self.fields()
        if parts == ["app"]:
            return self.answer(200, APP_PAGE, "text/html; charset=utf-8")
        if len(parts) < 2 or parts[0] not in KEYS:
            return self.answer(404, '{"error":"not_found"}')
        name, endpoint = parts[0], "/".join(parts[1:])
        issuer = f"http://127.0.0.1:{self.server.server_port}/{name}"
        if endpoint == ".well-known/openid-configuration":
            return self.answer(200, json.dumps({
                "issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
                "jwks_uri": issuer + "/jwks", "response_types_supported": ["code"], "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
            }))
        if endpoint == "jwks":
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(KEYS[name].public_key()))
            jwk.update({"kid": name, "alg": "RS256", "use": "sig"})
            return self.answer(200, json.dumps({"keys": [jwk]}))
        if endpoint == "authorize" and self.command == "GET":
            if values.get("client_id") != CLIENT_ID or values.get("response_type") != "code":
                return self.answer(400, '{"error":"invalid_request"}')
            hidden = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">' for k, v in values.items())
            page = (f'<!doctype html><html><head><meta charset="utf-8"><title>Sign in to {name}</title></head><body>'
                    f'<form method="post" action="/{name}/authorize">{hidden}'
                    '<input id="email" name="email" type="email"><button id="sign-in" type="submit">Sign in</button></form></body></html>')
            return self.answer(200, page, "text/html; charset=utf-8")
        if endpoint == "authorize":
            code = "code-" + secrets.token_urlsafe(16)
            with LOCK:
                GRANTS[code] = {"issuer": issuer, "email": values["email"], "sub": "sub-" + values["email"], "redirect": values["redirect_uri"]}
            target = values["redirect_uri"] + ("&" if "?" in values["redirect_uri"] else "?")
            target += urllib.parse.urlencode({"code": code, "state": values["state"]})
            return self.answer(302, "", "text/plain", [("Location", target)])
        if endpoint == "token" and self.command == "POST":
            with LOCK:
                grant = GRANTS.pop(values.get("code", ""), None)
            if values.get("client_id") != CLIENT_ID or values.get("client_secret") != SECRET:
                return self.answer(401, '{"error":"invalid_client"}')
            if not grant or grant["issuer"] != issuer or grant["redirect"] != values.get("redirect_uri"):
                return self.answer(400, '{"error":"invalid_grant"}')
            now = int(time.time())
            claims = {"iss": issuer, "aud": CLIENT_ID, "sub": grant["sub"], "email": grant["email"], "email_verified": True,
                      "name": "E2E " + name, "iat": now, "exp": now + 600}
            token = jwt.encode(claims, KEYS[name], algorithm="RS256", headers={"kid": name})
            return self.answer(200, json.dumps({"access_token": "at-" + secrets.token_hex(8), "token_type": "Bearer", "id_token": token}))
        return self.answer(404, '{"error":"not_found"}')


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
