#!/usr/bin/env bash
# HTTP layer benchmark: wrk against a trivial route of onboard (GET /auth/v1/health, no database)
# and of the Hummingbird peer (GET /health) in the same run, at 64 and 1,000 connections; then
# the RSS each server holds for 10,000 idle keep-alive connections.
# Needs the peer built by the shared harness (../shared/bench/run.sh builds it once).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
harness=${BENCH_DIR:-$root/../shared/bench}
work=${BENCH_WORK:-$root/bench/.work}
duration=${WRK_DURATION:-10}
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
ulimit -n "$(ulimit -Hn)"

swift build -c release --product onboard
peer=$work/peer-build/release/PeerServer
[ -x "$peer" ] || { echo "peer binary $peer not found: run bench/compare.sh first (it builds the peer)" >&2; exit 1; }

eval "$("$root/.build/release/onboard" keys)"
export JWT_SECRET ANON_KEY SERVICE_ROLE_KEY
data=$(mktemp -d /tmp/onboard-httpbench.XXXXXX); chmod 755 "$data"
LOG_LEVEL=warning MAX_CONNECTIONS=20000 "$root/.build/release/onboard" serve --port 8090 --data-dir "$data/pg" >"$data/onboard.log" 2>&1 &
ours=$!
# The peer needs its database for start-up only; the harness's cluster must be up (compare.sh leaves it).
PEER_PORT=8091 PGHOST=127.0.0.1 PGPORT=54329 PGUSER=authenticator PGDATABASE=bench JWT_SECRET="$JWT_SECRET" LOG_LEVEL=warning "$peer" >"$data/peer.log" 2>&1 &
theirs=$!
trap 'kill $ours $theirs 2>/dev/null; wait 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 1 150); do curl -fs -H "apikey: $ANON_KEY" http://127.0.0.1:8090/auth/v1/health >/dev/null && curl -fs http://127.0.0.1:8091/health >/dev/null && break; sleep 0.2; done

printf '| server | connections | req/s | p99 |\n|---|---|---|---|\n'
for connections in 64 1000; do
  for target in "onboard http://127.0.0.1:8090/auth/v1/health" "peer http://127.0.0.1:8091/health"; do
    set -- $target
    # /auth/v1 wants the apikey, as Supabase's gateway (the peer ignores the header).
    out=$(wrk -t 2 -c "$connections" -d "${duration}s" --latency -H "apikey: $ANON_KEY" "$2" 2>&1)
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
    printf '| %s | %s | %s | %s |\n' "$1" "$connections" "$rps" "$p99"
  done
done

rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
idle() {  # pid port: opens 10,000 keep-alive connections, prints the RSS growth in KiB
  local before after ready
  before=$(rss "$1")
  ready=$(mktemp)
  python3 - "$2" "$ready" <<'PY' &
import socket, sys, time
conns = []
for _ in range(10000):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    conns.append(s)
for s in conns:
    s.recv(4096)          # every connection has been answered and is now idle
open(sys.argv[2], "w").write("ready")
time.sleep(5)
PY
  local client=$!
  until [ -s "$ready" ]; do sleep 0.2; done
  sleep 1
  after=$(rss "$1")
  wait $client
  rm -f "$ready"
  echo $((after - before))
}
printf '\n| server | RSS growth for 10,000 idle keep-alive connections |\n|---|---|\n'
printf '| onboard | %s KiB |\n' "$(idle $ours 8090)"
printf '| peer | %s KiB |\n' "$(idle $theirs 8091)"
