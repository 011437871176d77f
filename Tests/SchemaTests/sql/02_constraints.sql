-- test: each CHECK fails with 23514 and its constraint name
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
DO $$
DECLARE
  cases text[][] := ARRAY[
    ARRAY['birthday', (current_date + 1)::text, 'valid_birthday'],
    ARRAY['temperament_talkative', '0', 'valid_temperament_talkative'],
    ARRAY['temperament_talkative', '11', 'valid_temperament_talkative'],
    ARRAY['temperament_sensitivity', '0', 'valid_temperament_sensitivity'],
    ARRAY['temperament_sensitivity', '11', 'valid_temperament_sensitivity'],
    ARRAY['temperament_accountability', '0', 'valid_temperament_accountability'],
    ARRAY['temperament_accountability', '11', 'valid_temperament_accountability']];
  c text[];
  got text;
  state text;
BEGIN
  FOREACH c SLICE 1 IN ARRAY cases LOOP
    BEGIN
      EXECUTE format('INSERT INTO public.children (user_id, name, %I) VALUES (%L, %L, %L)',
                     c[1], 'aaaaaaaa-0000-4000-8000-000000000001', 'x', c[2]);
      RAISE EXCEPTION 'no error for % = %', c[1], c[2];
    EXCEPTION WHEN check_violation THEN
      GET STACKED DIAGNOSTICS got = CONSTRAINT_NAME, state = RETURNED_SQLSTATE;
      ASSERT got = c[3], format('constraint %s, expected %s', got, c[3]);
      ASSERT state = '23514';
    END;
  END LOOP;
END $$;

-- test: boundary values 1, 10 and today's birthday are accepted
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name, birthday, temperament_talkative, temperament_sensitivity, temperament_accountability)
VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'edge', current_date, 1, 10, 1);

-- test: an unknown onboarding state fails with valid_onboarding_state
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
DO $$
DECLARE got text;
BEGIN
  UPDATE public.user_profiles SET onboarding_state = 'DONE' WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
  RAISE EXCEPTION 'unknown state accepted';
EXCEPTION WHEN check_violation THEN
  GET STACKED DIAGNOSTICS got = CONSTRAINT_NAME;
  ASSERT got = 'valid_onboarding_state';
END $$;

-- test: every one of the eight states is accepted
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
DO $$
DECLARE s text;
BEGIN
  FOREACH s IN ARRAY ARRAY['NOT_STARTED','USER_INFO','CHILD_INFO','GOALS','TOPICS','DISPOSITIONS','REVIEW','COMPLETE'] LOOP
    UPDATE public.user_profiles SET onboarding_state = s WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
  END LOOP;
END $$;

-- test: a missing child name fails with 23502 on column name
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
DO $$
DECLARE col text; state text;
BEGIN
  INSERT INTO public.children (user_id) VALUES ('aaaaaaaa-0000-4000-8000-000000000001');
  RAISE EXCEPTION 'child without name accepted';
EXCEPTION WHEN not_null_violation THEN
  GET STACKED DIAGNOSTICS col = COLUMN_NAME, state = RETURNED_SQLSTATE;
  ASSERT col = 'name' AND state = '23502';
END $$;

-- test: deleting the current child nulls current_child_id and keeps the profile
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (id, user_id, name) VALUES ('cccccccc-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Maya');
UPDATE public.user_profiles SET current_child_id = 'cccccccc-0000-4000-8000-000000000001', onboarding_state = 'GOALS';
DELETE FROM public.children WHERE id = 'cccccccc-0000-4000-8000-000000000001';
DO $$ BEGIN
  ASSERT (SELECT current_child_id FROM public.user_profiles WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001') IS NULL;
  ASSERT (SELECT onboarding_state FROM public.user_profiles WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001') = 'GOALS';
END $$;

-- test: current_child_id cannot point at another user's child (23503)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'), ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.children (id, user_id, name) VALUES ('cccccccc-0000-4000-8000-000000000002', 'bbbbbbbb-0000-4000-8000-000000000002', 'B child');
DO $$
DECLARE got text;
BEGIN
  UPDATE public.user_profiles SET current_child_id = 'cccccccc-0000-4000-8000-000000000002' WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
  RAISE EXCEPTION 'foreign child accepted';
EXCEPTION WHEN foreign_key_violation THEN
  GET STACKED DIAGNOSTICS got = CONSTRAINT_NAME;
  ASSERT got = 'user_profiles_current_child_fkey';
END $$;

-- test: deleting a user cascades to profile, children, sessions and tokens
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Maya');
INSERT INTO auth.sessions (id, user_id) VALUES ('dddddddd-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001');
INSERT INTO auth.refresh_tokens (token, user_id, session_id) VALUES ('h', 'aaaaaaaa-0000-4000-8000-000000000001', 'dddddddd-0000-4000-8000-000000000001');
DELETE FROM auth.users WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.user_profiles) = 0;
  ASSERT (SELECT count(*) FROM public.children) = 0;
  ASSERT (SELECT count(*) FROM auth.sessions) = 0;
  ASSERT (SELECT count(*) FROM auth.refresh_tokens) = 0;
END $$;

-- test: e-mails are unique case-insensitively, and anonymous users may have none
INSERT INTO auth.users (email) VALUES ('Same@Example.com');
INSERT INTO auth.users (email, is_anonymous) VALUES (NULL, true), (NULL, true);
DO $$ BEGIN
  INSERT INTO auth.users (email) VALUES ('same@example.com');
  RAISE EXCEPTION 'duplicate e-mail accepted';
EXCEPTION WHEN unique_violation THEN NULL;
END $$;

-- test: updated_at moves on update
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
UPDATE public.user_profiles SET updated_at = '2000-01-01' WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
DO $$ BEGIN
  ASSERT (SELECT updated_at > '2001-01-01' FROM public.user_profiles WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001');
END $$;
