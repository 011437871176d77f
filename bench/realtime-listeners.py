#!/usr/bin/env python3
"""Realtime subscribers that stay connected while a benchmark writes: what "someone is listening"
costs the writers, with real subscriptions (the server's feed, its per-subscriber checks and
deliveries all run).

    python bench/realtime-listeners.py URL TOKENS_TSV rows  [N=100]   # N users, each on its own profile row
    python bench/realtime-listeners.py URL TOKENS_TSV table           # the service role on the whole user_profiles table

TOKENS_TSV is the shared harness's tokens file (`anon <key>`, then `<k> <user id> <token>`); the
service role's token is signed with BENCH_JWT_SECRET (the harness's default secret if unset), so
the whole-table subscriber hears (and the server checks and sends) every write.
Waits for the server to answer /health, subscribes (vsn 1.0.0 objects, as supabase-py), prints
`listening` once every join is confirmed, then reads events until SIGTERM/SIGINT and prints one
JSON line with the events received.
"""
import asyncio
import base64
import hashlib
import hmac
import json
import os
import signal
import sys
import time
import urllib.request

import websockets


def service_role_token() -> str:
    secret = os.environ.get("BENCH_JWT_SECRET", "super-secret-jwt-token-with-at-least-32-characters-long").encode()
    encode = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    signing_input = encode(b'{"alg":"HS256","typ":"JWT"}') + "." + encode(b'{"role":"service_role","iss":"supabase-bench","exp":4102444800}')
    return signing_input + "." + encode(hmac.new(secret, signing_input.encode(), hashlib.sha256).digest())


def read_tokens(path: str):
    anon, users = None, []
    with open(path) as handle:
        for line in handle:
            parts = line.rstrip("\n").split("\t")
            if parts[0] == "anon":
                anon = parts[1]
            elif len(parts) == 3:
                users.append((parts[1], parts[2]))
    return anon, users


async def main() -> None:
    url, tokens, mode = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    anon, users = read_tokens(tokens)
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{url}/health", timeout=2).read()
            break
        except Exception:
            if time.monotonic() > deadline:
                sys.exit("realtime-listeners: the server never answered /health")
            await asyncio.sleep(0.2)

    ws_url = url.replace("http", "ws", 1) + f"/realtime/v1/websocket?apikey={anon}&vsn=1.0.0"
    if mode == "rows":
        plans = [(token, {"event": "UPDATE", "schema": "public", "table": "user_profiles", "filter": f"id=eq.{uid}"}) for uid, token in users[:count]]
    elif mode == "table":
        plans = [(service_role_token(), {"event": "UPDATE", "schema": "public", "table": "user_profiles"})]
    else:
        sys.exit(f"realtime-listeners: unknown mode {mode}")

    received = 0
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)

    async def listen(index: int, token: str, binding: dict, joined: asyncio.Event):
        nonlocal received
        async with websockets.connect(ws_url, max_size=None, ping_interval=None, compression=None) as ws:
            await ws.send(json.dumps({"topic": f"realtime:bench-{index}", "event": "phx_join", "ref": "1", "join_ref": "1",
                                      "payload": {"access_token": token, "config": {"postgres_changes": [binding]}}}))
            last_beat = time.monotonic()
            while not stop.is_set():
                if time.monotonic() - last_beat > 20:
                    await ws.send(json.dumps({"topic": "phoenix", "event": "heartbeat", "payload": {}, "ref": "hb"}))
                    last_beat = time.monotonic()
                try:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 1))
                except asyncio.TimeoutError:
                    continue
                if message["event"] == "system":
                    if message["payload"]["status"] != "ok":
                        sys.exit(f"realtime-listeners: join refused: {message}")
                    joined.set()
                elif message["event"] == "postgres_changes":
                    received += 1

    joins = [asyncio.Event() for _ in plans]
    tasks = [asyncio.create_task(listen(i, token, binding, joins[i])) for i, (token, binding) in enumerate(plans)]
    await asyncio.wait_for(asyncio.gather(*(event.wait() for event in joins)), 60)
    print(f"listening: {len(plans)} subscription(s), mode {mode}", flush=True)
    await stop.wait()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps({"bench": "realtime-listeners", "mode": mode, "subscriptions": len(plans), "events": received}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
