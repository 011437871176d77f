#!/usr/bin/env bash
# Onboarding analytics on 1,000,000 users: a scratch PostgreSQL cluster (its own, from the
# system's binaries) with every migration, 1M users in auth.users (+ identities, profiles,
# children), their onboarding history and progress at known step timings, then each analytics
# function under EXPLAIN ANALYZE as service_role, on the last 7 and 30 days' sign-ups and on all
# of them (180 days). Prints each query's execution time (warm cache, TIMING OFF; JIT on, as
# PostgreSQL defaults, and off) and checks the answers against what the generator put in. The
# plans with per-node times are kept in $BENCH_WORK/analytics/analytics-plans/.
#
#   bench/analytics-1m.sh                 generate (first run, ~1.5 min) and measure (~5 min)
#   USERS=100000 bench/analytics-1m.sh    fewer users
#   RESEED=1 bench/analytics-1m.sh        regenerate (after a migration changed)
#   KEEP=1 bench/analytics-1m.sh          leave the cluster running (else it is stopped)
#   CLEAN=1 bench/analytics-1m.sh         stop the cluster and delete its folder at the end
#
# The generated data (users signed up over the 180 days before the run, in time order):
#   providers   30 % anonymous (40 % of them upgraded to e-mail a day later), 40 % e-mail,
#               20 % google, 10 % apple;
#   furthest    step 1..8 with 10, 8, 7, 5, 5, 3, 2, 60 % (funnel: 100, 90, 82, 75, 70, 65, 62, 60 %);
#   timings     step k lasts base_k × speed minutes, base = 2, 3, 5, 2, 4, 6, 1 (NOT_STARTED ..
#               REVIEW), speed ∈ {0.5, 1, 1.5, 2, 2.5} per user: median 1.5 × base, p90 2.5 × base;
#               time to completion median 34.5 min, p90 57.5 min;
#   children    1..3 per completed user (average 2, median 2), 1 for users who reached GOALS.
# The bulk load writes the history and the progress itself (triggers off), as the triggers would.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
users=${USERS:-1000000}
work=${BENCH_WORK:-$root/bench/.work}/analytics
port=${PG_PORT:-55998}
data="$work/pg"
sock="$work/sock"
plans="$work/analytics-plans"
bindir=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$bindir/initdb" ] || { echo "no PostgreSQL server binaries (set PG_BINDIR)" >&2; exit 1; }

# initdb refuses root: run the server as the postgres user then (as the embedded cluster does).
as_pg=()
if [ "$(id -u)" = 0 ]; then as_pg=(runuser -u "${PG_OS_USER:-postgres}" --); fi
mkdir -p "$work" "$sock" "$plans"
[ ${#as_pg[@]} = 0 ] || chown "${PG_OS_USER:-postgres}" "$work" "$sock"

psql_() { psql -X -q -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -U postgres "$@"; }

if [ ! -f "$data/PG_VERSION" ]; then
  "${as_pg[@]}" "$bindir/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C --no-instructions >/dev/null
fi
if ! "$bindir/pg_isready" -q -h "$sock" -p "$port"; then
  # Server-like settings: default work_mem (4MB) as the embedded cluster has; 1GB of shared
  # buffers so that the warm runs measure the queries rather than the OS page cache.
  "${as_pg[@]}" "$bindir/pg_ctl" -D "$data" -l "$work/server.log" -w -t 120 \
    -o "-k $sock -p $port -c listen_addresses='' -c TimeZone=UTC -c shared_buffers=${SHARED_BUFFERS:-1GB} -c max_wal_size=8GB -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null
fi
stop() {
  if [ "${KEEP:-0}" != 1 ] || [ "${CLEAN:-0}" = 1 ]; then
    "${as_pg[@]}" "$bindir/pg_ctl" -D "$data" -w -m fast stop >/dev/null || true
  fi
  if [ "${CLEAN:-0}" = 1 ]; then rm -rf "$work"; fi
}
trap stop EXIT

seeded=$(psql_ -d postgres -tAc "SELECT count(*) FROM pg_database WHERE datname = 'analytics_bench'")
if [ "$seeded" = 0 ] || [ "${RESEED:-0}" = 1 ] || \
   [ "$(psql_ -d analytics_bench -tAc "SELECT coalesce((SELECT value FROM bench_meta WHERE key = 'users'), '')" 2>/dev/null)" != "$users" ]; then
  echo "== generating $users users (a few minutes for 1M)"
  psql_ -d postgres -c "DROP DATABASE IF EXISTS analytics_bench WITH (FORCE)" -c "CREATE DATABASE analytics_bench"
  for file in "$root"/migrations/*.sql; do
    psql_ -d analytics_bench -1 -f "$file" >/dev/null 2>"$work/migrate.err" || { cat "$work/migrate.err" >&2; exit 1; }
  done
  started=$(date +%s)
  psql_ -d analytics_bench -v users="$users" <<'SQL'
-- Bulk load: no triggers (profile creation, history, realtime, foreign-key checks).
SET session_replication_role = replica;
SET maintenance_work_mem = '1GB';
SET work_mem = '256MB';
SELECT setseed(0.42);

CREATE UNLOGGED TABLE bench_users AS
SELECT i, gen_random_uuid() AS id,
       now() - interval '180 days' * random() AS created_at,
       random() AS r_provider, random() AS r_upgrade, random() AS r_step,
       (floor(random() * 5) + 1) * 0.5 AS speed, 1 + floor(random() * 3)::int AS children
  FROM generate_series(1, :users) i;
ALTER TABLE bench_users ADD COLUMN provider text, ADD COLUMN anonymous_now boolean, ADD COLUMN furthest int;
UPDATE bench_users SET
    provider = CASE WHEN r_provider < 0.3 THEN 'anonymous' WHEN r_provider < 0.7 THEN 'email' WHEN r_provider < 0.9 THEN 'google' ELSE 'apple' END,
    anonymous_now = r_provider < 0.3 AND r_upgrade >= 0.4,
    furthest = CASE WHEN r_step < 0.10 THEN 1 WHEN r_step < 0.18 THEN 2 WHEN r_step < 0.25 THEN 3 WHEN r_step < 0.30 THEN 4
                    WHEN r_step < 0.35 THEN 5 WHEN r_step < 0.38 THEN 6 WHEN r_step < 0.40 THEN 7 ELSE 8 END;

-- Step k (1-based) is entered at created_at + speed × (base_1 + … + base_{k-1}) minutes.
CREATE UNLOGGED TABLE bench_steps (k int PRIMARY KEY, state text, base_minutes int, entered_after int);
INSERT INTO bench_steps
SELECT k, (analytics.onboarding_states())[k], b, coalesce(sum(b) OVER (ORDER BY k ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
  FROM unnest(ARRAY[2, 3, 5, 2, 4, 6, 1, 0]) WITH ORDINALITY AS x(b, k);

INSERT INTO auth.users (id, email, is_anonymous, raw_app_meta_data, created_at, updated_at)
SELECT id,
       CASE WHEN NOT anonymous_now THEN 'user' || i || '@example.com' END,
       anonymous_now,
       CASE WHEN anonymous_now THEN '{"provider":"anonymous","providers":[]}'
            WHEN provider = 'anonymous' THEN '{"provider":"email","providers":["email"]}'
            ELSE jsonb_build_object('provider', provider, 'providers', jsonb_build_array(provider)) END::jsonb,
       created_at, created_at
  FROM bench_users ORDER BY created_at;

-- Identities: with the user, or a day later for an upgraded anonymous user.
INSERT INTO auth.identities (provider_id, user_id, identity_data, provider, created_at, updated_at)
SELECT id::text, id, jsonb_build_object('sub', id::text, 'email', 'user' || i || '@example.com'),
       CASE WHEN provider = 'anonymous' THEN 'email' ELSE provider END,
       created_at + CASE WHEN provider = 'anonymous' THEN interval '1 day' ELSE interval '0' END,
       created_at + CASE WHEN provider = 'anonymous' THEN interval '1 day' ELSE interval '0' END
  FROM bench_users WHERE NOT anonymous_now ORDER BY created_at;

INSERT INTO public.user_profiles (id, onboarding_state, created_at, updated_at, onboarding_completed_at)
SELECT u.id, s.state, u.created_at, u.created_at + make_interval(secs => 60 * u.speed * s.entered_after),
       CASE WHEN u.furthest = 8 THEN u.created_at + make_interval(secs => 60 * u.speed * s.entered_after) END
  FROM bench_users u JOIN bench_steps s ON s.k = u.furthest ORDER BY u.created_at;

INSERT INTO public.children (user_id, name, created_at, updated_at)
SELECT u.id, 'Child ' || n, u.created_at, u.created_at
  FROM bench_users u, generate_series(1, CASE WHEN u.furthest = 8 THEN u.children WHEN u.furthest >= 4 THEN 1 ELSE 0 END) n
 ORDER BY u.created_at;

-- The history, appended in time order as the triggers would have written it.
INSERT INTO analytics.onboarding_transitions (user_id, from_state, to_state, at, from_state_since)
SELECT u.id, p.state, s.state,
       u.created_at + make_interval(secs => 60 * u.speed * s.entered_after),
       CASE WHEN p.k IS NOT NULL THEN u.created_at + make_interval(secs => 60 * u.speed * p.entered_after) END
  FROM bench_users u
  JOIN bench_steps s ON s.k <= u.furthest
  LEFT JOIN bench_steps p ON p.k = s.k - 1
 ORDER BY 4;

-- What the trigger on the history keeps per user.
INSERT INTO analytics.onboarding_progress (user_id, state, state_since, furthest_step)
SELECT u.id, s.state, u.created_at + make_interval(secs => 60 * u.speed * s.entered_after), u.furthest
  FROM bench_users u JOIN bench_steps s ON s.k = u.furthest ORDER BY u.created_at;

RESET session_replication_role;
VACUUM ANALYZE auth.users, auth.identities, public.user_profiles, public.children, analytics.onboarding_transitions, analytics.onboarding_progress;
ANALYZE bench_users; ANALYZE bench_steps;
-- Written last: a generation that failed half-way is redone by the next run.
CREATE TABLE bench_meta (key text PRIMARY KEY, value text);
INSERT INTO bench_meta VALUES ('users', :'users'), ('generated_at', now()::text);
SQL
  echo "generated in $(( $(date +%s) - started )) s"
fi

psql_ -d analytics_bench -tA -F ' ' -c "
  SELECT 'rows: users ' || (SELECT count(*) FROM auth.users) || ', transitions ' || (SELECT count(*) FROM analytics.onboarding_transitions)
      || ', children ' || (SELECT count(*) FROM public.children)
      || '; sizes: transitions ' || pg_size_pretty(pg_table_size('analytics.onboarding_transitions'))
      || ', its indexes ' || pg_size_pretty(pg_indexes_size('analytics.onboarding_transitions'))"

# The queries: each function on three windows (last 7 days, last 30 days, all 180 days).
anchor=$(psql_ -d analytics_bench -tAc "SELECT value FROM bench_meta WHERE key = 'generated_at'")
ago() { psql_ -d analytics_bench -tAc "SELECT ('$anchor'::timestamptz - interval '$1')::text"; }
# Literal bounds, as a client's parameters arrive (the planner sees constants).
w7="'$(ago '7 days')', '$anchor'"
w30="'$(ago '30 days')', '$anchor'"
wall="'$(ago '181 days')', '$anchor'"
queries=()
for fn in state_counts funnel drop_off step_durations time_to_completion children_per_completed_user anonymous_upgrades daily_completion; do
  queries+=("$fn|7 days|all|analytics.$fn($w7)")
  queries+=("$fn|30 days|provider|analytics.$fn($w30, 'provider')")
  queries+=("$fn|180 days|all|analytics.$fn($wall)")
  queries+=("$fn|180 days|week|analytics.$fn($wall, 'week')")
done

# JIT is on by default and compiles the larger plans (100-350 ms of a run here): both shown.
printf '\n%-28s %-9s %-9s %6s %12s %12s\n' function window cohort rows "ms jit=on" "ms jit=off"
timed() {  # $1 = jit setting, $2 = call: prints "rows ms"
  local out
  out=$(psql_ -d analytics_bench -tA -c "SET ROLE service_role" -c "SET jit = $1" -c "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT * FROM $2")
  echo "$(grep -o '"Actual Rows": [0-9]*' <<<"$out" | head -1 | grep -o '[0-9]*$') $(grep -o '"Execution Time": [0-9.]*' <<<"$out" | grep -o '[0-9.]*$')"
}
n=0
for q in "${queries[@]}"; do
  IFS='|' read -r fn window cohort call <<<"$q"
  n=$((n + 1))
  plan="$plans/$(printf %02d $n)-$fn-${window// /}-$cohort.txt"
  # First run: the plan with per-node times (kept; it also warms the cache); then the timed runs.
  psql_ -d analytics_bench -c "SET ROLE service_role" -c "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM $call" >"$plan"
  read -r rows on <<<"$(timed on "$call")"
  read -r _ off <<<"$(timed off "$call")"
  printf '%-28s %-9s %-9s %6s %12.1f %12.1f\n' "$fn" "$window" "$cohort" "$rows" "$on" "$off"
done

# What the generator put in, against what the functions say (180 days, all users).
echo
echo "== checks (180 days, all users)"
psql_ -d analytics_bench <<SQL
SET ROLE service_role;
\pset footer off
SELECT step, users_reached, pct_of_first, CASE k WHEN 1 THEN 100 WHEN 2 THEN 90 WHEN 3 THEN 82 WHEN 4 THEN 75 WHEN 5 THEN 70
       WHEN 6 THEN 65 WHEN 7 THEN 62 ELSE 60 END AS expected_pct
  FROM analytics.funnel($wall) f JOIN (SELECT generate_series(1, 8) k) x ON x.k = f.step_no;
SELECT d.step, d.median, d.p90, make_interval(secs => 90 * s.base_minutes) AS expected_median,
       make_interval(secs => 150 * s.base_minutes) AS expected_p90
  FROM analytics.step_durations($wall) d JOIN (SELECT k, base_minutes FROM unnest(ARRAY[2, 3, 5, 2, 4, 6, 1]) WITH ORDINALITY AS x(base_minutes, k)) s ON s.k = d.step_no;
SELECT *, interval '34.5 minutes' AS expected_median, interval '57.5 minutes' AS expected_p90 FROM analytics.time_to_completion($wall);
SELECT *, 2 AS expected FROM analytics.children_per_completed_user($wall);
SELECT *, 40 AS expected_pct FROM analytics.anonymous_upgrades($wall);
SQL
