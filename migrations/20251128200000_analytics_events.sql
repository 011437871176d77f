-- Product analytics (the apps' own events, sent with PostHog's SDKs or through public.track):
-- events partitioned by month, persons and the distinct ids that name them, exposures to
-- feature flags. Everything lives in the schema `product_analytics` (the schema `analytics`
-- holds the onboarding history), which the REST API does not expose and which anon and
-- authenticated may not use. Rows are written only by the SECURITY DEFINER function
-- product_analytics.ingest (owned by the migration's role), which the service role may call.

CREATE SCHEMA product_analytics;
REVOKE ALL ON SCHEMA product_analytics FROM PUBLIC;
GRANT USAGE ON SCHEMA product_analytics TO service_role;

-- One row per person; several distinct ids may name it (an anonymous device id, then the
-- user's id after $identify).
CREATE TABLE product_analytics.persons (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    properties jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE product_analytics.person_distinct_ids (
    distinct_id text PRIMARY KEY,
    person_id   bigint NOT NULL REFERENCES product_analytics.persons (id) ON DELETE CASCADE,
    -- The auth user whose id this distinct id is (NULL for any other distinct id).
    user_id     uuid
);
CREATE INDEX person_distinct_ids_person_idx ON product_analytics.person_distinct_ids (person_id);
CREATE INDEX person_distinct_ids_user_idx ON product_analytics.person_distinct_ids (user_id) WHERE user_id IS NOT NULL;

-- Every event uuid ever stored: a retried event (same uuid) is stored once. Kept apart from
-- the partitioned events, whose unique indexes would have to include the timestamp.
CREATE TABLE product_analytics.event_uuids (
    uuid        uuid PRIMARY KEY,
    received_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE product_analytics.events (
    uuid        uuid NOT NULL,
    event       text NOT NULL,
    distinct_id text NOT NULL,
    -- The person the distinct id named when the event was stored (a later merge moves distinct
    -- ids, not events: product_analytics.events_with_person reads the current mapping).
    person_id   bigint NOT NULL,
    -- The auth user when the distinct id is a user's id.
    user_id     uuid,
    properties  jsonb NOT NULL DEFAULT '{}',
    "timestamp" timestamptz NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    -- 'capture' (PostHog's capture API) or 'rpc' (public.track).
    source      text NOT NULL
) PARTITION BY RANGE ("timestamp");
CREATE INDEX events_event_timestamp_idx ON product_analytics.events (event, "timestamp");
CREATE INDEX events_distinct_id_timestamp_idx ON product_analytics.events (distinct_id, "timestamp");
CREATE INDEX events_user_timestamp_idx ON product_analytics.events (user_id, "timestamp") WHERE user_id IS NOT NULL;

-- The first exposure of each distinct id to each flag ($feature_flag_called events).
CREATE TABLE product_analytics.exposures (
    flag_key    text NOT NULL,
    distinct_id text NOT NULL,
    variant     text NOT NULL,
    first_seen  timestamptz NOT NULL,
    PRIMARY KEY (flag_key, distinct_id)
);

-- The monthly partition holding `p_at`, created when missing (name events_YYYYMM, UTC months;
-- none exists before the first event of its month).
CREATE FUNCTION product_analytics.ensure_partition(p_at timestamptz) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_from timestamptz := date_trunc('month', p_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    v_name text := 'events_' || to_char(p_at AT TIME ZONE 'UTC', 'YYYYMM');
BEGIN
    IF to_regclass('product_analytics.' || quote_ident(v_name)) IS NOT NULL THEN
        RETURN;
    END IF;
    -- Two batches that both need a new month create it once: the second waits for the first to
    -- commit, then finds the table taken (its cached catalog may not show it yet, so the error is
    -- the answer, not a second look).
    PERFORM pg_advisory_xact_lock(hashtext('product_analytics.ensure_partition'));
    BEGIN
        EXECUTE format('CREATE TABLE product_analytics.%I PARTITION OF product_analytics.events FOR VALUES FROM (%L) TO (%L)',
                       v_name, v_from, v_from + interval '1 month');
    EXCEPTION WHEN duplicate_table OR unique_violation THEN
        NULL;
    END;
END
$$;

-- The person a distinct id names, made (with its mapping) when there is none.
CREATE FUNCTION product_analytics.person_for(p_distinct_id text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_person bigint;
    v_user uuid;
BEGIN
    SELECT person_id INTO v_person FROM product_analytics.person_distinct_ids WHERE distinct_id = p_distinct_id;
    IF FOUND THEN
        RETURN v_person;
    END IF;
    IF p_distinct_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
        SELECT id INTO v_user FROM auth.users WHERE id = p_distinct_id::uuid;
    END IF;
    INSERT INTO product_analytics.persons DEFAULT VALUES RETURNING id INTO v_person;
    INSERT INTO product_analytics.person_distinct_ids (distinct_id, person_id, user_id)
    VALUES (p_distinct_id, v_person, v_user)
    ON CONFLICT (distinct_id) DO NOTHING;
    IF NOT FOUND THEN
        -- Another transaction mapped it first: use its person.
        DELETE FROM product_analytics.persons WHERE id = v_person;
        SELECT person_id INTO v_person FROM product_analytics.person_distinct_ids WHERE distinct_id = p_distinct_id;
    END IF;
    RETURN v_person;
END
$$;

-- Makes `p_other` name the same person as `p_distinct_id` ($identify's $anon_distinct_id,
-- $create_alias's alias): the other person's distinct ids move over, and its properties are
-- kept where the surviving person has none of the same name.
CREATE FUNCTION product_analytics.merge_distinct_ids(p_distinct_id text, p_other text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_target bigint := product_analytics.person_for(p_distinct_id);
    v_source bigint := product_analytics.person_for(p_other);
BEGIN
    IF v_source = v_target THEN
        RETURN;
    END IF;
    UPDATE product_analytics.person_distinct_ids SET person_id = v_target WHERE person_id = v_source;
    UPDATE product_analytics.persons AS t
    SET properties = s.properties || t.properties, created_at = least(s.created_at, t.created_at), updated_at = now()
    FROM product_analytics.persons AS s
    WHERE t.id = v_target AND s.id = v_source;
    DELETE FROM product_analytics.persons WHERE id = v_source;
END
$$;

REVOKE ALL ON ALL TABLES IN SCHEMA product_analytics FROM PUBLIC, anon, authenticated;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA product_analytics FROM PUBLIC;
GRANT SELECT ON ALL TABLES IN SCHEMA product_analytics TO service_role;
