-- The WAL feed's checks of a committed row: realtime.policies_allow (the table's SELECT policies
-- on a row value, as RLS applies them to a row of the table) and realtime.is_current (whether the
-- table still holds exactly that row, read past RLS).
-- A = aaaaaaaa-…-01 (family owner), B = bbbbbbbb-…-02 (parent in A's family), C = cccccccc-…-03.

-- test: policies_allow agrees with RLS on every row, for every kind of caller
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'b@example.com'), ('cccccccc-0000-4000-8000-000000000003', 'c@example.com');
INSERT INTO public.families (id, name, invite_code) VALUES ('f0000000-0000-4000-8000-000000000001', 'F', 'ABCDE-FGHJK');
INSERT INTO public.family_members (family_id, user_id, role) VALUES
  ('f0000000-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'owner'),
  ('f0000000-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002', 'parent');
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Ann'),
  ('bbbbbbbb-0000-4000-8000-000000000002', 'Ben'), ('cccccccc-0000-4000-8000-000000000003', 'Cid');
CREATE TEMPORARY TABLE callers (role text, sub text);
INSERT INTO callers VALUES ('authenticated', 'aaaaaaaa-0000-4000-8000-000000000001'), ('authenticated', 'bbbbbbbb-0000-4000-8000-000000000002'),
  ('authenticated', 'cccccccc-0000-4000-8000-000000000003'), ('authenticated', NULL), ('anon', NULL), ('service_role', NULL);
DO $$
DECLARE
  caller record;
  kids public.children[] := ARRAY(SELECT c FROM public.children c);
  profiles public.user_profiles[] := ARRAY(SELECT p FROM public.user_profiles p);
  kid public.children;
  profile public.user_profiles;
  checked int := 0;
BEGIN
  FOR caller IN SELECT * FROM callers LOOP
    PERFORM set_config('request.jwt.claims', json_build_object('sub', caller.sub, 'role', caller.role)::text, true);
    EXECUTE format('SET LOCAL ROLE %I', caller.role);
    FOREACH kid IN ARRAY kids LOOP
      ASSERT realtime.policies_allow(kid) = EXISTS (SELECT 1 FROM public.children t WHERE t.id = kid.id),
             format('children %s as %s %s', kid.name, caller.role, caller.sub);
      checked := checked + 1;
    END LOOP;
    FOREACH profile IN ARRAY profiles LOOP
      ASSERT realtime.policies_allow(profile) = EXISTS (SELECT 1 FROM public.user_profiles t WHERE t.id = profile.id),
             format('user_profiles %s as %s %s', profile.id, caller.role, caller.sub);
      checked := checked + 1;
    END LOOP;
    RESET ROLE;
  END LOOP;
  ASSERT checked = 6 * (3 + 3), 'every pair checked';
END $$;

-- test: policies_allow judges the values it is given, not the table's row with that key
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com'),
  ('cccccccc-0000-4000-8000-000000000003', 'c@example.com');
INSERT INTO public.children (id, user_id, name) VALUES ('11111111-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Ann');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"cccccccc-0000-4000-8000-000000000003","role":"authenticated"}', true);
DO $$
DECLARE
  deleted public.children := jsonb_populate_record(NULL::public.children,
    '{"id":"22222222-0000-4000-8000-000000000002","user_id":"cccccccc-0000-4000-8000-000000000003","name":"gone"}');
  moved public.children := jsonb_populate_record(NULL::public.children,
    '{"id":"11111111-0000-4000-8000-000000000001","user_id":"cccccccc-0000-4000-8000-000000000003","name":"Ann"}');
BEGIN
  ASSERT realtime.policies_allow(deleted), 'C''s own child that is no longer in the table';
  ASSERT realtime.policies_allow(moved), 'a value naming C as owner, though the table''s row is A''s';
  ASSERT NOT EXISTS (SELECT 1 FROM public.children), 'C reads no row of the table';
END $$;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
DO $$ BEGIN
  ASSERT NOT realtime.policies_allow(jsonb_populate_record(NULL::public.children,
    '{"id":"22222222-0000-4000-8000-000000000002","user_id":"cccccccc-0000-4000-8000-000000000003","name":"gone"}')), 'A may not see C''s child';
END $$;

-- test: permissive policies are ORed, restrictive ones ANDed, only those for the caller's roles count, none permissive sees nothing
CREATE TABLE public.realtime_policy_probe (id int PRIMARY KEY, owner text, level int, secret boolean);
ALTER TABLE public.realtime_policy_probe ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON public.realtime_policy_probe TO anon, authenticated;
INSERT INTO public.realtime_policy_probe VALUES (1, 'x', 1, false), (2, 'y', 5, false), (3, 'x', 9, true), (4, 'z', 0, true);
CREATE POLICY owner_reads ON public.realtime_policy_probe FOR SELECT TO authenticated USING (owner = auth.jwt() ->> 'sub');
CREATE POLICY high_levels ON public.realtime_policy_probe FOR ALL TO authenticated USING (level > 4);
CREATE POLICY no_secrets ON public.realtime_policy_probe AS RESTRICTIVE FOR SELECT USING (NOT secret);
CREATE POLICY writes_only ON public.realtime_policy_probe FOR UPDATE TO anon USING (true);
DO $$
DECLARE
  caller record;
  probes public.realtime_policy_probe[] := ARRAY(SELECT p FROM public.realtime_policy_probe p);
  probe public.realtime_policy_probe;
  seen int;
BEGIN
  FOR caller IN SELECT * FROM (VALUES ('authenticated', 'x'), ('authenticated', 'y'), ('anon', 'x')) AS c(role, sub) LOOP
    PERFORM set_config('request.jwt.claims', json_build_object('sub', caller.sub, 'role', caller.role)::text, true);
    EXECUTE format('SET LOCAL ROLE %I', caller.role);
    seen := 0;
    FOREACH probe IN ARRAY probes LOOP
      ASSERT realtime.policies_allow(probe) = EXISTS (SELECT 1 FROM public.realtime_policy_probe t WHERE t.id = probe.id),
             format('probe %s as %s %s', probe.id, caller.role, caller.sub);
      IF realtime.policies_allow(probe) THEN seen := seen + 1; END IF;
    END LOOP;
    ASSERT seen = CASE WHEN caller.role = 'anon' THEN 0 WHEN caller.sub = 'x' THEN 2 ELSE 1 END, format('%s %s saw %s', caller.role, caller.sub, seen);
    RESET ROLE;
  END LOOP;
END $$;

-- test: without RLS on the table, or for a role that bypasses it, every row is allowed; without SELECT on it, none
CREATE TABLE public.realtime_open_probe (id int PRIMARY KEY, owner text);
INSERT INTO public.realtime_open_probe VALUES (1, 'x');
GRANT SELECT ON public.realtime_open_probe TO authenticated;
SET LOCAL ROLE authenticated;
DO $$ BEGIN
  ASSERT realtime.policies_allow((SELECT p FROM public.realtime_open_probe p)), 'no RLS: allowed';
END $$;
RESET ROLE;
ALTER TABLE public.realtime_open_probe ENABLE ROW LEVEL SECURITY;
SET LOCAL ROLE service_role;
DO $$ BEGIN
  ASSERT realtime.policies_allow(jsonb_populate_record(NULL::public.realtime_open_probe, '{"id":1,"owner":"x"}')), 'BYPASSRLS: allowed';
END $$;
SET LOCAL ROLE authenticated;
DO $$ BEGIN
  ASSERT NOT realtime.policies_allow(jsonb_populate_record(NULL::public.realtime_open_probe, '{"id":1,"owner":"x"}')), 'RLS without policies: nothing';
END $$;
SET LOCAL ROLE anon;
DO $$ BEGIN
  ASSERT NOT realtime.policies_allow(jsonb_populate_record(NULL::public.realtime_open_probe, '{"id":1,"owner":"x"}')), 'no SELECT privilege: nothing';
END $$;

-- test: is_current tells whether the table holds exactly this row now, past RLS; a bare record is refused
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
INSERT INTO public.children (id, user_id, name) VALUES ('11111111-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000001', 'Ann');
CREATE TEMPORARY TABLE snapshot AS SELECT c AS saved FROM public.children c;
GRANT SELECT ON snapshot TO authenticated;
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"cccccccc-0000-4000-8000-000000000003","role":"authenticated"}', true);
DO $$
DECLARE
  kept public.children := (SELECT s.saved FROM snapshot s);
  changed public.children := kept;
BEGIN
  ASSERT realtime.is_current(kept), 'the table''s row, though the caller cannot read it';
  changed.name := 'Anna';
  ASSERT NOT realtime.is_current(changed), 'another value for that key';
  changed := kept;
  changed.id := '22222222-0000-4000-8000-000000000002';
  ASSERT NOT realtime.is_current(changed), 'another key';
  BEGIN
    PERFORM realtime.is_current(ROW(1, 'x'));
    RAISE EXCEPTION 'took a bare record';
  EXCEPTION WHEN datatype_mismatch THEN NULL;
  END;
END $$;
