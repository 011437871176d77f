"""Realtime Broadcast and Presence through realtime-py's async client (supabase-py's realtime),
and realtime-py's `http_send` / the batch REST broadcast.

Behind scripts/replicas, ONBOARD_REPLICA_URLS names each server: the cross-server test opens one
client on each, so a broadcast and a presence must cross between servers through PostgreSQL.
"""
import asyncio
import os
import time
import uuid

import httpx
import pytest
from realtime import AsyncRealtimeClient, RealtimeSubscribeStates

from conftest import ANON_KEY, URL

SUBSCRIBED = RealtimeSubscribeStates.SUBSCRIBED
CHANNEL_ERROR = RealtimeSubscribeStates.CHANNEL_ERROR
REPLICAS = os.environ.get("ONBOARD_REPLICA_URLS", "").split()


def topic() -> str:
    return f"room-{uuid.uuid4().hex[:10]}"


async def wait_until(predicate, timeout: float = 10.0, interval: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(interval)
    return True


async def joined(base: str, name: str, config: dict, setup=None, token: str | None = None):
    """A client on `base`, one channel `name` with `config`, subscribed; returns (client, channel, states)."""
    client = AsyncRealtimeClient(f"{base}/realtime/v1", ANON_KEY, auto_reconnect=False)
    await client.connect()
    if token:
        await client.set_auth(token)
    channel = client.channel(name, {"config": config})
    if setup:
        setup(channel)
    states: list = []
    await channel.subscribe(lambda state, error: states.append((state, error)))
    await wait_until(lambda: states, 10)
    return client, channel, states


def test_broadcast_self_ack_and_fan_out():
    async def run():
        name = topic()
        heard_a, heard_b = [], []
        a, channel_a, states_a = await joined(
            URL, name, {"broadcast": {"self": True, "ack": True}}, lambda c: c.on_broadcast("cursor", heard_a.append)
        )
        b, channel_b, states_b = await joined(URL, name, {"broadcast": {"self": False}}, lambda c: c.on_broadcast("*", heard_b.append))
        try:
            assert [s for s, _ in states_a] == [SUBSCRIBED] and [s for s, _ in states_b] == [SUBSCRIBED]
            await channel_a.send_broadcast("cursor", {"x": 1})
            assert await wait_until(lambda: heard_a and heard_b), (heard_a, heard_b)
            assert heard_a[0]["payload"] == {"x": 1} and heard_b[0]["event"] == "cursor"
            # b does not hear itself.
            await channel_b.send_broadcast("cursor", {"x": 2})
            assert await wait_until(lambda: len(heard_a) == 2)
            await channel_a.send_broadcast("cursor", {"x": 3})
            assert await wait_until(lambda: len(heard_b) == 2)
            assert [m["payload"]["x"] for m in heard_b] == [1, 3]
        finally:
            await a.close()
            await b.close()

    asyncio.run(run())


def test_presence_sync_join_and_leave():
    async def run():
        name = topic()
        syncs = []
        a, channel_a, _ = await joined(URL, name, {"presence": {"key": "alice"}}, lambda c: c.on_presence_sync(lambda: syncs.append(1)))
        b, channel_b, _ = await joined(URL, name, {"presence": {"key": "bob"}}, lambda c: c.on_presence_sync(lambda: None))
        try:
            await channel_a.track({"status": "online"})
            assert await wait_until(lambda: "alice" in channel_b.presence_state()), channel_b.presence_state()
            assert channel_b.presence_state()["alice"][0]["status"] == "online"
            await channel_b.track({"status": "here"})
            assert await wait_until(lambda: "bob" in channel_a.presence_state())
            # A late joiner gets both in presence_state.
            c, channel_c, _ = await joined(URL, name, {"presence": {"key": "carol"}}, lambda c: c.on_presence_sync(lambda: None))
            assert await wait_until(lambda: {"alice", "bob"} <= set(channel_c.presence_state()))
            await channel_a.untrack()
            assert await wait_until(lambda: "alice" not in channel_c.presence_state())
            await b.close()  # the socket's presence leaves with it
            assert await wait_until(lambda: "bob" not in channel_c.presence_state())
            await c.close()
        finally:
            await a.close()
            await b.close()

    asyncio.run(run())


def test_http_send_and_batch_broadcast():
    async def run():
        name = topic()
        heard = []
        client, channel, _ = await joined(URL, name, {}, lambda c: c.on_broadcast("*", heard.append))
        try:
            await channel.http_send("ping", {"n": 1})
            async with httpx.AsyncClient() as http:
                response = await http.post(
                    f"{URL}/realtime/v1/api/broadcast",
                    headers={"apikey": ANON_KEY, "Authorization": f"Bearer {ANON_KEY}"},
                    json={"messages": [{"topic": name, "event": "batch", "payload": {"n": 2}}]},
                )
                assert response.status_code == 202, response.text
                bad = await http.post(f"{URL}/realtime/v1/api/broadcast", headers={"apikey": ANON_KEY}, json={"messages": [{"topic": name}]})
                assert bad.status_code == 422 and "errors" in bad.json()
            assert await wait_until(lambda: len(heard) == 2), heard
            assert [(m["event"], m["payload"]["n"]) for m in heard] == [("ping", 1), ("batch", 2)]
        finally:
            await client.close()

    asyncio.run(run())


def test_private_channel_without_a_policy_is_refused():
    async def run():
        client, channel, states = await joined(URL, topic(), {"private": True})
        try:
            assert states and states[0][0] == CHANNEL_ERROR, states
            assert "You do not have permissions to read from this Channel topic" in str(states[0][1])
        finally:
            await client.close()

    asyncio.run(run())


@pytest.mark.skipif(len(REPLICAS) < 2, reason="needs ONBOARD_REPLICA_URLS (scripts/replicas)")
def test_broadcast_and_presence_cross_servers():
    async def run():
        name = topic()
        heard = []
        first, channel_first, _ = await joined(REPLICAS[0], name, {"presence": {"key": "first"}}, lambda c: c.on_presence_sync(lambda: None))
        second, channel_second, _ = await joined(
            REPLICAS[1], name, {"presence": {"key": "second"}}, lambda c: (c.on_broadcast("*", heard.append), c.on_presence_sync(lambda: None))
        )
        try:
            latencies = []
            for i in range(20):
                started = time.perf_counter()
                await channel_first.send_broadcast("tick", {"i": i})
                assert await wait_until(lambda: len(heard) == i + 1, 5), heard
                latencies.append((time.perf_counter() - started) * 1000)
            assert [m["payload"]["i"] for m in heard] == list(range(20))
            latencies.sort()
            print(f"cross-replica broadcast ms: p50 {latencies[10]:.2f}, max {latencies[-1]:.2f}")
            await channel_first.track({"on": "first"})
            assert await wait_until(lambda: "first" in channel_second.presence_state())
            await first.close()
            assert await wait_until(lambda: "first" not in channel_second.presence_state())
        finally:
            await first.close()
            await second.close()

    asyncio.run(run())
