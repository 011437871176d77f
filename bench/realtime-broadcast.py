#!/usr/bin/env python3
"""Realtime Broadcast and Presence: latency and fan-out, and the server's memory per subscriber.

    ANON_KEY=... <e2e venv>/bin/python bench/realtime-broadcast.py [URL] [--pid PID]

For 1, 100 and 1,000 subscribers of one public topic (raw Phoenix frames, vsn 1.0.0, over
`websockets`): one more socket sends --messages broadcasts (--rate per second, under the
per-client limit), each carrying its send time; every subscriber records when it arrives.
Latency = from just before the send to the arrival at a subscriber, over every (message,
subscriber) pair. Then Presence with --members members: each tracks in turn, and the time until
every other member has the `presence_diff` is recorded. With --pid, the server's RSS before the
1,000 subscribers join and after (their difference per subscriber). Prints one line per case and
one JSON line; exits 1 if any message or diff was missed.
"""
import argparse
import asyncio
import json
import math
import os
import sys
import time
import uuid

import websockets


def percentile(sorted_values: list, p: float) -> float:
    if not sorted_values:
        return float("nan")
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Client:
    def __init__(self, url: str, key: str):
        self.url = url.replace("http", "ws", 1) + f"/realtime/v1/websocket?apikey={key}&vsn=1.0.0"
        self.key = key
        self.ref = 0

    async def connect(self):
        self.socket = await websockets.connect(self.url, max_size=None, ping_interval=None)
        return self

    async def push(self, topic: str, event: str, payload: dict, join_ref: str = "1") -> str:
        self.ref += 1
        await self.socket.send(json.dumps({"topic": topic, "event": event, "payload": payload, "ref": str(self.ref), "join_ref": join_ref}))
        return str(self.ref)

    async def join(self, topic: str, presence_key: str = "", presence: bool = False):
        config = {"broadcast": {"self": False, "ack": False}, "presence": {"enabled": presence, "key": presence_key}, "private": False}
        ref = await self.push(topic, "phx_join", {"config": config, "access_token": self.key})
        while True:
            message = json.loads(await self.socket.recv())
            if message["event"] == "phx_reply" and message.get("ref") == ref:
                assert message["payload"]["status"] == "ok", message
                return

    async def close(self):
        await self.socket.close()


async def broadcast_case(url: str, key: str, subscribers: int, messages: int, rate: float, pid: int | None) -> dict:
    topic = f"realtime:bench-{uuid.uuid4().hex[:8]}"
    before = rss_kib(pid) if pid else 0
    clients = []
    for start in range(0, subscribers, 100):
        batch = await asyncio.gather(*(Client(url, key).connect() for _ in range(start, min(subscribers, start + 100))))
        await asyncio.gather(*(client.join(topic) for client in batch))
        clients += batch
    after = rss_kib(pid) if pid else 0
    latencies: list[float] = []
    received = 0

    async def listen(client: Client):
        nonlocal received
        count = 0
        while count < messages:
            message = json.loads(await client.socket.recv())
            if message["event"] == "broadcast":
                latencies.append(time.perf_counter_ns() - message["payload"]["payload"]["t"])
                count += 1
                received += 1

    sender = await Client(url, key).connect()
    await sender.join(topic)
    listeners = [asyncio.create_task(listen(client)) for client in clients]
    for index in range(messages):
        await sender.push(topic, "broadcast", {"type": "broadcast", "event": "tick", "payload": {"t": time.perf_counter_ns(), "i": index}})
        await asyncio.sleep(1 / rate)
    try:
        await asyncio.wait_for(asyncio.gather(*listeners), timeout=60)
    except asyncio.TimeoutError:
        pass
    for task in listeners:
        task.cancel()
    await asyncio.gather(sender.close(), *(client.close() for client in clients), return_exceptions=True)
    values = sorted(value / 1e6 for value in latencies)
    return {
        "case": f"broadcast x{subscribers}", "expected": subscribers * messages, "received": received,
        "p50_ms": round(percentile(values, 50), 2), "p99_ms": round(percentile(values, 99), 2),
        "rss_per_subscriber_kib": round((after - before) / subscribers, 1) if pid else None,
    }


async def presence_case(url: str, key: str, members: int) -> dict:
    topic = f"realtime:presence-{uuid.uuid4().hex[:8]}"
    clients = []
    for start in range(0, members, 50):
        batch = await asyncio.gather(*(Client(url, key).connect() for _ in range(start, min(members, start + 50))))
        await asyncio.gather(*(client.join(topic, presence_key=f"m{start + i}", presence=True) for i, client in enumerate(batch)))
        clients += batch
    latencies: list[float] = []
    missed = 0

    async def wait_diff(client: Client, key_name: str, sent: int):
        while True:
            message = json.loads(await client.socket.recv())
            if message["event"] == "presence_diff" and key_name in message["payload"].get("joins", {}):
                latencies.append(time.perf_counter_ns() - sent)
                return

    for index, tracker in enumerate(clients[: min(20, members)]):
        name = f"m{index}"
        sent = time.perf_counter_ns()
        await tracker.push(topic, "presence", {"type": "presence", "event": "track", "payload": {"at": sent}})
        others = [client for client in clients if client is not tracker]
        try:
            await asyncio.wait_for(asyncio.gather(*(wait_diff(client, name, sent) for client in others)), timeout=30)
        except asyncio.TimeoutError:
            missed += 1
    await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)
    values = sorted(value / 1e6 for value in latencies)
    return {"case": f"presence x{members} (diff to every other member)", "tracks": min(20, members), "missed_tracks": missed,
            "p50_ms": round(percentile(values, 50), 2), "p99_ms": round(percentile(values, 99), 2)}


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url", nargs="?", default=os.environ.get("ONBOARD_URL", "http://127.0.0.1:54321"))
    parser.add_argument("--pid", type=int)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--rate", type=float, default=20)
    parser.add_argument("--members", type=int, default=100)
    arguments = parser.parse_args()
    key = os.environ["ANON_KEY"]
    results = []
    for subscribers in (1, 100, 1000):
        results.append(await broadcast_case(arguments.url, key, subscribers, arguments.messages, arguments.rate, arguments.pid))
        print(results[-1], flush=True)
    results.append(await presence_case(arguments.url, key, arguments.members))
    print(results[-1], flush=True)
    print(json.dumps(results))
    missed = any(r.get("received", 0) != r.get("expected", 0) for r in results if "expected" in r) or any(r.get("missed_tracks") for r in results)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
