#!/usr/bin/env bash
# Where onboard's CPU goes under the harness's R or W load: a release build on the harness's
# cluster (bench/compare.sh leaves it up), wrk with the harness's script, and perf (Debian's
# linux-perf) sampling the server for 8 s in the middle. Prints the top frames, inclusive and
# self, as shares of the server's samples; then the same for the bench cluster's backends of
# database "bench" sampled in the same 8 s (PostgreSQL's own frames), and the context switches
# per request of the server and of those backends.
#   bench/profile.sh R|W|E        (ONBOARD_BINARY=<another build> profiles that one instead)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
harness=${BENCH_DIR:-$root/../shared/bench}
work=${BENCH_WORK:-$root/bench/.work}
op=${1:-R}
script=$harness/wrk/read.lua; [ "$op" = W ] && script=$root/bench/wrk/write-valid.lua; [ "$op" = E ] && script=$root/bench/wrk/embed.lua
command -v perf >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null; }
secret=${BENCH_JWT_SECRET:-super-secret-jwt-token-with-at-least-32-characters-long}
sock=$work/pg/sock
[ -S "$sock/.s.PGSQL.54329" ] || { echo "the harness's cluster is not up: run bench/compare.sh (or ../shared/bench/run.sh up) first" >&2; exit 1; }
binary=${ONBOARD_BINARY:-$root/.build/release/onboard}
[ -n "${ONBOARD_BINARY:-}" ] || swift build -c release --product onboard
anon=$(python3 "$harness/tokens.py" --secret "$secret" --anon-key)
JWT_SECRET="$secret" ANON_KEY="$anon" DB_MIGRATE_ON_START=false LOG_LEVEL=warning \
  DATABASE_URL="postgresql://authenticator@/bench?host=$sock&port=54329" \
  "$binary" serve --port 8300 >"$work/profile-server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait 2>/dev/null' EXIT
for _ in $(seq 1 100); do curl -fs http://127.0.0.1:8300/health >/dev/null && break; sleep 0.2; done
sleep 2  # the pipelined connections open in the background
HARNESS_WRK=$harness/wrk wrk -t2 -c64 -d16s -s "$script" http://127.0.0.1:8300 -- "$work/tokens.tsv" >"$work/profile-wrk.out" 2>&1 &
load=$!
sleep 4
pm=$(head -1 "$work/pg/data/postmaster.pid")
backends=$(for c in $(cat "/proc/$pm/task/$pm/children"); do grep -q "bench" "/proc/$c/cmdline" 2>/dev/null && echo "$c"; done | paste -sd,)
switches() {  # pids (comma-separated) → voluntary + involuntary context switches so far, all threads
  local total=0 pid
  for pid in ${1//,/ }; do
    for t in /proc/$pid/task/*/status; do total=$((total + $(awk '/ctxt_switches/ {n += $2} END {print n + 0}' "$t" 2>/dev/null || echo 0))); done
  done
  echo $total
}
s0=$(switches "$server"); b0=$(switches "$backends")
perf record -F 999 -g -o "$work/perf.data" -p "$server" -- sleep 8 2>/dev/null >/dev/null &
perf record -F 999 -g -o "$work/perf-db.data" -p "$backends" -- sleep 8 2>/dev/null >/dev/null
wait $!
s1=$(switches "$server"); b1=$(switches "$backends")
wait $load
grep "Requests/sec" "$work/profile-wrk.out"
rps=$(awk '/Requests\/sec/ {print $2}' "$work/profile-wrk.out")
echo "backends of database bench: $(tr ',' '\n' <<<"$backends" | wc -l); context switches per request over the 8 s (at the run's mean rate): server $(echo "($s1 - $s0) / ($rps * 8)" | bc -l | cut -c1-5), backends $(echo "($b1 - $b0) / ($rps * 8)" | bc -l | cut -c1-5)"
echo "== inclusive (children)"
perf report -i "$work/perf.data" --children --sort symbol -g none --percent-limit 3 --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -40 || true
echo "== self"
perf report -i "$work/perf.data" --no-children --sort symbol -g none --percent-limit 1 --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -30 || true
echo "== PostgreSQL backends: inclusive (children)"
perf report -i "$work/perf-db.data" --children --sort symbol -g none --percent-limit 3 --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -40 || true
echo "== PostgreSQL backends: self"
perf report -i "$work/perf-db.data" --no-children --sort symbol -g none --percent-limit 1 --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -30 || true
