"""The dashboard's product analytics in the browser, for tests/e2e/browse_dashboard.py: the
events it sends first through PostHog's capture API (posthog-python), then the six success
metrics, the events view and the experiments view, each number checked against what was sent
(the experiments' intervals and p-values computed here, independently of the server)."""
import json
import os
import re
import urllib.request
import uuid
from datetime import datetime, timedelta, timezone
from math import erfc, sqrt

from posthog import Posthog
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

URL = os.environ["ONBOARD_URL"]
SERVICE = os.environ["SERVICE_ROLE_KEY"]
PROJECT_KEY = os.environ["ANALYTICS_PROJECT_KEY"]
SHOTS = os.environ.get("SCREENSHOTS", ".build/dashboard-screenshots")


def admin_flag(key, name, weights):
    variants = [{"key": variant, "rollout_percentage": weight} for variant, weight in weights]
    body = {"key": key, "name": name, "filters": {"groups": [{"properties": [], "rollout_percentage": 100}], "multivariate": {"variants": variants}}}
    request = urllib.request.Request(URL + "/analytics/v1/flags", method="POST", data=json.dumps(body).encode())
    for header, value in [("apikey", SERVICE), ("Authorization", "Bearer " + SERVICE), ("Content-Type", "application/json")]:
        request.add_header(header, value)
    with urllib.request.urlopen(request) as response:
        assert response.status == 200


# Two experiments: prompt-copy (control 4 of 40 convert, friendly 16 of 40) and srm-check
# (70 against 30 exposed on a 50/50 split: a sample-ratio mismatch).
EXPERIMENT = {"control": (40, 4), "friendly": (40, 16)}


def send_events():
    """NutriSync's events through the real capture endpoint (posthog-python, batched): 10 people
    shown the account prompt, 4 create an account (3 Apple, 1 e-mail), 5 skip (4 on
    onboarding_section_1, 1 on goals), 1 save_failed; and the experiments' exposures and goal
    events (onboarding_completed). App events: 20 + 20 conversions = 40, errors: 1."""
    admin_flag("prompt-copy", "Prompt copy", [("control", 50), ("friendly", 50)])
    admin_flag("srm-check", "", [("control", 50), ("test", 50)])
    posthog = Posthog(PROJECT_KEY, host=URL, disable_geoip=True, flush_at=100, flush_interval=60)
    now = datetime.now(timezone.utc)
    tag = uuid.uuid4().hex[:8]
    for index in range(10):
        person = f"nutri-{index}-{tag}"
        posthog.capture("account_prompt_shown", distinct_id=person, properties={"timing": "after_section_1"}, timestamp=now - timedelta(minutes=30))
        if index < 4:
            posthog.capture("account_created", distinct_id=person, properties={"method": "apple" if index < 3 else "email"}, timestamp=now - timedelta(minutes=29))
        elif index < 9:
            screen = "goals" if index == 8 else "onboarding_section_1"
            posthog.capture("account_skipped", distinct_id=person, properties={"screen": screen}, timestamp=now - timedelta(minutes=29))
        else:
            posthog.capture("save_failed", distinct_id=person, properties={"screen": "goals"}, timestamp=now - timedelta(minutes=29))
    exposures = [("prompt-copy", variant, count, converted) for variant, (count, converted) in EXPERIMENT.items()]
    exposures += [("srm-check", "control", 70, 0), ("srm-check", "test", 30, 0)]
    for flag, variant, count, converted in exposures:
        for index in range(count):
            person = f"{flag}-{variant}-{index}-{tag}"
            posthog.capture("$feature_flag_called", distinct_id=person, properties={"$feature_flag": flag, "$feature_flag_response": variant}, timestamp=now - timedelta(hours=2))
            if index < converted:
                posthog.capture("onboarding_completed", distinct_id=person, properties={"duration": 200}, timestamp=now - timedelta(hours=1))
    posthog.flush()
    posthog.shutdown()


def pct(value):
    """The dashboard's one percentage format: at most one decimal (two below 1), no trailing zeros."""
    text = f"{value:.{2 if abs(value) < 1 else 1}f}".rstrip("0").rstrip(".")
    return text + "%"


def wilson(x, n, z=1.959963984540054):
    p = x / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0, c - h), min(1, c + h)



def table_rows(wait, root, selector):
    """The cells' texts of the rows `selector` finds under `root`, read again when the page
    redraws the table while it is read (a redraw on a width change replaces the rows)."""
    def read(_):
        try:
            return [[td.text for td in row.find_elements(By.TAG_NAME, "td")] for row in root.find_elements(By.CSS_SELECTOR, selector)] or None
        except StaleElementReferenceException:
            return None
    return wait.until(read)

def check(driver, wait, at_each_width, click, no_console_errors):
    # The six success metrics, each against its target, for this script's users and events.
    driver.get(URL + "/dashboard/")
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '#metrics .metric[data-metric="skip_patterns"]')))
    wait.until(lambda d: d.find_element(By.ID, "status").text == "")
    card = lambda key: driver.find_element(By.CSS_SELECTOR, f'#metrics .metric[data-metric="{key}"]')
    value = lambda key: card(key).find_element(By.CLASS_NAME, "kpi-value").text
    target = lambda key: card(key).find_element(By.CLASS_NAME, "metric-target").text
    detail = lambda key: card(key).find_element(By.CLASS_NAME, "kpi-change").text
    # The server's history: 1 of the 4 users completed; 3 stopped, one at each of the first steps.
    assert value("completion_rate") == "25%" and target("completion_rate") == "Target > 90% · ✗ off target", (value("completion_rate"), target("completion_rate"))
    assert detail("completion_rate") == "1 of 4 sign-ups completed onboarding.", detail("completion_rate")
    assert value("drop_off") == "Not started" and "User info: 1 stopped (25% of 4)" in detail("drop_off"), detail("drop_off")
    # The complete user took about a second: far under five minutes.
    assert re.fullmatch(r"< 1 s|\d{1,2} s", value("time_to_complete")), value("time_to_complete")
    assert target("time_to_complete") == "Target < 5 min · ✓ on target", target("time_to_complete")
    # The events: 4 of 10 prompted created an account, 1 error among 40 app events, 5 skips.
    assert value("account_creation_rate") == "40%" and "✓ on target" in target("account_creation_rate")
    assert detail("account_creation_rate") == "4 of 10 people shown the prompt created an account (apple 3, email 1).", detail("account_creation_rate")
    assert value("error_rate") == "2.5%" and target("error_rate") == "Target < 1% · ✗ off target", (value("error_rate"), target("error_rate"))
    assert detail("error_rate").startswith("1 of 40 app events were errors, from 1 person"), detail("error_rate")
    assert value("skip_patterns") == "onboarding_section_1", value("skip_patterns")
    assert detail("skip_patterns") == "onboarding_section_1: 4 skips · goals: 1 skip — 50% of the people shown the prompt skipped.", detail("skip_patterns")
    at_each_width(driver, wait, "10-metrics", lambda: wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#metrics .metric"))))
    driver.set_window_size(390, 1600)
    driver.refresh()
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#metrics .metric")))
    driver.find_element(By.ID, "metrics").screenshot(f"{SHOTS}/10-metrics-card-390.png")
    driver.set_window_size(1280, 1600)
    # A window without sign-ups or events: every card says "no data", none 0%.
    driver.get(URL + "/dashboard/?from=2020-01-01&to=2020-02-01")
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#metrics .metric")))
    wait.until(lambda d: d.find_element(By.ID, "status").text == "")
    shown = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#metrics .metric .kpi-value")]
    assert shown == ["no data"] * 6, shown
    assert detail("account_creation_rate") == "No account_prompt_shown events in this window.", detail("account_creation_rate")
    driver.find_element(By.ID, "metrics").screenshot(f"{SHOTS}/11-metrics-no-data.png")
    no_console_errors(driver, "metrics")

    # Events: the top events, then one event by one property; the date range carries over.
    driver.get(URL + "/dashboard/events")
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#events-top tbody tr")))
    wait.until(lambda d: d.find_element(By.ID, "status").text == "")
    top = table_rows(wait, driver, "#events-top tbody tr")
    assert [row[:2] for row in top] == [["$feature_flag_called", "180"], ["onboarding_completed", "20"], ["account_prompt_shown", "10"],
                                        ["account_skipped", "5"], ["account_created", "4"], ["save_failed", "1"]], top
    assert top[2][2] == pct(100 * 10 / 220) and top[2][3] == "10", top[2]
    assert driver.find_element(By.ID, "events-total").text.startswith("220 × all events from 190 people"), driver.find_element(By.ID, "events-total").text
    assert len(driver.find_elements(By.CSS_SELECTOR, "#events-trend .chart svg polyline")) == 1
    # By screen over every event: 214 events have none.
    breakdown = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#events-breakdown .bar-label")]
    assert breakdown == ["(not set)", "onboarding_section_1", "goals"], breakdown
    at_each_width(driver, wait, "12-events", lambda: wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#events-top tbody tr"))))
    click(wait, 'button[data-event="account_created"]')
    wait.until(lambda d: d.find_element(By.ID, "events-total").text.startswith("4 × account_created"))
    click(wait, 'select[name="breakdown"] option[value="method"]')
    driver.find_element(By.CSS_SELECTOR, "#events-filters button").click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "breakdown-title"), "account_created by method"))
    bars = [(row.find_element(By.CLASS_NAME, "bar-label").text, row.find_element(By.CLASS_NAME, "bar-value").text)
            for row in driver.find_elements(By.CSS_SELECTOR, "#events-breakdown .bar-row")]
    assert bars == [("apple", "3 (75%) · 3 people"), ("email", "1 (25%) · 1 person")], bars
    assert "event=account_created" in driver.current_url and "breakdown=method" in driver.current_url
    at_each_width(driver, wait, "13-events-by-method", lambda: wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#events-breakdown .bar-row"))))
    no_console_errors(driver, "events")

    # Experiments: the numbers this script knows, computed here independently.
    driver.get(URL + "/dashboard/experiments?goal=event:onboarding_completed&days=14")
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, 'section.experiment[data-flag="prompt-copy"] tbody tr')))
    wait.until(lambda d: d.find_element(By.ID, "status").text == "")
    experiment = driver.find_element(By.CSS_SELECTOR, 'section.experiment[data-flag="prompt-copy"]')
    head = [th.text for th in experiment.find_elements(By.TAG_NAME, "th")]
    rows = {cells[0]: dict(zip(head, cells)) for cells in table_rows(wait, experiment, "tbody tr")}
    for variant, (exposed, converted) in EXPERIMENT.items():
        low, high = wilson(converted, exposed)
        row = rows[variant]
        assert row["exposures"] == str(exposed) and row["conversions"] == str(converted), row
        assert row["rate"] == pct(100 * converted / exposed) and row["95% interval"] == pct(100 * low) + " – " + pct(100 * high), row
        assert row["weight"] == "50%", row
    # Pooled two-proportion z-test, two-sided: friendly against control.
    (n1, x1), (n2, x2) = EXPERIMENT["control"], EXPERIMENT["friendly"]
    pooled = (x1 + x2) / (n1 + n2)
    z = (x2 / n2 - x1 / n1) / sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    assert rows["friendly"]["p-value"] == f"{erfc(abs(z) / sqrt(2)):.3f}" and rows["friendly"]["vs control"] == "+30.0 points", rows["friendly"]
    assert rows["control"]["p-value"] == "—"
    assert experiment.find_element(By.CLASS_NAME, "leader").text.startswith("Leader: friendly"), experiment.text
    assert not experiment.find_elements(By.CLASS_NAME, "srm")
    mismatch = driver.find_element(By.CSS_SELECTOR, 'section.experiment[data-flag="srm-check"]')
    warning = mismatch.find_element(By.CLASS_NAME, "srm").text
    # 70 against 30 on 50/50: chi-square (20² + 20²) / 50 = 16.
    assert "Sample ratio mismatch" in warning and "control 70, test 30" in warning and "χ² = 16.0" in warning, warning
    assert mismatch.find_element(By.CLASS_NAME, "no-leader").text.startswith("No leader"), mismatch.text
    assert driver.find_element(By.CSS_SELECTOR, 'select[name="goal"]').get_attribute("value") == "event:onboarding_completed"
    at_each_width(driver, wait, "14-experiments", lambda: wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "section.experiment tbody tr"))))
    no_console_errors(driver, "experiments")
