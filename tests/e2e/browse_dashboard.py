"""The dashboard in a real browser (headless Chromium driven by Selenium), against the server
scripts/dashboard-e2e starts: sign-in (wrong password refused, right one accepted), the
onboarding charts and tables for users this script creates, the six success metrics for events
this script sends through PostHog's capture API (posthog-python), the events view, the
experiments view for two experiments whose numbers this script knows, the CSV link, a user's
page and deletion with the confirm step, the operations page. No page may log a console error (a CSP
violation included). Every page is shown 1280 and 390 px wide (a phone) and must not scroll
sideways, and its labels must be at least 12 px (chart text as rendered, after scaling). Screenshots go to $SCREENSHOTS.

Run by scripts/dashboard-e2e (not by pytest: its name does not start with test_)."""
import json
import os
import re
import sys
import urllib.error
import urllib.request
import uuid

import dashboard_product

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

URL = os.environ["ONBOARD_URL"]
ANON = os.environ["ANON_KEY"]
PASSWORD = os.environ["DASHBOARD_PASSWORD"]
SHOTS = os.environ.get("SCREENSHOTS", ".build/dashboard-screenshots")
WAIT = 30  # seconds: an upper bound on a wait for a condition, never a pause


def call(method, path, token=None, body=None):
    request = urllib.request.Request(URL + path, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("apikey", ANON)
    request.add_header("Authorization", "Bearer " + (token or ANON))
    request.add_header("Content-Type", "application/json")
    request.add_header("Prefer", "return=representation")
    with urllib.request.urlopen(request) as response:
        text = response.read().decode()
        return json.loads(text) if text else None


def sign_up(email):
    session = call("POST", "/auth/v1/signup", body={"email": email, "password": "Browser-pass-1"})
    return session["user"]["id"], session["access_token"]


def advance(token, user_id, states):
    for state in states:
        call("PATCH", f"/rest/v1/user_profiles?id=eq.{user_id}", token, {"onboarding_state": state})


def make_users():
    """Four users of today: one not started, one at USER_INFO, one at CHILD_INFO, one complete."""
    tag = uuid.uuid4().hex[:8]
    users = {}
    for name in ["idle", "started", "children", "done"]:
        users[name] = (f"{name}-{tag}@example.com",) + sign_up(f"{name}-{tag}@example.com")
    advance(users["started"][2], users["started"][1], ["USER_INFO"])
    advance(users["children"][2], users["children"][1], ["USER_INFO", "CHILD_INFO"])
    _, done_id, done_token = users["done"]
    advance(done_token, done_id, ["USER_INFO", "CHILD_INFO", "GOALS", "TOPICS", "DISPOSITIONS", "REVIEW"])
    call("POST", "/rest/v1/children", done_token, {"user_id": done_id, "name": "Ada", "goals": ["patience"], "topics": ["a", "b", "c"]})
    call("POST", "/rest/v1/rpc/complete_onboarding", done_token, {})
    return users


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1600", "--disable-gpu"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(options=options, service=service)


WIDTHS = [1280, 390]


def at_each_width(driver, wait, name, ready):
    """Shows the current page at each width: no horizontal overflow, a screenshot each."""
    for width in WIDTHS:
        driver.set_window_size(width, 1600)
        driver.refresh()
        ready()
        wait.until(lambda d: d.find_element(By.ID, "status").text in ("", "User deleted."))
        overflow = driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{name} at {width} px scrolls sideways by {overflow} px"
        small = driver.execute_script(SMALL_TEXT)
        assert not small, f"{name} at {width} px has text below 12 px: {small[:5]}"
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(f"{SHOTS}/{name}-{width}.png")
    driver.set_window_size(1280, 1600)


# Text drawn smaller than 12 px: SVG text as rendered (its font size times the chart's scale),
# and the labels, values and table cells of the page.
SMALL_TEXT = """
const small = [];
for (const t of document.querySelectorAll(".chart svg text")) {
  const chart = t.ownerSVGElement, box = chart.viewBox.baseVal;
  const scale = box && box.width ? chart.getBoundingClientRect().width / box.width : 1;
  const size = parseFloat(getComputedStyle(t).fontSize) * scale;
  if (size < 11.5) small.push(t.textContent + ": " + size.toFixed(1) + " px");
}
for (const e of document.querySelectorAll(".bar-label, .bar-value, .kpi-label, .kpi-value, .kpi-change, .metric-target, th, td, .legend, .about, .filters label")) {
  const size = parseFloat(getComputedStyle(e).fontSize);
  if (size < 12 && e.getClientRects().length) small.push(e.className + " " + e.textContent.slice(0, 30) + ": " + size + " px");
}
return small;
"""


def click(wait, selector):
    """Clicks the element once it is there, again if the page redrew it meanwhile."""
    def attempt(driver):
        try:
            driver.find_element(By.CSS_SELECTOR, selector).click()
            return True
        except StaleElementReferenceException:
            return False
    wait.until(attempt)


def no_console_errors(driver, where):
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    # The sign-in page's 401 is the page's own status, not an error of the page.
    errors = [e for e in errors if "401 (Unauthorized)" not in e["message"]]
    assert not errors, f"{where}: console errors: {errors}"


def main():
    os.makedirs(SHOTS, exist_ok=True)
    users = make_users()
    dashboard_product.send_events()
    driver = browser()
    wait = WebDriverWait(driver, WAIT, ignored_exceptions=[StaleElementReferenceException])
    try:
        # Sign-in: a wrong password is refused, the right one opens the onboarding page.
        driver.get(URL + "/dashboard/")
        wait.until(EC.presence_of_element_located((By.ID, "secret"))).send_keys("not-the-password")
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, ".error"), "Wrong password"))
        driver.save_screenshot(f"{SHOTS}/01-sign-in-refused.png")
        driver.find_element(By.ID, "secret").send_keys(PASSWORD)
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

        # Onboarding: the funnel's chart and numbers for today's four users.
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, 'section[data-table="funnel"] .chart .bar-fill')))
        wait.until(lambda d: d.find_element(By.ID, "status").text == "")
        funnel_rows = driver.find_elements(By.CSS_SELECTOR, 'section[data-table="funnel"] .numbers tbody tr')
        assert len(funnel_rows) == 8, f"funnel rows: {len(funnel_rows)}"
        cells = lambda row: [td.get_attribute("textContent") for td in row.find_elements(By.TAG_NAME, "td")]
        first, complete = cells(funnel_rows[0]), cells(funnel_rows[7])
        # Other suites may have signed users up on this server: count ours from the API's numbers.
        assert first[2] == "NOT_STARTED" and int(first[3]) >= 4, first
        assert complete[2] == "COMPLETE" and int(complete[3]) >= 1, complete
        for name in ["drop_off", "step_durations"]:
            wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, f'section[data-table="{name}"] .chart .bars')))
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, 'section[data-table="daily_completion"] .chart svg')))
        csv_link = driver.find_element(By.CSS_SELECTOR, 'section[data-table="funnel"] a.csv').get_attribute("href")
        assert "/dashboard/api/onboarding/funnel.csv?" in csv_link, csv_link
        driver.save_screenshot(f"{SHOTS}/02-onboarding.png")
        for name in ["step_durations", "daily_completion"]:
            section = driver.find_element(By.CSS_SELECTOR, f'section[data-table="{name}"]')
            driver.execute_script("arguments[0].scrollIntoView()", section)
            section.screenshot(f"{SHOTS}/02-{name}.png")
        # At a glance: the four numbers against the period before, and the daily trend's two lines.
        kpis = {e.get_attribute("data-kpi"): e for e in driver.find_elements(By.CSS_SELECTOR, "#kpis .kpi")}
        assert set(kpis) == {"sign_ups", "completion_rate_pct", "completions", "median_seconds_to_complete"}, set(kpis)
        assert int(kpis["sign_ups"].find_element(By.CLASS_NAME, "kpi-value").text) >= 4
        assert "vs the 30 days before" in kpis["sign_ups"].find_element(By.CLASS_NAME, "kpi-change").text
        assert len(driver.find_elements(By.CSS_SELECTOR, "#trend .chart svg polyline")) == 2
        # Steps as people say them; the drop-off chart only has the steps someone is at.
        labels = lambda name: [t.get_attribute("textContent") for t in driver.find_elements(By.CSS_SELECTOR, f'section[data-table="{name}"] .chart .bar-label')]
        assert "Child info" in labels("funnel") and "CHILD_INFO" not in labels("funnel"), labels("funnel")
        assert "Conversation goals" in labels("funnel"), labels("funnel")  # DASHBOARD_STEP_LABELS (scripts/dashboard-e2e)
        assert labels("drop_off") == ["Not started", "User info", "Child info"], labels("drop_off")
        at_each_width(driver, wait, "06-onboarding", lambda: wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#kpis .kpi"))))
        # The cohort picker: by provider, every user of this script is an e-mail user.
        driver.find_element(By.CSS_SELECTOR, 'select[name="cohort"] option[value="provider"]').click()
        driver.find_element(By.CSS_SELECTOR, "#filters button").click()
        wait.until(lambda d: "email" in [cells(r)[0] for r in d.find_elements(By.CSS_SELECTOR, 'section[data-table="funnel"] .numbers tbody tr')])
        assert "all" not in [cells(r)[0] for r in driver.find_elements(By.CSS_SELECTOR, 'section[data-table="funnel"] .numbers tbody tr')]
        no_console_errors(driver, "onboarding")

        # The success metrics, the events and the experiments views (tests/e2e/dashboard_product.py).
        dashboard_product.check(driver, wait, at_each_width, click, no_console_errors)

        # A user with a child: the child's every column readable (a card, not a cut-off table).
        driver.get(URL + "/dashboard/users#" + users["done"][1])
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#user-children .child")))
        fields = [dt.text for dt in driver.find_elements(By.CSS_SELECTOR, "#user-children .child dt")]
        for column in ["name", "goals", "topics", "temperament_talkative", "temperament_sensitivity", "temperament_accountability", "created_at"]:
            assert column in fields, fields
        at_each_width(driver, wait, "09-user-with-child", lambda: wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#user-children .child"))))

        # Users: search, open, delete with the confirm step.
        email, user_id, _ = users["children"]
        driver.get(URL + "/dashboard/users")
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#results table")))  # the newest users, listed on load
        driver.find_element(By.CSS_SELECTOR, '#search input[name="q"]').send_keys(email)
        driver.find_element(By.CSS_SELECTOR, "#search button").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#results tbody tr")) == 1)
        wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, f'button[data-user="{user_id}"]'))).click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "user-title"), email))
        wait.until(EC.text_to_be_present_in_element((By.ID, "user-profile"), "CHILD_INFO"))
        assert "email" in driver.find_element(By.ID, "user-providers").text
        assert len(driver.find_elements(By.CSS_SELECTOR, "#user-sessions tbody tr")) == 1
        # Times to the second in the viewer's zone; e-mails on one line.
        created = driver.find_element(By.CSS_SELECTOR, "#results td.time").text
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC([+-]\d{1,2}(:\d{2})?)?", created), created
        link = driver.find_element(By.CSS_SELECTOR, f'button[data-user="{user_id}"]')
        assert link.size["height"] < 30, f"the e-mail wraps: {link.size}"
        driver.save_screenshot(f"{SHOTS}/03-user.png")
        at_each_width(driver, wait, "07-user", lambda: wait.until(EC.text_to_be_present_in_element((By.ID, "user-profile"), "CHILD_INFO")))
        driver.find_element(By.ID, "delete-start").click()
        wait.until(EC.visibility_of_element_located((By.ID, "delete-yes")))
        assert email in driver.find_element(By.ID, "delete-name").text
        driver.save_screenshot(f"{SHOTS}/04-delete-confirm.png")
        driver.find_element(By.ID, "delete-yes").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "User deleted."))
        assert not driver.find_elements(By.CSS_SELECTOR, f'button[data-user="{user_id}"]')
        try:
            call("GET", "/auth/v1/user", users["children"][2])
            raise AssertionError("the deleted user's token still works")
        except urllib.error.HTTPError as error:
            assert error.code == 403, error.code
        no_console_errors(driver, "users")

        # Operations: migrations all applied, the pool, requests by route.
        driver.get(URL + "/dashboard/operations")
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#ops-migrations tbody tr")))
        statuses = {e.text for e in driver.find_elements(By.CSS_SELECTOR, "#ops-migrations tbody td span")}
        assert statuses == {"applied"}, statuses
        assert "/dashboard" in driver.find_element(By.ID, "ops-routes").text
        assert "in_use" in driver.find_element(By.ID, "ops-pool").text
        assert "connections_open" in driver.find_element(By.ID, "ops-pool").text
        # p50/p99 per route, and a rate from the first paint (not a placeholder).
        headers = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#ops-routes th")]
        assert "p50 ms" in headers and "p99 ms" in headers, headers
        rate_column = headers.index("per second now")
        first_rates = [row.find_elements(By.TAG_NAME, "td")[rate_column].text for row in driver.find_elements(By.CSS_SELECTOR, "#ops-routes tbody tr")]
        assert all(re.fullmatch(r"\d+(\.\d+)?", rate) for rate in first_rates), first_rates
        driver.save_screenshot(f"{SHOTS}/05-operations.png")
        at_each_width(driver, wait, "08-operations", lambda: wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#ops-migrations tbody tr"))))
        no_console_errors(driver, "operations")

        # Signing out ends the session: the page is the sign-in form again.
        driver.find_element(By.CSS_SELECTOR, "header form button").click()
        wait.until(EC.presence_of_element_located((By.ID, "secret")))
        driver.get(URL + "/dashboard/operations")
        wait.until(EC.presence_of_element_located((By.ID, "secret")))
        print(f"dashboard in Chromium: ok (screenshots in {SHOTS})")
    except Exception:
        driver.save_screenshot(f"{SHOTS}/failure.png")
        print(driver.get_log("browser"), file=sys.stderr)
        raise
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
