#!/usr/bin/env bash
# REST benchmark, before/after: the shared harness's cluster, data, tokens, pgbench scripts and wrk
# load (../shared/bench), measured interleaved: in each of ROUNDS rounds, for R then W, the
# pgbench 2-statement pipeline ceiling (-M prepared, -c 8 and -c 32: the better one counts), the
# Hummingbird peer, `before` (ONBOARD_BASELINE, an older onboard binary, if set) and `after` (the
# release build of this tree), one after the other, on the same cluster with the same load. Prints
# the medians over the rounds and their spreads: req/s, ÷ the same round's ceiling and peer, p99,
# and CPU µs per request of the server and of PostgreSQL (read from /proc per process: other
# clusters and builds on the machine are not counted; their share shows as "other load").
#   bench/compare.sh [quiet|busy|both]        busy: the same with `stress-ng --cpu 1` running
#   ONBOARD_BASELINE=/path/to/onboard  ROUNDS=3  OPS="R W"  PEER=1  PGB_CLIENTS="8 32"
#   WRK_DURATION=15 WRK_WARMUP=3 PGB_DURATION=20 (the harness's defaults)  ONBOARD_BINARY=<after>
# W uses bench/pg/write_pipe_valid.sql and bench/wrk/write-valid.lua (the harness's W without COMPLETE,
# which our state machine refuses for the seed's users; W_SCRIPTS=harness for the harness's own).
# The servers run as onboard does in production here: release build, role "authenticator" over
# the Unix socket, DB_POOL_SIZE=8, LOG_LEVEL=warning. Results: $BENCH_WORK/compare.jsonl; the
# report again: python3 bench/interleave.py report $BENCH_WORK/compare.jsonl RUN_ID...
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
harness=${BENCH_DIR:-$root/../shared/bench}
harness=$(cd "$harness" && pwd)
export BENCH_WORK=${BENCH_WORK:-$root/bench/.work}
work=$BENCH_WORK
mkdir -p "$work"
modes=${1:-quiet}
[ "$modes" = both ] && modes="quiet busy"
port=${ONBOARD_BENCH_PORT:-8080}
peer_port=${PEER_PORT:-8081}
secret=${BENCH_JWT_SECRET:-super-secret-jwt-token-with-at-least-32-characters-long}
need() { command -v "$1" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; }; }
need wrk wrk
case " $modes " in *" busy "*) need stress-ng stress-ng ;; esac

binary=${ONBOARD_BINARY:-}
if [ -z "$binary" ]; then
  swift build -c release --product onboard
  binary=$root/.build/release/onboard
fi
export SCHEMA_CMD="$root/.build/release/onboard migrate up --database-url \"\$BENCH_DB_URL\" --migrations-dir $root/migrations"
"$harness/run.sh" up >"$work/compare-up.log"
sock="$work/pg/sock"
anon=$(python3 "$harness/tokens.py" --secret "$secret" --anon-key)

pids=()
cleanup() { for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
wait_up() {  # port log pid
  for _ in $(seq 1 150); do curl -fs "http://127.0.0.1:$1/health" >/dev/null && return; kill -0 "$3" 2>/dev/null || break; sleep 0.2; done
  echo "server on port $1 did not come up: $(tail -5 "$2")" >&2
  exit 1
}
serve() {  # binary port log
  JWT_SECRET="$secret" ANON_KEY="$anon" DB_MIGRATE_ON_START=false LOG_LEVEL=warning DB_POOL_SIZE=${DB_POOL_SIZE:-8} \
    DATABASE_URL="postgresql://authenticator@/bench?host=$sock&port=54329" \
    "$1" serve --port "$2" >"$3" 2>&1 &
  pids+=($!)
  wait_up "$2" "$3" $!
  last=$!
}

systems=()
if [ "${PEER:-1}" = 1 ]; then
  # The harness's own peer build (its step in run.sh), kept under $BENCH_WORK.
  (cd "$harness/peer-hummingbird" && swift build -c release --scratch-path "$work/peer-build" 2>&1 | tail -3) >&2
  PEER_HOST=127.0.0.1 PEER_PORT="$peer_port" PGHOST="$sock" PGPORT=54329 PGUSER=authenticator PGDATABASE=bench \
    DB_POOL_SIZE=${DB_POOL_SIZE:-8} JWT_SECRET="$secret" LOG_LEVEL=warning "$work/peer-build/release/PeerServer" >"$work/compare-peer.log" 2>&1 &
  pids+=($!)
  wait_up "$peer_port" "$work/compare-peer.log" $!
  systems+=(--system "peer=http://127.0.0.1:$peer_port=$!")
fi
if [ -n "${ONBOARD_BASELINE:-}" ]; then
  serve "$ONBOARD_BASELINE" $((port - 1)) "$work/compare-before.log"
  systems+=(--system "before=http://127.0.0.1:$((port - 1))=$last")
fi
serve "$binary" "$port" "$work/compare-after.log"
systems+=(--system "after=http://127.0.0.1:$port=$last")
sleep 2  # the pipelined connections open in the background

# The harness's functional check (own rows, RLS, PATCH's row) on every target before loading it.
for ((i = 1; i < ${#systems[@]}; i += 2)); do
  url=$(cut -d= -f2 <<<"${systems[i]}")
  python3 "$harness/lib/benchlib.py" check "$url" "$work/tokens.tsv" >&2 || echo "CHECK FAILED: $url" >&2
done

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "postgres: $(/usr/lib/postgresql/15/bin/postgres --version); wrk -t${WRK_THREADS:-2} -c${WRK_CONNECTIONS:-64} -d${WRK_DURATION:-15}s (+${WRK_WARMUP:-3}s); pgbench -T ${PGB_DURATION:-20} -c ${PGB_CLIENTS:-8 32}"
  echo "after: $binary$(git -C "$root" rev-parse --short HEAD 2>/dev/null | sed 's/^/ (tree at /;s/$/)/')"
  echo "before: ${ONBOARD_BASELINE:-none}"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$work/compare-machine.txt" >&2

runs=()
for mode in $modes; do
  hog=
  if [ "$mode" = busy ]; then
    stress-ng --cpu 1 --timeout 0 >/dev/null 2>&1 &
    hog=$!
    pids+=($hog)
  fi
  run=$(python3 "$root/bench/interleave.py" run --work "$work" --harness "$harness" --label "$mode" \
    --rounds "${ROUNDS:-3}" --ops "${OPS:-R W}" --pgbench-clients "${PGB_CLIENTS:-8 32}" "${systems[@]}")
  runs+=("$run")
  if [ -n "$hog" ]; then kill -TERM "$hog" 2>/dev/null || true; wait "$hog" 2>/dev/null || true; fi
done
python3 "$root/bench/interleave.py" report "$work/compare.jsonl" "${runs[@]}" | tee "$work/compare-report-${runs[0]}.md"
