-- Row security and grants, checked as the API roles with real claims.
-- Each `-- test:` section runs alone in BEGIN … ROLLBACK as a superuser on a freshly migrated
-- database and passes when it raises nothing. Fixtures are made as the superuser (which bypasses
-- RLS), then `SET LOCAL ROLE` + `set_config('request.jwt.claims', …, true)` act as a user.
-- Users: A = aaaaaaaa-…-01, B = bbbbbbbb-…-02, C = cccccccc-…-03 (C is given no profile where
-- a test needs a free id).

-- test: the signup trigger creates exactly one NOT_STARTED profile per new user
DO $$
DECLARE a uuid; b uuid;
BEGIN
  INSERT INTO auth.users (email) VALUES ('t1@example.com') RETURNING id INTO a;
  INSERT INTO auth.users (email, is_anonymous) VALUES (NULL, true) RETURNING id INTO b;
  ASSERT (SELECT count(*) FROM public.user_profiles WHERE id = a) = 1, 'one profile for a';
  ASSERT (SELECT count(*) FROM public.user_profiles WHERE id = b) = 1, 'one profile for an anonymous user';
  ASSERT (SELECT count(*) FROM public.user_profiles) = 2, 'no other profiles';
  ASSERT (SELECT onboarding_state FROM public.user_profiles WHERE id = a) = 'NOT_STARTED';
  ASSERT (SELECT current_child_id FROM public.user_profiles WHERE id = a) IS NULL;
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles WHERE id = a) IS NULL;
END $$;

-- test: A inserts, reads, updates and deletes their own child and profile
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
INSERT INTO public.children (user_id, name, goals, topics) VALUES (auth.uid(), 'Maya', '{patience}', '{a,b,c}');
DO $$
DECLARE n int; child uuid;
BEGIN
  ASSERT (SELECT count(*) FROM public.children) = 1, 'own child visible';
  ASSERT (SELECT count(*) FROM public.user_profiles) = 1, 'own profile visible';
  -- The way PostgREST inserts: INSERT … RETURNING needs the SELECT policy too.
  INSERT INTO public.children (user_id, name) VALUES (auth.uid(), 'Leo') RETURNING id INTO child;
  ASSERT child IS NOT NULL;
  UPDATE public.user_profiles SET onboarding_state = 'USER_INFO', current_child_id = child;
  GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 1, 'profile update hits own row';
  ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'USER_INFO';
  UPDATE public.children SET age = 6 WHERE name = 'Maya';
  GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 1, 'child update hits own row';
  ASSERT (SELECT age FROM public.children WHERE name = 'Maya') = 6;
  DELETE FROM public.children;
  GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 2, 'delete hits own rows';
  ASSERT (SELECT count(*) FROM public.children) = 0;
END $$;

-- test: B cannot see A's children or profile
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A child');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.children) = 0, 'B sees no children';
  ASSERT (SELECT count(*) FROM public.children WHERE user_id = 'aaaaaaaa-0000-4000-8000-000000000001') = 0, 'not even by filtering';
  ASSERT (SELECT count(*) FROM public.user_profiles) = 1, 'B sees exactly one profile';
  ASSERT (SELECT id FROM public.user_profiles) = 'bbbbbbbb-0000-4000-8000-000000000002', 'and it is B''s own';
END $$;

-- test: B cannot update A's child or profile (0 rows, A's data unchanged)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A child');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE n int;
BEGIN
  UPDATE public.children SET name = 'stolen';
  GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0, 'child update hits nothing';
  UPDATE public.user_profiles SET onboarding_state = 'COMPLETE' WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
  GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0, 'profile update hits nothing';
END $$;
RESET ROLE;
DO $$ BEGIN
  ASSERT (SELECT name FROM public.children WHERE user_id = 'aaaaaaaa-0000-4000-8000-000000000001') = 'A child', 'A''s child untouched';
  ASSERT (SELECT onboarding_state FROM public.user_profiles WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001') = 'NOT_STARTED', 'A''s profile untouched';
END $$;

-- test: B cannot delete A's child or profile (0 rows)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A child');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE n int;
BEGIN
  DELETE FROM public.children; GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0, 'child delete hits nothing';
  DELETE FROM public.user_profiles WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
  GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0, 'profile delete hits nothing';
END $$;
RESET ROLE;
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.children) = 1, 'A''s child still there';
  ASSERT (SELECT count(*) FROM public.user_profiles) = 2, 'both profiles still there';
END $$;

-- test: B cannot take A's child by setting its user_id to B (0 rows)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (id, user_id, name) VALUES ('c1111111-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'A child');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE n int;
BEGIN
  UPDATE public.children SET user_id = auth.uid() WHERE id = 'c1111111-0000-4000-8000-000000000001';
  GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0, 'takeover hit a row';
END $$;
RESET ROLE;
DO $$ BEGIN
  ASSERT (SELECT user_id FROM public.children WHERE id = 'c1111111-0000-4000-8000-000000000001') = 'aaaaaaaa-0000-4000-8000-000000000001';
END $$;

-- test: B cannot insert a child for A (42501 row-level security)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE state text; msg text;
BEGIN
  INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'planted');
  RAISE EXCEPTION 'insert for another user succeeded';
EXCEPTION WHEN insufficient_privilege THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
  ASSERT state = '42501' AND msg LIKE '%row-level security%children%', msg;
END $$;

-- test: B cannot insert a profile for A (42501 row-level security)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
-- A has no profile yet, so only row security can stop B (not the primary key).
DELETE FROM public.user_profiles WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE msg text;
BEGIN
  INSERT INTO public.user_profiles (id, onboarding_state) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'COMPLETE');
  RAISE EXCEPTION 'profile insert for another user succeeded';
EXCEPTION WHEN insufficient_privilege THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
  ASSERT msg LIKE '%row-level security%user_profiles%', msg;
END $$;

-- test: A may insert their own missing profile (the INSERT policy)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
DELETE FROM public.user_profiles;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
INSERT INTO public.user_profiles (id) VALUES ('aaaaaaaa-0000-4000-8000-000000000001');
DO $$ BEGIN ASSERT (SELECT count(*) FROM public.user_profiles) = 1; END $$;

-- test: a user cannot give their child to another user (42501)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (user_id, name) VALUES ('bbbbbbbb-0000-4000-8000-000000000002', 'B child');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE state text;
BEGIN
  UPDATE public.children SET user_id = 'aaaaaaaa-0000-4000-8000-000000000001';
  RAISE EXCEPTION 're-own succeeded';
EXCEPTION WHEN insufficient_privilege THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE; ASSERT state = '42501';
END $$;

-- test: the UPDATE policy alone (owner trigger off) stops giving a child away (42501)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (user_id, name) VALUES ('bbbbbbbb-0000-4000-8000-000000000002', 'B child');
-- Triggers off for this transaction (no DDL, so sections can run in parallel); RLS still applies.
SET LOCAL session_replication_role = replica;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE msg text;
BEGIN
  UPDATE public.children SET user_id = 'aaaaaaaa-0000-4000-8000-000000000001';
  RAISE EXCEPTION 're-own succeeded without the trigger';
EXCEPTION WHEN insufficient_privilege THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
  ASSERT msg LIKE '%row-level security%children%', msg;
END $$;

-- test: the UPDATE policy alone (owner trigger off) stops moving a profile to another id
INSERT INTO auth.users (id, email) VALUES ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com'), ('cccccccc-0000-4000-8000-000000000003', 'c@example.com');
DELETE FROM public.user_profiles WHERE id = 'cccccccc-0000-4000-8000-000000000003';
-- Triggers off for this transaction (no DDL, so sections can run in parallel); RLS still applies.
SET LOCAL session_replication_role = replica;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE msg text;
BEGIN
  UPDATE public.user_profiles SET id = 'cccccccc-0000-4000-8000-000000000003';
  RAISE EXCEPTION 'profile moved without the trigger';
EXCEPTION WHEN insufficient_privilege THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
  ASSERT msg LIKE '%row-level security%user_profiles%', msg;
END $$;

-- test: owner columns cannot change, even for the service role (42501 from the trigger)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com'), ('cccccccc-0000-4000-8000-000000000003', 'c@example.com');
-- C has no profile, so moving B's profile to C would break no key: only the trigger stops it.
DELETE FROM public.user_profiles WHERE id = 'cccccccc-0000-4000-8000-000000000003';
INSERT INTO public.children (user_id, name) VALUES ('bbbbbbbb-0000-4000-8000-000000000002', 'B child');
SET LOCAL ROLE service_role;
DO $$
DECLARE msg text; n int;
BEGIN
  BEGIN
    UPDATE public.children SET user_id = 'aaaaaaaa-0000-4000-8000-000000000001';
    RAISE EXCEPTION 'service role re-owned a child (or could not see it)';
  EXCEPTION WHEN insufficient_privilege THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT; ASSERT msg LIKE '%owner%cannot be changed%', msg;
  END;
  BEGIN
    UPDATE public.user_profiles SET id = 'cccccccc-0000-4000-8000-000000000003' WHERE id = 'bbbbbbbb-0000-4000-8000-000000000002';
    RAISE EXCEPTION 'service role re-owned a profile';
  EXCEPTION WHEN insufficient_privilege THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT; ASSERT msg LIKE '%owner%cannot be changed%', msg;
  END;
  -- Writing the same owner back (a full-row PATCH) is fine.
  UPDATE public.children SET user_id = user_id, name = 'renamed';
  GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 1;
END $$;

-- test: anon sees nothing
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A child');
SET LOCAL ROLE anon;
SELECT set_config('request.jwt.claims', '{"role":"anon"}', true);
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.children) = 0, 'anon sees no children';
  ASSERT (SELECT count(*) FROM public.user_profiles) = 0, 'anon sees no profiles';
END $$;

-- test: anon cannot insert (42501), update or delete (0 rows)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A child');
SET LOCAL ROLE anon;
SELECT set_config('request.jwt.claims', '{"role":"anon"}', true);
DO $$
DECLARE n int;
BEGIN
  BEGIN
    INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'x');
    RAISE EXCEPTION 'anon inserted';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
  UPDATE public.children SET name = 'anon was here'; GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0, 'anon updated';
  UPDATE public.user_profiles SET onboarding_state = 'COMPLETE'; GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0, 'anon updated a profile';
  DELETE FROM public.children; GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0, 'anon deleted';
END $$;

-- test: an authenticated role without a sub claim sees and changes nothing
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A child');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"role":"authenticated"}', true);
DO $$
DECLARE n int;
BEGIN
  ASSERT auth.uid() IS NULL;
  ASSERT (SELECT count(*) FROM public.children) = 0;
  ASSERT (SELECT count(*) FROM public.user_profiles) = 0;
  UPDATE public.children SET name = 'x'; GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0;
END $$;

-- test: the service role bypasses row security
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A'), ('bbbbbbbb-0000-4000-8000-000000000002', 'B');
SET LOCAL ROLE service_role;
SELECT set_config('request.jwt.claims', '{"role":"service_role"}', true);
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.children) = 2;
  ASSERT (SELECT count(*) FROM public.user_profiles) = 2;
END $$;

-- test: anon and authenticated can neither read nor write the auth tables
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
DO $$
DECLARE r text; t text; stmt text;
BEGIN
  FOREACH r IN ARRAY ARRAY['anon', 'authenticated'] LOOP
    EXECUTE format('SET LOCAL ROLE %I', r);
    PERFORM set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
    FOREACH t IN ARRAY ARRAY['users', 'identities', 'sessions', 'refresh_tokens'] LOOP
      FOREACH stmt IN ARRAY ARRAY[format('SELECT * FROM auth.%I', t), format('DELETE FROM auth.%I', t),
                                  format('INSERT INTO auth.%I DEFAULT VALUES', t), format('UPDATE auth.%I SET created_at = now()', t)] LOOP
        BEGIN
          EXECUTE stmt;
          RAISE EXCEPTION '% could run: %', r, stmt;
        EXCEPTION WHEN insufficient_privilege THEN NULL;
        END;
      END LOOP;
    END LOOP;
    RESET ROLE;
  END LOOP;
END $$;

-- test: anon and authenticated may execute auth.uid(), auth.role(), auth.jwt(), auth.email() only
DO $$
DECLARE r text; f text;
BEGIN
  FOREACH r IN ARRAY ARRAY['anon', 'authenticated'] LOOP
    FOREACH f IN ARRAY ARRAY['auth.uid()', 'auth.role()', 'auth.jwt()', 'auth.email()'] LOOP
      ASSERT has_function_privilege(r, f, 'EXECUTE'), format('%s cannot execute %s', r, f);
    END LOOP;
    ASSERT NOT has_function_privilege(r, 'auth.user_json(auth.users)', 'EXECUTE'), r || ' may execute auth.user_json';
    ASSERT NOT has_schema_privilege(r, 'auth', 'CREATE'), r || ' may create in auth';
    ASSERT NOT has_schema_privilege(r, 'public', 'CREATE'), r || ' may create in public';
    ASSERT NOT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
                              unnest(ARRAY['SELECT','INSERT','UPDATE','DELETE','TRUNCATE','REFERENCES','TRIGGER']) p
                       WHERE n.nspname = 'auth' AND c.relkind IN ('r', 'p', 'v', 'm')
                         AND has_table_privilege(r, c.oid, p)), r || ' has a privilege on an auth table';
  END LOOP;
END $$;

-- test: anon and authenticated cannot TRUNCATE (it would ignore row security)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A child');
DO $$
DECLARE r text; t text;
BEGIN
  FOREACH r IN ARRAY ARRAY['anon', 'authenticated'] LOOP
    EXECUTE format('SET LOCAL ROLE %I', r);
    FOREACH t IN ARRAY ARRAY['children', 'user_profiles'] LOOP
      BEGIN
        EXECUTE format('TRUNCATE public.%I CASCADE', t);
        RAISE EXCEPTION '% truncated %', r, t;
      EXCEPTION WHEN insufficient_privilege THEN NULL;
      END;
    END LOOP;
    RESET ROLE;
  END LOOP;
  ASSERT (SELECT count(*) FROM public.children) = 1;
END $$;

-- test: claims left as '' by an earlier transaction do not break auth.*() or RLS
-- Once a pooled connection has set request.jwt.claims locally, a later
-- transaction that never sets it reads '' (not NULL). A rolled-back subtransaction leaves the
-- same '' behind; the first block checks that the trap really is set.
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A child');
DO $$
BEGIN
  BEGIN
    PERFORM set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
    RAISE EXCEPTION 'undo the earlier "transaction"';
  EXCEPTION WHEN raise_exception THEN NULL;
  END;
  ASSERT current_setting('request.jwt.claims', true) = '', 'the trap is not set: ' || coalesce(current_setting('request.jwt.claims', true), 'NULL');
END $$;
SET LOCAL ROLE anon;
DO $$
DECLARE n int;
BEGIN
  ASSERT auth.uid() IS NULL;
  ASSERT auth.role() IS NULL;
  ASSERT auth.jwt() IS NULL;
  ASSERT auth.email() IS NULL;
  ASSERT (SELECT count(*) FROM public.children) = 0;
  ASSERT (SELECT count(*) FROM public.user_profiles) = 0;
END $$;
RESET ROLE;
SET LOCAL ROLE authenticated;
DO $$
DECLARE n int;
BEGIN
  ASSERT (SELECT count(*) FROM public.children) = 0;
  UPDATE public.children SET name = 'x'; GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0;
  ASSERT (SELECT count(*) FROM public.get_user_with_profile('aaaaaaaa-0000-4000-8000-000000000001')) = 0;
END $$;

-- test: auth.uid(), auth.role(), auth.jwt() and auth.email() read the request's claims
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated","email":"a@example.com","app_metadata":{"provider":"email"}}', true);
DO $$ BEGIN
  ASSERT auth.uid() = 'aaaaaaaa-0000-4000-8000-000000000001';
  ASSERT auth.role() = 'authenticated';
  ASSERT auth.email() = 'a@example.com';
  ASSERT auth.jwt() -> 'app_metadata' ->> 'provider' = 'email';
  ASSERT pg_typeof(auth.jwt()) = 'jsonb'::regtype;
END $$;

-- test: a user cannot delete their own profile (no DELETE policy; it goes with the account)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE n int;
BEGIN
  DELETE FROM public.user_profiles; GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0;
  ASSERT (SELECT count(*) FROM public.user_profiles) = 1;
END $$;
