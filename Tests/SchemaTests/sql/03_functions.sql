-- get_user_with_profile, complete_onboarding, onboarding_completed_at, delete_account, and the
-- privileges on functions.

-- test: get_user_with_profile returns the caller's row with the seed's columns
INSERT INTO auth.users (id, email, raw_user_meta_data) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com', '{"full_name":"Ada"}');
INSERT INTO public.children (id, user_id, name) VALUES ('c1111111-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Maya');
UPDATE public.user_profiles SET onboarding_state = 'GOALS', current_child_id = 'c1111111-0000-4000-8000-000000000001';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE r record;
BEGIN
  SELECT * INTO STRICT r FROM public.get_user_with_profile('aaaaaaaa-0000-4000-8000-000000000001');
  ASSERT r.user_id = 'aaaaaaaa-0000-4000-8000-000000000001', 'user_id';
  ASSERT r.email = 'a@example.com', 'email';
  ASSERT r.display_name = 'Ada', 'display_name is raw_user_meta_data->>full_name';
  ASSERT r.onboarding_state = 'GOALS', 'onboarding_state';
  ASSERT r.current_child_id = 'c1111111-0000-4000-8000-000000000001', 'current_child_id';
END $$;

-- test: get_user_with_profile's output columns are exactly the seed's, in order, with its types
DO $$
DECLARE names text[]; types text[];
BEGIN
  SELECT array_agg(a.name ORDER BY a.ord), array_agg(format_type(a.typ, NULL) ORDER BY a.ord)
  INTO names, types
  FROM pg_proc p, unnest(p.proargnames, p.proallargtypes::oid[], p.proargmodes::text[]) WITH ORDINALITY AS a(name, typ, mode, ord)
  WHERE p.oid = 'public.get_user_with_profile(uuid)'::regprocedure AND a.mode = 't';
  ASSERT names = ARRAY['user_id', 'email', 'display_name', 'onboarding_state', 'current_child_id'], names::text;
  ASSERT types = ARRAY['uuid', 'text', 'text', 'text', 'uuid'], types::text;
  ASSERT (SELECT proretset FROM pg_proc WHERE oid = 'public.get_user_with_profile(uuid)'::regprocedure), 'returns a set';
END $$;

-- test: get_user_with_profile with another user's id returns nothing
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.get_user_with_profile('aaaaaaaa-0000-4000-8000-000000000001')) = 0, 'A''s row returned to B';
  ASSERT (SELECT count(*) FROM public.get_user_with_profile(NULL)) = 0, 'NULL id returned rows';
  -- B's own row is still there (the function is not just broken).
  ASSERT (SELECT count(*) FROM public.get_user_with_profile('bbbbbbbb-0000-4000-8000-000000000002')) = 1;
END $$;

-- test: get_user_with_profile without a sub claim returns nothing
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"role":"authenticated"}', true);
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.get_user_with_profile('aaaaaaaa-0000-4000-8000-000000000001')) = 0;
END $$;

-- test: anon cannot execute get_user_with_profile, complete_onboarding or delete_account (42501)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE anon;
-- Even with a user's sub in the claims, the anon role is refused by privilege.
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"anon"}', true);
DO $$
DECLARE f text; msg text;
BEGIN
  FOREACH f IN ARRAY ARRAY['SELECT * FROM public.get_user_with_profile(''aaaaaaaa-0000-4000-8000-000000000001'')',
                           'SELECT public.complete_onboarding()', 'SELECT public.delete_account()'] LOOP
    BEGIN
      EXECUTE f;
      RAISE EXCEPTION 'anon could run %', f;
    EXCEPTION WHEN insufficient_privilege THEN
      GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT; ASSERT msg LIKE 'permission denied for function%', msg;
    END;
  END LOOP;
END $$;
RESET ROLE;
DO $$ BEGIN ASSERT (SELECT count(*) FROM auth.users) = 1, 'anon deleted the account'; END $$;

-- test: EXECUTE is granted exactly: not to PUBLIC or anon; authenticated yes; definer helpers to nobody
DO $$
DECLARE f text;
BEGIN
  FOREACH f IN ARRAY ARRAY['public.get_user_with_profile(uuid)', 'public.complete_onboarding()', 'public.delete_account()',
                           'public.create_user_profile()'] LOOP
    ASSERT NOT EXISTS (SELECT 1 FROM pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
                       WHERE p.oid = f::regprocedure AND a.grantee = 0), f || ' is executable by PUBLIC';
    ASSERT NOT has_function_privilege('anon', f, 'EXECUTE'), f || ' is executable by anon';
  END LOOP;
  ASSERT has_function_privilege('authenticated', 'public.get_user_with_profile(uuid)', 'EXECUTE');
  ASSERT has_function_privilege('authenticated', 'public.complete_onboarding()', 'EXECUTE');
  ASSERT has_function_privilege('authenticated', 'public.delete_account()', 'EXECUTE');
  ASSERT NOT has_function_privilege('authenticated', 'public.create_user_profile()', 'EXECUTE');
  ASSERT NOT has_function_privilege('service_role', 'public.delete_account()', 'EXECUTE');
  ASSERT NOT has_function_privilege('service_role', 'public.create_user_profile()', 'EXECUTE');
END $$;

-- test: every SECURITY DEFINER function pins search_path
DO $$
DECLARE bad text;
BEGIN
  SELECT string_agg(p.oid::regprocedure::text, ', ') INTO bad
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE p.prosecdef AND n.nspname IN ('public', 'auth')
    AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search\_path=%');
  ASSERT bad IS NULL, 'SECURITY DEFINER without a pinned search_path: ' || bad;
  ASSERT (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE p.prosecdef AND n.nspname = 'public') >= 3, 'expected the definer functions to exist';
END $$;

-- test: complete_onboarding runs as the caller (SECURITY INVOKER: RLS applies inside it too)
DO $$ BEGIN
  ASSERT NOT (SELECT prosecdef FROM pg_proc WHERE oid = 'public.complete_onboarding()'::regprocedure);
  ASSERT (SELECT prosecdef FROM pg_proc WHERE oid = 'public.delete_account()'::regprocedure), 'delete_account needs DEFINER for auth.users';
END $$;

-- test: a SECURITY DEFINER function is not fooled by objects on the caller's search_path
-- (a user-controlled schema placed first must not capture public.user_profiles or auth.uid)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
CREATE SCHEMA evil;
CREATE FUNCTION evil.uid() RETURNS uuid LANGUAGE sql AS $$ SELECT 'aaaaaaaa-0000-4000-8000-000000000001'::uuid $$;
CREATE TABLE evil.users (id uuid);
GRANT USAGE ON SCHEMA evil TO authenticated;
GRANT EXECUTE ON FUNCTION evil.uid() TO authenticated;
SET LOCAL search_path = evil, public, auth;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.get_user_with_profile('aaaaaaaa-0000-4000-8000-000000000001')) = 0;
  ASSERT (SELECT email FROM public.get_user_with_profile('bbbbbbbb-0000-4000-8000-000000000002')) = 'b@example.com';
END $$;

-- test: complete_onboarding completes, clears current_child_id and stamps the completion
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (id, user_id, name, goals, topics) VALUES ('c1111111-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Maya', '{a,b}', '{x,y,z}');
UPDATE public.user_profiles SET onboarding_state = 'REVIEW', current_child_id = 'c1111111-0000-4000-8000-000000000001';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE p public.user_profiles;
BEGIN
  p := public.complete_onboarding();
  ASSERT p.id = 'aaaaaaaa-0000-4000-8000-000000000001', 'returns the caller''s profile';
  ASSERT p.onboarding_state = 'COMPLETE' AND p.current_child_id IS NULL AND p.onboarding_completed_at IS NOT NULL, p::text;
  -- and the table agrees with what was returned
  ASSERT (SELECT (onboarding_state, current_child_id, onboarding_completed_at) IS NOT DISTINCT FROM ('COMPLETE', NULL::uuid, p.onboarding_completed_at)
          FROM public.user_profiles), 'table not updated';
END $$;

-- test: complete_onboarding accepts the boundaries: 1 or 3 goals, exactly 3 topics, several children
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name, goals, topics) VALUES
  ('aaaaaaaa-0000-4000-8000-000000000001', 'One goal', '{a}', '{x,y,z}'),
  ('aaaaaaaa-0000-4000-8000-000000000001', 'Three goals', '{a,b,c}', '{t1,t2,t3,t4,t5,t6}');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$ BEGIN
  ASSERT (public.complete_onboarding()).onboarding_state = 'COMPLETE';
END $$;

-- test: calling complete_onboarding again once complete is a no-op success
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (id, user_id, name, goals, topics) VALUES ('c1111111-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Maya', '{a}', '{x,y,z}');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE first public.user_profiles; second public.user_profiles;
BEGIN
  first := public.complete_onboarding();
  -- Even if the children no longer pass the rules, a retry succeeds and changes nothing.
  DELETE FROM public.children;
  UPDATE public.user_profiles SET current_child_id = NULL;  -- any write; the stamp must hold
  second := public.complete_onboarding();
  ASSERT second.onboarding_state = 'COMPLETE';
  ASSERT second.onboarding_completed_at = first.onboarding_completed_at, 'completion stamp moved';
END $$;

-- test: complete_onboarding without children fails with P0001 no_children and changes nothing
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
UPDATE public.user_profiles SET onboarding_state = 'REVIEW';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE state text; detail text; msg text; hint text;
BEGIN
  BEGIN
    PERFORM public.complete_onboarding();
    RAISE EXCEPTION 'completed without children';
  EXCEPTION WHEN raise_exception THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, detail = PG_EXCEPTION_DETAIL, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
    ASSERT state = 'P0001' AND detail = 'no_children', format('%s %s', state, detail);
    ASSERT msg = 'Add at least one child before completing onboarding', msg;
    ASSERT hint <> '';
  END;
  ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'REVIEW';
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) IS NULL;
END $$;

-- test: complete_onboarding fails on 0 goals, NULL goals, 4 goals, 2 topics and NULL topics, changing nothing
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (id, user_id, name) VALUES ('c1111111-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Maya');
UPDATE public.user_profiles SET onboarding_state = 'REVIEW', current_child_id = 'c1111111-0000-4000-8000-000000000001';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE
  cases text[][] := ARRAY[ARRAY['{}', '{x,y,z}', 'goals_count'], ARRAY[NULL, '{x,y,z}', 'goals_count'],
                          ARRAY['{a,b,c,d}', '{x,y,z}', 'goals_count'], ARRAY['{a}', '{x,y}', 'topics_count'],
                          ARRAY['{a}', NULL, 'topics_count']];
  c text[];
  state text; detail text; msg text; hint text;
BEGIN
  FOREACH c SLICE 1 IN ARRAY cases LOOP
    UPDATE public.children SET goals = c[1]::text[], topics = c[2]::text[];
    BEGIN
      PERFORM public.complete_onboarding();
      RAISE EXCEPTION 'completed with goals % topics %', c[1], c[2];
    EXCEPTION WHEN raise_exception THEN
      GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, detail = PG_EXCEPTION_DETAIL, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
      ASSERT state = 'P0001' AND detail = c[3], format('goals %s topics %s: %s %s', c[1], c[2], state, detail);
      ASSERT msg LIKE '%Maya%', 'message names the child: ' || msg;
      ASSERT hint LIKE '%c1111111-0000-4000-8000-000000000001%', 'hint names the child id: ' || hint;
    END;
    ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'REVIEW', 'state changed';
    ASSERT (SELECT current_child_id FROM public.user_profiles) = 'c1111111-0000-4000-8000-000000000001', 'current_child_id changed';
    ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) IS NULL, 'stamped';
  END LOOP;
END $$;

-- test: complete_onboarding checks every child, not just the first
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name, goals, topics, created_at) VALUES
  ('aaaaaaaa-0000-4000-8000-000000000001', 'Ready', '{a}', '{x,y,z}', now() - interval '1 hour'),
  ('aaaaaaaa-0000-4000-8000-000000000001', 'Unfinished', '{a}', '{x}', now());
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE detail text; msg text;
BEGIN
  BEGIN
    PERFORM public.complete_onboarding();
    RAISE EXCEPTION 'completed with an unfinished second child';
  EXCEPTION WHEN raise_exception THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, msg = MESSAGE_TEXT;
    ASSERT detail = 'topics_count' AND msg LIKE '%Unfinished%', msg;
  END;
  ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'NOT_STARTED';
END $$;

-- test: complete_onboarding is the caller's only: another user's children neither help nor block
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (user_id, name, goals, topics) VALUES
  ('aaaaaaaa-0000-4000-8000-000000000001', 'A ready', '{a}', '{x,y,z}'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'B unfinished', '{}', '{}');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE detail text;
BEGIN
  -- B's unfinished child blocks B (A's ready child does not count for B).
  BEGIN
    PERFORM public.complete_onboarding();
    RAISE EXCEPTION 'B completed';
  EXCEPTION WHEN raise_exception THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL; ASSERT detail = 'goals_count', detail;
  END;
  -- B's child gone: B has no children of their own.
  DELETE FROM public.children;
  BEGIN
    PERFORM public.complete_onboarding();
    RAISE EXCEPTION 'B completed with A''s child';
  EXCEPTION WHEN raise_exception THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL; ASSERT detail = 'no_children', detail;
  END;
END $$;
RESET ROLE;
-- B's unfinished child must not block A either.
INSERT INTO public.children (user_id, name, goals, topics) VALUES ('bbbbbbbb-0000-4000-8000-000000000002', 'B unfinished', '{}', '{}');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$ BEGIN
  ASSERT (public.complete_onboarding()).onboarding_state = 'COMPLETE';
END $$;
RESET ROLE;
DO $$ BEGIN
  ASSERT (SELECT onboarding_state FROM public.user_profiles WHERE id = 'bbbbbbbb-0000-4000-8000-000000000002') = 'NOT_STARTED', 'B changed';
END $$;

-- test: complete_onboarding without a signed-in user fails with 42501
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"role":"authenticated"}', true);
DO $$
DECLARE state text;
BEGIN
  PERFORM public.complete_onboarding();
  RAISE EXCEPTION 'completed without a user';
EXCEPTION WHEN insufficient_privilege THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE; ASSERT state = '42501';
END $$;

-- test: onboarding_completed_at is set when a PATCH first sets COMPLETE and never moves afterwards
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
-- A child that passes the completion checks (20251126900000_onboarding_state_machine.sql).
INSERT INTO public.children (user_id, name, goals, topics) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Maya', '{a}', '{x,y,z}');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE first timestamptz;
BEGIN
  UPDATE public.user_profiles SET onboarding_state = 'REVIEW';
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) IS NULL, 'stamped before COMPLETE';
  UPDATE public.user_profiles SET onboarding_state = 'COMPLETE';
  SELECT onboarding_completed_at INTO first FROM public.user_profiles;
  ASSERT first IS NOT NULL, 'not stamped on COMPLETE';
  -- An explicit attempt to clear or move it.
  UPDATE public.user_profiles SET onboarding_completed_at = NULL;
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) = first, 'cleared';
  UPDATE public.user_profiles SET onboarding_completed_at = '2001-01-01';
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) = first, 'moved by a client';
END $$;
-- Back and forth: only the service role may leave COMPLETE (a support reset).
RESET ROLE;
SET LOCAL ROLE service_role;
SELECT set_config('request.jwt.claims', '{"role":"service_role"}', true);
DO $$
DECLARE first timestamptz := (SELECT onboarding_completed_at FROM public.user_profiles);
BEGIN
  UPDATE public.user_profiles SET onboarding_state = 'REVIEW', onboarding_completed_at = NULL;
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) = first, 'cleared';
  UPDATE public.user_profiles SET onboarding_state = 'COMPLETE';
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) = first, 'moved by a second COMPLETE';
END $$;

-- test: onboarding_completed_at cannot be written by a client before completion, nor by the service role
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
UPDATE public.user_profiles SET onboarding_completed_at = '2001-01-01';
DO $$ BEGIN ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) IS NULL, 'client wrote the stamp'; END $$;
RESET ROLE;
SET LOCAL ROLE service_role;
UPDATE public.user_profiles SET onboarding_completed_at = '2001-01-01';
DO $$ BEGIN ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) IS NULL, 'service role wrote the stamp'; END $$;

-- test: a profile inserted as COMPLETE (the backfill) is stamped at once
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
DELETE FROM public.user_profiles;
-- The seed's Step 1.2 backfill, as `onboard backfill-profiles` runs it.
INSERT INTO public.user_profiles (id, onboarding_state)
SELECT id, 'COMPLETE' FROM auth.users
ON CONFLICT (id) DO NOTHING;
DO $$ BEGIN
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) IS NOT NULL;
END $$;

-- test: delete_account deletes the caller and everything they own, nobody else
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A'), ('bbbbbbbb-0000-4000-8000-000000000002', 'B');
INSERT INTO auth.sessions (user_id) VALUES ('aaaaaaaa-0000-4000-8000-000000000001'), ('bbbbbbbb-0000-4000-8000-000000000002');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
SELECT public.delete_account();
-- A retry after success (a lost response) succeeds too.
SELECT public.delete_account();
RESET ROLE;
DO $$ BEGIN
  ASSERT (SELECT id FROM auth.users) = 'bbbbbbbb-0000-4000-8000-000000000002', 'users';
  ASSERT (SELECT user_id FROM public.children) = 'bbbbbbbb-0000-4000-8000-000000000002', 'children';
  ASSERT (SELECT id FROM public.user_profiles) = 'bbbbbbbb-0000-4000-8000-000000000002', 'profiles';
  ASSERT (SELECT user_id FROM auth.sessions) = 'bbbbbbbb-0000-4000-8000-000000000002', 'sessions';
END $$;

-- test: delete_account without a signed-in user fails with 42501 and deletes nothing
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"role":"authenticated"}', true);
DO $$
BEGIN
  PERFORM public.delete_account();
  RAISE EXCEPTION 'deleted without a user';
EXCEPTION WHEN insufficient_privilege THEN NULL;
END $$;
RESET ROLE;
DO $$ BEGIN ASSERT (SELECT count(*) FROM auth.users) = 1; END $$;
