#!/usr/bin/env bash
# Reads with 0 and 1 hot standby, same machine, same run: one `onboard serve` over a private
# primary, then the same server with DATABASE_READ_URLS naming a streaming standby of it
# (pg_basebackup through a slot). wrk reads a 10,000-row table through REST (20 rows a
# request); for each run: requests/s, p99, and the CPU the primary's and the standby's
# PostgreSQL processes used per request (from /proc, all their backends summed).
#   WRK_DURATION (10) WRK_CONNECTIONS (32) BENCH_BUILD (release | debug)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
duration=${WRK_DURATION:-10}
connections=${WRK_CONNECTIONS:-32}
build=${BENCH_BUILD:-release}
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
swift build -c "$build" --product onboard
binary=$root/.build/$build/onboard
bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
work=$(mktemp -d /tmp/onboard-replicabench.XXXXXX); chmod 755 "$work"
mkdir -p "$work/pg"; [ "$(id -u)" -eq 0 ] && chown postgres: "$work/pg"
pg_port=$(free_port); standby_port=$(free_port); http_port=$(free_port)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null || true
  as_postgres "$bindir/pg_ctl" -D "$work/pg/standby" -m fast -w stop >/dev/null 2>&1 || true
  as_postgres "$bindir/pg_ctl" -D "$work/pg/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
options="-c listen_addresses=127.0.0.1 -c unix_socket_directories='$work/pg' -c max_connections=100 -c wal_level=logical"
as_postgres "$bindir/initdb" -D "$work/pg/data" -U postgres --auth=trust -E UTF8 >/dev/null
as_postgres "$bindir/pg_ctl" -D "$work/pg/data" -l "$work/pg/primary.log" -w -o "$options -c port=$pg_port" start >/dev/null
psql_primary() { "$bindir/psql" -X -qAt -h 127.0.0.1 -p "$pg_port" -U postgres "$@"; }
psql_primary -c "CREATE DATABASE onboard" postgres
"$binary" migrate up --database-url "postgresql://postgres@127.0.0.1:$pg_port/onboard" >/dev/null
psql_primary onboard -c "CREATE TABLE public.bench_items (id int PRIMARY KEY, name text, payload jsonb);
  INSERT INTO public.bench_items SELECT i, 'item ' || i, jsonb_build_object('n', i, 'tags', jsonb_build_array('a', 'b')) FROM generate_series(1, 10000) i;
  GRANT SELECT ON public.bench_items TO anon, authenticated; ANALYZE public.bench_items;"
as_postgres "$bindir/pg_basebackup" -h 127.0.0.1 -p "$pg_port" -U postgres -D "$work/pg/standby" -R -X stream -C -S bench_standby --checkpoint=fast
as_postgres "$bindir/pg_ctl" -D "$work/pg/standby" -l "$work/pg/standby.log" -w -o "$options -c port=$standby_port" start >/dev/null

eval "$("$binary" keys)"
export JWT_SECRET ANON_KEY SERVICE_ROLE_KEY
# CPU seconds (user + system) of a cluster: its postmaster and every child.
cluster_cpu() {
  local postmaster ticks
  postmaster=$(head -1 "$1/postmaster.pid")
  ticks=$(for pid in $postmaster $(pgrep -P "$postmaster"); do awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || true; done | awk '{s += $1} END {print s + 0}')
  echo "$ticks"
}
hz=$(getconf CLK_TCK)
printf '| standbys | req/s | p99 | primary CPU ms/request | standby CPU ms/request | reads on the standby |\n|---|---|---|---|---|---|\n'
for standbys in 0 1; do
  read_urls=""; [ "$standbys" = 1 ] && read_urls="postgresql://postgres@127.0.0.1:$standby_port/onboard"
  DATABASE_URL="postgresql://postgres@127.0.0.1:$pg_port/onboard" DATABASE_READ_URLS="$read_urls" LOG_LEVEL=warning \
    "$binary" serve --port "$http_port" >"$work/server-$standbys.log" 2>&1 &
  server=$!
  for _ in $(seq 1 150); do curl -fs "http://127.0.0.1:$http_port/ready" >/dev/null && break; sleep 0.2; done
  target="http://127.0.0.1:$http_port/rest/v1/bench_items?select=id,name,payload&id=gt.5000&order=id&limit=20"
  if [ "$standbys" = 1 ]; then
    for _ in $(seq 1 150); do curl -fs "http://127.0.0.1:$http_port/ready" | grep -q '"state":"healthy"' && break; sleep 0.2; done
  fi
  # Warm-up (and the anon key's iat: its reads may use a standby once it is 2 s old).
  wrk -t 2 -c "$connections" -d 3s -H "apikey: $ANON_KEY" -H "Authorization: Bearer $ANON_KEY" "$target" >/dev/null
  primary_before=$(cluster_cpu "$work/pg/data"); standby_before=$(cluster_cpu "$work/pg/standby")
  out=$(wrk -t 2 -c "$connections" -d "${duration}s" --latency -H "apikey: $ANON_KEY" -H "Authorization: Bearer $ANON_KEY" "$target")
  primary_after=$(cluster_cpu "$work/pg/data"); standby_after=$(cluster_cpu "$work/pg/standby")
  requests=$(awk '/requests in/ {print $1}' <<<"$out")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  on_standby=$(curl -fsS "http://127.0.0.1:$http_port/metrics" | awk '/^onboard_db_reads_total\{target="127/ {print $2}')
  per() { awk -v t="$1" -v r="$requests" -v hz="$hz" 'BEGIN {printf "%.3f", t / hz * 1000 / r}'; }
  printf '| %s | %s | %s | %s | %s | %s |\n' "$standbys" "$rps" "$p99" "$(per $((primary_after - primary_before)))" \
    "$(per $((standby_after - standby_before)))" "${on_standby:--}"
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
done
