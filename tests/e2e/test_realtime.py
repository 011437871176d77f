"""Realtime `postgres_changes` through supabase-py's async realtime client (vsn 1.0.0), plus a few
raw Phoenix frames over `websockets` (Phoenix v1 JSON frames: `phx_join`, `phx_reply`,
`postgres_changes`, `heartbeat`, as Supabase Realtime sends them).

Each test is a plain sync function running its own event loop (`asyncio.run`), so no pytest plugin
is needed. Every user is a fresh, auto-confirmed sign-up; its profile row comes from the trigger.
"""
import asyncio
import base64
import datetime
import hashlib
import hmac
import json
import os
import re
import time
from dataclasses import dataclass, field

import httpx
import pytest
import websockets
from realtime import AsyncRealtimeChannel, ChannelStates, RealtimeSubscribeStates
from supabase import AsyncClient, AsyncClientOptions, acreate_client

from conftest import ANON_KEY, URL, unique_email

JWT_SECRET = os.environ.get("JWT_SECRET", "")
REST = f"{URL}/rest/v1"
WEBSOCKET = re.sub(r"^http", "ws", URL) + "/realtime/v1/websocket"
SUBSCRIBED = RealtimeSubscribeStates.SUBSCRIBED
CHANNEL_ERROR = RealtimeSubscribeStates.CHANNEL_ERROR
CLOSED = RealtimeSubscribeStates.CLOSED


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


@dataclass
class User:
    client: AsyncClient
    id: str
    token: str


@dataclass
class Subscription:
    channel: AsyncRealtimeChannel
    events: "asyncio.Queue[tuple[float, dict]]" = field(default_factory=asyncio.Queue)
    # (state, error, time.time()) as the subscribe callback reported them.
    states: list = field(default_factory=list)
    system: list = field(default_factory=list)

    def state_names(self) -> list:
        return [state for state, _, _ in self.states]


async def sign_up(http: httpx.AsyncClient, prefix: str) -> User:
    """A fresh user with its own async supabase client; the realtime client carries its token."""
    client = await acreate_client(
        URL,
        ANON_KEY,
        options=AsyncClientOptions(
            auto_refresh_token=False,
            persist_session=False,
            httpx_client=http,
            # Fail fast and visibly: no silent reconnects that would hide a dropped socket.
            realtime={"auto_reconnect": False, "max_retries": 1},
        ),
    )
    response = await client.auth.sign_up({"email": unique_email(prefix), "password": "Secret-pass-1"})
    assert response.session is not None, "auto-confirmed sign-up must return a session"
    token = response.session.access_token
    # The SIGNED_IN listener schedules `realtime.set_auth(token)` as a background task
    # (supabase/_async/client.py `_listen_to_auth_events`): let it run now, so it cannot
    # overwrite a token set later, then set it explicitly anyway.
    for _ in range(100):
        if not getattr(client, "_background_tasks", None):
            break
        await asyncio.sleep(0)
    await client.realtime.set_auth(token)
    assert client.realtime.access_token == token
    return User(client, response.user.id, token)


async def close(*users: User) -> None:
    for user in users:
        try:
            await user.client.realtime.remove_all_channels()  # phx_leave each, then close the socket
        except Exception:
            await user.client.realtime.close()


async def wait_until(predicate, timeout: float, interval: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(interval)
    return True


async def subscribe(user: User, name: str, filter: str | None = None, timeout: float = 5.0) -> Subscription:
    """`channel(name).on_postgres_changes("UPDATE", user_profiles, filter).subscribe()`, then wait
    for SUBSCRIBED (join reply) and the `system` "Subscribed to PostgreSQL" message (§1.5)."""
    channel = user.client.channel(name)
    sub = Subscription(channel)

    def on_change(payload: dict) -> None:
        sub.events.put_nowait((time.perf_counter(), payload))

    def on_state(state: RealtimeSubscribeStates, error: Exception | None) -> None:
        sub.states.append((state, error, time.time()))

    channel.on_postgres_changes("UPDATE", on_change, table="user_profiles", schema="public", filter=filter)
    channel.on_system(sub.system.append)
    await asyncio.wait_for(channel.subscribe(on_state), timeout)
    assert sub.state_names() == [SUBSCRIBED], sub.states
    assert channel.state == ChannelStates.JOINED
    # The echoed binding got a server id (supabase-py ignores id 0, §1.5).
    binding_id = channel.postgres_changes_callbacks[0].id
    assert isinstance(binding_id, int) and 1 <= binding_id < 2**27, binding_id
    # After the ok reply the server confirms the CDC subscription with a `system` message.
    assert await wait_until(lambda: sub.system or len(sub.states) > 1, timeout), "no system message after join"
    assert sub.state_names() == [SUBSCRIBED], sub.states  # a `system` error would show as CHANNEL_ERROR
    system = sub.system[0]
    assert (system.channel, system.extension, system.status, system.message) == (
        name,
        "postgres_changes",
        "ok",
        "Subscribed to PostgreSQL",
    )
    return sub


async def set_state(http: httpx.AsyncClient, user: User, row_id: str, state: str) -> list:
    """PATCH /rest/v1/user_profiles?id=eq.<row_id> as `user`; returns the updated rows."""
    response = await http.patch(
        f"{REST}/user_profiles",
        params={"id": f"eq.{row_id}"},
        json={"onboarding_state": state},
        headers={"apikey": ANON_KEY, "Authorization": f"Bearer {user.token}", "Prefer": "return=representation"},
    )
    assert response.status_code == 200, response.text
    return response.json()


async def next_event(sub: Subscription, timeout: float) -> tuple[float, dict]:
    try:
        return await asyncio.wait_for(sub.events.get(), max(timeout, 0.0))
    except asyncio.TimeoutError:
        raise AssertionError(f"no postgres_changes event within {timeout:.2f} s (states {sub.states})") from None


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_hs256(claims: dict, secret: str) -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new(secret.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64url(signature)}"


def token_claims(token: str) -> dict:
    return json.loads(b64url_decode(token.split(".")[1]))


# ---------------------------------------------------------------------------------------------
# a. The owner hears its own row change, in the shape supabase-py decodes
# ---------------------------------------------------------------------------------------------


def test_owner_receives_update_within_a_second():
    asyncio.run(_owner_receives_update())


async def _owner_receives_update():
    async with httpx.AsyncClient(timeout=10) as http:
        a = await sign_up(http, "rt-owner")
        try:
            # supabase-swift sends `.eq("id", uuid)` upper-case (§1.4): the filter compares as uuid.
            sub = await subscribe(a, "profile", filter=f"id=eq.{a.id.upper()}")
            binding_id = sub.channel.postgres_changes_callbacks[0].id

            sent = time.perf_counter()
            rows = await set_state(http, a, a.id, "USER_INFO")
            assert [row["onboarding_state"] for row in rows] == ["USER_INFO"]
            received, payload = await next_event(sub, sent + 1.0 - time.perf_counter())
            assert received - sent < 1.0

            # Wire shape (§1.6), as realtime-py's PostgresChangesPayload hands it over.
            assert binding_id in payload["ids"]
            data = payload["data"]
            assert data["type"] == "UPDATE"
            assert (data["schema"], data["table"]) == ("public", "user_profiles")
            assert data["errors"] is None
            record = data["record"]
            assert record["id"] == a.id
            assert record["onboarding_state"] == "USER_INFO"
            assert data["old_record"]["id"] == a.id  # replica identity: the primary key
            # commit_timestamp: to_char(… 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') in UTC.
            stamp = data["commit_timestamp"]
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp), stamp
            committed = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
            assert abs((datetime.datetime.now(datetime.timezone.utc) - committed).total_seconds()) < 10
            # columns: {name, type=pg_type.typname} in attnum order, one per record key.
            columns = data["columns"]
            assert columns[:2] == [{"name": "id", "type": "uuid"}, {"name": "onboarding_state", "type": "text"}]
            types = {column["name"]: column["type"] for column in columns}
            assert len(types) == len(columns)
            assert set(types) == set(record)
            assert types["current_child_id"] == "uuid" and types["updated_at"] == "timestamptz"
            # The record is the row as REST shows it (both are the row's JSON).
            assert record == rows[0]

            # The next change arrives next: no duplicate of the first, no coalescing across PATCHes.
            sent = time.perf_counter()
            await set_state(http, a, a.id, "CHILD_INFO")
            received, payload = await next_event(sub, sent + 1.0 - time.perf_counter())
            assert payload["data"]["record"]["onboarding_state"] == "CHILD_INFO"
            await asyncio.sleep(0.3)
            assert sub.events.empty(), "one UPDATE, one event"
        finally:
            await close(a)


# ---------------------------------------------------------------------------------------------
# b. Another user never hears A's row, with or without a filter naming it
# ---------------------------------------------------------------------------------------------


def test_other_user_never_receives_foreign_rows():
    asyncio.run(_other_user_never_receives())


async def _other_user_never_receives():
    async with httpx.AsyncClient(timeout=10) as http:
        a = await sign_up(http, "rt-a")
        b = await sign_up(http, "rt-b")
        try:
            a_sub = await subscribe(a, "mine", filter=f"id=eq.{a.id}")
            b_all = await subscribe(b, "everything")  # no filter: every user_profiles UPDATE B may see
            b_spy = await subscribe(b, "spy", filter=f"id=eq.{a.id}")  # aims at A's row

            a_sent = time.perf_counter()
            await set_state(http, a, a.id, "USER_INFO")
            # The change happened and was published: its owner hears it.
            _, payload = await next_event(a_sub, a_sent + 1.0 - time.perf_counter())
            assert payload["data"]["record"]["id"] == a.id

            # B's own change reaches B's unfiltered channel (B's subscriptions do work) ...
            leaked = []
            b_sent = time.perf_counter()
            await set_state(http, b, b.id, "USER_INFO")
            while True:
                _, payload = await next_event(b_all, b_sent + 1.0 - time.perf_counter())
                if payload["data"]["record"]["id"] == b.id:
                    break
                leaked.append(payload)
            assert leaked == [], f"B's unfiltered channel got someone else's row: {leaked}"
            assert payload["data"]["record"]["onboarding_state"] == "USER_INFO"

            # ... and, 1.5 s after A's change, nothing of A's ever reached B.
            await asyncio.sleep(max(0.0, a_sent + 1.5 - time.perf_counter()))
            for sub in (b_all, b_spy):
                while not sub.events.empty():
                    leaked.append(sub.events.get_nowait()[1])
            assert all(a.id not in json.dumps(event) for event in leaked), leaked
            assert leaked == [], f"B got events it should not have: {leaked}"
            assert b_all.state_names() == [SUBSCRIBED] and b_spy.state_names() == [SUBSCRIBED]
            assert a_sub.events.empty(), "A's channel hears only A's row"
        finally:
            await close(a, b)


# ---------------------------------------------------------------------------------------------
# c. A join token's expiry closes the channel (§1.7: `system` error, then `phx_close`)
# ---------------------------------------------------------------------------------------------


def test_expired_join_token_closes_channel():
    if not JWT_SECRET:
        pytest.skip("JWT_SECRET is not set (scripts/e2e exports it)")
    asyncio.run(_expired_join_token_closes_channel())


async def _expired_join_token_closes_channel():
    async with httpx.AsyncClient(timeout=10) as http:
        a = await sign_up(http, "rt-expiry")
        try:
            # A's own access token, re-signed to live 3 more seconds.
            now = int(time.time())
            claims = token_claims(a.token)
            assert claims["sub"] == a.id and claims["role"] == "authenticated"
            claims.update(iat=now, exp=now + 3)
            short = sign_hs256(claims, JWT_SECRET)
            await a.client.realtime.set_auth(short)

            sub = await subscribe(a, "expiring", filter=f"id=eq.{a.id}")
            assert sub.channel.join_push.payload["access_token"] == short
            # While valid it works as A.
            sent = time.perf_counter()
            await set_state(http, a, a.id, "USER_INFO")
            await next_event(sub, sent + 1.0 - time.perf_counter())

            # At exp the server kicks the channel (Realtime checks exp without leeway).
            closed = await wait_until(lambda: CLOSED in sub.state_names(), timeout=now + 3 + 7 - time.time())
            assert closed, f"channel not closed after its token expired: {sub.states}"
            assert sub.state_names() == [SUBSCRIBED, CHANNEL_ERROR, CLOSED], sub.states
            _, error, errored_at = sub.states[1]
            assert errored_at >= now + 3 - 1, "kicked before the token expired"
            system = json.loads(str(error))  # realtime-py: Exception(json.dumps(system payload))
            assert system["status"] == "error" and system["extension"] == "system", system
            assert system["channel"] == "expiring", system
            assert system["message"].startswith("Token has expired"), system
            assert sub.channel.state == ChannelStates.CLOSED
            assert "realtime:expiring" not in a.client.realtime.channels  # phx_close dropped it

            # The socket survives; with a valid token the app simply subscribes again.
            assert a.client.realtime.is_connected
            await a.client.realtime.set_auth(a.token)
            again = await subscribe(a, "expiring", filter=f"id=eq.{a.id}")
            assert again.channel is not sub.channel
            sent = time.perf_counter()
            await set_state(http, a, a.id, "CHILD_INFO")
            _, payload = await next_event(again, sent + 1.0 - time.perf_counter())
            assert payload["data"]["record"]["onboarding_state"] == "CHILD_INFO"
        finally:
            await close(a)


# ---------------------------------------------------------------------------------------------
# d. Raw Phoenix v1 frames: heartbeat and join errors (§1.1–1.3, §2)
# ---------------------------------------------------------------------------------------------


def test_raw_heartbeat_and_join_errors():
    asyncio.run(_raw_heartbeat_and_join_errors())


async def _recv_reply(ws, ref: str, timeout: float = 2.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        raw = await asyncio.wait_for(ws.recv(), max(deadline - time.monotonic(), 0.0))
        message = json.loads(raw)
        if message.get("event") == "phx_reply" and message.get("ref") == ref:
            return message


def _join(topic: str, ref: str, token: str) -> str:
    return json.dumps(
        {
            "topic": topic,
            "event": "phx_join",
            "ref": ref,
            "join_ref": ref,
            "payload": {
                "config": {
                    "broadcast": {"ack": False, "self": False},
                    "presence": {"key": "", "enabled": False},
                    "private": False,
                    "postgres_changes": [{"event": "UPDATE", "schema": "public", "table": "user_profiles"}],
                },
                "access_token": token,
            },
        }
    )


async def _raw_heartbeat_and_join_errors():
    # The socket itself is authorised by the apikey, before the upgrade (§1.1).
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        async with websockets.connect(f"{WEBSOCKET}?apikey=not-a-key&vsn=1.0.0", open_timeout=5):
            pass
    assert refused.value.response.status_code == 401

    async with websockets.connect(f"{WEBSOCKET}?apikey={ANON_KEY}&vsn=1.0.0", open_timeout=5) as ws:
        await ws.send(json.dumps({"topic": "phoenix", "event": "heartbeat", "payload": {}, "ref": "1"}))
        reply = await _recv_reply(ws, "1")
        assert reply.get("join_ref") is None
        assert {k: reply[k] for k in ("topic", "event", "payload", "ref")} == {
            "topic": "phoenix",
            "event": "phx_reply",
            "payload": {"status": "ok", "response": {}},
            "ref": "1",
        }

        now = int(time.time())
        user_like = {"sub": "00000000-0000-4000-8000-000000000001", "role": "authenticated", "aud": "authenticated"}
        cases = [
            ("not-a-jwt", "MalformedJWT"),
            (sign_hs256({**user_like, "exp": now + 600}, "x" * 40 + "-not-the-secret"), "JwtSignatureError"),
        ]
        if JWT_SECRET:
            cases.append((sign_hs256({**user_like, "exp": now - 120}, JWT_SECRET), "InvalidJWTToken: Token has expired"))
        for number, (token, reason) in enumerate(cases, start=2):
            ref = str(number)
            topic = f"realtime:bad-token-{number}"
            await ws.send(_join(topic, ref, token))
            reply = await _recv_reply(ws, ref)
            assert reply["topic"] == topic
            assert reply["payload"]["status"] == "error", reply
            assert reply["payload"]["response"]["reason"].startswith(reason), reply

        # Still alive after the refusals.
        await ws.send(json.dumps({"topic": "phoenix", "event": "heartbeat", "payload": {}, "ref": "9"}))
        assert (await _recv_reply(ws, "9"))["payload"] == {"status": "ok", "response": {}}
