#!/usr/bin/env bash
# REST benchmark: onboard vs the pgbench ceiling vs the Hummingbird peer, in one run of the
# shared harness (../shared/bench). The cluster's schema comes from our migrations
# (SCHEMA_CMD); onboard (release build) logs in as "authenticator" over the Unix socket, as the
# peer does. Extra arguments/env are the harness's knobs, e.g.
#   PGB_MODES=prepared PGB_CLIENTS=32 bench/compare.sh
# ONBOARD_BASELINE=/path/to/an/older/onboard also measures that binary in the same run (same
# cluster, same load), for before/after figures.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
harness=${BENCH_DIR:-$root/../shared/bench}
export BENCH_WORK=${BENCH_WORK:-$root/bench/.work}
export PGB_SCRIPTS=${PGB_SCRIPTS:-read_pipe write_pipe}
export PGB_MODES=${PGB_MODES:-prepared}
export PGB_CLIENTS=${PGB_CLIENTS:-8 32}
port=${ONBOARD_BENCH_PORT:-8080}
secret=${BENCH_JWT_SECRET:-super-secret-jwt-token-with-at-least-32-characters-long}
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }

swift build -c release --product onboard
binary=$root/.build/release/onboard
export SCHEMA_CMD="$binary migrate up --database-url \"\$BENCH_DB_URL\" --migrations-dir $root/migrations"
"$harness/run.sh" up
sock="$BENCH_WORK/pg/sock"
anon=$(python3 "$harness/tokens.py" --secret "$secret" --anon-key)

servers=()
serve() {  # binary port log
  JWT_SECRET="$secret" ANON_KEY="$anon" DB_MIGRATE_ON_START=false LOG_LEVEL=warning DB_POOL_SIZE=${DB_POOL_SIZE:-8} \
    DATABASE_URL="postgresql://authenticator@/bench?host=$sock&port=54329" \
    "$1" serve --port "$2" >"$3" 2>&1 &
  servers+=($!)
  for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$2/health" >/dev/null && return; sleep 0.2; done
  echo "onboard on port $2 did not come up: $(tail -5 "$3")" >&2
  exit 1
}
trap 'for pid in "${servers[@]}"; do kill -TERM $pid 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT

targets=()
if [ -n "${ONBOARD_BASELINE:-}" ]; then
  serve "$ONBOARD_BASELINE" $((port - 1)) "$BENCH_WORK/onboard-baseline.log"
  targets+=("http://127.0.0.1:$((port - 1))")
fi
serve "$binary" "$port" "$BENCH_WORK/onboard.log"
targets+=("http://127.0.0.1:$port")

KEEP_PG=1 "$harness/run.sh" "${targets[@]}"
