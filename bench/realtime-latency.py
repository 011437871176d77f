#!/usr/bin/env python3
"""Realtime latency: PATCH one's own user_profiles row over REST, time until the `postgres_changes`
UPDATE arrives on a supabase-py async realtime subscription (vsn 1.0.0) to that row.

    ANON_KEY=... <e2e venv>/bin/python bench/realtime-latency.py [URL] [N]

URL defaults to $ONBOARD_URL or http://127.0.0.1:54321, N to 1000. Signs up a fresh user, subscribes
to UPDATEs of its own row (filter id=eq.<id>), then sends N PATCHes one after another with
httpx.AsyncClient (keep-alive), each waiting for its event (or --timeout) before the next. Each
PATCH moves `onboarding_state` to the next of the seven non-COMPLETE states (user_profiles has no
free text column; COMPLETE would stamp onboarding_completed_at), so consecutive values differ and
an event is matched to its PATCH by the value written. Latency = from just before the PATCH is
sent to the event's arrival in the subscription callback. Prints one summary line and one JSON
line; exits 1 if any event was missed.
"""
import argparse
import asyncio
import json
import math
import os
import sys
import time
import uuid

import httpx
from realtime import RealtimeSubscribeStates
from supabase import AsyncClientOptions, acreate_client

STATES = ["USER_INFO", "CHILD_INFO", "GOALS", "TOPICS", "DISPOSITIONS", "REVIEW", "NOT_STARTED"]


def percentile(sorted_values: list, p: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return float("nan")
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


async def run(url: str, anon_key: str, count: int, warmup: int, timeout: float) -> dict:
    loop = asyncio.get_running_loop()
    async with httpx.AsyncClient(timeout=10) as http:
        client = await acreate_client(
            url,
            anon_key,
            options=AsyncClientOptions(
                auto_refresh_token=False,
                persist_session=False,
                httpx_client=http,
                realtime={"auto_reconnect": False, "max_retries": 1},
            ),
        )
        response = await client.auth.sign_up(
            {"email": f"bench-rt-{uuid.uuid4().hex[:12]}@example.com", "password": "Bench-pass-1"}
        )
        if response.session is None:
            raise SystemExit("sign-up returned no session (auto-confirm is required)")
        user_id = response.user.id
        token = response.session.access_token
        # Let the client's SIGNED_IN listener (a background realtime.set_auth) run, then be explicit.
        for _ in range(100):
            if not getattr(client, "_background_tasks", None):
                break
            await asyncio.sleep(0)
        await client.realtime.set_auth(token)

        pending: dict = {"value": None, "future": None}

        def on_change(payload: dict) -> None:
            arrived = time.perf_counter()
            record = payload["data"].get("record") or {}
            future = pending["future"]
            if future is not None and not future.done() and record.get("onboarding_state") == pending["value"]:
                future.set_result(arrived)

        states: list = []
        system: list = []
        channel = client.channel("bench-profile")
        channel.on_postgres_changes("UPDATE", on_change, table="user_profiles", schema="public", filter=f"id=eq.{user_id}")
        channel.on_system(system.append)
        await asyncio.wait_for(channel.subscribe(lambda state, error: states.append((state, error))), 15)
        if not states or states[0][0] != RealtimeSubscribeStates.SUBSCRIBED:
            raise SystemExit(f"subscribe failed: {states}")
        deadline = time.monotonic() + 2
        while not system and time.monotonic() < deadline:  # Realtime's "Subscribed to PostgreSQL" system message
            await asyncio.sleep(0.01)

        headers = {"apikey": anon_key, "Authorization": f"Bearer {token}", "Prefer": "return=minimal"}
        endpoint = f"{url.rstrip('/')}/rest/v1/user_profiles"
        params = {"id": f"eq.{user_id}"}
        latencies: list = []
        patch_times: list = []
        missed = 0
        try:
            for i in range(warmup + count):
                value = STATES[i % len(STATES)]
                future = loop.create_future()
                pending["value"], pending["future"] = value, future
                sent = time.perf_counter()
                reply = await http.patch(endpoint, params=params, json={"onboarding_state": value}, headers=headers)
                answered = time.perf_counter()
                if reply.status_code not in (200, 204):
                    raise SystemExit(f"PATCH {i} answered {reply.status_code}: {reply.text}")
                try:
                    arrived = await asyncio.wait_for(asyncio.shield(future), timeout)
                except asyncio.TimeoutError:
                    if i >= warmup:
                        missed += 1
                    continue
                if i >= warmup:
                    latencies.append((arrived - sent) * 1000)
                    patch_times.append((answered - sent) * 1000)
        finally:
            pending["future"] = None
            try:
                await client.realtime.remove_all_channels()
            except Exception:
                await client.realtime.close()

    latencies.sort()
    patch_times.sort()
    return {
        "bench": "realtime-latency",
        "url": url,
        "count": count,
        "received": len(latencies),
        "missed": missed,
        "p50_ms": round(percentile(latencies, 50), 3),
        "p99_ms": round(percentile(latencies, 99), 3),
        "max_ms": round(latencies[-1], 3) if latencies else float("nan"),
        "mean_ms": round(sum(latencies) / len(latencies), 3) if latencies else float("nan"),
        "patch_p50_ms": round(percentile(patch_times, 50), 3),
        "warmup": warmup,
        "timeout_s": timeout,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", nargs="?", default=os.environ.get("ONBOARD_URL", "http://127.0.0.1:54321"))
    parser.add_argument("count", nargs="?", type=int, default=1000, help="measured PATCHes (default 1000)")
    parser.add_argument("--warmup", type=int, default=20, help="unmeasured PATCHes first (default 20)")
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds to wait for each event (default 2)")
    args = parser.parse_args()
    anon_key = os.environ.get("ANON_KEY")
    if not anon_key:
        print("ANON_KEY must be set", file=sys.stderr)
        return 2
    result = asyncio.run(run(args.url, anon_key, args.count, args.warmup, args.timeout))
    print(
        f"realtime-latency: received {result['received']}/{result['count']} "
        f"p50 {result['p50_ms']:.3f} ms  p99 {result['p99_ms']:.3f} ms  max {result['max_ms']:.3f} ms  "
        f"(PATCH p50 {result['patch_p50_ms']:.3f} ms)"
    )
    print(json.dumps(result))
    return 0 if result["received"] == result["count"] else 1


if __name__ == "__main__":
    sys.exit(main())
