#!/usr/bin/env bash
# What Realtime costs writers: the shared harness's W (PATCH user_profiles, and pgbench's write
# ceiling) with Realtime off and with each change feed while nobody, 100 rows' owners or one
# whole-table subscriber listens. Subscriptions are real (bench/realtime-listeners.py over
# WebSockets), so the feed, the per-subscriber checks and the deliveries all run, on the same
# two cores as the writers:
#   off            tables not enabled (no publication member, no trigger); wal_level=replica
#   triggers-*     the trigger feed (REALTIME_FEED=triggers), triggers installed; wal_level=replica
#   off-logical    tables not enabled; wal_level=logical (what logical WAL alone costs)
#   wal-*          the WAL feed (REALTIME_FEED=wal), no triggers; wal_level=logical
#   *-nobody       no subscriber
#   *-rows         100 users each watch their own profile row (1 % of the load's writes)
#   *-table        the service role watches the whole user_profiles table (every write is
#                  checked and sent)
# Runs are ordered by wal_level (a change restarts the cluster). Each run is one bench/compare.sh
# (R is measured too; ignore it).
#   ROUNDS=2 bench/realtime-cost.sh        RUNS="off wal-nobody" bench/realtime-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
harness=${BENCH_DIR:-$root/../shared/bench}
export BENCH_WORK=${BENCH_WORK:-$root/bench/.work}
export PGB_SCRIPTS=${PGB_SCRIPTS:-write} PGB_MODES=${PGB_MODES:-prepared} PGB_CLIENTS=${PGB_CLIENTS:-32} PEER=${PEER:-0}
rounds=${ROUNDS:-2}
runs=${RUNS:-off triggers-nobody triggers-rows triggers-table off-logical wal-nobody wal-rows wal-table}
port=${ONBOARD_BENCH_PORT:-8080}
pg_port=${PG_PORT:-54329}
python=${BENCH_PYTHON:-$root/.build/e2e-venv/bin/python}
[ -x "$python" ] || { echo "needs a python with websockets: scripts/e2e makes $root/.build/e2e-venv (or set BENCH_PYTHON)" >&2; exit 1; }
mkdir -p "$BENCH_WORK"
summary="$BENCH_WORK/realtime-cost.txt"
: >"$summary"

swift build -c release --product onboard
export SCHEMA_CMD="$root/.build/release/onboard migrate up --database-url \"\$BENCH_DB_URL\" --migrations-dir $root/migrations"
"$harness/run.sh" up >/dev/null
sock="$BENCH_WORK/pg/sock"
sql() { psql -X -q -At -h "$sock" -p "$pg_port" -U postgres bench -c "$1"; }
# As Supabase's authenticator: it may become service_role (the trigger feed's leases need it).
sql "GRANT service_role TO authenticator" >/dev/null
# The WAL feed's replication connection (the superuser may replicate; authenticator may not).
export DATABASE_LISTEN_URL="postgresql://postgres@/bench?host=$sock&port=$pg_port"

set_wal_level() {
  [ "$(sql "SHOW wal_level")" = "$1" ] && return
  sql "ALTER SYSTEM SET wal_level = '$1'" >/dev/null
  "$harness/run.sh" down >/dev/null
  "$harness/run.sh" up >/dev/null
  [ "$(sql "SHOW wal_level")" = "$1" ] || { echo "wal_level did not become $1" >&2; exit 1; }
}

set_state() {
  case "$1" in
    off*) sql "SELECT realtime.disable_table('public.user_profiles'), realtime.disable_table('public.children'); SELECT realtime.use_triggers(false); DELETE FROM realtime.listeners" >/dev/null ;;
    triggers-*) sql "SELECT realtime.enable_table('public.user_profiles'), realtime.enable_table('public.children'); SELECT realtime.use_triggers(true); DELETE FROM realtime.listeners" >/dev/null ;;
    wal-*) sql "SELECT realtime.enable_table('public.user_profiles'), realtime.enable_table('public.children'); SELECT realtime.use_triggers(false); DELETE FROM realtime.listeners" >/dev/null ;;
  esac
}

for round in $(seq 1 "$rounds"); do
  for run in $runs; do
    case "$run" in
      off|triggers-*) set_wal_level replica; export REALTIME_FEED=triggers ;;
      off-logical|wal-*) set_wal_level logical; export REALTIME_FEED=wal ;;
      *) echo "unknown run $run" >&2; exit 1 ;;
    esac
    set_state "$run"
    listener=""
    log="$BENCH_WORK/realtime-cost-$round-$run"
    case "$run" in
      *-rows) "$python" bench/realtime-listeners.py "http://127.0.0.1:$port" "$BENCH_WORK/tokens.tsv" rows 100 >"$log.listeners" 2>&1 & listener=$! ;;
      *-table) "$python" bench/realtime-listeners.py "http://127.0.0.1:$port" "$BENCH_WORK/tokens.tsv" table >"$log.listeners" 2>&1 & listener=$! ;;
    esac
    echo "== round $round, $run (wal_level $(sql "SHOW wal_level"), REALTIME_FEED=$REALTIME_FEED)"
    RESEED=0 bench/compare.sh | tee "$log.txt"
    heard=""
    if [ -n "$listener" ]; then
      kill -TERM "$listener" 2>/dev/null || true
      wait "$listener" 2>/dev/null || true
      grep -q "^listening" "$log.listeners" || { echo "the listeners never subscribed: $(tail -3 "$log.listeners")" >&2; exit 1; }
      heard=$(grep -o '"events": [0-9]*' "$log.listeners" | grep -o '[0-9]*' || echo "?")
      heard=" (subscribers received $heard events)"
    fi
    { echo "round $round $run$heard"; grep -E "^\| *W " "$log.txt" || true; } >>"$summary"
  done
done
set_wal_level logical
set_state wal-nobody
echo "== summary (W rows per run)"
cat "$summary"
