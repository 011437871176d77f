-- CHECKs, NOT NULLs, foreign keys, cascades and triggers. Writes that a client makes are made as
-- the `authenticated` user, so the error is the one a request would get.

-- test: a future birthday fails with 23514 valid_birthday
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE got text; state text;
BEGIN
  INSERT INTO public.children (user_id, name, birthday) VALUES (auth.uid(), 'x', current_date + 1);
  RAISE EXCEPTION 'future birthday accepted';
EXCEPTION WHEN check_violation THEN
  GET STACKED DIAGNOSTICS got = CONSTRAINT_NAME, state = RETURNED_SQLSTATE;
  ASSERT state = '23514' AND got = 'valid_birthday', format('%s %s', state, got);
END $$;

-- test: temperament scores 0 and 11 fail with 23514 and the score's constraint name
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE
  col text; v int; got text; state text; failures int := 0;
BEGIN
  FOREACH col IN ARRAY ARRAY['temperament_talkative', 'temperament_sensitivity', 'temperament_accountability'] LOOP
    FOREACH v IN ARRAY ARRAY[0, 11, -5, 100] LOOP
      BEGIN
        EXECUTE format('INSERT INTO public.children (user_id, name, %I) VALUES (auth.uid(), %L, %s)', col, 'x', v);
        RAISE EXCEPTION 'no error for % = %', col, v;
      EXCEPTION WHEN check_violation THEN
        GET STACKED DIAGNOSTICS got = CONSTRAINT_NAME, state = RETURNED_SQLSTATE;
        ASSERT state = '23514' AND got = 'valid_' || col, format('%s = %s: %s %s', col, v, state, got);
        failures := failures + 1;
      END;
    END LOOP;
  END LOOP;
  ASSERT failures = 12;
END $$;

-- test: an update to a temperament score of 11 fails too (CHECKs hold on UPDATE)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Maya');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE got text;
BEGIN
  UPDATE public.children SET temperament_sensitivity = 11;
  RAISE EXCEPTION 'update to 11 accepted';
EXCEPTION WHEN check_violation THEN
  GET STACKED DIAGNOSTICS got = CONSTRAINT_NAME;
  ASSERT got = 'valid_temperament_sensitivity', got;
END $$;

-- test: boundary values 1 and 10, today's birthday and the defaults are accepted
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
INSERT INTO public.children (user_id, name, birthday, temperament_talkative, temperament_sensitivity, temperament_accountability)
VALUES (auth.uid(), 'edge', current_date, 1, 10, 1), (auth.uid(), 'edge2', '2015-06-01', 10, 1, 10);
INSERT INTO public.children (user_id, name) VALUES (auth.uid(), 'defaults');
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.children) = 3;
  ASSERT (SELECT (temperament_talkative, temperament_sensitivity, temperament_accountability) = (5, 5, 5)
            AND goals = '{}' AND topics = '{}' AND birthday IS NULL
          FROM public.children WHERE name = 'defaults'), 'seed defaults';
END $$;

-- test: an unknown onboarding state fails with 23514 valid_onboarding_state
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE got text; state text;
BEGIN
  UPDATE public.user_profiles SET onboarding_state = 'DONE';
  RAISE EXCEPTION 'unknown state accepted';
EXCEPTION WHEN check_violation THEN
  GET STACKED DIAGNOSTICS got = CONSTRAINT_NAME, state = RETURNED_SQLSTATE;
  ASSERT state = '23514' AND got = 'valid_onboarding_state', format('%s %s', state, got);
END $$;

-- test: an unknown onboarding state's error names the value and lists the states
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE message text; detail text; hint text;
BEGIN
  UPDATE public.user_profiles SET onboarding_state = 'GOAL';
  RAISE EXCEPTION 'unknown state accepted';
EXCEPTION WHEN check_violation THEN
  GET STACKED DIAGNOSTICS message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
  ASSERT message = 'new row for relation "user_profiles" violates check constraint "valid_onboarding_state"', message;
  ASSERT detail = '"GOAL" is not an onboarding state.', detail;
  ASSERT hint = 'onboarding_state is one of NOT_STARTED, USER_INFO, CHILD_INFO, GOALS, TOPICS, DISPOSITIONS, REVIEW, COMPLETE.', hint;
END $$;

-- test: the state check is case-sensitive and NULL is refused (23502)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
DO $$
DECLARE col text;
BEGIN
  BEGIN
    UPDATE public.user_profiles SET onboarding_state = 'complete';
    RAISE EXCEPTION 'lower-case state accepted';
  EXCEPTION WHEN check_violation THEN NULL;
  END;
  BEGIN
    UPDATE public.user_profiles SET onboarding_state = NULL;
    RAISE EXCEPTION 'NULL state accepted';
  EXCEPTION WHEN not_null_violation THEN
    GET STACKED DIAGNOSTICS col = COLUMN_NAME; ASSERT col = 'onboarding_state';
  END;
END $$;

-- test: each of the eight onboarding states is accepted
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
-- A child that passes the checks for entering COMPLETE (20251126900000_onboarding_state_machine.sql).
INSERT INTO public.children (user_id, name, goals, topics) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Maya', '{a}', '{x,y,z}');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE s text;
BEGIN
  FOREACH s IN ARRAY ARRAY['NOT_STARTED','USER_INFO','CHILD_INFO','GOALS','TOPICS','DISPOSITIONS','REVIEW','COMPLETE'] LOOP
    UPDATE public.user_profiles SET onboarding_state = s;
    ASSERT (SELECT onboarding_state FROM public.user_profiles) = s;
  END LOOP;
END $$;

-- test: a missing child name fails with 23502 on column name
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE col text; tab text; state text;
BEGIN
  INSERT INTO public.children (user_id) VALUES (auth.uid());
  RAISE EXCEPTION 'child without name accepted';
EXCEPTION WHEN not_null_violation THEN
  GET STACKED DIAGNOSTICS col = COLUMN_NAME, tab = TABLE_NAME, state = RETURNED_SQLSTATE;
  ASSERT state = '23502' AND col = 'name' AND tab = 'children', format('%s %s.%s', state, tab, col);
END $$;

-- test: a child without user_id fails with 23502 (not silently owned by nobody)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
DO $$
DECLARE col text;
BEGIN
  INSERT INTO public.children (name) VALUES ('orphan');
  RAISE EXCEPTION 'child without owner accepted';
EXCEPTION WHEN not_null_violation THEN
  GET STACKED DIAGNOSTICS col = COLUMN_NAME; ASSERT col = 'user_id';
END $$;

-- test: A may point current_child_id at their own child
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (id, user_id, name) VALUES ('c1111111-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Maya');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
UPDATE public.user_profiles SET current_child_id = 'c1111111-0000-4000-8000-000000000001', onboarding_state = 'GOALS';
DO $$ BEGIN
  ASSERT (SELECT current_child_id FROM public.user_profiles) = 'c1111111-0000-4000-8000-000000000001';
END $$;

-- test: deleting the current child nulls current_child_id and keeps the profile
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (id, user_id, name) VALUES ('c1111111-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Maya');
UPDATE public.user_profiles SET current_child_id = 'c1111111-0000-4000-8000-000000000001', onboarding_state = 'GOALS';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DELETE FROM public.children WHERE id = 'c1111111-0000-4000-8000-000000000001';
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.user_profiles) = 1, 'profile kept';
  ASSERT (SELECT current_child_id FROM public.user_profiles) IS NULL, 'current_child_id nulled';
  ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'GOALS', 'state kept';
END $$;

-- test: current_child_id cannot point at another user's child (23503)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (id, user_id, name) VALUES ('c2222222-0000-4000-8000-000000000002', 'bbbbbbbb-0000-4000-8000-000000000002', 'B child');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE got text; state text;
BEGIN
  UPDATE public.user_profiles SET current_child_id = 'c2222222-0000-4000-8000-000000000002';
  RAISE EXCEPTION 'another user''s child accepted';
EXCEPTION WHEN foreign_key_violation THEN
  GET STACKED DIAGNOSTICS got = CONSTRAINT_NAME, state = RETURNED_SQLSTATE;
  ASSERT state = '23503' AND got = 'user_profiles_current_child_fkey', format('%s %s', state, got);
END $$;

-- test: current_child_id cannot point at another user's child, even for the service role
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (id, user_id, name) VALUES ('c2222222-0000-4000-8000-000000000002', 'bbbbbbbb-0000-4000-8000-000000000002', 'B child');
DO $$ BEGIN
  UPDATE public.user_profiles SET current_child_id = 'c2222222-0000-4000-8000-000000000002' WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
  RAISE EXCEPTION 'another user''s child accepted';
EXCEPTION WHEN foreign_key_violation THEN NULL;
END $$;

-- test: current_child_id cannot point at a child that does not exist (23503)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
DO $$ BEGIN
  UPDATE public.user_profiles SET current_child_id = gen_random_uuid();
  RAISE EXCEPTION 'dangling current_child_id accepted';
EXCEPTION WHEN foreign_key_violation THEN NULL;
END $$;

-- test: deleting a user cascades to profile, children, identities, sessions and refresh tokens
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (id, user_id, name) VALUES ('c1111111-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Maya'),
                                                      ('c1111111-0000-4000-8000-000000000002', 'aaaaaaaa-0000-4000-8000-000000000001', 'Leo'),
                                                      ('c2222222-0000-4000-8000-000000000002', 'bbbbbbbb-0000-4000-8000-000000000002', 'B child');
-- With current_child_id set, the child's ON DELETE SET NULL and the profile's cascade meet.
UPDATE public.user_profiles SET current_child_id = 'c1111111-0000-4000-8000-000000000002' WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
INSERT INTO auth.identities (provider_id, user_id, provider, identity_data) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'email', '{"email":"a@example.com"}');
INSERT INTO auth.sessions (id, user_id) VALUES ('dddddddd-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001');
INSERT INTO auth.refresh_tokens (token, user_id, session_id) VALUES ('h', 'aaaaaaaa-0000-4000-8000-000000000001', 'dddddddd-0000-4000-8000-000000000001');
DELETE FROM auth.users WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.user_profiles WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001') = 0, 'profile';
  ASSERT (SELECT count(*) FROM public.children WHERE user_id = 'aaaaaaaa-0000-4000-8000-000000000001') = 0, 'children';
  ASSERT (SELECT count(*) FROM auth.identities) = 0, 'identities';
  ASSERT (SELECT count(*) FROM auth.sessions) = 0, 'sessions';
  ASSERT (SELECT count(*) FROM auth.refresh_tokens) = 0, 'refresh tokens';
  ASSERT (SELECT count(*) FROM public.children) = 1 AND (SELECT count(*) FROM public.user_profiles) = 1, 'B untouched';
END $$;

-- test: e-mails are unique case-insensitively; anonymous users may have none
INSERT INTO auth.users (email) VALUES ('Same@Example.com');
INSERT INTO auth.users (email, is_anonymous) VALUES (NULL, true), (NULL, true);
DO $$ BEGIN
  INSERT INTO auth.users (email) VALUES ('same@example.com');
  RAISE EXCEPTION 'duplicate e-mail accepted';
EXCEPTION WHEN unique_violation THEN NULL;
END $$;

-- test: an identity is unique per (provider_id, provider)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO auth.identities (provider_id, user_id, provider) VALUES ('google-123', 'aaaaaaaa-0000-4000-8000-000000000001', 'google');
INSERT INTO auth.identities (provider_id, user_id, provider) VALUES ('google-123', 'aaaaaaaa-0000-4000-8000-000000000001', 'apple');
DO $$ BEGIN
  INSERT INTO auth.identities (provider_id, user_id, provider) VALUES ('google-123', 'bbbbbbbb-0000-4000-8000-000000000002', 'google');
  RAISE EXCEPTION 'duplicate identity accepted';
EXCEPTION WHEN unique_violation THEN NULL;
END $$;

-- test: updated_at moves on update of a profile and of a child
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Maya');
UPDATE public.user_profiles SET updated_at = '2000-01-01';
UPDATE public.children SET updated_at = '2000-01-01';
DO $$ BEGIN
  ASSERT (SELECT updated_at > '2001-01-01' FROM public.user_profiles), 'profile updated_at';
  ASSERT (SELECT updated_at > '2001-01-01' FROM public.children), 'child updated_at';
END $$;
