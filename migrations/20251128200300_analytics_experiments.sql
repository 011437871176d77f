-- Product analytics, part 4: an experiment's counts. An experiment is a multivariate flag and a
-- goal: an onboarding state reached (analytics.onboarding_transitions, the server's own history)
-- or an event, within p_days of the person's first exposure. The statistics are the server's
-- (the Analytics target's ExperimentReport).

-- Per variant: the persons exposed (each counted once, in the variant of their first exposure;
-- exposures answered `false` are not in the experiment) and how many of them reached the goal.
-- Exactly one of p_goal_state and p_goal_event is given.
CREATE FUNCTION product_analytics.experiment_counts(p_flag text, p_goal_state text, p_goal_event text, p_days integer)
RETURNS TABLE (variant text, exposures bigint, conversions bigint)
LANGUAGE sql STABLE
AS $$
    WITH exposed AS (
        SELECT DISTINCT ON (d.person_id) d.person_id, x.variant, x.first_seen
        FROM product_analytics.exposures AS x
        JOIN product_analytics.person_distinct_ids AS d ON d.distinct_id = x.distinct_id
        WHERE x.flag_key = p_flag AND x.variant NOT IN ('false', '')
        ORDER BY d.person_id, x.first_seen
    )
    SELECT e.variant, count(*), count(*) FILTER (WHERE
        (p_goal_state IS NOT NULL AND EXISTS (
            SELECT FROM product_analytics.person_distinct_ids AS u
            JOIN analytics.onboarding_transitions AS t ON t.user_id = u.user_id
            WHERE u.person_id = e.person_id AND t.to_state = p_goal_state
              AND t.at >= e.first_seen AND t.at < e.first_seen + make_interval(days => p_days)))
        OR (p_goal_event IS NOT NULL AND EXISTS (
            SELECT FROM product_analytics.person_distinct_ids AS u
            JOIN product_analytics.events AS v ON v.distinct_id = u.distinct_id
            WHERE u.person_id = e.person_id AND v.event = p_goal_event
              AND v."timestamp" >= e.first_seen AND v."timestamp" < e.first_seen + make_interval(days => p_days))))
    FROM exposed AS e
    GROUP BY e.variant
    ORDER BY e.variant
$$;
REVOKE ALL ON FUNCTION product_analytics.experiment_counts(text, text, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION product_analytics.experiment_counts(text, text, text, integer) TO service_role;
