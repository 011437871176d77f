-- the harness's read_pipe (2 set_configs + its query)
\set k random(1, :nusers)
\startpipeline
SELECT set_config('request.jwt.claims', (SELECT claims FROM bench.users WHERE k = :k), true), set_config('role', 'authenticated', true);
SELECT coalesce(json_agg(t), '[]')::text FROM (SELECT * FROM public.children WHERE user_id = (SELECT id FROM bench.users WHERE k = :k)) t;
\endpipeline
