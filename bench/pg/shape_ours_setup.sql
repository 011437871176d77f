-- onboard's setup + the harness's query
\set k random(1, :nusers)
\startpipeline
SELECT set_config('request.jwt.claims', (SELECT claims FROM bench.users WHERE k = :k), true), set_config('role', 'authenticated', true), set_config('request.method', 'GET', true), set_config('request.path', '/children', true), set_config('request.headers', :headers, true), set_config('request.cookies', '{}', true), set_config('transaction_read_only', 'on', true);
SELECT coalesce(json_agg(t), '[]')::text FROM (SELECT * FROM public.children WHERE user_id = (SELECT id FROM bench.users WHERE k = :k)) t;
\endpipeline
