#!/usr/bin/env bash
# The whole performance comparison in one go, on a quiet machine (nothing else building):
#   1. bench/compare.sh — pgbench's 2-statement pipeline ceiling, the Hummingbird peer and
#      onboard (plus ONBOARD_BASELINE, if set) in one run of the shared harness;
#   2. the goals checked on that run (bench/summary.py): ÷ ceiling, ÷ peer, p99 against the peer;
#   3. bench/http.sh — the trivial route at 64 and 1,000 connections, 10,000 idle connections;
#   4. bench/growth.sh — R with 1, 2, 10, 100 children per user (and 1,000,000 users with
#      GROWTH_USERS=1).
# About 10 minutes (plus the peer's first release build, ~18 minutes once).
set -euo pipefail
cd "$(dirname "$0")/.."
export BENCH_WORK=${BENCH_WORK:-$(pwd)/bench/.work}
log=$BENCH_WORK/all-$(date -u +%Y%m%dT%H%M%SZ).log
mkdir -p "$BENCH_WORK"
bench/compare.sh >"$log.compare" 2>&1 || { tail -30 "$log.compare"; exit 1; }
run=$(python3 -c "import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]['run'])" "$BENCH_WORK/results.jsonl")
port=${ONBOARD_BENCH_PORT:-8080}
{
  echo "## REST (run $run)"
  sed -n '/^| op | system/,/^$/p' "$log.compare"
  python3 bench/summary.py "$BENCH_WORK/results.jsonl" "$run" "http://127.0.0.1:$port"
  if [ -n "${ONBOARD_BASELINE:-}" ]; then
    echo
    echo "baseline ($ONBOARD_BASELINE):"
    python3 bench/summary.py "$BENCH_WORK/results.jsonl" "$run" "http://127.0.0.1:$((port - 1))" | tail -n +2
  fi
  echo
  echo "## HTTP layer"
  bench/http.sh 2>/dev/null | grep '^|'
  echo
  echo "## Cost as the work grows"
  bench/growth.sh 2>/dev/null | grep '^|'
} | tee "$log"
echo "(kept in $log)"
