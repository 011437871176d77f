-- Onboarding integrity: the state machine, the server-owned columns, the family's children at
-- completion, the family's owner after an account's deletion, all_children, and the analytics
-- kept after an account's deletion. As in 01_rls.sql, each section runs alone in BEGIN …
-- ROLLBACK; fixtures as the superuser, then the API roles with real claims.
-- A = aaaaaaaa-…-01, B = bbbbbbbb-…-02, C = cccccccc-…-03. A failure of the test itself is an
-- ASSERT (P0004), never a P0001 the handlers below would take for the rule's error.

-- test: rule 1: a plain UPDATE to COMPLETE without children raises no_children and changes nothing
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
UPDATE public.user_profiles SET onboarding_state = 'REVIEW', updated_at = '2025-01-01';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE before jsonb := (SELECT to_jsonb(p) FROM public.user_profiles p); st text; msg text; det text; hnt text;
BEGIN
  BEGIN
    UPDATE public.user_profiles SET onboarding_state = 'COMPLETE';
    ASSERT false, 'completed without children';
  EXCEPTION WHEN raise_exception THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    ASSERT st = 'P0001' AND det = 'no_children', det;
    ASSERT msg = 'Add at least one child before completing onboarding', msg;
    ASSERT hnt = 'Add a child first.', hnt;
  END;
  ASSERT (SELECT to_jsonb(p) FROM public.user_profiles p) = before, 'the profile changed';
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) IS NULL;
END $$;

-- test: rule 1: UPDATE to COMPLETE checks each child (goals_count, topics_count; name in message, id in hint)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (id, user_id, name, goals, topics, created_at) VALUES
  ('c0000000-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Maya', '{a}', '{x,y,z}', '2025-01-01'),
  ('c0000000-0000-4000-8000-000000000002', 'aaaaaaaa-0000-4000-8000-000000000001', 'Leo', '{a,b,c,d}', '{x,y,z}', '2025-01-02');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE before jsonb := (SELECT to_jsonb(p) FROM public.user_profiles p); msg text; det text; hnt text;
BEGIN
  BEGIN
    UPDATE public.user_profiles SET onboarding_state = 'COMPLETE';
    ASSERT false, 'completed with 4 goals';
  EXCEPTION WHEN raise_exception THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    ASSERT det = 'goals_count', det;
    ASSERT msg = 'Choose 1 to 3 goals for Leo (4 chosen)', msg;
    ASSERT hnt = 'Give child c0000000-0000-4000-8000-000000000002 between 1 and 3 goals.', hnt;
  END;
  UPDATE public.children SET goals = '{a}', topics = '{x}' WHERE name = 'Leo';
  BEGIN
    UPDATE public.user_profiles SET onboarding_state = 'COMPLETE';
    ASSERT false, 'completed with 1 topic';
  EXCEPTION WHEN raise_exception THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    ASSERT det = 'topics_count', det;
    ASSERT msg = 'Choose at least 3 topics for Leo (1 chosen)', msg;
    ASSERT hnt = 'Give child c0000000-0000-4000-8000-000000000002 at least 3 topics.', hnt;
  END;
  ASSERT (SELECT to_jsonb(p) FROM public.user_profiles p) = before, 'the profile changed';
  -- Every child valid: the same UPDATE completes, and the database stamps the time.
  UPDATE public.children SET topics = '{x,y,z}' WHERE name = 'Leo';
  UPDATE public.user_profiles SET onboarding_state = 'COMPLETE', onboarding_completed_at = '2001-01-01';
  ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'COMPLETE';
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) > '2001-01-02', 'the client''s stamp was taken';
END $$;

-- test: rule 1: complete_onboarding() and the UPDATE raise the very same error
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (id, user_id, name, goals, topics) VALUES
  ('c0000000-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Maya', '{}', '{x,y,z}');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE a text[]; b text[]; st text; msg text; det text; hnt text;
BEGIN
  BEGIN
    PERFORM public.complete_onboarding();
    ASSERT false, 'rpc completed';
  EXCEPTION WHEN raise_exception THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    a := ARRAY[st, msg, det, hnt];
  END;
  BEGIN
    UPDATE public.user_profiles SET onboarding_state = 'COMPLETE';
    ASSERT false, 'update completed';
  EXCEPTION WHEN raise_exception THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    b := ARRAY[st, msg, det, hnt];
  END;
  ASSERT a = b, format('%s vs %s', a, b);
  ASSERT a[3] = 'goals_count', a::text;
  ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'NOT_STARTED';
END $$;

-- test: rule 1: INSERT and upsert into COMPLETE are checked too
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
DELETE FROM public.user_profiles;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE det text;
BEGIN
  BEGIN
    INSERT INTO public.user_profiles (id, onboarding_state) VALUES (auth.uid(), 'COMPLETE');
    ASSERT false, 'inserted COMPLETE without children';
  EXCEPTION WHEN raise_exception THEN
    GET STACKED DIAGNOSTICS det = PG_EXCEPTION_DETAIL; ASSERT det = 'no_children', det;
  END;
  ASSERT NOT EXISTS (SELECT 1 FROM public.user_profiles), 'a profile was inserted';
  INSERT INTO public.user_profiles (id, onboarding_state) VALUES (auth.uid(), 'REVIEW');
  BEGIN
    INSERT INTO public.user_profiles (id, onboarding_state) VALUES (auth.uid(), 'REVIEW')
    ON CONFLICT (id) DO UPDATE SET onboarding_state = 'COMPLETE';
    ASSERT false, 'upserted COMPLETE without children';
  EXCEPTION WHEN raise_exception THEN
    GET STACKED DIAGNOSTICS det = PG_EXCEPTION_DETAIL; ASSERT det = 'no_children', det;
  END;
  ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'REVIEW';
END $$;

-- test: rule 1: the service role and the database owner (backfill-profiles) may set COMPLETE directly
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
DELETE FROM public.user_profiles WHERE id = 'bbbbbbbb-0000-4000-8000-000000000002';
-- backfill-profiles' statement, as the owner, with no children anywhere.
INSERT INTO public.user_profiles (id, onboarding_state) SELECT id, 'COMPLETE' FROM auth.users ON CONFLICT (id) DO NOTHING;
DO $$ BEGIN
  ASSERT (SELECT onboarding_state FROM public.user_profiles WHERE id = 'bbbbbbbb-0000-4000-8000-000000000002') = 'COMPLETE';
END $$;
SET LOCAL ROLE service_role;
SELECT set_config('request.jwt.claims', '{"role":"service_role"}', true);
UPDATE public.user_profiles SET onboarding_state = 'COMPLETE' WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
DO $$ BEGIN
  ASSERT (SELECT onboarding_state FROM public.user_profiles WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001') = 'COMPLETE';
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001') IS NOT NULL;
END $$;

-- test: rule 1: a user's COMPLETE for another user's profile is still row security's 42501, telling nothing of their children
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
DELETE FROM public.user_profiles WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Secret');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE msg text;
BEGIN
  INSERT INTO public.user_profiles (id, onboarding_state) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'COMPLETE');
  ASSERT false, 'inserted another user''s profile';
EXCEPTION WHEN insufficient_privilege THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
  ASSERT msg LIKE '%row-level security%' AND msg NOT LIKE '%Secret%', msg;
END $$;

-- test: rule 2: COMPLETE is final for a user: every other state is refused with onboarding_complete_final
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
UPDATE public.user_profiles SET onboarding_state = 'COMPLETE';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE before jsonb := (SELECT to_jsonb(p) FROM public.user_profiles p); s text; st text; msg text; det text; tried int := 0;
BEGIN
  FOREACH s IN ARRAY ARRAY['NOT_STARTED','USER_INFO','CHILD_INFO','GOALS','TOPICS','DISPOSITIONS','REVIEW'] LOOP
    BEGIN
      UPDATE public.user_profiles SET onboarding_state = s;
      ASSERT false, 'left COMPLETE for ' || s;
    EXCEPTION WHEN raise_exception THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
      ASSERT st = 'P0001' AND det = 'onboarding_complete_final', det;
      ASSERT msg = 'Onboarding is complete and cannot be reopened', msg;
      tried := tried + 1;
    END;
  END LOOP;
  ASSERT tried = 7;
  ASSERT (SELECT to_jsonb(p) FROM public.user_profiles p) = before, 'the profile changed';
  -- Writing COMPLETE again (a retried save) or other columns is fine.
  UPDATE public.user_profiles SET onboarding_state = 'COMPLETE', current_child_id = NULL;
  ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'COMPLETE';
END $$;

-- test: rule 2: the service role may move a user out of COMPLETE (support reset); the stamp stays
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
UPDATE public.user_profiles SET onboarding_state = 'COMPLETE';
SET LOCAL ROLE service_role;
SELECT set_config('request.jwt.claims', '{"role":"service_role"}', true);
DO $$
DECLARE stamp timestamptz := (SELECT onboarding_completed_at FROM public.user_profiles);
BEGIN
  UPDATE public.user_profiles SET onboarding_state = 'REVIEW';
  ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'REVIEW';
  ASSERT (SELECT onboarding_completed_at FROM public.user_profiles) = stamp, 'the stamp moved';
END $$;

-- test: rule 2: before COMPLETE a user moves freely: forward, back and skipping
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE s text;
BEGIN
  FOREACH s IN ARRAY ARRAY['REVIEW','NOT_STARTED','GOALS','USER_INFO','DISPOSITIONS','CHILD_INFO','TOPICS','REVIEW','USER_INFO'] LOOP
    UPDATE public.user_profiles SET onboarding_state = s;
    ASSERT (SELECT onboarding_state FROM public.user_profiles) = s, s;
  END LOOP;
END $$;

-- test: rule 3: children.user_id defaults to the caller; another user's id is still refused
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE owner uuid;
BEGIN
  INSERT INTO public.children (name) VALUES ('Maya') RETURNING user_id INTO owner;
  ASSERT owner = 'aaaaaaaa-0000-4000-8000-000000000001', owner::text;
  BEGIN
    INSERT INTO public.children (user_id, name) VALUES ('bbbbbbbb-0000-4000-8000-000000000002', 'Planted');
    ASSERT false, 'inserted a child for B';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
  ASSERT (SELECT count(*) FROM public.children) = 1;
END $$;
-- Without a user (anon) the default is NULL and the row is refused.
SELECT set_config('request.jwt.claims', '{"role":"anon"}', true);
SET LOCAL ROLE anon;
DO $$ BEGIN
  INSERT INTO public.children (name) VALUES ('Nobody''s');
  ASSERT false, 'anon inserted a child';
EXCEPTION WHEN insufficient_privilege OR not_null_violation THEN NULL;
END $$;
RESET ROLE;
DO $$ BEGIN ASSERT (SELECT count(*) FROM public.children) = 1; END $$;

-- test: rule 3: created_at and updated_at sent by a user are ignored on insert and update
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE c public.children; p public.user_profiles; created timestamptz;
BEGIN
  INSERT INTO public.children (name, created_at, updated_at) VALUES ('Maya', '2001-01-01', '2002-02-02') RETURNING * INTO c;
  ASSERT c.created_at = now() AND c.updated_at = now(), format('%s %s', c.created_at, c.updated_at);
  created := c.created_at;
  UPDATE public.children SET created_at = '2001-01-01', updated_at = '2030-01-01', age = 3 RETURNING * INTO c;
  ASSERT c.created_at = created AND c.updated_at = now() AND c.age = 3, format('%s %s', c.created_at, c.updated_at);
  SELECT * INTO p FROM public.user_profiles;
  created := p.created_at;
  UPDATE public.user_profiles SET created_at = '2001-01-01', updated_at = '2030-01-01', onboarding_state = 'USER_INFO' RETURNING * INTO p;
  ASSERT p.created_at = created AND p.updated_at = now() AND p.onboarding_state = 'USER_INFO', format('%s %s', p.created_at, p.updated_at);
END $$;
-- A profile inserted by its user (an account that predates onboarding).
RESET ROLE;
DELETE FROM public.user_profiles;
SET LOCAL ROLE authenticated;
DO $$
DECLARE p public.user_profiles;
BEGIN
  INSERT INTO public.user_profiles (id, created_at, updated_at) VALUES (auth.uid(), '2001-01-01', '2001-01-01') RETURNING * INTO p;
  ASSERT p.created_at = now() AND p.updated_at = now(), format('%s %s', p.created_at, p.updated_at);
END $$;

-- test: rule 3: the service role's timestamps are ignored too; the database owner's are kept
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (user_id, name, created_at) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Imported', '2001-01-01');
DO $$ BEGIN ASSERT (SELECT created_at FROM public.children) = '2001-01-01', 'the owner''s import'; END $$;
SET LOCAL ROLE service_role;
SELECT set_config('request.jwt.claims', '{"role":"service_role"}', true);
DO $$
DECLARE c public.children;
BEGIN
  INSERT INTO public.children (user_id, name, created_at) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Maya', '2001-01-01') RETURNING * INTO c;
  ASSERT c.created_at = now(), c.created_at::text;
  UPDATE public.children SET created_at = '2030-01-01' WHERE name = 'Imported' RETURNING * INTO c;
  ASSERT c.created_at = '2001-01-01', c.created_at::text;
END $$;

-- test: rule 4: a co-parent completes with the family's children (UPDATE and complete_onboarding)
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com'), ('cccccccc-0000-4000-8000-000000000003', 'c@example.com');
INSERT INTO public.families (id, name, invite_code) VALUES ('f0000000-0000-4000-8000-000000000001', 'F', 'ABCDE-FGHJK');
INSERT INTO public.family_members (family_id, user_id, role) VALUES
  ('f0000000-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'owner'),
  ('f0000000-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002', 'parent');
INSERT INTO public.children (user_id, name, goals, topics) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Maya', '{a}', '{x,y,z}');
SET LOCAL ROLE authenticated;
-- B created no child: the family's child counts.
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$ BEGIN
  ASSERT (public.complete_onboarding()).onboarding_state = 'COMPLETE';
END $$;
-- C, outside the family, has no child to count.
SELECT set_config('request.jwt.claims', '{"sub":"cccccccc-0000-4000-8000-000000000003","role":"authenticated"}', true);
DO $$
DECLARE det text;
BEGIN
  UPDATE public.user_profiles SET onboarding_state = 'COMPLETE';
  ASSERT false, 'C completed with another family''s child';
EXCEPTION WHEN raise_exception THEN
  GET STACKED DIAGNOSTICS det = PG_EXCEPTION_DETAIL; ASSERT det = 'no_children', det;
END $$;
-- A, the child's creator, completes by UPDATE.
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
UPDATE public.user_profiles SET onboarding_state = 'COMPLETE';
RESET ROLE;
DO $$ BEGIN
  ASSERT (SELECT array_agg(onboarding_state ORDER BY id) FROM public.user_profiles) = ARRAY['COMPLETE', 'COMPLETE', 'NOT_STARTED'];
END $$;

-- test: rule 4: the per-child checks apply to the family's children
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.families (id, name, invite_code) VALUES ('f0000000-0000-4000-8000-000000000001', 'F', 'ABCDE-FGHJK');
INSERT INTO public.family_members (family_id, user_id, role) VALUES
  ('f0000000-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'owner'),
  ('f0000000-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002', 'parent');
INSERT INTO public.children (id, user_id, name, goals, topics, created_at) VALUES
  ('c0000000-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002', 'Own', '{a}', '{x,y,z}', '2025-01-01'),
  ('c0000000-0000-4000-8000-000000000002', 'aaaaaaaa-0000-4000-8000-000000000001', 'Shared', '{a}', '{x,y}', '2025-01-02');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE msg text; det text; hnt text;
BEGIN
  PERFORM public.complete_onboarding();
  ASSERT false, 'completed with an incomplete family child';
EXCEPTION WHEN raise_exception THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
  ASSERT det = 'topics_count' AND msg = 'Choose at least 3 topics for Shared (2 chosen)', msg;
  ASSERT hnt LIKE '%c0000000-0000-4000-8000-000000000002%', hnt;
END $$;
DO $$ BEGIN ASSERT (SELECT onboarding_state FROM public.user_profiles) = 'NOT_STARTED'; END $$;

-- test: rule 5: the owner's account deletion hands the family to the member who joined earliest
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com'), ('cccccccc-0000-4000-8000-000000000003', 'c@example.com');
INSERT INTO public.families (id, name, invite_code, created_by) VALUES
  ('f0000000-0000-4000-8000-000000000001', 'F', 'ABCDE-FGHJK', 'aaaaaaaa-0000-4000-8000-000000000001');
INSERT INTO public.family_members (family_id, user_id, role, joined_at) VALUES
  ('f0000000-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'owner', '2025-01-01'),
  ('f0000000-0000-4000-8000-000000000001', 'cccccccc-0000-4000-8000-000000000003', 'parent', '2025-01-02'),
  ('f0000000-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002', 'parent', '2025-01-03');
INSERT INTO public.children (user_id, name) VALUES ('bbbbbbbb-0000-4000-8000-000000000002', 'Kid');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
SELECT public.delete_account();
-- C joined before B: C owns the family now, and can do what only an owner can.
SELECT set_config('request.jwt.claims', '{"sub":"cccccccc-0000-4000-8000-000000000003","role":"authenticated"}', true);
DO $$
DECLARE code text := (SELECT invite_code FROM public.families);
BEGIN
  ASSERT (SELECT role FROM public.family_members WHERE user_id = auth.uid()) = 'owner', 'C is not the owner';
  ASSERT (SELECT count(*) FROM public.family_members WHERE role = 'owner') = 1;
  ASSERT (public.regenerate_invite_code() ->> 'invite_code') <> code, 'the code did not change';
  DELETE FROM public.children WHERE name = 'Kid';
  ASSERT NOT EXISTS (SELECT 1 FROM public.children), 'the new owner could not remove a child';
END $$;

-- test: rule 5: the last member's account deletion deletes the family; a non-owner's leaves the owner
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
INSERT INTO public.families (id, name, invite_code) VALUES ('f0000000-0000-4000-8000-000000000001', 'F', 'ABCDE-FGHJK');
INSERT INTO public.family_members (family_id, user_id, role) VALUES
  ('f0000000-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'owner'),
  ('f0000000-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002', 'parent');
-- The admin API deletes as the service role.
SET LOCAL ROLE service_role;
DELETE FROM auth.users WHERE id = 'bbbbbbbb-0000-4000-8000-000000000002';
DO $$ BEGIN
  ASSERT (SELECT array_agg(user_id::text || ':' || role) FROM public.family_members) = ARRAY['aaaaaaaa-0000-4000-8000-000000000001:owner'];
END $$;
DELETE FROM auth.users WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
DO $$ BEGIN
  ASSERT NOT EXISTS (SELECT 1 FROM public.families), 'an empty family is left';
END $$;

-- test: rule 5: owner and member deleted in one statement: the family goes
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com'), ('cccccccc-0000-4000-8000-000000000003', 'c@example.com');
INSERT INTO public.families (id, name, invite_code) VALUES ('f0000000-0000-4000-8000-000000000001', 'F', 'ABCDE-FGHJK');
INSERT INTO public.family_members (family_id, user_id, role) VALUES
  ('f0000000-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'owner'),
  ('f0000000-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002', 'parent');
DELETE FROM auth.users WHERE id IN ('aaaaaaaa-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002');
DO $$ BEGIN
  ASSERT NOT EXISTS (SELECT 1 FROM public.families) AND NOT EXISTS (SELECT 1 FROM public.family_members);
END $$;

-- test: rule 6: all_children answers every child of the user's family, oldest first; children(*) still follows current_child_id
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com'), ('cccccccc-0000-4000-8000-000000000003', 'c@example.com');
INSERT INTO public.families (id, name, invite_code) VALUES ('f0000000-0000-4000-8000-000000000001', 'F', 'ABCDE-FGHJK');
INSERT INTO public.family_members (family_id, user_id, role) VALUES
  ('f0000000-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'owner'),
  ('f0000000-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002', 'parent');
INSERT INTO public.children (id, user_id, name, created_at) VALUES
  ('c0000000-0000-4000-8000-000000000002', 'aaaaaaaa-0000-4000-8000-000000000001', 'Second', '2025-01-02'),
  ('c0000000-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002', 'First', '2025-01-01'),
  ('c0000000-0000-4000-8000-000000000003', 'aaaaaaaa-0000-4000-8000-000000000001', 'Third', '2025-01-03'),
  ('c0000000-0000-4000-8000-000000000009', 'cccccccc-0000-4000-8000-000000000003', 'Outsider', '2025-01-01');
UPDATE public.user_profiles SET current_child_id = 'c0000000-0000-4000-8000-000000000003' WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$ BEGIN
  ASSERT (SELECT array_agg(c.name) FROM public.user_profiles p, public.all_children(p) c) = ARRAY['First', 'Second', 'Third'],
    (SELECT array_agg(c.name) FROM public.user_profiles p, public.all_children(p) c)::text;
  -- No function named children: the relationship children keeps being the foreign key.
  ASSERT NOT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'children' AND pronamespace = 'public'::regnamespace), 'a function children';
  ASSERT (SELECT c.name FROM public.user_profiles p JOIN public.children c ON (c.id, c.user_id) = (p.current_child_id, p.id)) = 'Third', 'current child';
  -- A computed relationship: one argument of the profile's row type, a set of children.
  ASSERT (SELECT p.proretset AND p.prorettype = 'public.children'::regtype AND p.pronargs = 1 AND p.proargtypes[0] = 'public.user_profiles'::regtype
          FROM pg_proc p WHERE p.oid = 'public.all_children(public.user_profiles)'::regprocedure), 'not a computed relationship';
END $$;
-- C, outside the family, reads only their own child through it.
SELECT set_config('request.jwt.claims', '{"sub":"cccccccc-0000-4000-8000-000000000003","role":"authenticated"}', true);
DO $$ BEGIN
  ASSERT (SELECT array_agg(c.name) FROM public.user_profiles p, public.all_children(p) c) = ARRAY['Outsider'],
    (SELECT array_agg(c.name) FROM public.user_profiles p, public.all_children(p) c)::text;
END $$;

-- test: rule 7: delete_account keeps the history under a random id with no link to the person
INSERT INTO auth.users (id, email, raw_app_meta_data, created_at) VALUES
  ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com', '{"provider":"email"}', now() - interval '1 hour');
INSERT INTO public.children (user_id, name, goals, topics) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Maya', '{a}', '{x,y,z}');
-- Onboarding started an hour ago (the owner may date it), so it has a duration.
UPDATE public.user_profiles SET created_at = now() - interval '1 hour';
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
UPDATE public.user_profiles SET onboarding_state = 'USER_INFO';
UPDATE public.user_profiles SET onboarding_state = 'GOALS';
SELECT public.complete_onboarding();
RESET ROLE;
CREATE TEMP TABLE before_deletion AS
SELECT (SELECT jsonb_agg(to_jsonb(t) - 'id' - 'user_id' ORDER BY t.id) FROM analytics.onboarding_transitions t) AS history,
       (SELECT jsonb_agg(to_jsonb(f) ORDER BY f.step_no) FROM analytics.funnel(now() - interval '2 hours', NULL, 'provider') f) AS funnel,
       (SELECT jsonb_agg(to_jsonb(f) ORDER BY f.step_no) FROM analytics.step_durations(now() - interval '2 hours', NULL, 'day') f) AS durations,
       (SELECT jsonb_agg(to_jsonb(f) ORDER BY f.step_no) FROM analytics.drop_off(now() - interval '2 hours', NULL, NULL, 0) f) AS drop_off,
       (SELECT jsonb_agg(to_jsonb(f) ORDER BY f.step_no) FROM analytics.state_counts(now() - interval '2 hours', NULL, 'week') f) AS states,
       (SELECT jsonb_agg(to_jsonb(f)) FROM analytics.time_to_completion(now() - interval '2 hours', NULL) f) AS completion,
       (SELECT jsonb_agg(to_jsonb(f)) FROM analytics.children_per_completed_user(now() - interval '2 hours', NULL) f) AS children,
       (SELECT jsonb_agg(to_jsonb(f) ORDER BY f.day) FROM analytics.daily_completion(now() - interval '2 hours', now() + interval '1 hour', NULL) f) AS daily;
SET LOCAL ROLE authenticated;
SELECT public.delete_account();
RESET ROLE;
DO $$
DECLARE b before_deletion := (SELECT b FROM before_deletion b); subject uuid; f analytics.former_users;
BEGIN
  ASSERT NOT EXISTS (SELECT 1 FROM auth.users), 'the account is still there';
  ASSERT NOT EXISTS (SELECT 1 FROM analytics.onboarding_transitions WHERE user_id = 'aaaaaaaa-0000-4000-8000-000000000001'), 'a row keeps the user id';
  ASSERT NOT EXISTS (SELECT 1 FROM analytics.onboarding_progress WHERE user_id = 'aaaaaaaa-0000-4000-8000-000000000001'), 'progress keeps the user id';
  SELECT DISTINCT t.user_id INTO STRICT subject FROM analytics.onboarding_transitions t;
  SELECT * INTO STRICT f FROM analytics.former_users;
  ASSERT f.id = subject AND subject <> 'aaaaaaaa-0000-4000-8000-000000000001';
  ASSERT (SELECT user_id FROM analytics.onboarding_progress) = subject;
  ASSERT f.onboarding_state = 'COMPLETE' AND f.children = 1 AND f.provider = 'email' AND NOT f.signed_up_anonymously, to_jsonb(f)::text;
  -- Nothing in the kept rows names the person.
  ASSERT position('a@example.com' IN (SELECT jsonb_agg(to_jsonb(t))::text FROM analytics.onboarding_transitions t) || to_jsonb(f)::text) = 0;
  ASSERT position('aaaaaaaa-0000-4000-8000-000000000001' IN (SELECT jsonb_agg(to_jsonb(t))::text FROM analytics.onboarding_transitions t)
                  || (SELECT jsonb_agg(to_jsonb(g))::text FROM analytics.onboarding_progress g) || to_jsonb(f)::text) = 0;
  -- The same history and the same answers to every question.
  ASSERT (SELECT jsonb_agg(to_jsonb(t) - 'id' - 'user_id' ORDER BY t.id) FROM analytics.onboarding_transitions t) = b.history, 'history changed';
  ASSERT (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.step_no) FROM analytics.funnel(now() - interval '2 hours', NULL, 'provider') x) = b.funnel, 'funnel';
  ASSERT (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.step_no) FROM analytics.step_durations(now() - interval '2 hours', NULL, 'day') x) = b.durations, 'durations';
  ASSERT (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.step_no) FROM analytics.drop_off(now() - interval '2 hours', NULL, NULL, 0) x) = b.drop_off, 'drop-off';
  ASSERT (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.step_no) FROM analytics.state_counts(now() - interval '2 hours', NULL, 'week') x) = b.states, 'states';
  ASSERT (SELECT jsonb_agg(to_jsonb(x)) FROM analytics.time_to_completion(now() - interval '2 hours', NULL) x) = b.completion, 'time to completion';
  ASSERT (SELECT jsonb_agg(to_jsonb(x)) FROM analytics.children_per_completed_user(now() - interval '2 hours', NULL) x) = b.children, 'children';
  ASSERT (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.day) FROM analytics.daily_completion(now() - interval '2 hours', now() + interval '1 hour', NULL) x) = b.daily, 'daily';
  -- And they counted the user at all (the comparison is not between two empty answers).
  ASSERT (b.funnel -> 7 ->> 'users_reached')::int = 1, b.funnel::text;
  ASSERT (b.completion -> 0 ->> 'users_completed')::int = 1, b.completion::text;
END $$;

-- test: rule 7: an anonymous account deleted counts in the anonymous cohort and upgrades as before
INSERT INTO auth.users (id, is_anonymous, raw_app_meta_data, created_at) VALUES
  ('aaaaaaaa-0000-4000-8000-000000000001', true, '{"provider":"anonymous"}', now() - interval '1 hour');
SET LOCAL ROLE service_role;
DO $$
DECLARE before jsonb := (SELECT jsonb_agg(to_jsonb(x)) FROM analytics.anonymous_upgrades(now() - interval '2 hours', NULL, 'provider') x);
BEGIN
  ASSERT before = '[{"cohort": "anonymous", "pct_upgraded": 0.00, "upgraded_users": 0, "anonymous_users": 1}]', before::text;
  DELETE FROM auth.users;
  ASSERT (SELECT jsonb_agg(to_jsonb(x)) FROM analytics.anonymous_upgrades(now() - interval '2 hours', NULL, 'provider') x) = before;
  ASSERT (SELECT users FROM analytics.state_counts(now() - interval '2 hours', NULL, 'provider') WHERE cohort = 'anonymous' AND step = 'NOT_STARTED') = 1;
END $$;

-- test: rule 7: the history stays append-only: no UPDATE, DELETE or TRUNCATE, not even of a former user's rows
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
DELETE FROM auth.users WHERE id = 'aaaaaaaa-0000-4000-8000-000000000001';
DO $$
DECLARE sql text; former uuid := (SELECT id FROM analytics.former_users);
BEGIN
  FOREACH sql IN ARRAY ARRAY[
      'UPDATE analytics.onboarding_transitions SET to_state = ''GOALS''',
      format('UPDATE analytics.onboarding_transitions SET user_id = %L WHERE user_id = %L', 'bbbbbbbb-0000-4000-8000-000000000002', former),
      'DELETE FROM analytics.onboarding_transitions',
      format('DELETE FROM analytics.onboarding_transitions WHERE user_id = %L', former),
      'TRUNCATE analytics.onboarding_transitions'] LOOP
    BEGIN
      EXECUTE sql;
      ASSERT false, 'allowed: ' || sql;
    EXCEPTION WHEN insufficient_privilege THEN NULL;
    END;
  END LOOP;
  ASSERT (SELECT count(*) FROM analytics.onboarding_transitions) = 2;
END $$;

-- test: rule 7: the API roles cannot read former users
SET LOCAL ROLE authenticated;
DO $$ BEGIN
  PERFORM 1 FROM analytics.former_users;
  ASSERT false, 'authenticated read analytics.former_users';
EXCEPTION WHEN insufficient_privilege THEN NULL;
END $$;
