#!/usr/bin/env python3
"""The performance goals, checked on one run of the shared harness (its results.jsonl):
R and W of onboard against the 2-statement pipeline ceiling and the peer measured in the same run.
    bench/summary.py RESULTS_JSONL [RUN_ID] [ONBOARD_URL]
Without RUN_ID the newest run; without ONBOARD_URL the last target measured."""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
run = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else rows[-1]["run"]
rows = [r for r in rows if r["run"] == run]
targets = [r["system"] for r in rows if r["system"].startswith("http")]
ours = sys.argv[3] if len(sys.argv) > 3 else (targets[-1] if targets else None)

print(f"run {run}, onboard = {ours}\n")
print("| op | onboard req/s | pipeline ceiling | ÷ ceiling (goal ≥ 75%) | peer req/s | ÷ peer (goal ≥ 3×) | p99 onboard / peer (goal ≤ 0.5) | errors | isolation check |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
for op in ("R", "W"):
    ceiling = max((r["rps"] for r in rows if r["op"] == op and r["system"] == "pgbench" and "pipe" in r.get("script", "")), default=None)
    peer = next((r for r in rows if r["op"] == op and r["system"] == "peer-hummingbird"), None)
    mine = next((r for r in rows if r["op"] == op and r["system"] == ours), None)
    if not mine:
        continue
    cells = [op, f"{mine['rps']:.0f}"]
    cells += [f"{ceiling:.0f}", f"{100 * mine['rps'] / ceiling:.0f}%"] if ceiling else ["", ""]
    if peer and peer.get("rps"):
        cells += [f"{peer['rps']:.0f}", f"{mine['rps'] / peer['rps']:.2f}×", f"{mine['p99_ms']:.1f} / {peer['p99_ms']:.1f} ms = {mine['p99_ms'] / peer['p99_ms']:.2f}"]
    else:
        cells += ["", "", ""]
    cells += [str(mine.get("errors")), mine.get("check", "")]
    print("| " + " | ".join(cells) + " |")
