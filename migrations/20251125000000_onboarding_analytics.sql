-- Onboarding analytics, part 1 (data): every change of user_profiles.onboarding_state is
-- recorded in an append-only history, and service-role-only SQL functions answer the dashboard's
-- questions from it. Everything lives in the schema `analytics`, which the REST API does not
-- expose (only `public` is) and which anon/authenticated may not even use.
--
-- Conventions of the functions in section 4:
--   * The window [p_from, p_to) selects users by SIGN-UP time (auth.users.created_at); a NULL
--     bound is unbounded. "Now" questions (current state, stuck) are asked of those users now.
--   * p_cohort splits them: NULL or 'all' (one cohort, named 'all'); 'day' / 'week' (UTC sign-up
--     day or ISO week, named 'YYYY-MM-DD' after its first day); 'provider' ('anonymous' while
--     auth.users.is_anonymous, else raw_app_meta_data->>'provider': 'email', 'google', 'apple';
--     'unknown' without one). An upgraded anonymous user counts under 'email', its provider now.
--     Anything else raises 22023.
--   * Steps are the onboarding states in the order of the valid_onboarding_state constraint,
--     numbered 1 (NOT_STARTED) to 8 (COMPLETE): analytics.onboarding_steps().
--   * "Completed" means user_profiles.onboarding_completed_at is set (when the state first became
--     COMPLETE; the database never moves it).
--   * Each function is one SQL query, SECURITY INVOKER and without SET clauses, so the planner
--     inlines it into the caller's statement and plans it with the caller's constants; the
--     service role reads the tables with its own privileges.

CREATE SCHEMA analytics;
REVOKE ALL ON SCHEMA analytics FROM PUBLIC;
GRANT USAGE ON SCHEMA analytics TO service_role;

-- ============================================================================
-- 1. The steps, in order
-- ============================================================================

-- The one list of the states in onboarding order (a schema test keeps it equal to
-- valid_onboarding_state).
CREATE FUNCTION analytics.onboarding_states() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ARRAY['NOT_STARTED', 'USER_INFO', 'CHILD_INFO', 'GOALS', 'TOPICS', 'DISPOSITIONS', 'REVIEW', 'COMPLETE'] $$;

-- A state's step number (1 = NOT_STARTED … 8 = COMPLETE); NULL for an unknown state.
CREATE FUNCTION analytics.step_no(p_state text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT array_position(analytics.onboarding_states(), p_state) $$;

CREATE FUNCTION analytics.onboarding_steps() RETURNS TABLE (step_no integer, step text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT s.step_no::integer, s.step FROM unnest(analytics.onboarding_states()) WITH ORDINALITY AS s(step, step_no) $$;

-- ============================================================================
-- 2. The history, and each user's progress
-- ============================================================================

-- One row per change of a user's onboarding_state, appended by the triggers on user_profiles.
CREATE TABLE analytics.onboarding_transitions (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id          uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    from_state       text,
    to_state         text NOT NULL,
    at               timestamptz NOT NULL DEFAULT clock_timestamp(),
    from_state_since timestamptz,
    CONSTRAINT onboarding_transitions_changes_state CHECK (from_state IS DISTINCT FROM to_state),
    CONSTRAINT onboarding_transitions_since_needs_from CHECK (from_state_since IS NULL OR from_state IS NOT NULL)
);
COMMENT ON TABLE analytics.onboarding_transitions IS
    'Append-only history of user_profiles.onboarding_state (triggers on user_profiles write it); rows go only with their user (ON DELETE CASCADE from auth.users)';
COMMENT ON COLUMN analytics.onboarding_transitions.from_state IS
    'The state before; NULL for the first row (the profile''s creation, or the migration''s backfill of a profile that existed before it)';
COMMENT ON COLUMN analytics.onboarding_transitions.at IS 'When the state changed (the clock when the change was written, never before the user''s sign-up)';
COMMENT ON COLUMN analytics.onboarding_transitions.from_state_since IS
    'When the user entered from_state (the at of the user''s previous row; filled in on insert), so at - from_state_since is the time spent in from_state';

-- A user's history in order: the previous row on insert, per-user questions, the cascade.
CREATE INDEX onboarding_transitions_user_at_idx ON analytics.onboarding_transitions (user_id, at);
-- Time windows: rows are appended in time order, so a window is a compact range of the table.
CREATE INDEX onboarding_transitions_at_idx ON analytics.onboarding_transitions (at);
-- Completions by time (steps into COMPLETE, not a backfill's first row), answered from the index.
CREATE INDEX onboarding_transitions_completed_idx ON analytics.onboarding_transitions (at) INCLUDE (user_id)
    WHERE to_state = 'COMPLETE' AND from_state IS NOT NULL;

-- Each user's progress, kept from the history by a trigger on it (so it holds for rows written
-- by hand too): the current state and since when, and the furthest step ever reached. The
-- funnel and the drop-off read one row per user here instead of every user's whole history.
CREATE TABLE analytics.onboarding_progress (
    user_id       uuid PRIMARY KEY REFERENCES auth.users (id) ON DELETE CASCADE,
    state         text NOT NULL,
    state_since   timestamptz NOT NULL,
    furthest_step integer NOT NULL
);
COMMENT ON TABLE analytics.onboarding_progress IS
    'Per user, from analytics.onboarding_transitions: the latest state, when it was entered, and the furthest step (analytics.step_no) ever entered';

-- The analytics window selects users by sign-up time.
CREATE INDEX IF NOT EXISTS users_created_at_idx ON auth.users (created_at);

-- Only the owner writes (the triggers below run as the owner); the service role reads.
REVOKE ALL ON analytics.onboarding_transitions, analytics.onboarding_progress FROM PUBLIC, anon, authenticated, service_role;
GRANT SELECT ON analytics.onboarding_transitions, analytics.onboarding_progress TO service_role;

-- Append-only, the owner included: no UPDATE, no TRUNCATE, and DELETE only of a user who is gone
-- (the ON DELETE CASCADE from auth.users that delete_account and the admin API go through).
CREATE FUNCTION analytics.onboarding_transitions_append_only() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM auth.users WHERE id = OLD.user_id) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'analytics.onboarding_transitions is append-only (% refused)', TG_OP
        USING ERRCODE = '42501', HINT = 'History goes only with its user: delete the auth.users row.';
END
$$;

-- Fills in from_state_since: when the user entered from_state, i.e. their latest earlier row.
CREATE FUNCTION analytics.onboarding_transitions_fill_since() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    IF NEW.from_state IS NOT NULL AND NEW.from_state_since IS NULL THEN
        SELECT max(t.at) INTO NEW.from_state_since
          FROM analytics.onboarding_transitions t
         WHERE t.user_id = NEW.user_id AND t.at <= NEW.at;
    END IF;
    RETURN NEW;
END
$$;

-- Keeps onboarding_progress: the latest row (by at) gives the state; the furthest step only grows.
CREATE FUNCTION analytics.onboarding_transitions_track_progress() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    INSERT INTO analytics.onboarding_progress AS p (user_id, state, state_since, furthest_step)
    VALUES (NEW.user_id, NEW.to_state, NEW.at, coalesce(analytics.step_no(NEW.to_state), 0))
    ON CONFLICT (user_id) DO UPDATE
       SET state = CASE WHEN EXCLUDED.state_since >= p.state_since THEN EXCLUDED.state ELSE p.state END,
           state_since = greatest(p.state_since, EXCLUDED.state_since),
           furthest_step = greatest(p.furthest_step, EXCLUDED.furthest_step);
    RETURN NULL;
END
$$;

-- Records the first state on INSERT and each change on UPDATE. SECURITY DEFINER: users change
-- their own profile but may neither write nor read the history.
CREATE FUNCTION analytics.record_onboarding_transition() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    INSERT INTO analytics.onboarding_transitions (user_id, from_state, to_state)
    VALUES (NEW.id, CASE WHEN TG_OP = 'UPDATE' THEN OLD.onboarding_state END, NEW.onboarding_state);
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION analytics.onboarding_transitions_append_only(), analytics.onboarding_transitions_fill_since(),
    analytics.onboarding_transitions_track_progress(), analytics.record_onboarding_transition()
    FROM PUBLIC, anon, authenticated, service_role;

-- No profile may change between the backfill below and the triggers' creation: a concurrent
-- sign-up would get neither a synthetic row nor a recorded one.
LOCK TABLE public.user_profiles IN SHARE ROW EXCLUSIVE MODE;

-- Existing profiles have no history: one synthetic first row each, into their current state,
-- at the best time known for entering it (completion if complete, else the last update).
INSERT INTO analytics.onboarding_transitions (user_id, from_state, to_state, at)
SELECT p.id, NULL, p.onboarding_state,
       CASE WHEN p.onboarding_state = 'COMPLETE' THEN coalesce(p.onboarding_completed_at, p.updated_at) ELSE p.updated_at END
  FROM public.user_profiles p
 ORDER BY 4, 1;
INSERT INTO analytics.onboarding_progress (user_id, state, state_since, furthest_step)
SELECT t.user_id, t.to_state, t.at, coalesce(analytics.step_no(t.to_state), 0)
  FROM analytics.onboarding_transitions t;

CREATE TRIGGER onboarding_transitions_append_only
    BEFORE UPDATE OR DELETE ON analytics.onboarding_transitions
    FOR EACH ROW EXECUTE FUNCTION analytics.onboarding_transitions_append_only();
CREATE TRIGGER onboarding_transitions_no_truncate
    BEFORE TRUNCATE ON analytics.onboarding_transitions
    FOR EACH STATEMENT EXECUTE FUNCTION analytics.onboarding_transitions_append_only();
CREATE TRIGGER onboarding_transitions_fill_since
    BEFORE INSERT ON analytics.onboarding_transitions
    FOR EACH ROW EXECUTE FUNCTION analytics.onboarding_transitions_fill_since();
CREATE TRIGGER onboarding_transitions_track_progress
    AFTER INSERT ON analytics.onboarding_transitions
    FOR EACH ROW EXECUTE FUNCTION analytics.onboarding_transitions_track_progress();

CREATE TRIGGER user_profiles_record_onboarding_insert
    AFTER INSERT ON public.user_profiles
    FOR EACH ROW EXECUTE FUNCTION analytics.record_onboarding_transition();
CREATE TRIGGER user_profiles_record_onboarding_update
    AFTER UPDATE ON public.user_profiles
    FOR EACH ROW WHEN (OLD.onboarding_state IS DISTINCT FROM NEW.onboarding_state)
    EXECUTE FUNCTION analytics.record_onboarding_transition();

-- ============================================================================
-- 3. The users the questions are about
-- ============================================================================

CREATE FUNCTION analytics.invalid_cohort(p_cohort text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
    RAISE EXCEPTION 'unknown cohort %', quote_literal(p_cohort)
        USING ERRCODE = '22023', HINT = 'Use NULL, ''all'', ''day'', ''week'' or ''provider''.';
END
$$;

-- Users who signed up in [p_from, p_to), with their cohort and what the questions need. (The
-- cohort's CASE folds to one branch once inlined with a constant p_cohort; an unknown one raises
-- while the statement is planned.)
CREATE FUNCTION analytics.cohort_users(p_from timestamptz, p_to timestamptz, p_cohort text DEFAULT NULL)
RETURNS TABLE (
    user_id uuid,
    cohort text,
    signed_up_at timestamptz,
    provider text,
    is_anonymous boolean,
    onboarding_state text,
    profile_created_at timestamptz,
    onboarding_completed_at timestamptz
)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT u.id,
           CASE coalesce(p_cohort, 'all')
               WHEN 'all' THEN 'all'
               WHEN 'day' THEN to_char(u.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')
               WHEN 'week' THEN to_char(date_trunc('week', u.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')
               WHEN 'provider' THEN CASE WHEN u.is_anonymous THEN 'anonymous'
                                         ELSE coalesce(u.raw_app_meta_data ->> 'provider', 'unknown') END
               ELSE analytics.invalid_cohort(p_cohort)
           END,
           u.created_at,
           CASE WHEN u.is_anonymous THEN 'anonymous' ELSE coalesce(u.raw_app_meta_data ->> 'provider', 'unknown') END,
           u.is_anonymous,
           coalesce(p.onboarding_state, 'NOT_STARTED'),
           p.created_at,
           p.onboarding_completed_at
      FROM auth.users u
      LEFT JOIN public.user_profiles p ON p.id = u.id
     WHERE u.created_at >= coalesce(p_from, '-infinity')
       AND u.created_at < coalesce(p_to, 'infinity')
$$;

-- ============================================================================
-- 4. The questions
-- ============================================================================

-- Users per current state (user_profiles; every step listed, zeros included), and their share
-- of the cohort.
CREATE FUNCTION analytics.state_counts(p_from timestamptz, p_to timestamptz, p_cohort text DEFAULT NULL)
RETURNS TABLE (cohort text, step_no integer, step text, users bigint, pct_of_cohort numeric)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    WITH counts AS (
        SELECT c.cohort, c.onboarding_state, count(*) AS users
          FROM analytics.cohort_users(p_from, p_to, p_cohort) c
         GROUP BY c.cohort, c.onboarding_state
    )
    SELECT k.cohort, s.step_no, s.step, coalesce(n.users, 0),
           round(100.0 * coalesce(n.users, 0) / sum(coalesce(n.users, 0)) OVER (PARTITION BY k.cohort), 2)
      FROM (SELECT DISTINCT counts.cohort FROM counts) k
     CROSS JOIN analytics.onboarding_steps() s
      LEFT JOIN counts n ON n.cohort = k.cohort AND n.onboarding_state = s.step
     ORDER BY k.cohort, s.step_no
$$;

-- The funnel: users who reached each step (their furthest step ever is this one or later), as a
-- percentage of the step before and of the first step.
CREATE FUNCTION analytics.funnel(p_from timestamptz, p_to timestamptz, p_cohort text DEFAULT NULL)
RETURNS TABLE (cohort text, step_no integer, step text, users_reached bigint, pct_of_previous numeric, pct_of_first numeric)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    WITH counts AS (
        SELECT c.cohort, coalesce(g.furthest_step, 1) AS step_no, count(*) AS users
          FROM analytics.cohort_users(p_from, p_to, p_cohort) c
          LEFT JOIN analytics.onboarding_progress g ON g.user_id = c.user_id
         GROUP BY 1, 2
    ), reached AS (
        SELECT k.cohort, s.step_no, s.step,
               coalesce(sum(n.users) OVER (PARTITION BY k.cohort ORDER BY s.step_no DESC), 0)::bigint AS users
          FROM (SELECT DISTINCT counts.cohort FROM counts) k
         CROSS JOIN analytics.onboarding_steps() s
          LEFT JOIN counts n ON n.cohort = k.cohort AND n.step_no = s.step_no
    )
    SELECT r.cohort, r.step_no, r.step, r.users,
           round(100.0 * r.users / nullif(lag(r.users) OVER w, 0), 2),
           round(100.0 * r.users / nullif(first_value(r.users) OVER w, 0), 2)
      FROM reached r
    WINDOW w AS (PARTITION BY r.cohort ORDER BY r.step_no)
     ORDER BY r.cohort, r.step_no
$$;

-- Drop-off: per step but COMPLETE, the users at it now and those who entered it more than
-- p_stuck_hours ago ("stuck"), also as a percentage of the cohort.
CREATE FUNCTION analytics.drop_off(p_from timestamptz, p_to timestamptz, p_cohort text DEFAULT NULL, p_stuck_hours integer DEFAULT 24)
RETURNS TABLE (cohort text, step_no integer, step text, users_at_step bigint, users_stuck bigint, pct_stuck_of_cohort numeric)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    WITH counts AS (
        SELECT c.cohort, coalesce(g.state, 'NOT_STARTED') AS state, count(*) AS users,
               count(*) FILTER (WHERE coalesce(g.state_since, c.signed_up_at) < now() - make_interval(hours => p_stuck_hours)) AS stuck
          FROM analytics.cohort_users(p_from, p_to, p_cohort) c
          LEFT JOIN analytics.onboarding_progress g ON g.user_id = c.user_id
         GROUP BY 1, 2
    ), sizes AS (
        SELECT counts.cohort, sum(counts.users) AS users FROM counts GROUP BY counts.cohort
    )
    SELECT k.cohort, s.step_no, s.step, coalesce(n.users, 0), coalesce(n.stuck, 0),
           round(100.0 * coalesce(n.stuck, 0) / k.users, 2)
      FROM sizes k
     CROSS JOIN analytics.onboarding_steps() s
      LEFT JOIN counts n ON n.cohort = k.cohort AND n.state = s.step
     WHERE s.step <> 'COMPLETE'
     ORDER BY k.cohort, s.step_no
$$;

-- Time spent on each step, over the visits that ended (a user who went back to a step counts
-- once per visit): median and 90th percentile. (A user's rows are never older than their
-- sign-up, so only rows since p_from are read.)
CREATE FUNCTION analytics.step_durations(p_from timestamptz, p_to timestamptz, p_cohort text DEFAULT NULL)
RETURNS TABLE (cohort text, step_no integer, step text, visits bigint, median interval, p90 interval)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT c.cohort, analytics.step_no(t.from_state), t.from_state, count(*),
           percentile_cont(0.5) WITHIN GROUP (ORDER BY t.at - t.from_state_since),
           percentile_cont(0.9) WITHIN GROUP (ORDER BY t.at - t.from_state_since)
      FROM analytics.cohort_users(p_from, p_to, p_cohort) c
      JOIN analytics.onboarding_transitions t ON t.user_id = c.user_id
     WHERE t.from_state_since IS NOT NULL
       AND t.at >= coalesce(p_from, '-infinity')
     GROUP BY c.cohort, t.from_state
     ORDER BY 1, 2
$$;

-- Time from the profile's creation (onboarding's start) to completion, over the users who
-- completed; profiles created already COMPLETE (backfill-profiles) skipped onboarding and are
-- left out.
CREATE FUNCTION analytics.time_to_completion(p_from timestamptz, p_to timestamptz, p_cohort text DEFAULT NULL)
RETURNS TABLE (cohort text, users_completed bigint, median interval, p90 interval, average interval)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT c.cohort, count(*),
           percentile_cont(0.5) WITHIN GROUP (ORDER BY c.onboarding_completed_at - c.profile_created_at),
           percentile_cont(0.9) WITHIN GROUP (ORDER BY c.onboarding_completed_at - c.profile_created_at),
           avg(c.onboarding_completed_at - c.profile_created_at)
      FROM analytics.cohort_users(p_from, p_to, p_cohort) c
     WHERE c.onboarding_completed_at > c.profile_created_at
     GROUP BY c.cohort
     ORDER BY c.cohort
$$;

-- Children (public.children rows the user created) per user who completed onboarding.
CREATE FUNCTION analytics.children_per_completed_user(p_from timestamptz, p_to timestamptz, p_cohort text DEFAULT NULL)
RETURNS TABLE (cohort text, users_completed bigint, children bigint, average numeric, median double precision)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT k.cohort, count(*), sum(k.children)::bigint,
           round(avg(k.children), 2),
           percentile_cont(0.5) WITHIN GROUP (ORDER BY k.children)
      FROM (SELECT c.cohort, c.user_id, count(ch.user_id) AS children
              FROM analytics.cohort_users(p_from, p_to, p_cohort) c
              LEFT JOIN public.children ch ON ch.user_id = c.user_id
             WHERE c.onboarding_completed_at IS NOT NULL
             GROUP BY c.cohort, c.user_id) k
     GROUP BY k.cohort
     ORDER BY k.cohort
$$;

-- Users who signed up anonymously, and how many of them are not anonymous any more. Upgrading
-- (PUT /user with an e-mail) sets is_anonymous to false, rewrites app_metadata to e-mail's and
-- adds the user's first identity, later than the user; a user who signed up with e-mail or an
-- id_token got an identity in the sign-up's own transaction. So: anonymous now, or an 'email'
-- user whose first identity is younger than the user.
CREATE FUNCTION analytics.anonymous_upgrades(p_from timestamptz, p_to timestamptz, p_cohort text DEFAULT NULL)
RETURNS TABLE (cohort text, anonymous_users bigint, upgraded_users bigint, pct_upgraded numeric)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT c.cohort, count(*), count(*) FILTER (WHERE NOT c.is_anonymous),
           round(100.0 * count(*) FILTER (WHERE NOT c.is_anonymous) / count(*), 2)
      FROM analytics.cohort_users(p_from, p_to, p_cohort) c
     WHERE c.is_anonymous
        OR (c.provider = 'email'
            AND (SELECT min(i.created_at) FROM auth.identities i WHERE i.user_id = c.user_id) > c.signed_up_at)
     GROUP BY c.cohort
     ORDER BY c.cohort
$$;

-- The dashboard's daily series: one row per UTC day of [p_from, p_to) (both bounds needed) and
-- cohort, days without anything included:
--   signed_up            users who signed up that day;
--   signed_up_completed  of those, the users who have completed onboarding (by now);
--   completion_rate_pct  signed_up_completed / signed_up;
--   completions          users who completed onboarding that day, whenever they signed up
--                        (steps into COMPLETE; profiles created COMPLETE are not counted).
CREATE FUNCTION analytics.daily_completion(p_from timestamptz, p_to timestamptz, p_cohort text DEFAULT NULL)
RETURNS TABLE (day date, cohort text, signed_up bigint, signed_up_completed bigint, completion_rate_pct numeric, completions bigint)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    WITH signups AS (
        SELECT (c.signed_up_at AT TIME ZONE 'UTC')::date AS day, c.cohort, count(*) AS users,
               count(*) FILTER (WHERE c.onboarding_completed_at IS NOT NULL) AS completed
          FROM analytics.cohort_users(p_from, p_to, p_cohort) c
         GROUP BY 1, 2
    ), completions AS (
        -- One cohort: the history's index alone. (With a constant p_cohort the planner drops
        -- the branch that does not apply.)
        SELECT (t.at AT TIME ZONE 'UTC')::date AS day, 'all' AS cohort, count(DISTINCT t.user_id) AS users
          FROM analytics.onboarding_transitions t
         WHERE t.to_state = 'COMPLETE' AND t.from_state IS NOT NULL
           AND t.at >= p_from AND t.at < p_to
           AND coalesce(p_cohort, 'all') = 'all'
         GROUP BY 1
        UNION ALL
        -- Cohorts: each completer's own cohort, whenever they signed up.
        SELECT (t.at AT TIME ZONE 'UTC')::date, c.cohort, count(DISTINCT t.user_id)
          FROM analytics.onboarding_transitions t
          JOIN analytics.cohort_users(NULL, NULL, p_cohort) c ON c.user_id = t.user_id
         WHERE t.to_state = 'COMPLETE' AND t.from_state IS NOT NULL
           AND t.at >= p_from AND t.at < p_to
           AND coalesce(p_cohort, 'all') <> 'all'
         GROUP BY 1, 2
    ), cohorts AS (
        -- As an array: its unnest is estimated at a few rows, which keeps the estimate of the
        -- day × cohort grid (and so the plan) small.
        SELECT array(SELECT signups.cohort FROM signups UNION SELECT completions.cohort FROM completions
                     UNION SELECT 'all' WHERE coalesce(p_cohort, 'all') = 'all') AS list
    )
    SELECT d.day, k.cohort, coalesce(s.users, 0), coalesce(s.completed, 0),
           round(100.0 * s.completed / nullif(s.users, 0), 2), coalesce(x.users, 0)
      FROM generate_series(0, ((p_to AT TIME ZONE 'UTC') - interval '1 microsecond')::date - (p_from AT TIME ZONE 'UTC')::date) n
     CROSS JOIN LATERAL (SELECT (p_from AT TIME ZONE 'UTC')::date + n AS day) d
     CROSS JOIN cohorts
     CROSS JOIN unnest(cohorts.list) k(cohort)
      LEFT JOIN signups s ON s.day = d.day AND s.cohort = k.cohort
      LEFT JOIN completions x ON x.day = d.day AND x.cohort = k.cohort
     ORDER BY d.day, k.cohort
$$;

-- ============================================================================
-- 5. Who may call them: the service role only
-- ============================================================================

REVOKE ALL ON FUNCTION
    analytics.onboarding_states(), analytics.step_no(text), analytics.onboarding_steps(),
    analytics.invalid_cohort(text),
    analytics.cohort_users(timestamptz, timestamptz, text),
    analytics.state_counts(timestamptz, timestamptz, text),
    analytics.funnel(timestamptz, timestamptz, text),
    analytics.drop_off(timestamptz, timestamptz, text, integer),
    analytics.step_durations(timestamptz, timestamptz, text),
    analytics.time_to_completion(timestamptz, timestamptz, text),
    analytics.children_per_completed_user(timestamptz, timestamptz, text),
    analytics.anonymous_upgrades(timestamptz, timestamptz, text),
    analytics.daily_completion(timestamptz, timestamptz, text)
FROM PUBLIC, anon, authenticated;
GRANT EXECUTE ON FUNCTION
    analytics.onboarding_states(), analytics.step_no(text), analytics.onboarding_steps(),
    analytics.invalid_cohort(text),
    analytics.cohort_users(timestamptz, timestamptz, text),
    analytics.state_counts(timestamptz, timestamptz, text),
    analytics.funnel(timestamptz, timestamptz, text),
    analytics.drop_off(timestamptz, timestamptz, text, integer),
    analytics.step_durations(timestamptz, timestamptz, text),
    analytics.time_to_completion(timestamptz, timestamptz, text),
    analytics.children_per_completed_user(timestamptz, timestamptz, text),
    analytics.anonymous_upgrades(timestamptz, timestamptz, text),
    analytics.daily_completion(timestamptz, timestamptz, text)
TO service_role;
