-- Families: sharing children through RLS, the RPCs' rules, invite codes. As in 01_rls.sql, each
-- section runs alone in BEGIN … ROLLBACK; fixtures as the superuser, then the API roles.
-- A = aaaaaaaa-…-01 (owner), B = bbbbbbbb-…-02 (parent), C = cccccccc-…-03 (outsider).

-- test: family members read and update each other's children; an outsider sees nothing
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com'), ('cccccccc-0000-4000-8000-000000000003', 'c@example.com');
INSERT INTO public.families (id, name, invite_code) VALUES ('f0000000-0000-4000-8000-000000000001', 'F', 'ABCDE-FGHJK');
INSERT INTO public.family_members (family_id, user_id, role) VALUES
  ('f0000000-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'owner'),
  ('f0000000-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002', 'parent');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Kid');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$
DECLARE n int;
BEGIN
  ASSERT (SELECT count(*) FROM public.children) = 1, 'B sees A''s child';
  UPDATE public.children SET age = 4;
  GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 1, 'B updates A''s child';
  DELETE FROM public.children;
  GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 0, 'B may not delete A''s child';
  ASSERT (SELECT count(*) FROM public.user_profiles) = 1, 'profiles stay private';
  ASSERT (SELECT count(*) FROM public.family_members) = 2, 'B sees the member list';
  BEGIN
    UPDATE public.children SET user_id = auth.uid();
    RAISE EXCEPTION 'moved a child';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
END $$;
SELECT set_config('request.jwt.claims', '{"sub":"cccccccc-0000-4000-8000-000000000003","role":"authenticated"}', true);
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.children) = 0, 'C sees no child';
  ASSERT (SELECT count(*) FROM public.families) = 0, 'C sees no family';
  ASSERT (SELECT count(*) FROM public.family_members) = 0, 'C sees no members';
END $$;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$
DECLARE n int;
BEGIN
  DELETE FROM public.children;
  GET DIAGNOSTICS n = ROW_COUNT; ASSERT n = 1, 'the creator (and owner) deletes';
END $$;

-- test: the family tables are written only through the RPCs
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$ BEGIN
  BEGIN
    INSERT INTO public.families (name, invite_code) VALUES ('X', 'ABCDE-FGHJK');
    RAISE EXCEPTION 'inserted a family directly';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
  PERFORM public.create_family('Mine');
  ASSERT (SELECT role FROM public.family_members WHERE user_id = auth.uid()) = 'owner';
  BEGIN
    DELETE FROM public.family_members;
    RAISE EXCEPTION 'deleted a membership directly';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
  UPDATE public.families SET name = 'Renamed';
  ASSERT (SELECT name FROM public.families) = 'Renamed', 'the owner renames';
END $$;

-- test: invite codes are grouped, free of look-alikes, unique and matched loosely
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com');
DO $$
DECLARE code text;
BEGIN
  FOR i IN 1..200 LOOP
    code := public.new_invite_code();
    ASSERT code ~ '^[A-HJKMNP-Z2-9]{5}-[A-HJKMNP-Z2-9]{5}$', code;
  END LOOP;
END $$;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
SELECT set_config('test.code', public.create_family('F') ->> 'invite_code', true);
SELECT set_config('request.jwt.claims', '{"sub":"bbbbbbbb-0000-4000-8000-000000000002","role":"authenticated"}', true);
DO $$ BEGIN
  PERFORM public.join_family(' ' || lower(replace(current_setting('test.code'), '-', ' ')) || ' ');
  ASSERT (SELECT count(*) FROM public.family_members) = 2, 'joined with a loosely typed code';
  BEGIN
    PERFORM public.create_family('Second');
    RAISE EXCEPTION 'created a second family';
  EXCEPTION WHEN SQLSTATE 'PT409' THEN NULL;
  END;
  BEGIN
    PERFORM public.regenerate_invite_code();
    RAISE EXCEPTION 'a parent regenerated the code';
  EXCEPTION WHEN SQLSTATE 'PT403' THEN NULL;
  END;
END $$;

-- test: anon can do nothing with families
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.families (id, name, invite_code) VALUES ('f0000000-0000-4000-8000-000000000001', 'F', 'ABCDE-FGHJK');
SET LOCAL ROLE anon;
SELECT set_config('request.jwt.claims', '{"role":"anon"}', true);
DO $$ BEGIN
  BEGIN
    PERFORM count(*) FROM public.families;
    RAISE EXCEPTION 'anon read families';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
  BEGIN
    PERFORM public.join_family('ABCDE-FGHJK');
    RAISE EXCEPTION 'anon joined';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
END $$;
