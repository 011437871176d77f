#!/usr/bin/env bash
# What the Realtime triggers cost writers: the shared harness's W (PATCH user_profiles, and
# pgbench's write ceiling) with the `realtime_changes` triggers on and off, alternating, same
# cluster, same load. Each round is one bench/compare.sh run (R is measured too; ignore it).
#   ROUNDS=2 bench/realtime-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export BENCH_WORK=${BENCH_WORK:-$root/bench/.work}
export PGB_SCRIPTS=${PGB_SCRIPTS:-write} PGB_MODES=${PGB_MODES:-prepared} PGB_CLIENTS=${PGB_CLIENTS:-32} PEER=${PEER:-0}
rounds=${ROUNDS:-2}
mkdir -p "$BENCH_WORK"
summary="$BENCH_WORK/realtime-cost.txt"
: >"$summary"

toggle() {
  psql -X -q -h "$BENCH_WORK/pg/sock" -p "${PG_PORT:-54329}" -U postgres bench \
    -c "SELECT realtime.$1_table('public.user_profiles'); SELECT realtime.$1_table('public.children');" >/dev/null
}

for round in $(seq 1 "$rounds"); do
  for state in on off; do
    # The first run creates the cluster (with the triggers, from the migrations).
    if [ -S "$BENCH_WORK/pg/sock/.s.PGSQL.${PG_PORT:-54329}" ]; then
      if [ "$state" = on ]; then toggle enable; else toggle disable; fi
    elif [ "$state" = off ]; then
      echo "cluster not running" >&2; exit 1
    fi
    echo "== round $round, triggers $state"
    bench/compare.sh | tee "$BENCH_WORK/realtime-cost-$round-$state.txt"
    { echo "round $round triggers $state"; grep -E "^\| *W " "$BENCH_WORK/realtime-cost-$round-$state.txt" || true; } >>"$summary"
  done
done
toggle enable
echo "== summary (W rows per run)"
cat "$summary"
