-- The harness's W (pg/write_pipe.sql) without COMPLETE: our schema's state machine refuses
-- COMPLETE for the seed's users (their children have 2 topics, it wants 3; P0001), and pgbench
-- ends a client at its first error, so the harness's script measures aborted clients. The seven
-- states left are accepted from any state; bench/wrk/write-valid.lua sends the same mix.
\set k random(1, :nusers)
\set s random(1, 7)
\startpipeline
SELECT set_config('request.jwt.claims', (SELECT claims FROM bench.users WHERE k = :k), true),
       set_config('role', 'authenticated', true);
WITH u AS (
  UPDATE public.user_profiles
     SET onboarding_state = (ARRAY['NOT_STARTED', 'USER_INFO', 'CHILD_INFO', 'GOALS',
                                   'TOPICS', 'DISPOSITIONS', 'REVIEW'])[:s]
   WHERE id = (SELECT id FROM bench.users WHERE k = :k)
  RETURNING *
)
SELECT coalesce(json_agg(u), '[]')::text FROM u;
\endpipeline
