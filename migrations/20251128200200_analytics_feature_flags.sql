-- Product analytics, part 3: feature flags, in PostHog's definition format so that the
-- definitions the server evaluates are the ones it serves to SDKs that evaluate locally.
--   filters.groups: [{properties: [{key, value, operator, type}], rollout_percentage, variant}]
--   filters.multivariate: {variants: [{key, name, rollout_percentage}]} (percentages sum to 100)
--   filters.payloads: {"true" | variant key: JSON text}
-- Managed by the service role (the server's admin API writes as the service role).

-- Whether `p_filters` has the shape above (a CHECK on the table).
CREATE FUNCTION product_analytics.valid_flag_filters(p_filters jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT jsonb_typeof(p_filters) = 'object'
       AND jsonb_typeof(coalesce(p_filters -> 'groups', '[]')) = 'array'
       AND NOT EXISTS (
           SELECT FROM jsonb_array_elements(coalesce(p_filters -> 'groups', '[]')) AS g
           WHERE jsonb_typeof(g) <> 'object'
              OR jsonb_typeof(coalesce(g -> 'properties', '[]')) <> 'array'
              OR (g ? 'rollout_percentage' AND jsonb_typeof(g -> 'rollout_percentage') NOT IN ('number', 'null'))
              OR (jsonb_typeof(g -> 'rollout_percentage') = 'number'
                  AND (g ->> 'rollout_percentage')::numeric NOT BETWEEN 0 AND 100))
       AND (jsonb_typeof(p_filters -> 'multivariate') IS DISTINCT FROM 'object'
            OR (SELECT coalesce(sum((v ->> 'rollout_percentage')::numeric), 0) = 100
                   AND bool_and(jsonb_typeof(v -> 'key') = 'string' AND jsonb_typeof(v -> 'rollout_percentage') = 'number')
                FROM jsonb_array_elements(coalesce(p_filters -> 'multivariate' -> 'variants', '[]')) AS v))
       AND jsonb_typeof(coalesce(p_filters -> 'payloads', '{}')) = 'object'
$$;

CREATE TABLE product_analytics.feature_flags (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key        text NOT NULL UNIQUE CHECK (key ~ '^[A-Za-z0-9_.-]{1,200}$'),
    name       text NOT NULL DEFAULT '',
    active     boolean NOT NULL DEFAULT true,
    filters    jsonb NOT NULL DEFAULT '{"groups": [{"properties": [], "rollout_percentage": 100}]}'
               CHECK (product_analytics.valid_flag_filters(filters)),
    -- Raised on every change (PostHog's metadata.version).
    version    integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE product_analytics.feature_flags IS 'Feature flags in PostHog''s definition format (filters: groups, multivariate, payloads)';

REVOKE ALL ON product_analytics.feature_flags FROM PUBLIC, anon, authenticated;
GRANT SELECT, INSERT, UPDATE, DELETE ON product_analytics.feature_flags TO service_role;
