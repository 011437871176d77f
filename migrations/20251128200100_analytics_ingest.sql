-- Product analytics, part 2: the one function that stores events (for PostHog's capture API,
-- called by the server as the service role, and for public.track), and public.track itself.

-- Stores a batch of events checked by the caller, each an object with
--   uuid, event, distinct_id (text), properties (object),
--   timestamp, sent_at (ISO 8601 text, optional), offset (milliseconds before now, optional),
--   set, set_once (objects, optional).
-- A uuid stored before is skipped (a retry). The time is corrected for the client's clock as
-- PostHog does (now - (sent_at - timestamp)), and a time more than 23 hours ahead is now.
-- One call is one statement: the batch is stored whole or, on any error, not at all.
-- Answers how many events were stored (retries not counted).
-- An event's time: its timestamp corrected for the client's clock, or now.
CREATE FUNCTION product_analytics.event_time(e jsonb) RETURNS timestamptz
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_at timestamptz := coalesce((e ->> 'timestamp')::timestamptz, now());
    v_sent timestamptz := (e ->> 'sent_at')::timestamptz;
BEGIN
    IF e ? 'offset' THEN
        v_at := now() - make_interval(secs => (e ->> 'offset')::double precision / 1000);
    ELSIF v_sent IS NOT NULL THEN
        v_at := now() - (v_sent - v_at);
    END IF;
    RETURN CASE WHEN v_at > now() + interval '23 hours' THEN now() ELSE v_at END;
END
$$;

CREATE FUNCTION product_analytics.ingest(p_events jsonb, p_source text) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e          jsonb;
    v_new      uuid[];
    v_distinct text;
    v_other    text;
    v_person   bigint;
    v_stored   integer;
BEGIN
    IF jsonb_typeof(p_events) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'events must be an array' USING ERRCODE = '22023';
    END IF;
    IF EXISTS (SELECT FROM jsonb_array_elements(p_events) AS x(e)
               WHERE jsonb_typeof(x.e) <> 'object' OR (x.e ->> 'uuid') IS NULL OR coalesce(x.e ->> 'event', '') = ''
                  OR coalesce(x.e ->> 'distinct_id', '') = '' OR jsonb_typeof(coalesce(x.e -> 'properties', '{}')) <> 'object') THEN
        RAISE EXCEPTION 'an event needs uuid, event, distinct_id and object properties' USING ERRCODE = '22023';
    END IF;
    -- Every month's partition first (which also reads every time, so a bad one fails the batch
    -- before anything is written): a partition is created while this transaction holds no lock
    -- on the events table, so two batches creating months cannot wait on each other.
    PERFORM product_analytics.ensure_partition(m)
    FROM (SELECT DISTINCT date_trunc('month', product_analytics.event_time(value) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m
          FROM jsonb_array_elements(p_events)) AS months;

    -- The events whose uuid is new: a retry's are skipped (of a uuid twice in the batch, the first).
    WITH inserted AS (
        INSERT INTO product_analytics.event_uuids (uuid)
        SELECT DISTINCT (x.e ->> 'uuid')::uuid FROM jsonb_array_elements(p_events) AS x(e)
        ON CONFLICT (uuid) DO NOTHING
        RETURNING uuid
    )
    SELECT coalesce(array_agg(uuid), '{}') INTO v_new FROM inserted;
    IF cardinality(v_new) = 0 THEN
        RETURN 0;
    END IF;
    -- The batch's new events, in a table of this session's (made once, emptied at each commit).
    IF to_regclass('pg_temp.ingest_batch') IS NULL THEN
        CREATE TEMP TABLE ingest_batch (n bigint, uuid uuid, e jsonb) ON COMMIT DELETE ROWS;
    END IF;
    DELETE FROM pg_temp.ingest_batch;
    INSERT INTO pg_temp.ingest_batch (n, uuid, e)
    SELECT DISTINCT ON ((x.e ->> 'uuid')::uuid) x.n, (x.e ->> 'uuid')::uuid, x.e
    FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(e, n)
    WHERE (x.e ->> 'uuid')::uuid = ANY (v_new)
    ORDER BY (x.e ->> 'uuid')::uuid, x.n;

    -- Identities (the other id names the same person from now on) and person properties, in the
    -- batch's order.
    FOR e IN SELECT b.e FROM pg_temp.ingest_batch AS b
             WHERE b.e ->> 'event' IN ('$identify', '$create_alias') OR b.e ? 'set' OR b.e ? 'set_once'
             ORDER BY b.n
    LOOP
        v_distinct := e ->> 'distinct_id';
        v_other := CASE e ->> 'event'
                       WHEN '$identify' THEN e -> 'properties' ->> '$anon_distinct_id'
                       WHEN '$create_alias' THEN e -> 'properties' ->> 'alias'
                   END;
        IF v_other IS NOT NULL AND v_other <> '' AND v_other <> v_distinct THEN
            PERFORM product_analytics.merge_distinct_ids(v_distinct, v_other);
        END IF;
        IF e ? 'set' OR e ? 'set_once' THEN
            v_person := product_analytics.person_for(v_distinct);
            UPDATE product_analytics.persons
            SET properties = coalesce(e -> 'set_once', '{}') || properties || coalesce(e -> 'set', '{}'), updated_at = now()
            WHERE id = v_person;
        END IF;
    END LOOP;

    -- A person for each distinct id seen for the first time, then the events in one statement.
    PERFORM product_analytics.person_for(d.distinct_id)
    FROM (SELECT DISTINCT b.e ->> 'distinct_id' AS distinct_id FROM pg_temp.ingest_batch AS b) AS d
    WHERE NOT EXISTS (SELECT FROM product_analytics.person_distinct_ids AS m WHERE m.distinct_id = d.distinct_id);
    INSERT INTO product_analytics.events (uuid, event, distinct_id, person_id, user_id, properties, "timestamp", source)
    SELECT b.uuid, b.e ->> 'event', m.distinct_id, m.person_id, m.user_id, coalesce(b.e -> 'properties', '{}'),
           product_analytics.event_time(b.e), p_source
    FROM pg_temp.ingest_batch AS b
    JOIN product_analytics.person_distinct_ids AS m ON m.distinct_id = b.e ->> 'distinct_id'
    ORDER BY b.n;
    GET DIAGNOSTICS v_stored = ROW_COUNT;

    INSERT INTO product_analytics.exposures (flag_key, distinct_id, variant, first_seen)
    SELECT DISTINCT ON (b.e -> 'properties' ->> '$feature_flag', b.e ->> 'distinct_id')
           b.e -> 'properties' ->> '$feature_flag', b.e ->> 'distinct_id',
           coalesce(b.e -> 'properties' ->> '$feature_flag_response', 'false'), product_analytics.event_time(b.e)
    FROM pg_temp.ingest_batch AS b
    WHERE b.e ->> 'event' = '$feature_flag_called' AND b.e -> 'properties' ? '$feature_flag'
    ORDER BY b.e -> 'properties' ->> '$feature_flag', b.e ->> 'distinct_id', product_analytics.event_time(b.e)
    ON CONFLICT (flag_key, distinct_id) DO NOTHING;
    RETURN v_stored;
END
$$;
REVOKE ALL ON FUNCTION product_analytics.ingest(jsonb, text), product_analytics.event_time(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION product_analytics.ingest(jsonb, text) TO service_role;

-- Events with the person each distinct id names now (after any merge) and that person's user.
CREATE VIEW product_analytics.events_with_person AS
SELECT e.*, d.person_id AS current_person_id,
       (SELECT max(u.user_id::text)::uuid FROM product_analytics.person_distinct_ids AS u WHERE u.person_id = d.person_id) AS person_user_id
FROM product_analytics.events AS e
JOIN product_analytics.person_distinct_ids AS d ON d.distinct_id = e.distinct_id;
REVOKE ALL ON product_analytics.events_with_person FROM PUBLIC;
GRANT SELECT ON product_analytics.events_with_person TO service_role;

-- "The Supabase way": an event from a signed-in user (anonymous sign-ins included), whose
-- distinct id is the caller's auth.uid() and nothing else.
CREATE FUNCTION public.track(event text, properties jsonb DEFAULT '{}') RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_user uuid := auth.uid();
BEGIN
    IF v_user IS NULL THEN
        RAISE EXCEPTION 'track needs a signed-in user' USING ERRCODE = '42501';
    END IF;
    IF event IS NULL OR length(event) NOT BETWEEN 1 AND 200 THEN
        RAISE EXCEPTION 'event must be 1 to 200 characters' USING ERRCODE = '22023';
    END IF;
    IF properties IS NOT NULL AND (jsonb_typeof(properties) <> 'object' OR octet_length(properties::text) > 65536) THEN
        RAISE EXCEPTION 'properties must be a JSON object of at most 64 KiB' USING ERRCODE = '22023';
    END IF;
    PERFORM product_analytics.ingest(
        jsonb_build_array(jsonb_build_object(
            'uuid', gen_random_uuid(), 'event', event, 'distinct_id', v_user::text,
            'properties', coalesce(properties, '{}') || jsonb_build_object('$lib', 'onboard-rpc'),
            'timestamp', now(),
            'set', coalesce(properties -> '$set', '{}'), 'set_once', coalesce(properties -> '$set_once', '{}'))),
        'rpc');
END
$$;
REVOKE ALL ON FUNCTION public.track(text, jsonb) FROM PUBLIC, anon;
GRANT EXECUTE ON FUNCTION public.track(text, jsonb) TO authenticated, service_role;
