-- Auth's rate limits, counted in the database so that every server process (every replica)
-- shares one budget per client: one row per key ('signin:ip:…', 'signin:email:…',
-- 'refresh:ip:…'), a fixed window each.
CREATE TABLE auth.rate_limits (
    key          text PRIMARY KEY,
    window_start timestamptz NOT NULL,
    hits         integer NOT NULL
);
CREATE INDEX rate_limits_window_start ON auth.rate_limits (window_start);
REVOKE ALL ON auth.rate_limits FROM PUBLIC, anon, authenticated;

-- Counts one hit on each key (a key's window restarts once it is over); true while every key
-- is within `max_hits` for its window. Now and then drops windows that ended a day ago.
CREATE FUNCTION auth.rate_limit_hit(keys text[], max_hits integer, window_seconds double precision) RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = ''
AS $$
DECLARE
    worst integer;
BEGIN
    WITH hit AS (
        INSERT INTO auth.rate_limits AS r (key, window_start, hits)
        SELECT DISTINCT k, now(), 1 FROM unnest(keys) AS k
        ON CONFLICT (key) DO UPDATE SET
            hits = CASE WHEN r.window_start <= now() - make_interval(secs => window_seconds) THEN 1 ELSE r.hits + 1 END,
            window_start = CASE WHEN r.window_start <= now() - make_interval(secs => window_seconds) THEN now() ELSE r.window_start END
        RETURNING hits
    )
    SELECT max(hits) INTO worst FROM hit;
    IF random() < 0.01 THEN
        DELETE FROM auth.rate_limits WHERE window_start < now() - interval '1 day';
    END IF;
    RETURN coalesce(worst, 0) <= max_hits;
END
$$;
REVOKE ALL ON FUNCTION auth.rate_limit_hit(text[], integer, double precision) FROM PUBLIC, anon, authenticated;
