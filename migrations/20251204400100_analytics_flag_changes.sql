-- Every server keeps the feature flags in memory and forgets them when this channel is notified:
-- once per statement that changes the table, after its commit (NOTIFY is transactional), so a
-- server that reads again sees the change.
CREATE FUNCTION product_analytics.notify_feature_flags_changed() RETURNS trigger
LANGUAGE plpgsql
SET search_path = ''
AS $$
BEGIN
    PERFORM pg_notify('onboard_feature_flags', '');
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION product_analytics.notify_feature_flags_changed() FROM PUBLIC;

CREATE TRIGGER feature_flags_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON product_analytics.feature_flags
    FOR EACH STATEMENT EXECUTE FUNCTION product_analytics.notify_feature_flags_changed();
