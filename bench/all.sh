#!/usr/bin/env bash
# The whole performance comparison in one go, on a quiet machine (nothing else building):
#   1. bench/compare.sh — pgbench's 2-statement pipeline ceiling, the Hummingbird peer and
#      onboard (plus ONBOARD_BASELINE, if set), interleaved over three rounds: medians, spreads,
#      ÷ ceiling, ÷ peer, CPU per request of the server and of PostgreSQL;
#   2. bench/http.sh — the trivial route at 64 and 1,000 connections, 10,000 idle connections;
#   3. bench/growth.sh — R with 1, 2, 10, 100 children per user (and 1,000,000 users with
#      GROWTH_USERS=1).
# About 25 minutes (plus the peer's first release build, ~18 minutes once).
set -euo pipefail
cd "$(dirname "$0")/.."
export BENCH_WORK=${BENCH_WORK:-$(pwd)/bench/.work}
log=$BENCH_WORK/all-$(date -u +%Y%m%dT%H%M%SZ).log
mkdir -p "$BENCH_WORK"
bench/compare.sh >"$log.compare" 2>&1 || { tail -30 "$log.compare"; exit 1; }
{
  echo "## REST (bench/compare.sh: medians of ${ROUNDS:-3} interleaved rounds)"
  sed -n '/^### run/,$p' "$log.compare"
  echo
  echo "## HTTP layer"
  bench/http.sh 2>/dev/null | grep '^|'
  echo
  echo "## Cost as the work grows"
  bench/growth.sh 2>/dev/null | grep '^|'
} | tee "$log"
echo "(kept in $log)"
