#!/usr/bin/env bash
# What the Realtime triggers cost writers: the shared harness's W (PATCH user_profiles, and
# pgbench's write ceiling) in three states, alternating, same cluster, same load:
#   off       triggers disabled (realtime.disable_table)
#   idle      triggers on, nobody subscribed (no lease: the trigger returns after one probe)
#   rows      triggers on and row leases on 100 users' profiles (as while 100 clients each watch
#             their own row): 1 % of the load's writes notify
#   listened  triggers on and a lease on the tables (every write notifies, as while any client
#             is subscribed to a whole table; the server's feed reads every notification)
# Each run is one bench/compare.sh (R is measured too; ignore it).
#   ROUNDS=2 RESEED=1 bench/realtime-cost.sh     (RESEED=1 after a migration changed)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export BENCH_WORK=${BENCH_WORK:-$root/bench/.work}
export PGB_SCRIPTS=${PGB_SCRIPTS:-write} PGB_MODES=${PGB_MODES:-prepared} PGB_CLIENTS=${PGB_CLIENTS:-32} PEER=${PEER:-0}
rounds=${ROUNDS:-2}
states=${STATES:-idle off rows listened}
mkdir -p "$BENCH_WORK"
summary="$BENCH_WORK/realtime-cost.txt"
: >"$summary"

sql() { psql -X -q -h "$BENCH_WORK/pg/sock" -p "${PG_PORT:-54329}" -U postgres bench -c "$1" >/dev/null; }
set_state() {
  case "$1" in
    off) sql "SELECT realtime.disable_table('public.user_profiles'), realtime.disable_table('public.children'); DELETE FROM realtime.listeners" ;;
    idle) sql "SELECT realtime.enable_table('public.user_profiles'), realtime.enable_table('public.children'); DELETE FROM realtime.listeners" ;;
    rows) sql "SELECT realtime.enable_table('public.user_profiles'), realtime.enable_table('public.children'); DELETE FROM realtime.listeners;
               INSERT INTO realtime.listeners (relid, row_key, server_id, expires_at)
               SELECT 'public.user_profiles'::regclass, id::text, gen_random_uuid(), now() + interval '1 day' FROM public.user_profiles ORDER BY random() LIMIT 100" ;;
    listened) sql "SELECT realtime.enable_table('public.user_profiles'), realtime.enable_table('public.children'); DELETE FROM realtime.listeners;
                   INSERT INTO realtime.listeners (relid, server_id, expires_at)
                   SELECT t::regclass, gen_random_uuid(), now() + interval '1 day' FROM unnest(ARRAY['public.user_profiles', 'public.children']) t" ;;
  esac
}

first=1
for round in $(seq 1 "$rounds"); do
  for state in $states; do
    if [ -S "$BENCH_WORK/pg/sock/.s.PGSQL.${PG_PORT:-54329}" ] && [ "${RESEED:-0}" != 1 -o $first = 0 ]; then
      set_state "$state"
    elif [ "$state" != idle ]; then
      # The first run (re)creates the cluster from the migrations: triggers on, no lease.
      echo "start with STATES beginning with idle, or a running cluster" >&2; exit 1
    fi
    echo "== round $round, triggers $state"
    if [ $first = 1 ]; then
      bench/compare.sh | tee "$BENCH_WORK/realtime-cost-$round-$state.txt"
    else
      RESEED=0 bench/compare.sh | tee "$BENCH_WORK/realtime-cost-$round-$state.txt"
    fi
    first=0
    { echo "round $round triggers $state"; grep -E "^\| *W " "$BENCH_WORK/realtime-cost-$round-$state.txt" || true; } >>"$summary"
  done
done
set_state idle
echo "== summary (W rows per run)"
cat "$summary"
