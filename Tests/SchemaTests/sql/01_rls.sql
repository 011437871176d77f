-- test: trigger creates exactly one NOT_STARTED profile per new user
DO $$
DECLARE uid uuid;
BEGIN
  INSERT INTO auth.users (email) VALUES ('t1@example.com') RETURNING id INTO uid;
  ASSERT (SELECT count(*) FROM public.user_profiles WHERE id = uid) = 1, 'one profile';
  ASSERT (SELECT onboarding_state FROM public.user_profiles WHERE id = uid) = 'NOT_STARTED';
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles WHERE id = uid) IS NULL;
END $$;

-- test: a user reads and writes their own rows
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
INSERT INTO public.children (user_id, name, goals, topics) VALUES (auth.uid(), 'Maya', '{patience}', '{a,b,c}');
DO $$
BEGIN
  ASSERT (SELECT count(*) FROM public.children) = 1, 'own child visible';
  ASSERT (SELECT count(*) FROM public.user_profiles) = 1, 'own profile visible';
  UPDATE public.user_profiles SET onboarding_state = 'USER_INFO';
  ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'USER_INFO';
  UPDATE public.children SET age = 6;
  ASSERT (SELECT age FROM public.children) = 6;
  DELETE FROM public.children;
  ASSERT (SELECT count(*) FROM public.children) = 0;
END $$;

-- test: another user cannot see, update or delete A's rows
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A child');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE n int;
BEGIN
  ASSERT (SELECT count(*) FROM public.children) = 0, 'B sees no children';
  ASSERT (SELECT count(*) FROM public.user_profiles WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001') = 0, 'B sees no profile of A';
  UPDATE public.children SET name = 'stolen'; GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0, 'update hits nothing';
  UPDATE public.user_profiles SET onboarding_state = 'COMPLETE' WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
  GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0, 'profile update hits nothing';
  DELETE FROM public.children; GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0, 'delete hits nothing';
END $$;
RESET ROLE;
DO $$ BEGIN
  ASSERT (SELECT name FROM public.children WHERE user_id = 'aaaaaaaa-0000-4000-8000-000000000001') = 'A child', 'A row untouched';
  ASSERT (SELECT onboarding_state FROM public.user_profiles WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001') = 'NOT_STARTED';
END $$;

-- test: another user cannot insert a child or profile for A (42501)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
BEGIN
  BEGIN
    INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'planted');
    RAISE EXCEPTION 'insert for another user succeeded';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
  BEGIN
    INSERT INTO public.user_profiles (id) VALUES ('aaaaaaaa-0000-4000-8000-000000000001');
    RAISE EXCEPTION 'profile insert for another user succeeded';
  EXCEPTION WHEN insufficient_privilege OR unique_violation THEN NULL;
  END;
END $$;

-- test: a user cannot move their child to another user (re-own)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (user_id, name) VALUES ('bbbbbbbb-0000-4000-8000-000000000002', 'B child');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE state text;
BEGIN
  BEGIN
    UPDATE public.children SET user_id = 'aaaaaaaa-0000-4000-8000-000000000001';
    RAISE EXCEPTION 're-own succeeded';
  EXCEPTION WHEN insufficient_privilege THEN GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE; ASSERT state = '42501';
  END;
END $$;

-- test: owner columns cannot change even for the service role
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (user_id, name) VALUES ('bbbbbbbb-0000-4000-8000-000000000002', 'B child');
SET LOCAL ROLE service_role;
DO $$
BEGIN
  BEGIN
    UPDATE public.children SET user_id = 'aaaaaaaa-0000-4000-8000-000000000001';
    RAISE EXCEPTION 'service role re-owned a child';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
  BEGIN
    UPDATE public.user_profiles SET id = 'aaaaaaaa-0000-4000-8000-000000000009' WHERE id = 'bbbbbbbb-0000-4000-8000-000000000002';
    RAISE EXCEPTION 'service role re-owned a profile';
  EXCEPTION WHEN insufficient_privilege OR foreign_key_violation THEN NULL;
  END;
END $$;

-- test: anon sees nothing and cannot write
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A child');
SET LOCAL ROLE anon;
SELECT set_config('request.jwt.claims', '{"role":"anon"}', true);
DO $$
BEGIN
  ASSERT (SELECT count(*) FROM public.children) = 0, 'anon sees no children';
  ASSERT (SELECT count(*) FROM public.user_profiles) = 0, 'anon sees no profiles';
  BEGIN
    INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'x');
    RAISE EXCEPTION 'anon inserted';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
END $$;

-- test: the API roles cannot read auth tables
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
BEGIN
  BEGIN
    PERFORM * FROM auth.users;
    RAISE EXCEPTION 'authenticated read auth.users';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
  BEGIN
    PERFORM * FROM auth.refresh_tokens;
    RAISE EXCEPTION 'authenticated read auth.refresh_tokens';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
END $$;

-- test: claims left as '' by an earlier transaction do not break auth.uid()
-- (a pooled connection reads '' for a once-set local setting: postgres-notes §1)
SELECT set_config('request.jwt.claims', '', true);
SET LOCAL ROLE anon;
DO $$
BEGIN
  ASSERT auth.uid() IS NULL;
  ASSERT auth.role() IS NULL;
  ASSERT auth.jwt() IS NULL;
  ASSERT (SELECT count(*) FROM public.children) = 0;
END $$;
