#!/usr/bin/env bash
# Cost as the work grows: R (GET /rest/v1/children?user_id=eq.…) against onboard (release
# build) on the harness's cluster, with 1, 2 (the harness's data), 10 and 100 children per user,
# and E, the embedded read (a profile with its current child: bench/wrk/embed.lua), next to R,
# and then with 1,000,000 users instead of 10,000 (GROWTH_USERS=1; reseeds the cluster twice,
# minutes). Prints req/s, bytes per response, the server's and PostgreSQL's CPU per request, and
# the answers that were not 2xx (or sockets that failed): a row with any is not a measurement.
# The cluster must be up with our schema (bench/compare.sh leaves it so). GROWTH_ONLY_USERS=1 measures
# only the 1,000,000-user row (with GROWTH_USERS=1): the server is started after the reseed, and
# pidstat (sysstat) records the server's and PostgreSQL's CPU each second of that wrk run (its
# Lua init included: the load starts when the CPU does) into $BENCH_WORK/growth-pidstat.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
harness=${BENCH_DIR:-$root/../shared/bench}
export BENCH_WORK=${BENCH_WORK:-$root/bench/.work}
work=$BENCH_WORK
duration=${WRK_DURATION:-10}
secret=${BENCH_JWT_SECRET:-super-secret-jwt-token-with-at-least-32-characters-long}
sock=$work/pg/sock
psql=(/usr/lib/postgresql/15/bin/psql -X -q -v ON_ERROR_STOP=1 -h "$sock" -p 54329 -U postgres -d bench)
binary=${ONBOARD_BINARY:-$root/.build/release/onboard}   # ONBOARD_BINARY: measure another build
[ -n "${ONBOARD_BINARY:-}" ] || swift build -c release --product onboard
export SCHEMA_CMD="$root/.build/release/onboard migrate up --database-url \"\$BENCH_DB_URL\" --migrations-dir $root/migrations"
anon=$(python3 "$harness/tokens.py" --secret "$secret" --anon-key)

server=
start_server() {
  JWT_SECRET="$secret" ANON_KEY="$anon" DB_MIGRATE_ON_START=false LOG_LEVEL=warning \
    DATABASE_URL="postgresql://authenticator@/bench?host=$sock&port=54329" "$binary" serve --port 8400 >"$work/growth-server.log" 2>&1 &
  server=$!
  for _ in $(seq 1 100); do curl -fs http://127.0.0.1:8400/health >/dev/null && break; sleep 0.2; done
  sleep 2
}
stop_server() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
trap stop_server EXIT

cpu_of() {  # pid-pattern → clock ticks used so far by matching processes
  local total=0
  for pid in $(pgrep -f "$1" || true); do
    [ -r /proc/$pid/stat ] && total=$(( total + $(awk '{print $14 + $15}' /proc/$pid/stat) ))
  done
  echo $total
}

measure() {  # label [wrk script]
  local srv0 db0 out rps bytes srv1 db1 requests errors script=${2:-$harness/wrk/read.lua}
  srv0=$(cpu_of "onboard serve --port 8400"); db0=$(cpu_of "postgres: .*bench")
  # One wrk thread: wrk runs each thread's Lua init (every user's request formatted: with
  # 1,000,000 users ~20 s and ~1 GB per thread) in its main thread before creating the next
  # thread, and starts its clock only after the last one; with -t2 the first thread loads the
  # server during the second one's init, uncounted by the clock, and req/s comes out several
  # times too high (the 1,000,000-user row's 26–35k req/s). One thread is ample for this server.
  local stat=
  if [ -n "${PIDSTAT:-}" ] && command -v pidstat >/dev/null; then
    pidstat -u -h -p "$server,$(pgrep -d, -f 'postgres: .*bench' || true)" 1 600 >"$work/growth-pidstat.txt" 2>&1 &
    stat=$!
  fi
  HARNESS_WRK=$harness/wrk wrk -t1 -c64 -d"${duration}s" --latency -s "$script" http://127.0.0.1:8400 -- "$work/tokens.tsv" \
    >"$work/growth-wrk-last.out" 2>&1 || true
  if [ -n "$stat" ]; then kill -INT "$stat" 2>/dev/null || true; wait "$stat" 2>/dev/null || true; fi
  out=$(cat "$work/growth-wrk-last.out")
  srv1=$(cpu_of "onboard serve --port 8400"); db1=$(cpu_of "postgres: .*bench")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  requests=$(awk '/requests in/ {print $1}' <<<"$out")
  errors=$(awk '/Non-2xx or 3xx responses:/ {n += $NF} /Socket errors:/ {gsub(/,/, ""); n += $4 + $6 + $8 + $10} END {print n + 0}' <<<"$out")
  local user token path
  user=$(awk -F'\t' 'NR==2 {print $2}' "$work/tokens.tsv"); token=$(awk -F'\t' 'NR==2 {print $3}' "$work/tokens.tsv")
  path="/rest/v1/children?select=*&user_id=eq.$user"
  [ -n "${2:-}" ] && path="/rest/v1/user_profiles?select=id,onboarding_state,children%21current_child_id%28name,age%29&id=eq.$user"
  bytes=$(curl -s -H "apikey: $anon" -H "Authorization: Bearer $token" "http://127.0.0.1:8400$path" | wc -c)
  local tick; tick=$(getconf CLK_TCK)
  printf '| %s | %s | %s | %s | %.0f | %.0f | %s |\n' "$1" "$rps" "$(awk '$1 == "99%" {print $2}' <<<"$out")" "$bytes" \
    "$(echo "($srv1 - $srv0) * 1000000 / $tick / $requests" | bc -l)" "$(echo "($db1 - $db0) * 1000000 / $tick / $requests" | bc -l)" "$errors"
}

printf '| data | req/s | p99 | bytes per response | server µs/req | PostgreSQL µs/req | not 2xx |\n|---|---:|---:|---:|---:|---:|---:|\n'
"$harness/run.sh" up >/dev/null 2>&1
if [ "${GROWTH_ONLY_USERS:-0}" != 1 ]; then
start_server
# 1 child: every user's second child is deleted for the measurement and made again after it
# (as the harness's seed makes it; a child's owner cannot be changed).
"${psql[@]}" -c "DELETE FROM public.children WHERE name LIKE 'Maya %'" -c "VACUUM ANALYZE public.children"
measure "10,000 users, 1 child each"
"${psql[@]}" -c "INSERT INTO public.children (user_id, name, age, birthday, goals, topics, temperament, temperament_talkative, temperament_sensitivity, temperament_accountability)
  SELECT u.id, 'Maya ' || u.k, 2 + (u.k + 5) % 9, current_date - ((2 + (u.k + 5) % 9) * 365 + u.k % 300), ARRAY['patience', 'sharing', 'bedtime routine'],
         ARRAY['feelings', 'friendship'], 'easygoing', 1 + (u.k + 1) % 10, 1 + (u.k * 3 + 1) % 10, 1 + (u.k * 7 + 1) % 10
  FROM bench.users u ORDER BY u.k" -c "VACUUM ANALYZE public.children"
measure "10,000 users, 2 children each"
measure "E: a profile with its current child embedded (10,000 users)" "$root/bench/wrk/embed.lua"
for extra in 8 98; do
  "${psql[@]}" -c "DELETE FROM public.children WHERE name LIKE 'Extra %'" \
    -c "INSERT INTO public.children (user_id, name, age) SELECT u.id, 'Extra ' || j || ' ' || u.k, 1 + j % 12 FROM bench.users u, generate_series(1, $extra) j"
  "${psql[@]}" -c "VACUUM ANALYZE public.children"
  measure "10,000 users, $((extra + 2)) children each"
done
"${psql[@]}" -c "DELETE FROM public.children WHERE name LIKE 'Extra %'" -c "VACUUM ANALYZE public.children"
fi

if [ "${GROWTH_USERS:-0}" = 1 ]; then
  stop_server
  N_USERS=1000000 "$harness/run.sh" up >/dev/null 2>&1
  start_server
  PIDSTAT=1 measure "1,000,000 users, 2 children each"
  stop_server
  "$harness/run.sh" up >/dev/null 2>&1   # back to the harness's 10,000 users
fi
