-- onboard's R exactly (as the server sent it on 26 November 2026, from the log with
-- log_statement = 'all'): 8 set_configs (claims, claim.sub, role, request.*, read-only), each
-- answered as one byte, then PostgREST's CTE with count(*).
\set k random(1, :nusers)
\startpipeline
SELECT set_config('request.jwt.claims', (SELECT claims FROM bench.users WHERE k = :k), true) IS NULL, set_config('request.jwt.claim.sub', (SELECT id::text FROM bench.users WHERE k = :k), true) IS NULL, set_config('role', 'authenticated', true) IS NULL, set_config('request.method', 'GET', true) IS NULL, set_config('request.path', '/children', true) IS NULL, set_config('request.headers', :headers, true) IS NULL, set_config('request.cookies', '{}', true) IS NULL, set_config('transaction_read_only', 'on', true) IS NULL;
WITH pgrst_source AS (SELECT "children"."id", "children"."user_id", "children"."name", "children"."age", "children"."temperament", "children"."created_at", "children"."updated_at", "children"."birthday", "children"."goals", "children"."topics", "children"."temperament_talkative", "children"."temperament_sensitivity", "children"."temperament_accountability" FROM "public"."children" WHERE "children"."user_id" = (SELECT id FROM bench.users WHERE k = :k)) SELECT NULL::bigint AS total, pg_catalog.count(*) AS page_total, coalesce(json_agg(_postgrest_t), '[]')::text AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t;
\endpipeline
