-- Realtime Broadcast, Presence and Authorization (private channels), on every server.
--
-- realtime.messages, realtime.topic(), realtime.send(…) and realtime.broadcast_changes(…) have
-- Supabase's signatures. Row-level security on realtime.messages decides who may join a private
-- channel (SELECT policies) and send on it (INSERT policies): the server inserts probe rows for
-- the topic, sets the caller's role, claims and `realtime.topic`, and reads (or inserts) them in
-- a transaction it rolls back.
--
-- Delivery between servers goes through PostgreSQL only: every broadcast is a notification on
-- the channel `realtime_messages`, sent at commit (so in commit order, and never for a
-- rolled-back transaction), which every server LISTENs to on a direct connection. A broadcast
-- written to realtime.messages (realtime.send, or one too large for a notification) is
-- announced by the trigger below; a socket's broadcast of ordinary size is a pg_notify alone.
-- `o` in a notification names the server that already delivered it to its own sockets.

CREATE TABLE realtime.messages (
    id          uuid NOT NULL DEFAULT gen_random_uuid(),
    topic       text NOT NULL,
    extension   text NOT NULL,
    payload     jsonb,
    event       text,
    private     boolean DEFAULT false,
    updated_at  timestamp without time zone NOT NULL DEFAULT now(),
    inserted_at timestamp without time zone NOT NULL DEFAULT now(),
    PRIMARY KEY (id, inserted_at)
);
CREATE INDEX messages_inserted_at_topic_index ON realtime.messages (inserted_at DESC, topic);
ALTER TABLE realtime.messages ENABLE ROW LEVEL SECURITY;
GRANT SELECT, INSERT, UPDATE ON realtime.messages TO anon, authenticated, service_role;

-- The channel's topic (without `realtime:`) while a policy on realtime.messages is checked, and
-- inside realtime.send.
CREATE FUNCTION realtime.topic() RETURNS text
LANGUAGE sql STABLE
AS $$
    SELECT nullif(current_setting('realtime.topic', true), '')::text;
$$;
GRANT EXECUTE ON FUNCTION realtime.topic() TO anon, authenticated, service_role;

-- The notification for a broadcast row: the frame's payload inline when it fits PostgreSQL's
-- 8000-byte limit, else the row's id (the servers read the row).
CREATE FUNCTION realtime.announce_message() RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    origin text := nullif(current_setting('realtime.origin', true), '');
    note jsonb;
BEGIN
    note := jsonb_build_object(
        'o', origin, 'k', 'b', 't', NEW.topic, 'p', coalesce(NEW.private, false),
        'm', jsonb_build_object('type', 'broadcast', 'event', NEW.event, 'payload', NEW.payload,
                                'meta', jsonb_build_object('id', NEW.id)));
    IF octet_length(note::text) > 7900 THEN
        note := jsonb_build_object('o', origin, 'id', NEW.id);
    END IF;
    PERFORM pg_notify('realtime_messages', note::text);
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION realtime.announce_message() FROM PUBLIC;

CREATE TRIGGER realtime_messages_broadcast AFTER INSERT ON realtime.messages
    FOR EACH ROW WHEN (NEW.extension = 'broadcast') EXECUTE FUNCTION realtime.announce_message();

-- Supabase's realtime.send: a broadcast to the subscribers of `topic` after the transaction
-- commits (`id` added to the payload when absent). Failures are warnings, as in Supabase: the
-- caller's transaction goes on.
CREATE FUNCTION realtime.send(payload jsonb, event text, topic text, private boolean DEFAULT true) RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    generated_id uuid;
    final_payload jsonb;
BEGIN
    BEGIN
        generated_id := gen_random_uuid();
        IF payload ? 'id' THEN
            final_payload := payload;
        ELSE
            final_payload := jsonb_set(payload, '{id}', to_jsonb(generated_id));
        END IF;
        EXECUTE format('SET LOCAL realtime.topic TO %L', topic);
        INSERT INTO realtime.messages (id, payload, event, topic, private, extension)
        VALUES (generated_id, final_payload, event, topic, private, 'broadcast');
    EXCEPTION
        WHEN OTHERS THEN
            RAISE WARNING 'WarnSendingBroadcastMessage: %', SQLERRM;
    END;
END
$$;
GRANT EXECUTE ON FUNCTION realtime.send(jsonb, text, text, boolean) TO anon, authenticated, service_role;

-- Supabase's trigger helper: broadcasts a row change ({operation, table, schema, record,
-- old_record}) on `topic_name` as event `event_name` (a private message).
CREATE FUNCTION realtime.broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, NEW record, OLD record, level text DEFAULT 'ROW') RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    row_data jsonb := '{}'::jsonb;
BEGIN
    IF level = 'STATEMENT' THEN
        RAISE EXCEPTION 'function can only be triggered for each row, not for each statement';
    END IF;
    IF operation = 'INSERT' OR operation = 'UPDATE' OR operation = 'DELETE' THEN
        row_data := jsonb_build_object('old_record', OLD, 'record', NEW, 'operation', operation, 'table', table_name, 'schema', table_schema);
        PERFORM realtime.send(row_data, event_name, topic_name);
    ELSE
        RAISE EXCEPTION 'Unexpected operation type: %', operation;
    END IF;
EXCEPTION
    WHEN OTHERS THEN
        RAISE EXCEPTION 'Failed to process the row: %', SQLERRM;
END
$$;
GRANT EXECUTE ON FUNCTION realtime.broadcast_changes(text, text, text, text, text, record, record, text) TO anon, authenticated, service_role;

-- Presence: every tracked presence of every server, so a join anywhere lists them all
-- (`presence_state`). A server renews its row in realtime.nodes while it runs; presences of a
-- server whose row expired (it stopped without untracking) are swept by the others, each sweep
-- announcing the leaves.
CREATE TABLE realtime.nodes (
    server_id  uuid PRIMARY KEY,
    expires_at timestamptz NOT NULL
);

CREATE TABLE realtime.presences (
    phx_ref    text PRIMARY KEY,
    topic      text NOT NULL,
    private    boolean NOT NULL,
    key        text NOT NULL,
    meta       jsonb NOT NULL,
    server_id  uuid NOT NULL,
    tracked_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX presences_topic_index ON realtime.presences (topic, private);
CREATE INDEX presences_server_index ON realtime.presences (server_id);

-- Renews `server`'s row for `seconds`, then removes the presences of servers that are gone
-- and announces their leaves (one notification per topic).
CREATE FUNCTION realtime.presence_heartbeat(server uuid, seconds integer) RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    gone record;
    swept integer := 0;
BEGIN
    INSERT INTO realtime.nodes (server_id, expires_at) VALUES (server, now() + make_interval(secs => seconds))
    ON CONFLICT (server_id) DO UPDATE SET expires_at = EXCLUDED.expires_at;
    -- One notification per key (a topic's whole list might not fit in one).
    FOR gone IN
        WITH deleted AS (
            DELETE FROM realtime.presences p
             WHERE NOT EXISTS (SELECT 1 FROM realtime.nodes n WHERE n.server_id = p.server_id AND n.expires_at > now())
            RETURNING p.topic, p.private, p.key, p.meta
        )
        SELECT d.topic, d.private, d.key, jsonb_agg(d.meta) AS metas, count(*) AS n
          FROM deleted d GROUP BY d.topic, d.private, d.key
    LOOP
        PERFORM pg_notify('realtime_messages', jsonb_build_object(
            'o', NULL, 'k', 'p', 't', gone.topic, 'p', gone.private,
            'd', jsonb_build_object('joins', '{}'::jsonb, 'leaves', jsonb_build_object(gone.key, jsonb_build_object('metas', gone.metas))))::text);
        swept := swept + gone.n;
    END LOOP;
    DELETE FROM realtime.nodes WHERE expires_at < now() - interval '1 hour';
    RETURN swept;
END
$$;
REVOKE ALL ON FUNCTION realtime.presence_heartbeat(uuid, integer) FROM PUBLIC;
