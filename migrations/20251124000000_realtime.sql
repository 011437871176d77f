-- Realtime (postgres_changes): a committed row change of an enabled table is announced with
-- pg_notify on the channel `realtime_changes` (schema, table, operation and primary key) while
-- some server holds a lease on its table or row, i.e. has subscribers for it. The server
-- re-reads the row under each subscriber's role and claims, so row-level security decides who
-- hears of it. `realtime.enable_table(regclass)` is our "publication".

CREATE SCHEMA realtime;
GRANT USAGE ON SCHEMA realtime TO anon, authenticated, service_role;

-- Which tables (or rows) some server has subscribers for: a lease per (table, row, server),
-- renewed while the server has subscriptions to it. Without a live lease the trigger returns
-- at once, so writes nobody listens to pay one index probe instead of a notification (NOTIFY
-- serialises committing writers on a database-wide lock). relid 0 stands for "every table" (a
-- schema-wide binding); row_key '' for "every row", else the text of a single-column primary
-- key (a subscription filtered on it: "my own row").
CREATE TABLE realtime.listeners (
    relid      oid NOT NULL,
    row_key    text NOT NULL DEFAULT '',
    server_id  uuid NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (relid, row_key, server_id)
);
GRANT SELECT ON realtime.listeners TO anon, authenticated, service_role;

-- Renews (or takes) `server`'s leases on (tables[i], row_keys[i]) — 'schema.table' names, '*'
-- for every table, '' for every row — for `seconds`; with `replace`, drops its other leases.
-- Called by the server as service_role: the whole set every 20 s, new leases as they come.
CREATE FUNCTION realtime.renew_listener(server uuid, tables text[], row_keys text[], seconds integer, replace boolean) RETURNS void
LANGUAGE sql
SECURITY DEFINER
SET search_path = ''
AS $$
    DELETE FROM realtime.listeners l
     WHERE replace AND l.server_id = server
       AND NOT EXISTS (SELECT 1 FROM unnest(tables, row_keys) AS t(name, row_key)
                        WHERE t.row_key = l.row_key AND CASE WHEN t.name = '*' THEN 0 ELSE to_regclass(t.name)::oid END = l.relid);
    INSERT INTO realtime.listeners (relid, row_key, server_id, expires_at)
    SELECT DISTINCT CASE WHEN t.name = '*' THEN 0 ELSE to_regclass(t.name)::oid END, t.row_key, server, now() + make_interval(secs => seconds)
      FROM unnest(tables, row_keys) AS t(name, row_key)
     WHERE t.name = '*' OR to_regclass(t.name) IS NOT NULL
    ON CONFLICT (relid, row_key, server_id) DO UPDATE SET expires_at = EXCLUDED.expires_at;
    DELETE FROM realtime.listeners WHERE expires_at < now() - interval '1 hour';
$$;
REVOKE ALL ON FUNCTION realtime.renew_listener(uuid, text[], text[], integer, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION realtime.renew_listener(uuid, text[], text[], integer, boolean) TO service_role;

-- The notification: {"schema","table","type","commit_timestamp","pk",["old"]}. `pk` is the
-- new row's key (the old one's for DELETE); `old` is the whole deleted row when it fits the
-- 8000-byte payload limit (the server checks filters and ownership on it), else its key.
--
-- enable_table writes one trigger function per table, `realtime.notify_<oid>`, from the template
-- below: the lease check names the table's oid and reads a single-column key straight from the
-- row (%1$s: the oid, %2$s: the key's text, '' for wider keys), so a write nobody watches costs
-- one index probe and nothing else. The triggers' arguments are the key's column names.
CREATE FUNCTION realtime.trigger_function_template() RETURNS text
LANGUAGE sql IMMUTABLE
AS $template$ SELECT $$
DECLARE
    source_row jsonb;
    key jsonb := '{}';
    column_name text;
    payload jsonb;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM realtime.listeners l
                    WHERE l.relid IN (%1$s, 0) AND l.row_key IN ('', %2$s) AND l.expires_at > now()) THEN
        RETURN NULL;
    END IF;
    source_row := CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END;
    FOREACH column_name IN ARRAY TG_ARGV LOOP
        key := key || jsonb_build_object(column_name, source_row -> column_name);
    END LOOP;
    payload := jsonb_build_object(
        'schema', TG_TABLE_SCHEMA,
        'table', TG_TABLE_NAME,
        'type', TG_OP,
        'commit_timestamp', to_char(clock_timestamp() AT TIME ZONE 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'pk', key);
    IF TG_OP = 'DELETE' THEN
        payload := payload || jsonb_build_object('old', source_row);
        IF octet_length(payload::text) >= 7900 THEN
            payload := payload || jsonb_build_object('old', key);
        END IF;
    END IF;
    PERFORM pg_notify('realtime_changes', payload::text);
    RETURN NULL;
END
$$ $template$;
REVOKE ALL ON FUNCTION realtime.trigger_function_template() FROM PUBLIC;

-- Installs the trigger function and the triggers on `target` (idempotent). UPDATEs that change
-- nothing stay silent.
CREATE FUNCTION realtime.enable_table(target regclass) RETURNS void
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
REVOKE ALL ON FUNCTION realtime.enable_table(regclass) FROM PUBLIC;

CREATE FUNCTION realtime.disable_table(target regclass) RETURNS void
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    EXECUTE format('DROP TRIGGER IF EXISTS realtime_changes ON %s', target);
    EXECUTE format('DROP TRIGGER IF EXISTS realtime_changes_update ON %s', target);
    EXECUTE format('DROP FUNCTION IF EXISTS realtime.%I()', 'notify_' || target::oid);
END
$$;
REVOKE ALL ON FUNCTION realtime.disable_table(regclass) FROM PUBLIC;

-- Whether changes of `target` are announced (the server asks before confirming a subscription).
CREATE FUNCTION realtime.is_enabled(target regclass) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = ''
AS $$
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger WHERE tgrelid = target AND tgname = 'realtime_changes')
$$;
GRANT EXECUTE ON FUNCTION realtime.is_enabled(regclass) TO anon, authenticated, service_role;

SELECT realtime.enable_table('public.user_profiles');
SELECT realtime.enable_table('public.children');
