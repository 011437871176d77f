#!/usr/bin/env python3
"""Idle Realtime sockets: how much memory the server holds per subscribed WebSocket, and how
long one change takes to reach all of them.

Opens N WebSockets (vsn 1.0.0, as supabase-py), each joining its own channel with a
postgres_changes binding on the same user's profile row; reads the server's RSS before and
after; then PATCHes the row once and times until every socket has the event.

    ANON_KEY=... python bench/realtime-idle.py http://127.0.0.1:54321 SERVER_PID [N=5000]
"""
import asyncio
import json
import os
import resource
import sys
import time
import uuid

import httpx
import websockets


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def main() -> None:
    url, pid = sys.argv[1].rstrip("/"), int(sys.argv[2])
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 5000
    anon = os.environ["ANON_KEY"]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 1024), hard))

    headers = {"apikey": anon, "Authorization": f"Bearer {anon}", "Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as http:
        email = f"idle-{uuid.uuid4().hex[:12]}@example.com"
        session = (await http.post("/auth/v1/signup", json={"email": email, "password": "Secret-pass-1"})).json()
        token, user_id = session["access_token"], session["user"]["id"]

        ws_url = url.replace("http", "ws", 1) + f"/realtime/v1/websocket?apikey={anon}&vsn=1.0.0"
        before = rss_kib(pid)
        sockets = []

        async def open_one(index: int):
            ws = await websockets.connect(ws_url, max_size=None, ping_interval=None, compression=None)
            await ws.send(json.dumps({"topic": f"realtime:idle-{index}", "event": "phx_join", "ref": "1", "join_ref": "1",
                                      "payload": {"access_token": token, "config": {"postgres_changes": [
                                          {"event": "UPDATE", "schema": "public", "table": "user_profiles", "filter": f"id=eq.{user_id}"}]}}}))
            while True:  # the reply, then the system message
                message = json.loads(await ws.recv())
                if message["event"] == "system":
                    assert message["payload"]["status"] == "ok", message
                    break
            return ws

        started = time.monotonic()
        for batch in range(0, count, 200):
            sockets += await asyncio.gather(*(open_one(i) for i in range(batch, min(count, batch + 200))))
            print(f"  {len(sockets)} at {time.monotonic() - started:.1f} s", file=sys.stderr)
        opened = time.monotonic() - started
        print(f"opened {len(sockets)} in {opened:.1f} s", file=sys.stderr)
        await asyncio.sleep(1)
        after = rss_kib(pid)

        async def wait_event(ws):
            while True:
                message = json.loads(await ws.recv())
                if message["event"] == "postgres_changes":
                    return time.monotonic()

        waiters = [asyncio.create_task(wait_event(ws)) for ws in sockets]
        sent = time.monotonic()
        response = await http.patch(f"/rest/v1/user_profiles?id=eq.{user_id}", json={"onboarding_state": "USER_INFO"},
                                    headers={"Authorization": f"Bearer {token}"})
        assert response.status_code in (200, 204), response.text
        arrivals = sorted([t - sent for t in await asyncio.wait_for(asyncio.gather(*waiters), 60)])
        for ws in sockets:
            await ws.close()

    per_socket = (after - before) * 1024 / count
    print(f"realtime-idle: {count} subscribed sockets opened in {opened:.1f} s; server RSS {before / 1024:.1f} → {after / 1024:.1f} MiB "
          f"(+{(after - before) / 1024:.1f} MiB, {per_socket / 1024:.1f} KiB per socket); one change reached all in "
          f"{arrivals[-1] * 1000:.0f} ms (first {arrivals[0] * 1000:.1f} ms, median {arrivals[len(arrivals) // 2] * 1000:.0f} ms)")
    print(json.dumps({"bench": "realtime-idle", "sockets": count, "rss_before_kib": before, "rss_after_kib": after,
                      "bytes_per_socket": round(per_socket), "fanout_first_ms": round(arrivals[0] * 1000, 1),
                      "fanout_median_ms": round(arrivals[len(arrivals) // 2] * 1000, 1), "fanout_all_ms": round(arrivals[-1] * 1000, 1)}))


if __name__ == "__main__":
    asyncio.run(main())
