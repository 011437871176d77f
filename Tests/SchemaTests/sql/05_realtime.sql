-- Realtime's publication and trigger feed: realtime.enable_table / disable_table / is_enabled /
-- use_triggers, and who may call them. (The feeds themselves are tested over a real replication
-- stream and a real LISTEN in RealtimeTests.)

-- test: user_profiles and children are enabled; the family tables are not
DO $$ BEGIN
  ASSERT realtime.is_enabled('public.user_profiles'), 'user_profiles';
  ASSERT realtime.is_enabled('public.children'), 'children';
  ASSERT NOT realtime.is_enabled('public.families'), 'families';
END $$;

-- test: enable_table is idempotent: the table joins the publication with REPLICA IDENTITY FULL; disable_table undoes both
SELECT realtime.use_triggers(false);
SELECT realtime.enable_table('public.families');
SELECT realtime.enable_table('public.families');
DO $$ BEGIN
  ASSERT realtime.is_enabled('public.families'), 'enabled';
  ASSERT EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = 'supabase_realtime' AND schemaname = 'public' AND tablename = 'families'), 'published';
  ASSERT (SELECT relreplident FROM pg_class WHERE oid = 'public.families'::regclass) = 'f', 'replica identity full';
  ASSERT (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.families'::regclass AND tgname LIKE 'realtime_changes%') = 0, 'no triggers without the trigger feed';
END $$;
SELECT realtime.disable_table('public.families');
DO $$ BEGIN
  ASSERT NOT realtime.is_enabled('public.families'), 'disabled';
  ASSERT NOT EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = 'supabase_realtime' AND tablename = 'families'), 'unpublished';
  ASSERT (SELECT relreplident FROM pg_class WHERE oid = 'public.families'::regclass) = 'd', 'replica identity default';
END $$;

-- test: with the trigger feed on, enable_table also installs both triggers and the function; disable_table and use_triggers(false) remove them
SELECT realtime.use_triggers(true);
DO $$ BEGIN
  ASSERT (SELECT triggers FROM realtime.settings), 'recorded';
  ASSERT (SELECT count(*) FROM pg_trigger WHERE tgrelid IN ('public.user_profiles'::regclass, 'public.children'::regclass) AND tgname LIKE 'realtime_changes%') = 4,
         'every enabled table got both triggers';
END $$;
SELECT realtime.enable_table('public.families');
SELECT realtime.enable_table('public.families');
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.families'::regclass AND tgname LIKE 'realtime_changes%') = 2, 'two triggers';
END $$;
SELECT realtime.disable_table('public.families');
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.families'::regclass AND tgname LIKE 'realtime_changes%') = 0, 'no triggers';
  ASSERT to_regprocedure(format('realtime.notify_%s()', 'public.families'::regclass::oid)) IS NULL, 'no function';
END $$;
SELECT realtime.use_triggers(false);
DO $$ BEGIN
  ASSERT NOT (SELECT triggers FROM realtime.settings), 'recorded';
  ASSERT (SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'realtime_changes%') = 0, 'no triggers left';
  ASSERT realtime.is_enabled('public.user_profiles') AND realtime.is_enabled('public.children'), 'still enabled';
END $$;

-- test: a table without a primary key cannot be enabled
CREATE TABLE public.realtime_no_key (value text);
DO $$ BEGIN
  PERFORM realtime.enable_table('public.realtime_no_key');
  RAISE EXCEPTION 'enabled a table without a primary key';
EXCEPTION WHEN object_not_in_prerequisite_state THEN
  NULL;
END $$;

-- test: the API roles may ask is_enabled and check rows but not enable, disable or call the trigger function; service_role may switch the trigger feed on
SELECT realtime.use_triggers(true);
DO $$
DECLARE role_name text;
BEGIN
  FOREACH role_name IN ARRAY ARRAY['anon', 'authenticated', 'service_role'] LOOP
    ASSERT has_function_privilege(role_name, 'realtime.is_enabled(regclass)', 'EXECUTE'), role_name || ' is_enabled';
    ASSERT NOT has_function_privilege(role_name, 'realtime.enable_table(regclass)', 'EXECUTE'), role_name || ' enable_table';
    ASSERT NOT has_function_privilege(role_name, 'realtime.disable_table(regclass)', 'EXECUTE'), role_name || ' disable_table';
    ASSERT NOT has_function_privilege(role_name, format('realtime.notify_%s()', 'public.user_profiles'::regclass::oid)::regprocedure, 'EXECUTE'),
           role_name || ' trigger function';
    ASSERT NOT has_function_privilege(role_name, 'realtime.trigger_function_template()', 'EXECUTE'), role_name || ' template';
    ASSERT NOT has_function_privilege(role_name, 'realtime.enable_triggers(regclass)', 'EXECUTE'), role_name || ' enable_triggers';
    ASSERT NOT has_function_privilege(role_name, 'realtime.disable_triggers(regclass)', 'EXECUTE'), role_name || ' disable_triggers';
    ASSERT has_function_privilege(role_name, 'realtime.policies_allow(anyelement)', 'EXECUTE'), role_name || ' policies_allow';
    ASSERT has_function_privilege(role_name, 'realtime.is_current(anyelement)', 'EXECUTE'), role_name || ' is_current';
  END LOOP;
  ASSERT NOT has_function_privilege('anon', 'realtime.use_triggers(boolean)', 'EXECUTE'), 'anon use_triggers';
  ASSERT NOT has_function_privilege('authenticated', 'realtime.use_triggers(boolean)', 'EXECUTE'), 'authenticated use_triggers';
  ASSERT has_function_privilege('service_role', 'realtime.use_triggers(boolean)', 'EXECUTE'), 'service_role use_triggers';
END $$;

-- test: a user's writes go through the triggers (the trigger function is not theirs to call)
SELECT realtime.use_triggers(true);
INSERT INTO auth.users (id, email) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'a@example.com');
SET LOCAL ROLE authenticated;
SELECT set_config('request.jwt.claims', '{"sub":"aaaaaaaa-0000-4000-8000-000000000001","role":"authenticated"}', true);
INSERT INTO public.children (user_id, name) VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'Maya');
UPDATE public.children SET goals = ARRAY['sleep'];
DELETE FROM public.children WHERE false;
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM public.children WHERE name = 'Maya') = 1, 'child written';
END $$;

-- test: renew_listener keeps one lease per (table, row, server), replaces the set, maps '*' to 0
SET LOCAL ROLE service_role;
SELECT realtime.renew_listener('11111111-0000-4000-8000-000000000001', ARRAY['public.user_profiles', '"public"."children"', 'public.user_profiles'], ARRAY['', '', 'abc'], 60, true);
SELECT realtime.renew_listener('11111111-0000-4000-8000-000000000001', ARRAY['public.user_profiles', '"public"."children"', 'public.user_profiles'], ARRAY['', '', 'abc'], 60, true);
SELECT realtime.renew_listener('22222222-0000-4000-8000-000000000002', ARRAY['*', 'public.no_such_table'], ARRAY['', ''], 60, true);
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM realtime.listeners WHERE server_id = '11111111-0000-4000-8000-000000000001') = 3, 'three leases';
  ASSERT (SELECT array_agg(relid::regclass::text || ':' || row_key ORDER BY relid::regclass::text, row_key) FROM realtime.listeners
           WHERE server_id = '11111111-0000-4000-8000-000000000001') = ARRAY['children:', 'user_profiles:', 'user_profiles:abc'], 'the named tables and rows';
  ASSERT (SELECT array_agg(relid) FROM realtime.listeners WHERE server_id = '22222222-0000-4000-8000-000000000002') = ARRAY[0::oid], 'schema-wide lease only';
  ASSERT (SELECT bool_and(expires_at > now() + interval '50 seconds') FROM realtime.listeners), 'expiry from seconds';
END $$;
SELECT realtime.renew_listener('22222222-0000-4000-8000-000000000002', ARRAY['public.children'], ARRAY['k'], 60, false);
DO $$ BEGIN
  ASSERT (SELECT count(*) FROM realtime.listeners WHERE server_id = '22222222-0000-4000-8000-000000000002') = 2, 'adding keeps the others';
END $$;
SELECT realtime.renew_listener('11111111-0000-4000-8000-000000000001', ARRAY['public.user_profiles'], ARRAY['abc'], 60, true);
SELECT realtime.renew_listener('22222222-0000-4000-8000-000000000002', ARRAY[]::text[], ARRAY[]::text[], 60, true);
DO $$ BEGIN
  ASSERT (SELECT array_agg(relid::regclass::text || ':' || row_key) FROM realtime.listeners) = ARRAY['user_profiles:abc'], 'leases not renewed are dropped';
END $$;

-- test: only service_role may take leases
DO $$
DECLARE role_name text;
BEGIN
  FOREACH role_name IN ARRAY ARRAY['anon', 'authenticated'] LOOP
    ASSERT NOT has_function_privilege(role_name, 'realtime.renew_listener(uuid, text[], text[], integer, boolean)', 'EXECUTE'), role_name;
    ASSERT NOT has_table_privilege(role_name, 'realtime.listeners', 'INSERT'), role_name || ' insert';
  END LOOP;
  ASSERT has_function_privilege('service_role', 'realtime.renew_listener(uuid, text[], text[], integer, boolean)', 'EXECUTE'), 'service_role';
END $$;
