#!/usr/bin/env bash
# PostgreSQL's CPU per request for the shapes of R's two statements, with pgbench alone (no HTTP
# server): the harness's read_pipe, onboard's exact statements (bench/pg/shape_ours.sql, as the
# server sends them: 8 set_configs with claim.sub, the request.* settings and read-only, then PostgREST's CTE)
# and the variants between them (bench/pg/shape_*.sql), interleaved over ROUNDS rounds. Each is
# `pgbench -M prepared -c CLIENTS -j 2` over the harness cluster's socket; the CPU is the bench
# cluster's own (the postmaster, its live children and the ones it reaped), from /proc, so other
# clusters on the machine do not count. request.headers gets the header JSON of a supabase-py
# request (bound, ~700 bytes) as the server sends it.
#   bench/pg-shapes.sh [shape...]     ROUNDS=3 DURATION=15 CLIENTS=8
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=${BENCH_WORK:-$root/bench/.work}
sock=$work/pg/sock
pm=$(head -1 "$work/pg/data/postmaster.pid")
shapes=${*:-harness ours ours_setup ours_query no_readonly no_request}
token=$(awk -F'\t' 'NR==2 {print $3}' "$work/tokens.tsv")
anon=$(awk -F'\t' '$1 == "anon" {print $2}' "$work/tokens.tsv")
headers="{\"apikey\":\"$anon\",\"authorization\":\"Bearer $token\",\"accept\":\"*/*\",\"accept-encoding\":\"gzip, deflate\",\"accept-profile\":\"public\",\"content-profile\":\"public\",\"x-client-info\":\"supabase-py/2.34.1\",\"user-agent\":\"python-httpx/0.28.1\",\"connection\":\"keep-alive\",\"host\":\"127.0.0.1:8080\"}"
tck=$(getconf CLK_TCK)
cluster_ticks() {  # the postmaster's own and reaped children's time, plus its live children's
  local total
  total=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat")
  for c in $(cat "/proc/$pm/task/$pm/children"); do
    [ -r "/proc/$c/stat" ] && total=$((total + $(awk '{print $14 + $15}' "/proc/$c/stat")))
  done
  echo "$total"
}
printf '| round | shape | tps | PostgreSQL CPU µs per request | machine busy (of %s cores) |\n|---:|---|---:|---:|---:|\n' "$(nproc)"
for round in $(seq 1 "${ROUNDS:-3}"); do
  for shape in $shapes; do
    read -r a0 i0 < <(awk '/^cpu / {print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6}' /proc/stat)
    t0=$(cluster_ticks)
    out=$(/usr/lib/postgresql/15/bin/pgbench -n -h "$sock" -p 54329 -U authenticator -M prepared -c "${CLIENTS:-8}" -j 2 \
      -T "${DURATION:-15}" -D nusers=10000 -D headers="$headers" -f "bench/pg/shape_$shape.sql" bench 2>&1)
    sleep 0.5
    t1=$(cluster_ticks)
    read -r a1 i1 < <(awk '/^cpu / {print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6}' /proc/stat)
    tx=$(awk '/number of transactions actually processed/ {print $NF}' <<<"$out" | cut -d/ -f1)
    tps=$(awk '/^tps/ {print $3; exit}' <<<"$out")
    printf '| %s | %s | %.0f | %.0f | %.2f |\n' "$round" "$shape" "${tps:-0}" "$(echo "($t1 - $t0) * 1000000 / $tck / ${tx:-1}" | bc -l)" \
      "$(echo "(1 - ($i1 - $i0) / ($a1 - $a0)) * $(nproc)" | bc -l)"
  done
done
