-- Realtime from the write-ahead log. An enabled table is a member of the publication
-- `supabase_realtime` (Supabase's name for it, so `ALTER PUBLICATION supabase_realtime ADD
-- TABLE …` written for Supabase means the same here); each server process streams the
-- publication's committed changes through a temporary logical replication slot (pgoutput) and
-- decides per subscriber, in PostgreSQL, who may see each committed row. Writers pay no trigger,
-- no NOTIFY: logical decoding reads the WAL they write anyway.
--
-- The trigger feed of 20251124000000_realtime.sql stays as the fallback for a server that
-- cannot stream (wal_level below logical, no replication privilege): its triggers exist only
-- while `realtime.settings.triggers` is on, which `realtime.use_triggers` switches (the server
-- switches it on when it falls back; this migration sets it from the database's wal_level).

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_publication WHERE pubname = 'supabase_realtime') THEN
        CREATE PUBLICATION supabase_realtime WITH (publish = 'insert, update, delete');
    END IF;
END
$$;

-- Whether the trigger feed's triggers are installed on the enabled tables.
CREATE TABLE realtime.settings (
    id       boolean PRIMARY KEY DEFAULT true CHECK (id),
    triggers boolean NOT NULL
);
INSERT INTO realtime.settings (triggers) VALUES (true);
GRANT SELECT ON realtime.settings TO anon, authenticated, service_role;

-- The trigger feed's triggers on `target`: what enable_table did before this migration.
CREATE FUNCTION realtime.enable_triggers(target regclass) RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
DECLARE
    key_names text[];
    key_columns text;
    key_text text;
    function_name text := 'notify_' || target::oid;
BEGIN
    SELECT array_agg(a.attname::text ORDER BY k.position)
      INTO key_names
      FROM pg_catalog.pg_index i
      CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position)
      JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
     WHERE i.indrelid = target AND i.indisprimary;
    IF key_names IS NULL THEN
        RAISE EXCEPTION 'realtime needs a primary key on %', target USING ERRCODE = '55000';
    END IF;
    key_columns := (SELECT string_agg(quote_literal(name), ', ') FROM unnest(key_names) AS name);
    key_text := CASE WHEN cardinality(key_names) = 1
                     THEN format('coalesce((CASE WHEN TG_OP = %L THEN OLD.%I ELSE NEW.%I END)::text, %L)', 'DELETE', key_names[1], key_names[1], '')
                     ELSE quote_literal('') END;
    EXECUTE format('CREATE OR REPLACE FUNCTION realtime.%I() RETURNS trigger LANGUAGE plpgsql SET search_path = %L AS %L',
                   function_name, '', format(realtime.trigger_function_template(), target::oid, key_text));
    EXECUTE format('REVOKE ALL ON FUNCTION realtime.%I() FROM PUBLIC', function_name);
    EXECUTE format('DROP TRIGGER IF EXISTS realtime_changes ON %s', target);
    EXECUTE format('DROP TRIGGER IF EXISTS realtime_changes_update ON %s', target);
    EXECUTE format('CREATE TRIGGER realtime_changes AFTER INSERT OR DELETE ON %s '
                   'FOR EACH ROW EXECUTE FUNCTION realtime.%I(%s)', target, function_name, key_columns);
    EXECUTE format('CREATE TRIGGER realtime_changes_update AFTER UPDATE ON %s '
                   'FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION realtime.%I(%s)',
                   target, function_name, key_columns);
END
$$;
REVOKE ALL ON FUNCTION realtime.enable_triggers(regclass) FROM PUBLIC;

CREATE FUNCTION realtime.disable_triggers(target regclass) RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    EXECUTE format('DROP TRIGGER IF EXISTS realtime_changes ON %s', target);
    EXECUTE format('DROP TRIGGER IF EXISTS realtime_changes_update ON %s', target);
    EXECUTE format('DROP FUNCTION IF EXISTS realtime.%I()', 'notify_' || target::oid);
END
$$;
REVOKE ALL ON FUNCTION realtime.disable_triggers(regclass) FROM PUBLIC;

-- The tables Realtime announces: the publication's members (all tables of a FOR ALL TABLES
-- publication).
CREATE FUNCTION realtime.enabled_tables() RETURNS SETOF regclass
LANGUAGE sql STABLE
SET search_path = ''
AS $$
    SELECT format('%I.%I', t.schemaname, t.tablename)::regclass
      FROM pg_catalog.pg_publication_tables t
     WHERE t.pubname = 'supabase_realtime'
$$;
REVOKE ALL ON FUNCTION realtime.enabled_tables() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION realtime.enabled_tables() TO anon, authenticated, service_role;

-- Installs (on) or removes (off) the trigger feed's triggers on every enabled table, and
-- records the choice so enable_table follows it. A server falling back to the trigger feed
-- calls it (as service_role) with true; nothing switches it off again but an operator (or a
-- migration), since another server may still rely on the triggers. SECURITY DEFINER: creating
-- triggers takes the tables' owner.
CREATE FUNCTION realtime.use_triggers("on" boolean) RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    target regclass;
BEGIN
    -- One switch at a time (two servers falling back together).
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('realtime.use_triggers'));
    UPDATE realtime.settings SET triggers = "on";
    FOR target IN SELECT realtime.enabled_tables() LOOP
        IF "on" THEN
            IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger WHERE tgrelid = target AND tgname = 'realtime_changes') THEN
                PERFORM realtime.enable_triggers(target);
            END IF;
        ELSE
            PERFORM realtime.disable_triggers(target);
        END IF;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION realtime.use_triggers(boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION realtime.use_triggers(boolean) TO service_role;

-- Enables Realtime on `target` (idempotent): it joins the publication, with REPLICA IDENTITY
-- FULL so the WAL carries the whole old row of an UPDATE or DELETE (a DELETE is judged on its
-- old row, owner column included: nothing else is left of it; an unchanged TOASTed value of an
-- UPDATE is taken from the old row). With the trigger feed on, it gets the triggers too.
CREATE OR REPLACE FUNCTION realtime.enable_table(target regclass) RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index WHERE indrelid = target AND indisprimary) THEN
        RAISE EXCEPTION 'realtime needs a primary key on %', target USING ERRCODE = '55000';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM realtime.enabled_tables() AS t WHERE t = target) THEN
        EXECUTE format('ALTER PUBLICATION supabase_realtime ADD TABLE %s', target);
    END IF;
    IF (SELECT relreplident FROM pg_catalog.pg_class WHERE oid = target) <> 'f' THEN
        EXECUTE format('ALTER TABLE %s REPLICA IDENTITY FULL', target);
    END IF;
    IF (SELECT triggers FROM realtime.settings) THEN
        PERFORM realtime.enable_triggers(target);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION realtime.enable_table(regclass) FROM PUBLIC;

CREATE OR REPLACE FUNCTION realtime.disable_table(target regclass) RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_publication_rel r JOIN pg_catalog.pg_publication p ON p.oid = r.prpubid
                WHERE p.pubname = 'supabase_realtime' AND r.prrelid = target) THEN
        EXECUTE format('ALTER PUBLICATION supabase_realtime DROP TABLE %s', target);
    END IF;
    PERFORM realtime.disable_triggers(target);
    IF (SELECT relreplident FROM pg_catalog.pg_class WHERE oid = target) = 'f' THEN
        EXECUTE format('ALTER TABLE %s REPLICA IDENTITY DEFAULT', target);
    END IF;
END
$$;
REVOKE ALL ON FUNCTION realtime.disable_table(regclass) FROM PUBLIC;

-- Whether changes of `target` are announced: a member of the publication.
CREATE OR REPLACE FUNCTION realtime.is_enabled(target regclass) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = ''
AS $$
    SELECT EXISTS (SELECT 1 FROM realtime.enabled_tables() AS t WHERE t = target)
$$;

-- Who may see a committed row. The WAL feed hands each subscriber's check a value of the
-- table's row type holding the row as committed (`committed`). Row-level security applies to
-- tables, not to values, so:
--
-- 1. while the table still holds exactly that row (the usual case: one write, read a few
--    milliseconds later), the feed reads it from the table as the subscriber (key and every
--    column equal) and PostgreSQL's own RLS decides;
-- 2. when it does not (written again since, or deleted; a DELETE's old row), `is_current` says
--    so and `policies_allow` evaluates the table's SELECT policies on the committed values as
--    RLS would: the policies that apply to the current role, permissive ones ORed, restrictive
--    ones ANDed, none permissive → nothing visible; none at all when RLS does not apply to the
--    role (`row_security_active`: RLS off, table owner, BYPASSRLS).

-- Whether `target`'s row with `committed`'s primary key equals `committed` now, read past RLS
-- (SECURITY DEFINER: the tables' owner). STABLE, so it reads with the calling statement's
-- snapshot, the one the subscriber's own read of the table uses. It only compares a whole row
-- given by value; no API route reaches the realtime schema.
CREATE FUNCTION realtime.is_current(committed anyelement) RETURNS boolean
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    target regclass := (SELECT nullif(t.typrelid, 0) FROM pg_catalog.pg_type t WHERE t.oid = pg_catalog.pg_typeof(committed))::regclass;
    key_condition text;
    found boolean;
BEGIN
    IF target IS NULL THEN
        RAISE EXCEPTION 'realtime.is_current takes a row of a table, not %', pg_catalog.pg_typeof(committed) USING ERRCODE = '42804';
    END IF;
    SELECT string_agg(format('t.%1$I = ($1).%1$I', a.attname), ' AND ')
      INTO key_condition
      FROM pg_catalog.pg_index i
      JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
     WHERE i.indrelid = target AND i.indisprimary;
    IF key_condition IS NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s AS t WHERE %s AND t::text = $1::text)', target, key_condition)
       INTO found USING committed;
    RETURN found;
END
$$;
REVOKE ALL ON FUNCTION realtime.is_current(anyelement) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION realtime.is_current(anyelement) TO anon, authenticated, service_role;

-- Whether the current role (and claims) may SELECT `committed` by `target`'s policies, as RLS
-- decides for a row of the table. The policies' expressions come from the catalog
-- (pg_get_expr, written with this function's empty search_path, so every name is qualified)
-- and are evaluated on the value under the table's own name, which their column references
-- use.
CREATE FUNCTION realtime.policies_allow(committed anyelement) RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = ''
AS $$
DECLARE
    target regclass := (SELECT nullif(t.typrelid, 0) FROM pg_catalog.pg_type t WHERE t.oid = pg_catalog.pg_typeof(committed))::regclass;
    permissive text;
    restrictive text;
    allowed boolean;
BEGIN
    IF target IS NULL THEN
        RAISE EXCEPTION 'realtime.policies_allow takes a row of a table, not %', pg_catalog.pg_typeof(committed) USING ERRCODE = '42804';
    END IF;
    IF NOT pg_catalog.has_table_privilege(target, 'SELECT') THEN
        RETURN false;
    END IF;
    IF NOT pg_catalog.row_security_active(target) THEN
        RETURN true;
    END IF;
    SELECT string_agg('(' || pg_catalog.pg_get_expr(p.polqual, p.polrelid) || ')', ' OR ') FILTER (WHERE p.polpermissive),
           string_agg('(' || pg_catalog.pg_get_expr(p.polqual, p.polrelid) || ')', ' AND ') FILTER (WHERE NOT p.polpermissive)
      INTO permissive, restrictive
      FROM pg_catalog.pg_policy p
     WHERE p.polrelid = target
       AND p.polcmd IN ('r', '*')
       AND p.polqual IS NOT NULL
       AND (0 = ANY (p.polroles)
            OR EXISTS (SELECT 1 FROM unnest(p.polroles) AS r(role_id) WHERE pg_catalog.pg_has_role(current_user, r.role_id, 'USAGE')));
    IF permissive IS NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('SELECT (%s) AND (%s) FROM (SELECT ($1).*) AS %I', permissive, coalesce(restrictive, 'true'),
                   (SELECT c.relname FROM pg_catalog.pg_class c WHERE c.oid = target))
       INTO allowed USING committed;
    RETURN coalesce(allowed, false);
END
$$;
REVOKE ALL ON FUNCTION realtime.policies_allow(anyelement) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION realtime.policies_allow(anyelement) TO anon, authenticated, service_role;

SELECT realtime.enable_table('public.user_profiles');
SELECT realtime.enable_table('public.children');
-- A database that cannot stream keeps the triggers (as before this migration); one that can
-- drops them: its servers read the WAL.
SELECT realtime.use_triggers(current_setting('wal_level') <> 'logical');
