"""Product analytics end to end: posthog-python from PyPI against the real server (capture,
gzip batches, identify and alias, flags evaluated by the server and locally by the SDK), and
supabase-py through public.track.

scripts/e2e exports ONBOARD_URL, ANALYTICS_PROJECT_KEY, ANALYTICS_SECRET_KEY, SERVICE_ROLE_KEY and
ONBOARD_DB (read with psql).
"""
import os
import subprocess
import uuid

import pytest
import requests
from posthog import Posthog

from conftest import URL, SERVICE_ROLE_KEY

PROJECT_KEY = os.environ.get("ANALYTICS_PROJECT_KEY", "")
SECRET_KEY = os.environ.get("ANALYTICS_SECRET_KEY", "")
DATABASE = os.environ.get("ONBOARD_DB")

pytestmark = pytest.mark.skipif(
    not (DATABASE and PROJECT_KEY and SECRET_KEY), reason="no database URL (ONBOARD_DB) or analytics keys in this run")


def psql(sql: str, **variables: str) -> str:
    command = ["psql", DATABASE, "-v", "ON_ERROR_STOP=1", "-qAt"]
    for name, value in variables.items():
        command += ["-v", f"{name}={value}"]
    return subprocess.run(command, input=sql, check=True, capture_output=True, text=True).stdout.strip()


def client(**options) -> Posthog:
    return Posthog(PROJECT_KEY, host=URL, disable_geoip=True, **options)


def admin_flag(flag: dict) -> None:
    headers = {"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"}
    response = requests.post(f"{URL}/analytics/v1/flags", json=flag, headers=headers, timeout=10)
    assert response.status_code == 200, response.text


def test_capture_and_retried_uuid_count_once():
    posthog = client(sync_mode=True)
    distinct_id = f"device-{uuid.uuid4()}"
    event_id = str(uuid.uuid4())
    posthog.capture("onboarding_started", distinct_id=distinct_id, properties={"screen": "welcome"}, uuid=event_id)
    posthog.capture("onboarding_started", distinct_id=distinct_id, properties={"screen": "welcome"}, uuid=event_id)
    posthog.capture("section_completed", distinct_id=distinct_id, properties={"section": "goals"})
    posthog.shutdown()
    rows = psql("SELECT event, properties->>'screen' FROM product_analytics.events WHERE distinct_id = :'id' ORDER BY event", id=distinct_id)
    assert rows.splitlines() == ["onboarding_started|welcome", "section_completed|"]


def test_gzip_batches_arrive_whole():
    posthog = client(gzip=True, flush_at=100, flush_interval=60)
    distinct_id = f"batch-{uuid.uuid4()}"
    for index in range(250):
        posthog.capture("account_prompt_shown", distinct_id=distinct_id, properties={"timing": "after_goals", "n": index})
    posthog.flush()
    posthog.shutdown()
    assert psql("SELECT count(*) FROM product_analytics.events WHERE distinct_id = :'id'", id=distinct_id) == "250"
    assert psql("SELECT sum((properties->>'n')::int) FROM product_analytics.events WHERE distinct_id = :'id'", id=distinct_id) == str(sum(range(250)))


def test_raw_wire_answers_as_posthog():
    ok = requests.post(f"{URL}/i/v0/e/", json={"api_key": PROJECT_KEY, "event": "e", "distinct_id": "raw"}, timeout=10)
    assert ok.status_code == 200 and ok.json() == {"status": 1}
    wrong = requests.post(f"{URL}/batch/", json={"api_key": "phc_wrong", "batch": [{"event": "e", "distinct_id": "raw"}]}, timeout=10)
    assert wrong.status_code == 401 and wrong.json()["code"] == "invalid_api_key"
    bad = requests.post(f"{URL}/batch/", data=b"{nope", headers={"Content-Type": "application/json"}, timeout=10)
    assert bad.status_code == 400 and bad.json()["type"] == "validation_error"


def test_identify_and_alias_make_one_person():
    posthog = client(sync_mode=True)
    anonymous = f"anon-{uuid.uuid4()}"
    user = f"user-{uuid.uuid4()}"
    other = f"other-device-{uuid.uuid4()}"
    posthog.capture("onboarding_started", distinct_id=anonymous, properties={"$set_once": {"first_seen_screen": "welcome"}})
    posthog.capture("$identify", distinct_id=user, properties={"$anon_distinct_id": anonymous, "$set": {"plan": "family"}})
    posthog.alias(previous_id=other, distinct_id=user)
    posthog.set(distinct_id=other, properties={"platform": "ios"})
    posthog.shutdown()
    persons = psql(
        "SELECT count(DISTINCT person_id) FROM product_analytics.person_distinct_ids WHERE distinct_id IN (:'a', :'u', :'o')",
        a=anonymous, u=user, o=other)
    assert persons == "1"
    properties = psql(
        "SELECT p.properties->>'first_seen_screen', p.properties->>'plan', p.properties->>'platform' FROM product_analytics.persons p "
        "JOIN product_analytics.person_distinct_ids d ON d.person_id = p.id WHERE d.distinct_id = :'u'", u=user)
    assert properties == "welcome|family|ios"


def test_track_rpc_records_the_callers_own_id(signed_up):
    supabase, user, _ = signed_up
    supabase.rpc("track", {"event": "profile_created", "properties": {"anonymous": False}}).execute()
    assert psql(
        "SELECT count(*) FROM product_analytics.events WHERE distinct_id = :'id' AND user_id = :'id'::uuid AND event = 'profile_created'",
        id=user.id) == "1"


FLAGS = [
    {"key": "e2e-rollout", "name": "a plain rollout", "filters": {"groups": [{"properties": [], "rollout_percentage": 37}]}},
    {
        "key": "e2e-experiment",
        "name": "onboarding order",
        "filters": {
            "groups": [{"properties": [], "rollout_percentage": 80}],
            "multivariate": {"variants": [
                {"key": "control", "rollout_percentage": 34},
                {"key": "short", "rollout_percentage": 33},
                {"key": "long", "rollout_percentage": 33},
            ]},
            "payloads": {"control": ["USER_INFO", "GOALS"], "short": ["GOALS"], "long": ["USER_INFO", "CHILD_INFO", "GOALS"]},
        },
    },
    {
        "key": "e2e-targeted",
        "name": "mobile first",
        "filters": {"groups": [
            {"properties": [{"key": "platform", "value": ["ios", "android"], "operator": "exact", "type": "person"}], "rollout_percentage": 60},
            {"properties": [{"key": "app_version", "value": "2", "operator": "gte", "type": "person"}], "rollout_percentage": 100},
        ]},
    },
    {"key": "e2e-off", "name": "switched off", "active": False, "filters": {"groups": [{"properties": [], "rollout_percentage": 100}]}},
]


def person(index: int) -> dict:
    return {"platform": ["iOS", "android", "web"][index % 3], "app_version": index % 4}


def test_local_evaluation_equals_the_servers_answer():
    for flag in FLAGS:
        admin_flag(flag)
    local = client(secret_key=SECRET_KEY, send=False)
    local.load_feature_flags()
    assert {flag["key"] for flag in local.feature_flags} >= {flag["key"] for flag in FLAGS}
    session = requests.Session()
    mismatches = []
    seen = {}
    for index in range(10_000):
        distinct_id = f"user-{index}"
        answer = session.post(
            f"{URL}/flags/?v=2",
            json={"api_key": PROJECT_KEY, "distinct_id": distinct_id, "person_properties": person(index)},
            timeout=10,
        ).json()["featureFlags"]
        evaluated = local.evaluate_flags(distinct_id, person_properties=person(index), only_evaluate_locally=True)
        for flag in FLAGS:
            mine = evaluated.get_flag(flag["key"])
            theirs = answer.get(flag["key"], False)
            seen.setdefault(flag["key"], set()).add(theirs)
            if mine != theirs:
                mismatches.append((distinct_id, flag["key"], mine, theirs))
    local.shutdown()
    assert mismatches == []
    assert seen["e2e-experiment"] == {False, "control", "short", "long"}
    assert seen["e2e-rollout"] == {False, True} and seen["e2e-targeted"] == {False, True} and seen["e2e-off"] == {False}


def test_remote_flags_payloads_and_exposures():
    for flag in FLAGS:
        admin_flag(flag)
    remote = client(sync_mode=True)
    for index in range(200):
        distinct_id = f"remote-{index}"
        evaluated = remote.evaluate_flags(distinct_id)
        variant = evaluated.get_flag("e2e-experiment")
        assert variant in (False, "control", "short", "long")
        if variant:
            payload = evaluated.get_flag_payload("e2e-experiment")
            assert payload == next(f for f in FLAGS if f["key"] == "e2e-experiment")["filters"]["payloads"][variant]
    remote.shutdown()
    exposures = psql("SELECT count(*) FROM product_analytics.exposures WHERE flag_key = 'e2e-experiment' AND distinct_id LIKE 'remote-%'")
    assert int(exposures) == 200


def test_the_project_key_reads_no_definitions():
    for target in (f"/api/feature_flag/local_evaluation?token={PROJECT_KEY}&send_cohorts", f"/flags/definitions?token={PROJECT_KEY}"):
        response = requests.get(URL + target, headers={"Authorization": f"Bearer {PROJECT_KEY}"}, timeout=10)
        assert response.status_code == 401
        assert SECRET_KEY not in response.text and "filters" not in response.text
    listed = requests.get(f"{URL}/analytics/v1/flags", headers={"Authorization": f"Bearer {PROJECT_KEY}"}, timeout=10)
    assert listed.status_code == 401
