-- Product analytics, part 5: retention. Events older than the retention go a whole month at a
-- time (a partition dropped, no row-by-row delete), with the uuids and exposures of that time.

-- Drops every monthly partition whose month ended before p_before; answers the dropped names.
CREATE FUNCTION product_analytics.drop_events_before(p_before timestamptz) RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_name text;
BEGIN
    FOR v_name IN
        SELECT c.relname FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'product_analytics.events'::regclass AND c.relname ~ '^events_[0-9]{6}$'
          AND (to_date(substr(c.relname, 8), 'YYYYMM') + interval '1 month') AT TIME ZONE 'UTC' <= p_before
        ORDER BY c.relname
    LOOP
        EXECUTE format('DROP TABLE product_analytics.%I', v_name);
        RETURN NEXT v_name;
    END LOOP;
    DELETE FROM product_analytics.event_uuids WHERE received_at < p_before;
    DELETE FROM product_analytics.exposures WHERE first_seen < p_before;
END
$$;
REVOKE ALL ON FUNCTION product_analytics.drop_events_before(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION product_analytics.drop_events_before(timestamptz) TO service_role;
