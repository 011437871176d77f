-- test: get_user_with_profile returns the caller's row with the seed's columns
INSERT INTO auth.users (id, email, raw_user_meta_data) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com', '{"full_name":"Ada"}');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE r record;
BEGIN
  SELECT * INTO STRICT r FROM public.get_user_with_profile('aaaaaaaa-0000-4000-8000-000000000001');
  ASSERT r.user_id = 'aaaaaaaa-0000-4000-8000-000000000001' AND r.email = 'a@example.com'
     AND r.display_name = 'Ada' AND r.onboarding_state = 'NOT_STARTED' AND r.current_child_id IS NULL;
END $$;

-- test: get_user_with_profile with another user's id returns nothing
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.get_user_with_profile('aaaaaaaa-0000-4000-8000-000000000001')) = 0;
END $$;

-- test: anon cannot execute get_user_with_profile, complete_onboarding or delete_account
SET LOCAL ROLE anon;
SELECT set_config('request.jwt.claims', '{"role":"anon"}', true);
DO $$
DECLARE f text;
BEGIN
  FOREACH f IN ARRAY ARRAY['SELECT * FROM public.get_user_with_profile(gen_random_uuid())',
                           'SELECT public.complete_onboarding()', 'SELECT public.delete_account()'] LOOP
    BEGIN
      EXECUTE f;
      RAISE EXCEPTION 'anon could run %', f;
    EXCEPTION WHEN insufficient_privilege THEN NULL;
    END;
  END LOOP;
END $$;

-- test: complete_onboarding completes, clears current_child_id and stamps completion once
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (id, user_id, name, goals, topics) VALUES ('cccccccc-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Maya', '{a,b}', '{x,y,z}');
UPDATE public.user_profiles SET onboarding_state = 'REVIEW', current_child_id = 'cccccccc-0000-4000-8000-000000000001';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE p public.user_profiles; first timestamptz;
BEGIN
  p := public.complete_onboarding();
  ASSERT p.onboarding_state = 'COMPLETE' AND p.current_child_id IS NULL AND p.onboarding_completed_at IS NOT NULL;
  first := p.onboarding_completed_at;
  -- A second call is a no-op success.
  p := public.complete_onboarding();
  ASSERT p.onboarding_state = 'COMPLETE' AND p.onboarding_completed_at = first;
END $$;

-- test: complete_onboarding fails without children and changes nothing
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
UPDATE public.user_profiles SET onboarding_state = 'REVIEW';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE state text; detail text;
BEGIN
  BEGIN
    PERFORM public.complete_onboarding();
    RAISE EXCEPTION 'completed without children';
  EXCEPTION WHEN raise_exception THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, detail = PG_EXCEPTION_DETAIL;
    ASSERT state = 'P0001' AND detail = 'no_children';
  END;
  ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'REVIEW';
END $$;

-- test: complete_onboarding fails on 0 goals, 4 goals and 2 topics, changing nothing
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
UPDATE public.user_profiles SET onboarding_state = 'REVIEW';
INSERT INTO public.children (id, user_id, name, goals, topics) VALUES ('cccccccc-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Maya', '{}', '{x,y,z}');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE
  cases text[][] := ARRAY[ARRAY['{}', '{x,y,z}', 'goals'], ARRAY['{a,b,c,d}', '{x,y,z}', 'goals'], ARRAY['{a}', '{x,y}', 'topics']];
  c text[];
  detail text;
BEGIN
  FOREACH c SLICE 1 IN ARRAY cases LOOP
    UPDATE public.children SET goals = c[1]::text[], topics = c[2]::text[];
    BEGIN
      PERFORM public.complete_onboarding();
      RAISE EXCEPTION 'completed with goals % topics %', c[1], c[2];
    EXCEPTION WHEN raise_exception THEN
      GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
      ASSERT detail LIKE c[3] || ':%', detail;
    END;
    ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'REVIEW';
    ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) IS NULL;
  END LOOP;
END $$;

-- test: onboarding_completed_at is set once and never moves or is written by clients
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE first timestamptz;
BEGIN
  UPDATE public.user_profiles SET onboarding_completed_at = '2001-01-01';
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) IS NULL, 'client wrote the stamp';
  UPDATE public.user_profiles SET onboarding_state = 'COMPLETE';
  SELECT onboarding_completed_at INTO first FROM public.user_profiles;
  ASSERT first IS NOT NULL;
  UPDATE public.user_profiles SET onboarding_state = 'REVIEW', onboarding_completed_at = NULL;
  UPDATE public.user_profiles SET onboarding_state = 'COMPLETE';
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) = first, 'stamp moved';
END $$;

-- test: delete_account deletes the caller and everything they own, nobody else
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'A'), ('bbbbbbbb-0000-4000-8000-000000000002', 'B');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
SELECT public.delete_account();
RESET ROLE;
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM auth.users) = 1;
  ASSERT (SELECT count(*) FROM public.children) = 1;
  ASSERT (SELECT count(*) FROM public.user_profiles) = 1;
  ASSERT (SELECT user_id FROM public.children) = 'bbbbbbbb-0000-4000-8000-000000000002';
END $$;
