-- onboard's R exactly: 7 set_configs (request.*, read-only) + PostgREST's CTE
\set k random(1, :nusers)
\startpipeline
SELECT set_config('request.jwt.claims', (SELECT claims FROM bench.users WHERE k = :k), true), set_config('role', 'authenticated', true), set_config('request.method', 'GET', true), set_config('request.path', '/children', true), set_config('request.headers', :headers, true), set_config('request.cookies', '{}', true), set_config('transaction_read_only', 'on', true);
WITH pgrst_source AS (SELECT "children"."id", "children"."user_id", "children"."name", "children"."age", "children"."temperament", "children"."created_at", "children"."updated_at", "children"."birthday", "children"."goals", "children"."topics", "children"."temperament_talkative", "children"."temperament_sensitivity", "children"."temperament_accountability" FROM "public"."children" WHERE "children"."user_id" = (SELECT id FROM bench.users WHERE k = :k)) SELECT NULL::bigint AS total, pg_catalog.count(_postgrest_t) AS page_total, coalesce(json_agg(_postgrest_t), '[]')::text AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t;
\endpipeline
