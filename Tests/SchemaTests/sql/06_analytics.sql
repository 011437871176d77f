-- Onboarding analytics (migration 20251125000000): the history of onboarding states that the
-- triggers on user_profiles write, who may see it, and the service role's analytics functions.
-- Each section runs alone in BEGIN … ROLLBACK as the superuser (see 01_rls.sql).
--
-- The "known data set" sections start with the line `-- include: KnownDataSet`, which stands for
-- TestSupport's KnownDataSet (six users, their profiles, children and onboarding history of
-- June 2025, described there; the dashboard's tests use the same data).

-- test: a profile's first state and each change of state are recorded, unrelated updates are not
INSERT INTO auth.users (id, email) VALUES ('a0000000-0000-4000-8000-000000000001', 'u1@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"a0000000-0000-4000-8000-000000000001","role":"authenticated"}', true);
UPDATE public.user_profiles SET onboarding_state = 'USER_INFO';
UPDATE public.user_profiles SET onboarding_state = 'USER_INFO';
INSERT INTO public.children (id, user_id, name) VALUES ('c0000000-0000-4000-8000-000000000001', auth.uid(), 'Maya');
UPDATE public.user_profiles SET current_child_id = 'c0000000-0000-4000-8000-000000000001';
UPDATE public.user_profiles SET onboarding_state = 'CHILD_INFO';
UPDATE public.user_profiles SET current_child_id = NULL;
RESET ROLE;
DO $$
DECLARE got text; bad int;
BEGIN
  SELECT string_agg(coalesce(from_state, '-') || '>' || to_state, ' ' ORDER BY at, id) INTO got
    FROM analytics.onboarding_transitions WHERE user_id = 'a0000000-0000-4000-8000-000000000001';
  ASSERT got = '->NOT_STARTED NOT_STARTED>USER_INFO USER_INFO>CHILD_INFO', got;
  ASSERT (SELECT count(*) FROM analytics.onboarding_transitions) = 3, 'rows for nobody else';
  -- Each row's from_state_since is the previous row's at; times only move forward.
  SELECT count(*) INTO bad FROM (
    SELECT from_state_since, lag(at) OVER (ORDER BY at, id) AS previous, at, lag(at) OVER (ORDER BY at, id) < at AS forward
      FROM analytics.onboarding_transitions) t
   WHERE from_state_since IS DISTINCT FROM previous OR NOT forward;
  ASSERT bad = 0, 'from_state_since chains the rows';
  ASSERT (SELECT row(state, furthest_step)::text FROM analytics.onboarding_progress
           WHERE user_id = 'a0000000-0000-4000-8000-000000000001') = '(CHILD_INFO,3)', 'progress';
  ASSERT (SELECT state_since FROM analytics.onboarding_progress)
       = (SELECT max(at) FROM analytics.onboarding_transitions), 'progress.state_since is the last change';
END $$;

-- test: going back to an earlier step is recorded and keeps the furthest step reached
INSERT INTO auth.users (id, email) VALUES ('a0000000-0000-4000-8000-000000000001', 'u1@example.com');
UPDATE public.user_profiles SET onboarding_state = 'REVIEW';
UPDATE public.user_profiles SET onboarding_state = 'CHILD_INFO';
DO $$ BEGIN
  ASSERT (SELECT string_agg(coalesce(from_state, '-') || '>' || to_state, ' ' ORDER BY at, id) FROM analytics.onboarding_transitions)
       = '->NOT_STARTED NOT_STARTED>REVIEW REVIEW>CHILD_INFO';
  ASSERT (SELECT row(state, furthest_step)::text FROM analytics.onboarding_progress) = '(CHILD_INFO,7)';
END $$;

-- test: completion through complete_onboarding is recorded as a step into COMPLETE
INSERT INTO auth.users (id, email) VALUES ('a0000000-0000-4000-8000-000000000001', 'u1@example.com');
INSERT INTO public.children (user_id, name, goals, topics) VALUES ('a0000000-0000-4000-8000-000000000001', 'Maya', '{patience}', '{a,b,c}');
UPDATE public.user_profiles SET onboarding_state = 'REVIEW';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"a0000000-0000-4000-8000-000000000001","role":"authenticated"}', true);
SELECT public.complete_onboarding();
SELECT public.complete_onboarding();
RESET ROLE;
DO $$ BEGIN
  ASSERT (SELECT string_agg(coalesce(from_state, '-') || '>' || to_state, ' ' ORDER BY at, id) FROM analytics.onboarding_transitions)
       = '->NOT_STARTED NOT_STARTED>REVIEW REVIEW>COMPLETE', 'one step into COMPLETE, none for the retry';
  ASSERT (SELECT row(state, furthest_step)::text FROM analytics.onboarding_progress) = '(COMPLETE,8)';
END $$;

-- test: backfill-profiles' INSERT records the first state; a profile created COMPLETE is no completion
SET LOCAL session_replication_role = replica;
INSERT INTO auth.users (id, email) VALUES ('a0000000-0000-4000-8000-000000000001', 'u1@example.com');
SET LOCAL session_replication_role = origin;
DO $$ BEGIN
  ASSERT NOT EXISTS (SELECT 1 FROM public.user_profiles), 'a user from before onboarding: no profile';
END $$;
-- What `onboard backfill-profiles` runs.
INSERT INTO public.user_profiles (id, onboarding_state)
SELECT id, 'COMPLETE' FROM auth.users
ON CONFLICT (id) DO NOTHING;
SET LOCAL ROLE service_role;
DO $$ BEGIN
  ASSERT (SELECT string_agg(coalesce(from_state, '-') || '>' || to_state, ' ') FROM analytics.onboarding_transitions) = '->COMPLETE';
  ASSERT (SELECT users_reached FROM analytics.funnel(NULL, NULL) WHERE step = 'COMPLETE') = 1, 'counts from its current state';
  ASSERT NOT EXISTS (SELECT 1 FROM analytics.time_to_completion(NULL, NULL)), 'skipped onboarding: no time to completion';
  ASSERT (SELECT sum(completions) FROM analytics.daily_completion(now() - interval '1 day', now() + interval '1 day')) = 0,
         'not a completion of the day';
  ASSERT (SELECT sum(signed_up_completed) FROM analytics.daily_completion(now() - interval '1 day', now() + interval '1 day')) = 1;
END $$;

-- test: the history is append-only, even for its owner
INSERT INTO auth.users (id, email) VALUES ('a0000000-0000-4000-8000-000000000001', 'u1@example.com');
DO $$
DECLARE statement text; state text;
BEGIN
  FOREACH statement IN ARRAY ARRAY['UPDATE analytics.onboarding_transitions SET to_state = ''COMPLETE''',
                                   'UPDATE analytics.onboarding_transitions SET at = at - interval ''1 day''',
                                   'DELETE FROM analytics.onboarding_transitions',
                                   'TRUNCATE analytics.onboarding_transitions'] LOOP
    BEGIN
      EXECUTE statement;
      RAISE EXCEPTION 'the owner could run: %', statement;
    EXCEPTION WHEN insufficient_privilege THEN
      GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE; ASSERT state = '42501';
    END;
  END LOOP;
  ASSERT (SELECT count(*) FROM analytics.onboarding_transitions) = 1;
END $$;

-- test: the service role reads the history and the progress but cannot write them
INSERT INTO auth.users (id, email) VALUES ('a0000000-0000-4000-8000-000000000001', 'u1@example.com');
SET LOCAL ROLE service_role;
DO $$
DECLARE statement text;
BEGIN
  ASSERT (SELECT count(*) FROM analytics.onboarding_transitions) = 1;
  ASSERT (SELECT count(*) FROM analytics.onboarding_progress) = 1;
  FOREACH statement IN ARRAY ARRAY[
      'INSERT INTO analytics.onboarding_transitions (user_id, to_state) VALUES (''a0000000-0000-4000-8000-000000000001'', ''COMPLETE'')',
      'UPDATE analytics.onboarding_transitions SET to_state = ''COMPLETE''',
      'DELETE FROM analytics.onboarding_transitions',
      'TRUNCATE analytics.onboarding_transitions',
      'UPDATE analytics.onboarding_progress SET furthest_step = 8',
      'DELETE FROM analytics.onboarding_progress'] LOOP
    BEGIN
      EXECUTE statement;
      RAISE EXCEPTION 'service_role could run: %', statement;
    EXCEPTION WHEN insufficient_privilege THEN
      NULL;
    END;
  END LOOP;
END $$;

-- test: anon can neither read nor write the history nor call the analytics functions (42501)
INSERT INTO auth.users (id, email) VALUES ('a0000000-0000-4000-8000-000000000001', 'u1@example.com');
SET LOCAL ROLE anon;
SELECT set_config('request.jwt.claims', '{"role":"anon"}', true);
DO $$
DECLARE statement text; state text;
BEGIN
  FOREACH statement IN ARRAY ARRAY[
      'SELECT * FROM analytics.onboarding_transitions',
      'INSERT INTO analytics.onboarding_transitions (user_id, to_state) VALUES (''a0000000-0000-4000-8000-000000000001'', ''COMPLETE'')',
      'DELETE FROM analytics.onboarding_transitions',
      'SELECT * FROM analytics.onboarding_progress',
      'SELECT * FROM analytics.cohort_users(NULL, NULL)',
      'SELECT * FROM analytics.state_counts(NULL, NULL)',
      'SELECT * FROM analytics.funnel(NULL, NULL)',
      'SELECT * FROM analytics.drop_off(NULL, NULL)',
      'SELECT * FROM analytics.step_durations(NULL, NULL)',
      'SELECT * FROM analytics.time_to_completion(NULL, NULL)',
      'SELECT * FROM analytics.children_per_completed_user(NULL, NULL)',
      'SELECT * FROM analytics.anonymous_upgrades(NULL, NULL)',
      'SELECT * FROM analytics.daily_completion(now() - interval ''1 day'', now())'] LOOP
    BEGIN
      EXECUTE statement;
      RAISE EXCEPTION 'anon could run: %', statement;
    EXCEPTION WHEN insufficient_privilege THEN
      GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE; ASSERT state = '42501';
    END;
  END LOOP;
END $$;

-- test: a signed-in user can neither read nor write the history, their own included, nor call the functions (42501)
INSERT INTO auth.users (id, email) VALUES ('a0000000-0000-4000-8000-000000000001', 'u1@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"a0000000-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE statement text; state text;
BEGIN
  FOREACH statement IN ARRAY ARRAY[
      'SELECT * FROM analytics.onboarding_transitions WHERE user_id = auth.uid()',
      'INSERT INTO analytics.onboarding_transitions (user_id, to_state) VALUES (auth.uid(), ''COMPLETE'')',
      'UPDATE analytics.onboarding_transitions SET to_state = ''COMPLETE'' WHERE user_id = auth.uid()',
      'DELETE FROM analytics.onboarding_transitions WHERE user_id = auth.uid()',
      'SELECT * FROM analytics.onboarding_progress',
      'SELECT * FROM analytics.cohort_users(NULL, NULL)',
      'SELECT * FROM analytics.state_counts(NULL, NULL)',
      'SELECT * FROM analytics.funnel(NULL, NULL)',
      'SELECT * FROM analytics.drop_off(NULL, NULL)',
      'SELECT * FROM analytics.step_durations(NULL, NULL)',
      'SELECT * FROM analytics.time_to_completion(NULL, NULL)',
      'SELECT * FROM analytics.children_per_completed_user(NULL, NULL)',
      'SELECT * FROM analytics.anonymous_upgrades(NULL, NULL)',
      'SELECT * FROM analytics.daily_completion(now() - interval ''1 day'', now())'] LOOP
    BEGIN
      EXECUTE statement;
      RAISE EXCEPTION 'authenticated could run: %', statement;
    EXCEPTION WHEN insufficient_privilege THEN
      GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE; ASSERT state = '42501';
    END;
  END LOOP;
END $$;
RESET ROLE;
DO $$ BEGIN ASSERT (SELECT count(*) FROM analytics.onboarding_transitions) = 1, 'the history is unchanged'; END $$;

-- test: privileges: the schema and every analytics function are the service role's only; trigger functions nobody's
DO $$
DECLARE f regprocedure; role_name text;
BEGIN
  FOREACH role_name IN ARRAY ARRAY['anon', 'authenticated'] LOOP
    ASSERT NOT has_schema_privilege(role_name, 'analytics', 'USAGE'), role_name || ' uses analytics';
    ASSERT NOT has_table_privilege(role_name, 'analytics.onboarding_transitions', 'SELECT,INSERT,UPDATE,DELETE,TRUNCATE'), role_name || ' on the history';
    ASSERT NOT has_table_privilege(role_name, 'analytics.onboarding_progress', 'SELECT,INSERT,UPDATE,DELETE,TRUNCATE'), role_name || ' on the progress';
  END LOOP;
  ASSERT has_schema_privilege('service_role', 'analytics', 'USAGE');
  ASSERT has_table_privilege('service_role', 'analytics.onboarding_transitions', 'SELECT');
  ASSERT NOT has_table_privilege('service_role', 'analytics.onboarding_transitions', 'INSERT,UPDATE,DELETE,TRUNCATE');
  FOR f IN SELECT p.oid FROM pg_proc p WHERE p.pronamespace = 'analytics'::regnamespace LOOP
    ASSERT NOT EXISTS (SELECT 1 FROM pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
                       WHERE p.oid = f AND a.grantee = 0), f || ' is executable by PUBLIC';
    ASSERT NOT has_function_privilege('anon', f, 'EXECUTE'), f || ' is executable by anon';
    ASSERT NOT has_function_privilege('authenticated', f, 'EXECUTE'), f || ' is executable by authenticated';
    IF (SELECT prorettype = 'trigger'::regtype FROM pg_proc WHERE oid = f) THEN
      ASSERT NOT has_function_privilege('service_role', f, 'EXECUTE'), f || ' (a trigger function) is executable by service_role';
      ASSERT (SELECT prosecdef AND proconfig @> ARRAY['search_path=""'] FROM pg_proc WHERE oid = f), f || ' runs as its owner with an empty search_path';
    ELSE
      ASSERT has_function_privilege('service_role', f, 'EXECUTE'), f || ' is not executable by service_role';
      -- Inlinable: run as the caller, no SET clauses.
      ASSERT (SELECT NOT prosecdef AND proconfig IS NULL FROM pg_proc WHERE oid = f), f || ' cannot be inlined';
    END IF;
  END LOOP;
  ASSERT (SELECT count(*) FROM pg_proc WHERE pronamespace = 'analytics'::regnamespace) >= 17, 'the functions exist';
END $$;

-- test: the steps are the onboarding states in the order of valid_onboarding_state
DO $$
DECLARE constraint_states text[];
BEGIN
  SELECT array_agg(m[1] ORDER BY n) INTO constraint_states
    FROM pg_constraint c,
         regexp_matches(pg_get_constraintdef(c.oid), '''([A-Z_]+)''', 'g') WITH ORDINALITY AS x(m, n)
   WHERE c.conrelid = 'public.user_profiles'::regclass AND c.conname = 'valid_onboarding_state';
  ASSERT constraint_states = analytics.onboarding_states(), constraint_states::text;
  ASSERT (SELECT array_agg(step ORDER BY step_no) FROM analytics.onboarding_steps()) = constraint_states;
  ASSERT (SELECT array_agg(step_no ORDER BY step_no) FROM analytics.onboarding_steps()) = ARRAY[1, 2, 3, 4, 5, 6, 7, 8];
  ASSERT analytics.step_no('NOT_STARTED') = 1 AND analytics.step_no('COMPLETE') = 8 AND analytics.step_no('nope') IS NULL;
END $$;

-- test: delete_account keeps the caller's history and progress under a former_users id, nobody else's changes
INSERT INTO auth.users (id, email) VALUES ('a0000000-0000-4000-8000-000000000001', 'u1@example.com'),
                                          ('a0000000-0000-4000-8000-000000000002', 'u2@example.com');
UPDATE public.user_profiles SET onboarding_state = 'USER_INFO';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"a0000000-0000-4000-8000-000000000001","role":"authenticated"}', true);
SELECT public.delete_account();
RESET ROLE;
DO $$
DECLARE former uuid := (SELECT id FROM analytics.former_users);
BEGIN
  ASSERT NOT EXISTS (SELECT 1 FROM analytics.onboarding_transitions WHERE user_id = 'a0000000-0000-4000-8000-000000000001'), 'history keeps the user id';
  ASSERT NOT EXISTS (SELECT 1 FROM analytics.onboarding_progress WHERE user_id = 'a0000000-0000-4000-8000-000000000001'), 'progress keeps the user id';
  ASSERT (SELECT count(*) FROM analytics.onboarding_transitions WHERE user_id = former) = 2, 'the deleted user''s history';
  ASSERT (SELECT count(*) FROM analytics.onboarding_transitions WHERE user_id = 'a0000000-0000-4000-8000-000000000002') = 2, 'the other user''s history';
  ASSERT (SELECT count(*) FROM analytics.onboarding_progress) = 2;
END $$;

-- test: deleting a user as the service role (the admin API) keeps their history the same way
INSERT INTO auth.users (id, email) VALUES ('a0000000-0000-4000-8000-000000000001', 'u1@example.com');
UPDATE public.user_profiles SET onboarding_state = 'USER_INFO';
SET LOCAL ROLE service_role;
DELETE FROM auth.users WHERE id = 'a0000000-0000-4000-8000-000000000001';
DO $$ BEGIN
  ASSERT (SELECT array_agg(to_state ORDER BY id) FROM analytics.onboarding_transitions) = ARRAY['NOT_STARTED', 'USER_INFO'], 'history';
  ASSERT (SELECT user_id FROM analytics.onboarding_progress) = (SELECT id FROM analytics.former_users), 'progress';
  ASSERT (SELECT DISTINCT user_id FROM analytics.onboarding_transitions) = (SELECT id FROM analytics.former_users), 'history''s id';
END $$;

-- test: an unknown cohort is refused (22023), even with nothing to count
SET LOCAL ROLE service_role;
DO $$
DECLARE state text;
BEGIN
  PERFORM * FROM analytics.funnel(NULL, NULL, 'month');
  RAISE EXCEPTION 'cohort ''month'' accepted';
EXCEPTION WHEN invalid_parameter_value THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE; ASSERT state = '22023';
END $$;

-- test: known data set: the history's triggers filled in from_state_since and the progress
-- include: KnownDataSet
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM analytics.onboarding_transitions WHERE from_state IS NOT NULL AND from_state_since IS NULL) = 0;
  ASSERT (SELECT from_state_since FROM analytics.onboarding_transitions
           WHERE user_id = 'a0000000-0000-4000-8000-000000000003' AND from_state = 'CHILD_INFO' AND to_state = 'REVIEW') = '2025-06-03 09:10Z';
  ASSERT (SELECT string_agg(format('%s:%s:%s:%s', right(user_id::text, 1), state, furthest_step, to_char(state_since, 'MM-DD HH24:MI')), ' ' ORDER BY user_id)
            FROM analytics.onboarding_progress)
       = '1:COMPLETE:8:06-02 10:23 2:CHILD_INFO:3:06-02 11:10 3:COMPLETE:8:06-03 09:16 4:USER_INFO:2:06-09 08:30 5:NOT_STARTED:1:06-09 12:00 6:COMPLETE:8:06-20 00:00';
END $$;

-- test: known data set: users per state and the funnel, for all users and per cohort
-- include: KnownDataSet
SET LOCAL ROLE service_role;
DO $$
DECLARE got text;
BEGIN
  SELECT string_agg(format('%s=%s', step, users), ' ' ORDER BY step_no) INTO got FROM analytics.state_counts('2025-06-01', '2025-07-01');
  ASSERT got = 'NOT_STARTED=1 USER_INFO=1 CHILD_INFO=1 GOALS=0 TOPICS=0 DISPOSITIONS=0 REVIEW=0 COMPLETE=3', got;
  ASSERT (SELECT pct_of_cohort FROM analytics.state_counts('2025-06-01', '2025-07-01') WHERE step = 'COMPLETE') = 50.00;
  ASSERT (SELECT pct_of_cohort FROM analytics.state_counts('2025-06-01', '2025-07-01') WHERE step = 'CHILD_INFO') = 16.67;
  -- The window is on sign-up time: [06-09, 06-10) is U4 and U5.
  SELECT string_agg(format('%s=%s', step, users), ' ' ORDER BY step_no) INTO got FROM analytics.state_counts('2025-06-09', '2025-06-10') WHERE users > 0;
  ASSERT got = 'NOT_STARTED=1 USER_INFO=1', got;
  SELECT string_agg(format('%s %s=%s', cohort, step, users), ', ' ORDER BY cohort, step_no) INTO got
    FROM analytics.state_counts('2025-06-01', '2025-07-01', 'week') WHERE users > 0;
  ASSERT got = '2025-06-02 CHILD_INFO=1, 2025-06-02 COMPLETE=2, 2025-06-09 NOT_STARTED=1, 2025-06-09 USER_INFO=1, 2025-06-09 COMPLETE=1', got;

  SELECT string_agg(format('%s=%s/%s/%s', step, users_reached, coalesce(pct_of_previous::text, '-'), pct_of_first), ' ' ORDER BY step_no) INTO got
    FROM analytics.funnel('2025-06-01', '2025-07-01');
  ASSERT got = 'NOT_STARTED=6/-/100.00 USER_INFO=5/83.33/83.33 CHILD_INFO=4/80.00/66.67 GOALS=3/75.00/50.00 TOPICS=3/100.00/50.00 '
               'DISPOSITIONS=3/100.00/50.00 REVIEW=3/100.00/50.00 COMPLETE=3/100.00/50.00', got;
  -- Provider: U4 upgraded, so counts under e-mail now.
  SELECT string_agg(format('%s %s', cohort, users_reached), ', ' ORDER BY cohort) INTO got
    FROM analytics.funnel('2025-06-01', '2025-07-01', 'provider') WHERE step_no = 1;
  ASSERT got = 'anonymous 1, apple 1, email 3, google 1', got;
  SELECT string_agg(users_reached::text, ',' ORDER BY step_no) INTO got FROM analytics.funnel('2025-06-01', '2025-07-01', 'provider') WHERE cohort = 'email';
  ASSERT got = '3,3,2,2,2,2,2,2', got;
  SELECT string_agg(format('%s:%s', cohort, users_reached), ' ' ORDER BY cohort) INTO got FROM analytics.funnel('2025-06-01', '2025-07-01', 'day') WHERE step = 'CHILD_INFO';
  ASSERT got = '2025-06-02:2 2025-06-03:1 2025-06-09:0 2025-06-10:1', got;
END $$;

-- test: known data set: drop-off and the time per step
-- include: KnownDataSet
-- U7 signed up three hours ago and has been at USER_INFO for an hour and a half.
SET LOCAL session_replication_role = replica;
INSERT INTO auth.users (id, email, created_at) VALUES ('a0000000-0000-4000-8000-000000000007', 'u7@example.com', now() - interval '3 hours');
INSERT INTO public.user_profiles (id, onboarding_state, created_at) VALUES ('a0000000-0000-4000-8000-000000000007', 'USER_INFO', now() - interval '3 hours');
SET LOCAL session_replication_role = origin;
INSERT INTO analytics.onboarding_transitions (user_id, from_state, to_state, at) VALUES
  ('a0000000-0000-4000-8000-000000000007', NULL, 'NOT_STARTED', now() - interval '3 hours'),
  ('a0000000-0000-4000-8000-000000000007', 'NOT_STARTED', 'USER_INFO', now() - interval '90 minutes');
SET LOCAL ROLE service_role;
DO $$
DECLARE got text; r record;
BEGIN
  SELECT string_agg(format('%s=%s/%s/%s', step, users_at_step, users_stuck, pct_stuck_of_cohort), ' ' ORDER BY step_no) INTO got
    FROM analytics.drop_off('2025-06-01', '2025-07-01');
  ASSERT got = 'NOT_STARTED=1/1/16.67 USER_INFO=1/1/16.67 CHILD_INFO=1/1/16.67 GOALS=0/0/0.00 TOPICS=0/0/0.00 DISPOSITIONS=0/0/0.00 REVIEW=0/0/0.00', got;
  SELECT users_at_step, users_stuck INTO r FROM analytics.drop_off(now() - interval '1 day', now()) WHERE step = 'USER_INFO';
  ASSERT r.users_at_step = 1 AND r.users_stuck = 0, '90 minutes is not stuck for 24 hours: ' || r::text;
  SELECT users_at_step, users_stuck INTO r FROM analytics.drop_off(now() - interval '1 day', now(), p_stuck_hours => 1) WHERE step = 'USER_INFO';
  ASSERT r.users_stuck = 1, '90 minutes is stuck for 1 hour: ' || r::text;

  -- Visits that ended, in seconds: NOT_STARTED 60 120 240 1800; USER_INFO 120 180 360;
  -- CHILD_INFO 60 300 300 (U3 twice); GOALS 120 120; TOPICS 60 240; DISPOSITIONS 60 360; REVIEW 60 60 120.
  SELECT string_agg(format('%s=%s/%s/%s', step, visits, extract(epoch FROM median)::numeric(10, 1), extract(epoch FROM p90)::numeric(10, 1)), ' ' ORDER BY step_no) INTO got
    FROM analytics.step_durations('2025-06-01', '2025-07-01');
  ASSERT got = 'NOT_STARTED=4/180.0/1332.0 USER_INFO=3/180.0/324.0 CHILD_INFO=3/300.0/300.0 GOALS=2/120.0/120.0 '
               'TOPICS=2/150.0/222.0 DISPOSITIONS=2/210.0/330.0 REVIEW=3/60.0/108.0', got;
  SELECT string_agg(format('%s %s=%s', cohort, step, visits), ', ' ORDER BY cohort, step_no) INTO got
    FROM analytics.step_durations('2025-06-01', '2025-07-01', 'provider') WHERE step IN ('NOT_STARTED', 'CHILD_INFO');
  ASSERT got = 'anonymous NOT_STARTED=1, anonymous CHILD_INFO=2, email NOT_STARTED=2, email CHILD_INFO=1, google NOT_STARTED=1', got;
END $$;

-- test: known data set: time to completion, children, anonymous upgrades and the daily series
-- include: KnownDataSet
SET LOCAL ROLE service_role;
DO $$
DECLARE got text; r record;
BEGIN
  -- U1 23 min, U3 16 min; U6 skipped onboarding.
  SELECT * INTO STRICT r FROM analytics.time_to_completion('2025-06-01', '2025-07-01');
  ASSERT r.cohort = 'all' AND r.users_completed = 2, r::text;
  ASSERT extract(epoch FROM r.median) = 1170 AND extract(epoch FROM r.average) = 1170, r::text;
  ASSERT abs(extract(epoch FROM r.p90) - 1338) < 0.001, r::text;

  -- U1 2, U3 1, U6 0.
  SELECT * INTO STRICT r FROM analytics.children_per_completed_user('2025-06-01', '2025-07-01');
  ASSERT r.users_completed = 3 AND r.children = 3 AND r.average = 1.00 AND r.median = 1, r::text;
  SELECT string_agg(format('%s:%s/%s', cohort, users_completed, children), ' ' ORDER BY cohort) INTO got
    FROM analytics.children_per_completed_user('2025-06-01', '2025-07-01', 'week');
  ASSERT got = '2025-06-02:2/3 2025-06-09:1/0', got;

  -- U3 still anonymous, U4 upgraded.
  SELECT * INTO STRICT r FROM analytics.anonymous_upgrades('2025-06-01', '2025-07-01');
  ASSERT r.anonymous_users = 2 AND r.upgraded_users = 1 AND r.pct_upgraded = 50.00, r::text;
  SELECT string_agg(format('%s:%s/%s', cohort, anonymous_users, upgraded_users), ' ' ORDER BY cohort) INTO got
    FROM analytics.anonymous_upgrades('2025-06-01', '2025-07-01', 'week');
  ASSERT got = '2025-06-02:1/0 2025-06-09:1/1', got;

  SELECT string_agg(format('%s %s %s/%s/%s/%s', day, cohort, signed_up, signed_up_completed, coalesce(completion_rate_pct::text, '-'), completions), ', ' ORDER BY day) INTO got
    FROM analytics.daily_completion('2025-06-02', '2025-06-05');
  ASSERT got = '2025-06-02 all 2/1/50.00/1, 2025-06-03 all 1/1/100.00/1, 2025-06-04 all 0/0/-/0', got;
  -- U6's profile, created COMPLETE on 06-20, is no completion of that day.
  SELECT string_agg(format('%s %s %s/%s', day, cohort, signed_up, completions), ', ') INTO got FROM analytics.daily_completion('2025-06-20', '2025-06-21');
  ASSERT got = '2025-06-20 all 0/0', got;
  SELECT string_agg(format('%s %s %s/%s/%s', day, cohort, signed_up, signed_up_completed, completions), ', ' ORDER BY day, cohort) INTO got
    FROM analytics.daily_completion('2025-06-02', '2025-06-04', 'provider');
  ASSERT got = '2025-06-02 anonymous 0/0/0, 2025-06-02 email 1/1/1, 2025-06-02 google 1/0/0, '
               '2025-06-03 anonymous 1/1/1, 2025-06-03 email 0/0/0, 2025-06-03 google 0/0/0', got;
END $$;
