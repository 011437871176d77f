"""The OAuth redirect flow in a real browser (headless Chromium driven by Selenium), against the
server and the loopback OpenID provider (tests/e2e/oidc_provider.py) that scripts/dashboard-e2e
starts: the app sends the browser to /auth/v1/authorize, the provider's sign-in page is filled
in and submitted, and the browser lands on redirect_to with a session in the fragment; then the
signed-in user links a second provider the same way (GET /user/identities/authorize), and
both identities belong to the one user. Also the PKCE flow: the browser lands with ?code=,
which the app exchanges once.

Run by scripts/dashboard-e2e (not by pytest: its name does not start with test_)."""
import base64
import hashlib
import json
import os
import secrets
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

URL = os.environ["ONBOARD_URL"]
ANON = os.environ["ANON_KEY"]
APP = os.environ["OAUTH_APP_URL"]
WAIT = 30  # seconds: an upper bound on a wait for a condition, never a pause


def call(method, path, token=None, body=None):
    request = urllib.request.Request(URL + path, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("apikey", ANON)
    request.add_header("Authorization", "Bearer " + (token or ANON))
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read().decode() or "null")


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000", "--disable-gpu"]:
        options.add_argument(argument)
    service = webdriver.ChromeService(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(options=options, service=service)


def sign_in_at_provider(driver, wait, start, email):
    """Opens `start`, fills in the provider's sign-in page, and waits for the app page."""
    driver.get(start)
    wait.until(EC.presence_of_element_located((By.ID, "email"))).send_keys(email)
    driver.find_element(By.ID, "sign-in").click()
    wait.until(lambda d: d.current_url.startswith(APP) and d.find_elements(By.ID, "landed"))
    return driver.current_url


def check(condition, message):
    if not condition:
        print("browse_oauth: FAILED:", message)
        sys.exit(1)


def main():
    driver = browser()
    wait = WebDriverWait(driver, WAIT)
    try:
        email = f"browser-{uuid.uuid4().hex[:8]}@example.com"
        redirect = urllib.parse.quote(APP, safe="")
        landed = sign_in_at_provider(driver, wait, f"{URL}/auth/v1/authorize?provider=oidc&redirect_to={redirect}", email)
        session = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(landed).fragment))
        check(session.get("token_type") == "bearer" and session.get("access_token"), f"no session on {landed}")
        shown = driver.find_element(By.ID, "params").text
        check("access_token=" in shown, "the app page did not see the fragment")
        user = call("GET", "/auth/v1/user", session["access_token"])
        check(user["email"] == email, f"signed in as {user['email']}, not {email}")
        print(f"browse_oauth: signed in with the OpenID provider as {email} ({user['id']})")

        # Linking: the signed-in user asks for the provider's URL, the browser goes there.
        linking = f"/auth/v1/user/identities/authorize?provider=google&skip_http_redirect=true&redirect_to={redirect}"
        url = call("GET", linking, session["access_token"])["url"]
        landed = sign_in_at_provider(driver, wait, url, f"second-{email}")
        linked = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(landed).fragment))
        check(linked.get("access_token"), f"no session after linking: {landed}")
        after = call("GET", "/auth/v1/user", linked["access_token"])
        providers = sorted(identity["provider"] for identity in after["identities"])
        check(after["id"] == user["id"] and providers == ["google", "oidc"], f"linking gave {after['id']} with {providers}")
        print(f"browse_oauth: linked a second provider to the same user: {providers}")

        # PKCE: the browser lands with ?code=, exchanged once.
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        start = f"{URL}/auth/v1/authorize?provider=oidc&redirect_to={redirect}&code_challenge={challenge}&code_challenge_method=s256"
        landed = sign_in_at_provider(driver, wait, start, f"pkce-{email}")
        code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(landed).query)).get("code")
        check(code and "access_token" not in landed, f"no code on {landed}")
        exchanged = call("POST", "/auth/v1/token?grant_type=pkce", body={"auth_code": code, "code_verifier": verifier})
        check(exchanged["user"]["email"] == f"pkce-{email}", "the PKCE code gave another user")
        try:
            call("POST", "/auth/v1/token?grant_type=pkce", body={"auth_code": code, "code_verifier": verifier})
            check(False, "a PKCE code was exchanged twice")
        except urllib.error.HTTPError as error:
            check(error.code == 404, f"a replayed PKCE code answered {error.code}")
        print("browse_oauth: the PKCE flow's code was exchanged once")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
