-- E as PostgREST 12 writes it (LEFT JOIN LATERAL, RLS only)
\set k random(1, :nusers)
\startpipeline
SELECT set_config('request.jwt.claims', (SELECT claims FROM bench.users WHERE k = :k), true), set_config('role', 'authenticated', true), set_config('request.method', 'GET', true), set_config('request.path', '/user_profiles', true), set_config('request.headers', :headers, true), set_config('request.cookies', '{}', true), set_config('transaction_read_only', 'on', true);
WITH pgrst_source AS (SELECT "user_profiles"."id", "user_profiles"."onboarding_state", row_to_json("user_profiles_children_1".*) AS "children" FROM "public"."user_profiles" LEFT JOIN LATERAL (SELECT "children_1"."name", "children_1"."age" FROM "public"."children" AS "children_1" WHERE "children_1"."id" = "user_profiles"."current_child_id" AND "children_1"."user_id" = "user_profiles"."id") AS "user_profiles_children_1" ON TRUE WHERE "user_profiles"."id" = (SELECT id FROM bench.users WHERE k = :k)) SELECT NULL::bigint AS total, pg_catalog.count(_postgrest_t) AS page_total, coalesce(json_agg(_postgrest_t), '[]')::text AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t;
\endpipeline
