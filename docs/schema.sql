--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: analytics; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA analytics;


--
-- Name: auth; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA auth;


--
-- Name: onboard_migrations; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA onboard_migrations;


--
-- Name: private; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA private;


--
-- Name: product_analytics; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA product_analytics;


--
-- Name: realtime; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA realtime;


--
-- Name: storage; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA storage;


--
-- Name: aal_level; Type: TYPE; Schema: auth; Owner: -
--

CREATE TYPE auth.aal_level AS ENUM (
    'aal1',
    'aal2',
    'aal3'
);


--
-- Name: factor_status; Type: TYPE; Schema: auth; Owner: -
--

CREATE TYPE auth.factor_status AS ENUM (
    'unverified',
    'verified'
);


--
-- Name: factor_type; Type: TYPE; Schema: auth; Owner: -
--

CREATE TYPE auth.factor_type AS ENUM (
    'totp',
    'webauthn',
    'phone'
);


--
-- Name: anonymous_upgrades(timestamp with time zone, timestamp with time zone, text); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.anonymous_upgrades(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text DEFAULT NULL::text) RETURNS TABLE(cohort text, anonymous_users bigint, upgraded_users bigint, pct_upgraded numeric)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT c.cohort, count(*), count(*) FILTER (WHERE NOT c.is_anonymous),
           round(100.0 * count(*) FILTER (WHERE NOT c.is_anonymous) / count(*), 2)
      FROM analytics.cohort_users(p_from, p_to, p_cohort) c
     WHERE c.is_anonymous
        OR (c.provider = 'email'
            AND (SELECT min(i.created_at) FROM auth.identities i WHERE i.user_id = c.user_id) > c.signed_up_at)
        OR EXISTS (SELECT 1 FROM analytics.former_users f WHERE f.id = c.user_id AND f.signed_up_anonymously)
     GROUP BY c.cohort
     ORDER BY c.cohort
$$;


--
-- Name: children_per_completed_user(timestamp with time zone, timestamp with time zone, text); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.children_per_completed_user(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text DEFAULT NULL::text) RETURNS TABLE(cohort text, users_completed bigint, children bigint, average numeric, median double precision)
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT k.cohort, count(*), sum(k.children)::bigint,
           round(avg(k.children), 2),
           percentile_cont(0.5) WITHIN GROUP (ORDER BY k.children)
      FROM (SELECT c.cohort, c.user_id,
                   coalesce((SELECT f.children FROM analytics.former_users f WHERE f.id = c.user_id),
                            (SELECT count(*) FROM public.children ch WHERE ch.user_id = c.user_id)) AS children
              FROM analytics.cohort_users(p_from, p_to, p_cohort) c
             WHERE c.onboarding_completed_at IS NOT NULL) k
     GROUP BY k.cohort
     ORDER BY k.cohort
$$;


--
-- Name: cohort_users(timestamp with time zone, timestamp with time zone, text); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.cohort_users(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text DEFAULT NULL::text) RETURNS TABLE(user_id uuid, cohort text, signed_up_at timestamp with time zone, provider text, is_anonymous boolean, onboarding_state text, profile_created_at timestamp with time zone, onboarding_completed_at timestamp with time zone)
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
    UNION ALL
    SELECT f.id,
           CASE coalesce(p_cohort, 'all')
               WHEN 'all' THEN 'all'
               WHEN 'day' THEN to_char(f.signed_up_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')
               WHEN 'week' THEN to_char(date_trunc('week', f.signed_up_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')
               WHEN 'provider' THEN f.provider
               ELSE analytics.invalid_cohort(p_cohort)
           END,
           f.signed_up_at,
           f.provider,
           f.is_anonymous,
           f.onboarding_state,
           f.profile_created_at,
           f.onboarding_completed_at
      FROM analytics.former_users f
     WHERE f.signed_up_at >= coalesce(p_from, '-infinity')
       AND f.signed_up_at < coalesce(p_to, 'infinity')
$$;


--
-- Name: daily_completion(timestamp with time zone, timestamp with time zone, text); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.daily_completion(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text DEFAULT NULL::text) RETURNS TABLE(day date, cohort text, signed_up bigint, signed_up_completed bigint, completion_rate_pct numeric, completions bigint)
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


--
-- Name: drop_off(timestamp with time zone, timestamp with time zone, text, integer); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.drop_off(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text DEFAULT NULL::text, p_stuck_hours integer DEFAULT 24) RETURNS TABLE(cohort text, step_no integer, step text, users_at_step bigint, users_stuck bigint, pct_stuck_of_cohort numeric)
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


--
-- Name: funnel(timestamp with time zone, timestamp with time zone, text); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.funnel(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text DEFAULT NULL::text) RETURNS TABLE(cohort text, step_no integer, step text, users_reached bigint, pct_of_previous numeric, pct_of_first numeric)
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


--
-- Name: invalid_cohort(text); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.invalid_cohort(p_cohort text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
BEGIN
    RAISE EXCEPTION 'unknown cohort %', quote_literal(p_cohort)
        USING ERRCODE = '22023', HINT = 'Use NULL, ''all'', ''day'', ''week'' or ''provider''.';
END
$$;


--
-- Name: keep_former_user(); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.keep_former_user() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
DECLARE
    subject uuid := gen_random_uuid();
    profile public.user_profiles;
    provider text := CASE WHEN OLD.is_anonymous THEN 'anonymous' ELSE coalesce(OLD.raw_app_meta_data ->> 'provider', 'unknown') END;
BEGIN
    SELECT * INTO profile FROM public.user_profiles WHERE id = OLD.id;
    INSERT INTO analytics.former_users (id, signed_up_at, provider, is_anonymous, signed_up_anonymously,
                                        onboarding_state, profile_created_at, onboarding_completed_at, children)
    VALUES (subject, OLD.created_at, provider, OLD.is_anonymous,
            OLD.is_anonymous OR (provider = 'email' AND coalesce(
                (SELECT min(i.created_at) FROM auth.identities i WHERE i.user_id = OLD.id) > OLD.created_at, false)),
            coalesce(profile.onboarding_state, 'NOT_STARTED'), profile.created_at, profile.onboarding_completed_at,
            (SELECT count(*) FROM public.children c WHERE c.user_id = OLD.id));
    UPDATE analytics.onboarding_transitions SET user_id = subject WHERE user_id = OLD.id;
    UPDATE analytics.onboarding_progress SET user_id = subject WHERE user_id = OLD.id;
    RETURN OLD;
END
$$;


--
-- Name: onboarding_states(); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.onboarding_states() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT ARRAY['NOT_STARTED', 'USER_INFO', 'CHILD_INFO', 'GOALS', 'TOPICS', 'DISPOSITIONS', 'REVIEW', 'COMPLETE'] $$;


--
-- Name: onboarding_steps(); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.onboarding_steps() RETURNS TABLE(step_no integer, step text)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT s.step_no::integer, s.step FROM unnest(analytics.onboarding_states()) WITH ORDINALITY AS s(step, step_no) $$;


--
-- Name: onboarding_transitions_append_only(); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.onboarding_transitions_append_only() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
BEGIN
    IF TG_OP = 'UPDATE'
       AND to_jsonb(NEW) - 'user_id' = to_jsonb(OLD) - 'user_id'
       AND EXISTS (SELECT 1 FROM analytics.former_users f WHERE f.id = NEW.user_id)
       AND NOT EXISTS (SELECT 1 FROM analytics.former_users f WHERE f.id = OLD.user_id) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'analytics.onboarding_transitions is append-only (% refused)', TG_OP
        USING ERRCODE = '42501', HINT = 'Deleting the user (auth.users) keeps the history under an analytics.former_users id.';
END
$$;


--
-- Name: onboarding_transitions_fill_since(); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.onboarding_transitions_fill_since() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
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


--
-- Name: onboarding_transitions_track_progress(); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.onboarding_transitions_track_progress() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
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


--
-- Name: record_onboarding_transition(); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.record_onboarding_transition() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
BEGIN
    INSERT INTO analytics.onboarding_transitions (user_id, from_state, to_state)
    VALUES (NEW.id, CASE WHEN TG_OP = 'UPDATE' THEN OLD.onboarding_state END, NEW.onboarding_state);
    RETURN NULL;
END
$$;


--
-- Name: state_counts(timestamp with time zone, timestamp with time zone, text); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.state_counts(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text DEFAULT NULL::text) RETURNS TABLE(cohort text, step_no integer, step text, users bigint, pct_of_cohort numeric)
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


--
-- Name: step_durations(timestamp with time zone, timestamp with time zone, text); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.step_durations(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text DEFAULT NULL::text) RETURNS TABLE(cohort text, step_no integer, step text, visits bigint, median interval, p90 interval)
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


--
-- Name: step_no(text); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.step_no(p_state text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT array_position(analytics.onboarding_states(), p_state) $$;


--
-- Name: time_to_completion(timestamp with time zone, timestamp with time zone, text); Type: FUNCTION; Schema: analytics; Owner: -
--

CREATE FUNCTION analytics.time_to_completion(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text DEFAULT NULL::text) RETURNS TABLE(cohort text, users_completed bigint, median interval, p90 interval, average interval)
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


--
-- Name: email(); Type: FUNCTION; Schema: auth; Owner: -
--

CREATE FUNCTION auth.email() RETURNS text
    LANGUAGE sql STABLE
    AS $$
  SELECT coalesce(
    nullif(current_setting('request.jwt.claim.email', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'email')
  )::text
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: mfa_factors; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.mfa_factors (
    id uuid NOT NULL,
    user_id uuid NOT NULL,
    friendly_name text,
    factor_type auth.factor_type NOT NULL,
    status auth.factor_status NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    secret text,
    phone text,
    last_challenged_at timestamp with time zone,
    last_totp_step bigint
);


--
-- Name: factor_json(auth.mfa_factors); Type: FUNCTION; Schema: auth; Owner: -
--

CREATE FUNCTION auth.factor_json(f auth.mfa_factors) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  SELECT jsonb_build_object(
    'id', f.id,
    'created_at', auth.gotrue_time(f.created_at),
    'updated_at', auth.gotrue_time(f.updated_at),
    'status', f.status,
    'factor_type', f.factor_type,
    'phone', coalesce(f.phone, ''),
    'last_challenged_at', auth.gotrue_time(f.last_challenged_at)
  ) || CASE WHEN coalesce(f.friendly_name, '') <> '' THEN jsonb_build_object('friendly_name', f.friendly_name) ELSE '{}'::jsonb END
$$;


--
-- Name: gotrue_time(timestamp with time zone); Type: FUNCTION; Schema: auth; Owner: -
--

CREATE FUNCTION auth.gotrue_time(t timestamp with time zone) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
  SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;


--
-- Name: jwt(); Type: FUNCTION; Schema: auth; Owner: -
--

CREATE FUNCTION auth.jwt() RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  SELECT coalesce(
    nullif(current_setting('request.jwt.claim', true), ''),
    nullif(current_setting('request.jwt.claims', true), '')
  )::jsonb
$$;


--
-- Name: oauth_clients; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.oauth_clients (
    id uuid NOT NULL,
    client_secret_hash text,
    registration_type text NOT NULL,
    client_type text NOT NULL,
    token_endpoint_auth_method text NOT NULL,
    redirect_uris text[] NOT NULL,
    grant_types text[] NOT NULL,
    client_name text,
    client_uri text,
    logo_uri text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    CONSTRAINT oauth_clients_check CHECK (((client_type = 'public'::text) = (client_secret_hash IS NULL))),
    CONSTRAINT oauth_clients_client_name_check CHECK ((char_length(client_name) <= 1024)),
    CONSTRAINT oauth_clients_client_type_check CHECK ((client_type = ANY (ARRAY['public'::text, 'confidential'::text]))),
    CONSTRAINT oauth_clients_client_uri_check CHECK ((char_length(client_uri) <= 2048)),
    CONSTRAINT oauth_clients_logo_uri_check CHECK ((char_length(logo_uri) <= 2048)),
    CONSTRAINT oauth_clients_registration_type_check CHECK ((registration_type = ANY (ARRAY['dynamic'::text, 'manual'::text]))),
    CONSTRAINT oauth_clients_token_endpoint_auth_method_check CHECK ((token_endpoint_auth_method = ANY (ARRAY['none'::text, 'client_secret_basic'::text, 'client_secret_post'::text])))
);


--
-- Name: oauth_client_json(auth.oauth_clients); Type: FUNCTION; Schema: auth; Owner: -
--

CREATE FUNCTION auth.oauth_client_json(c auth.oauth_clients) RETURNS json
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  SELECT json_strip_nulls(json_build_object(
    'client_id', c.id,
    'client_type', c.client_type,
    'redirect_uris', nullif(c.redirect_uris, '{}'),
    'token_endpoint_auth_method', c.token_endpoint_auth_method,
    'grant_types', nullif(c.grant_types, '{}'),
    'response_types', json_build_array('code'),
    'client_name', nullif(c.client_name, ''),
    'client_uri', nullif(c.client_uri, ''),
    'logo_uri', nullif(c.logo_uri, ''),
    'registration_type', c.registration_type,
    'created_at', auth.gotrue_time(c.created_at),
    'updated_at', auth.gotrue_time(c.updated_at)
  ))
$$;


--
-- Name: webauthn_credentials; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.webauthn_credentials (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    credential_id bytea NOT NULL,
    public_key bytea NOT NULL,
    attestation_type text DEFAULT ''::text NOT NULL,
    aaguid uuid,
    sign_count bigint DEFAULT 0 NOT NULL,
    transports jsonb DEFAULT '[]'::jsonb NOT NULL,
    backup_eligible boolean DEFAULT false NOT NULL,
    backed_up boolean DEFAULT false NOT NULL,
    friendly_name text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone
);


--
-- Name: passkey_json(auth.webauthn_credentials); Type: FUNCTION; Schema: auth; Owner: -
--

CREATE FUNCTION auth.passkey_json(c auth.webauthn_credentials) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  SELECT jsonb_build_object('id', c.id, 'created_at', auth.gotrue_time(c.created_at))
    || CASE WHEN c.friendly_name <> '' THEN jsonb_build_object('friendly_name', c.friendly_name) ELSE '{}'::jsonb END
    || CASE WHEN c.last_used_at IS NOT NULL THEN jsonb_build_object('last_used_at', auth.gotrue_time(c.last_used_at)) ELSE '{}'::jsonb END
$$;


--
-- Name: rate_limit_hit(text[], integer, double precision); Type: FUNCTION; Schema: auth; Owner: -
--

CREATE FUNCTION auth.rate_limit_hit(keys text[], max_hits integer, window_seconds double precision) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
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


--
-- Name: rate_limit_reached(text, integer, double precision); Type: FUNCTION; Schema: auth; Owner: -
--

CREATE FUNCTION auth.rate_limit_reached(key text, max_hits integer, window_seconds double precision) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  SELECT coalesce((SELECT r.hits >= max_hits FROM auth.rate_limits r
                   WHERE r.key = rate_limit_reached.key
                     AND r.window_start > now() - make_interval(secs => window_seconds)), false)
$$;


--
-- Name: role(); Type: FUNCTION; Schema: auth; Owner: -
--

CREATE FUNCTION auth.role() RETURNS text
    LANGUAGE sql STABLE
    AS $$
  SELECT coalesce(
    nullif(current_setting('request.jwt.claim.role', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
  )::text
$$;


--
-- Name: uid(); Type: FUNCTION; Schema: auth; Owner: -
--

CREATE FUNCTION auth.uid() RETURNS uuid
    LANGUAGE sql STABLE
    AS $$
  SELECT coalesce(
    nullif(current_setting('request.jwt.claim.sub', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
  )::uuid
$$;


--
-- Name: users; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.users (
    instance_id uuid,
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    aud character varying(255) DEFAULT 'authenticated'::character varying NOT NULL,
    role character varying(255) DEFAULT 'authenticated'::character varying NOT NULL,
    email character varying(255),
    encrypted_password character varying(255),
    email_confirmed_at timestamp with time zone,
    invited_at timestamp with time zone,
    confirmation_sent_at timestamp with time zone,
    recovery_sent_at timestamp with time zone,
    email_change character varying(255),
    last_sign_in_at timestamp with time zone,
    raw_app_meta_data jsonb DEFAULT '{}'::jsonb NOT NULL,
    raw_user_meta_data jsonb DEFAULT '{}'::jsonb NOT NULL,
    is_super_admin boolean,
    phone text,
    phone_confirmed_at timestamp with time zone,
    banned_until timestamp with time zone,
    is_sso_user boolean DEFAULT false NOT NULL,
    is_anonymous boolean DEFAULT false NOT NULL,
    deleted_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    email_change_sent_at timestamp with time zone,
    email_change_confirm_status smallint DEFAULT 0 NOT NULL,
    reauthentication_sent_at timestamp with time zone,
    phone_change text DEFAULT ''::text NOT NULL,
    phone_change_sent_at timestamp with time zone,
    CONSTRAINT users_email_change_confirm_status_check CHECK (((email_change_confirm_status >= 0) AND (email_change_confirm_status <= 2)))
);


--
-- Name: user_json(auth.users); Type: FUNCTION; Schema: auth; Owner: -
--

CREATE FUNCTION auth.user_json(u auth.users) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  SELECT jsonb_build_object(
    'id', u.id,
    'aud', u.aud,
    'role', u.role,
    'email', coalesce(u.email, ''),
    'email_confirmed_at', auth.gotrue_time(u.email_confirmed_at),
    'phone', coalesce(u.phone, ''),
    'confirmed_at', auth.gotrue_time(coalesce(u.email_confirmed_at, u.phone_confirmed_at)),
    'last_sign_in_at', auth.gotrue_time(u.last_sign_in_at),
    'app_metadata', u.raw_app_meta_data,
    'user_metadata', u.raw_user_meta_data,
    'identities', coalesce((
        SELECT jsonb_agg(jsonb_build_object(
                 'identity_id', i.id,
                 'id', i.provider_id,
                 'user_id', i.user_id,
                 'identity_data', i.identity_data,
                 'provider', i.provider,
                 'last_sign_in_at', auth.gotrue_time(i.last_sign_in_at),
                 'created_at', auth.gotrue_time(i.created_at),
                 'updated_at', auth.gotrue_time(i.updated_at),
                 'email', i.email) ORDER BY i.created_at)
        FROM auth.identities i WHERE i.user_id = u.id), '[]'::jsonb),
    'created_at', auth.gotrue_time(u.created_at),
    'updated_at', auth.gotrue_time(u.updated_at),
    'is_anonymous', u.is_anonymous
  ) || jsonb_strip_nulls(jsonb_build_object(
    'phone_confirmed_at', auth.gotrue_time(u.phone_confirmed_at),
    'confirmation_sent_at', auth.gotrue_time(u.confirmation_sent_at),
    'recovery_sent_at', auth.gotrue_time(u.recovery_sent_at),
    'email_change_sent_at', auth.gotrue_time(u.email_change_sent_at),
    'new_email', nullif(u.email_change, ''),
    'new_phone', nullif(u.phone_change, ''),
    'phone_change_sent_at', auth.gotrue_time(u.phone_change_sent_at),
    'reauthentication_sent_at', auth.gotrue_time(u.reauthentication_sent_at),
    'invited_at', auth.gotrue_time(u.invited_at),
    'banned_until', auth.gotrue_time(u.banned_until),
    'factors', (SELECT jsonb_agg(auth.factor_json(f) ORDER BY f.created_at) FROM auth.mfa_factors f WHERE f.user_id = u.id)
  ))
$$;


--
-- Name: check_onboarding_completable(uuid); Type: FUNCTION; Schema: private; Owner: -
--

CREATE FUNCTION private.check_onboarding_completable(p_user uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
DECLARE
    caller uuid := auth.uid();
    child record;
    any_child boolean := false;
BEGIN
    IF p_user IS NULL THEN
        RAISE EXCEPTION 'completing onboarding needs a signed-in user' USING ERRCODE = '42501';
    END IF;
    IF caller IS NOT NULL AND caller <> p_user THEN
        RAISE EXCEPTION 'permission denied to complete the onboarding of another user' USING ERRCODE = '42501';
    END IF;
    FOR child IN
        SELECT c.id, c.name, coalesce(cardinality(c.goals), 0) AS goal_count, coalesce(cardinality(c.topics), 0) AS topic_count
          FROM public.children c
         WHERE c.user_id = p_user
            OR c.user_id IN (SELECT theirs.user_id
                               FROM public.family_members mine
                               JOIN public.family_members theirs ON theirs.family_id = mine.family_id
                              WHERE mine.user_id = p_user)
         ORDER BY c.created_at, c.id
           FOR SHARE OF c
    LOOP
        any_child := true;
        IF child.goal_count NOT BETWEEN 1 AND 3 THEN
            RAISE EXCEPTION 'Choose 1 to 3 goals for % (% chosen)', child.name, child.goal_count
                USING ERRCODE = 'P0001', DETAIL = 'goals_count',
                      HINT = format('Give child %s between 1 and 3 goals.', child.id);
        END IF;
        IF child.topic_count < 3 THEN
            RAISE EXCEPTION 'Choose at least 3 topics for % (% chosen)', child.name, child.topic_count
                USING ERRCODE = 'P0001', DETAIL = 'topics_count',
                      HINT = format('Give child %s at least 3 topics.', child.id);
        END IF;
    END LOOP;
    IF NOT any_child THEN
        RAISE EXCEPTION 'Add at least one child before completing onboarding'
            USING ERRCODE = 'P0001', DETAIL = 'no_children', HINT = 'Add a child first.';
    END IF;
END
$$;


--
-- Name: explain_onboarding_state(); Type: FUNCTION; Schema: private; Owner: -
--

CREATE FUNCTION private.explain_onboarding_state() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
BEGIN
    IF NEW.onboarding_state IS NOT NULL AND analytics.step_no(NEW.onboarding_state) IS NULL THEN
        RAISE EXCEPTION 'new row for relation "user_profiles" violates check constraint "valid_onboarding_state"'
            USING ERRCODE = '23514', CONSTRAINT = 'valid_onboarding_state', TABLE = 'user_profiles', SCHEMA = 'public',
                  COLUMN = 'onboarding_state',
                  DETAIL = format('%s is not an onboarding state.', to_jsonb(NEW.onboarding_state)),
                  HINT = 'onboarding_state is one of ' || array_to_string(analytics.onboarding_states(), ', ') || '.';
    END IF;
    RETURN NEW;
END
$$;


--
-- Name: guard_onboarding_state(); Type: FUNCTION; Schema: private; Owner: -
--

CREATE FUNCTION private.guard_onboarding_state() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
BEGIN
    IF NOT private.is_end_user() THEN
        RETURN NEW;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.onboarding_state = 'COMPLETE' AND NEW.onboarding_state IS DISTINCT FROM 'COMPLETE' THEN
        RAISE EXCEPTION 'Onboarding is complete and cannot be reopened'
            USING ERRCODE = 'P0001', DETAIL = 'onboarding_complete_final',
                  HINT = 'COMPLETE is final; only the service role can reset onboarding.';
    END IF;
    IF NEW.onboarding_state = 'COMPLETE' AND (TG_OP = 'INSERT' OR OLD.onboarding_state IS DISTINCT FROM 'COMPLETE') THEN
        -- Another user's row, written as anon/authenticated: row-level security refuses it
        -- after this trigger (42501), without telling anything about that user's children.
        IF NEW.id IS DISTINCT FROM auth.uid() AND current_user IN ('anon', 'authenticated') THEN
            RETURN NEW;
        END IF;
        PERFORM private.check_onboarding_completable(NEW.id);
    END IF;
    RETURN NEW;
END
$$;


--
-- Name: hand_over_family(); Type: FUNCTION; Schema: private; Owner: -
--

CREATE FUNCTION private.hand_over_family() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM public.family_members WHERE family_id = OLD.family_id) THEN
        DELETE FROM public.families WHERE id = OLD.family_id;
    ELSIF NOT EXISTS (SELECT 1 FROM public.family_members WHERE family_id = OLD.family_id AND role = 'owner') THEN
        UPDATE public.family_members SET role = 'owner'
        WHERE family_id = OLD.family_id
          AND user_id = (SELECT user_id FROM public.family_members WHERE family_id = OLD.family_id
                         ORDER BY joined_at, user_id LIMIT 1);
    END IF;
    RETURN NULL;
END
$$;


--
-- Name: is_end_user(); Type: FUNCTION; Schema: private; Owner: -
--

CREATE FUNCTION private.is_end_user() RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    SELECT current_user IN ('anon', 'authenticated') OR coalesce(auth.role(), '') IN ('anon', 'authenticated')
$$;


--
-- Name: lock_family_of_departing_member(); Type: FUNCTION; Schema: private; Owner: -
--

CREATE FUNCTION private.lock_family_of_departing_member() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
BEGIN
    PERFORM 1 FROM public.families WHERE id = OLD.family_id FOR UPDATE;
    RETURN OLD;
END
$$;


--
-- Name: my_family_id(); Type: FUNCTION; Schema: private; Owner: -
--

CREATE FUNCTION private.my_family_id() RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$ SELECT family_id FROM public.family_members WHERE user_id = auth.uid() $$;


--
-- Name: owns_family_of(uuid); Type: FUNCTION; Schema: private; Owner: -
--

CREATE FUNCTION private.owns_family_of(owner uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
    SELECT EXISTS (
        SELECT 1 FROM public.family_members mine
        JOIN public.family_members theirs ON theirs.family_id = mine.family_id
        WHERE mine.user_id = auth.uid() AND mine.role = 'owner' AND theirs.user_id = owner)
$$;


--
-- Name: server_timestamps(); Type: FUNCTION; Schema: private; Owner: -
--

CREATE FUNCTION private.server_timestamps() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
BEGIN
    IF current_user IN ('anon', 'authenticated', 'service_role')
       OR coalesce(auth.role(), '') IN ('anon', 'authenticated', 'service_role') THEN
        IF TG_OP = 'INSERT' THEN
            NEW.created_at := now();
            NEW.updated_at := now();
        ELSE
            NEW.created_at := OLD.created_at;
            NEW.updated_at := now();
        END IF;
    END IF;
    RETURN NEW;
END
$$;


--
-- Name: shares_family_with(uuid); Type: FUNCTION; Schema: private; Owner: -
--

CREATE FUNCTION private.shares_family_with(owner uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
    SELECT owner = auth.uid() OR EXISTS (
        SELECT 1 FROM public.family_members mine
        JOIN public.family_members theirs ON theirs.family_id = mine.family_id
        WHERE mine.user_id = auth.uid() AND theirs.user_id = owner)
$$;


--
-- Name: drop_events_before(timestamp with time zone); Type: FUNCTION; Schema: product_analytics; Owner: -
--

CREATE FUNCTION product_analytics.drop_events_before(p_before timestamp with time zone) RETURNS SETOF text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
$_$;


--
-- Name: ensure_partition(timestamp with time zone); Type: FUNCTION; Schema: product_analytics; Owner: -
--

CREATE FUNCTION product_analytics.ensure_partition(p_at timestamp with time zone) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
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


--
-- Name: event_time(jsonb); Type: FUNCTION; Schema: product_analytics; Owner: -
--

CREATE FUNCTION product_analytics.event_time(e jsonb) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
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


--
-- Name: experiment_counts(text, text, text, integer); Type: FUNCTION; Schema: product_analytics; Owner: -
--

CREATE FUNCTION product_analytics.experiment_counts(p_flag text, p_goal_state text, p_goal_event text, p_days integer) RETURNS TABLE(variant text, exposures bigint, conversions bigint)
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


--
-- Name: ingest(jsonb, text); Type: FUNCTION; Schema: product_analytics; Owner: -
--

CREATE FUNCTION product_analytics.ingest(p_events jsonb, p_source text) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
$_$;


--
-- Name: merge_distinct_ids(text, text); Type: FUNCTION; Schema: product_analytics; Owner: -
--

CREATE FUNCTION product_analytics.merge_distinct_ids(p_distinct_id text, p_other text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
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


--
-- Name: notify_feature_flags_changed(); Type: FUNCTION; Schema: product_analytics; Owner: -
--

CREATE FUNCTION product_analytics.notify_feature_flags_changed() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
BEGIN
    PERFORM pg_notify('onboard_feature_flags', '');
    RETURN NULL;
END
$$;


--
-- Name: person_for(text); Type: FUNCTION; Schema: product_analytics; Owner: -
--

CREATE FUNCTION product_analytics.person_for(p_distinct_id text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
$_$;


--
-- Name: valid_flag_filters(jsonb); Type: FUNCTION; Schema: product_analytics; Owner: -
--

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


--
-- Name: children; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.children (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid DEFAULT auth.uid() NOT NULL,
    name text NOT NULL,
    age integer,
    temperament text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    birthday date,
    goals text[] DEFAULT '{}'::text[],
    topics text[] DEFAULT '{}'::text[],
    temperament_talkative integer DEFAULT 5,
    temperament_sensitivity integer DEFAULT 5,
    temperament_accountability integer DEFAULT 5,
    CONSTRAINT valid_birthday CHECK ((birthday <= CURRENT_DATE)),
    CONSTRAINT valid_temperament_accountability CHECK (((temperament_accountability >= 1) AND (temperament_accountability <= 10))),
    CONSTRAINT valid_temperament_sensitivity CHECK (((temperament_sensitivity >= 1) AND (temperament_sensitivity <= 10))),
    CONSTRAINT valid_temperament_talkative CHECK (((temperament_talkative >= 1) AND (temperament_talkative <= 10)))
);

ALTER TABLE ONLY public.children REPLICA IDENTITY FULL;


--
-- Name: user_profiles; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_profiles (
    id uuid NOT NULL,
    onboarding_state text DEFAULT 'NOT_STARTED'::text NOT NULL,
    current_child_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    onboarding_completed_at timestamp with time zone,
    CONSTRAINT valid_onboarding_state CHECK ((onboarding_state = ANY (ARRAY['NOT_STARTED'::text, 'USER_INFO'::text, 'CHILD_INFO'::text, 'GOALS'::text, 'TOPICS'::text, 'DISPOSITIONS'::text, 'REVIEW'::text, 'COMPLETE'::text])))
);

ALTER TABLE ONLY public.user_profiles REPLICA IDENTITY FULL;


--
-- Name: all_children(public.user_profiles); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.all_children(profile public.user_profiles) RETURNS SETOF public.children
    LANGUAGE sql STABLE
    AS $$
    SELECT c.*
      FROM public.children c
     WHERE c.user_id = profile.id
        OR c.user_id IN (SELECT theirs.user_id
                           FROM public.family_members mine
                           JOIN public.family_members theirs ON theirs.family_id = mine.family_id
                          WHERE mine.user_id = profile.id)
     ORDER BY c.created_at, c.id
$$;


--
-- Name: complete_onboarding(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.complete_onboarding() RETURNS public.user_profiles
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
DECLARE
    caller  uuid := auth.uid();
    profile public.user_profiles;
BEGIN
    IF caller IS NULL THEN
        RAISE EXCEPTION 'complete_onboarding needs a signed-in user' USING ERRCODE = '42501';
    END IF;
    SELECT * INTO profile FROM public.user_profiles WHERE id = caller FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'This account has no profile'
            USING ERRCODE = 'P0001', DETAIL = 'no_profile',
                  HINT = 'Run `onboard backfill-profiles` for accounts created before the onboarding migration.';
    END IF;
    IF profile.onboarding_state = 'COMPLETE' THEN
        RETURN profile;
    END IF;
    PERFORM private.check_onboarding_completable(caller);
    UPDATE public.user_profiles
    SET onboarding_state = 'COMPLETE', current_child_id = NULL
    WHERE id = caller
    RETURNING * INTO profile;
    RETURN profile;
END
$$;


--
-- Name: create_family(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.create_family(name text) RETURNS json
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
DECLARE
    caller uuid := auth.uid();
    family uuid;
BEGIN
    IF caller IS NULL THEN
        RAISE EXCEPTION 'create_family needs a signed-in user' USING ERRCODE = '42501';
    END IF;
    IF EXISTS (SELECT 1 FROM public.family_members WHERE user_id = caller) THEN
        RAISE EXCEPTION 'You already belong to a family'
            USING ERRCODE = 'PT409', DETAIL = 'already_in_family', HINT = 'Leave it first with leave_family().';
    END IF;
    INSERT INTO public.families (name, invite_code, created_by)
    VALUES (btrim(create_family.name), public.new_invite_code(), caller)
    RETURNING id INTO family;
    INSERT INTO public.family_members (family_id, user_id, role) VALUES (family, caller, 'owner');
    RETURN public.get_family();
END
$$;


--
-- Name: create_user_profile(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.create_user_profile() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
BEGIN
    INSERT INTO public.user_profiles (id, onboarding_state)
    VALUES (NEW.id, 'NOT_STARTED')
    ON CONFLICT (id) DO NOTHING;
    RETURN NEW;
END;
$$;


--
-- Name: delete_account(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.delete_account() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
DECLARE
    caller uuid := auth.uid();
BEGIN
    IF caller IS NULL THEN
        RAISE EXCEPTION 'delete_account needs a signed-in user' USING ERRCODE = '42501';
    END IF;
    DELETE FROM auth.users WHERE id = caller;
END
$$;


--
-- Name: get_family(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.get_family() RETURNS json
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
    SELECT json_build_object(
        'id', f.id, 'name', f.name, 'invite_code', f.invite_code, 'created_at', f.created_at,
        'members', (SELECT json_agg(json_build_object(
                        'user_id', m.user_id, 'role', m.role, 'joined_at', m.joined_at,
                        'full_name', u.raw_user_meta_data ->> 'full_name') ORDER BY m.joined_at)
                    FROM public.family_members m JOIN auth.users u ON u.id = m.user_id
                    WHERE m.family_id = f.id))
    FROM public.families f
    WHERE f.id = (SELECT family_id FROM public.family_members WHERE user_id = auth.uid())
$$;


--
-- Name: get_user_with_profile(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.get_user_with_profile(p_user_id uuid) RETURNS TABLE(user_id uuid, email text, display_name text, onboarding_state text, current_child_id uuid)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
BEGIN
    RETURN QUERY
    SELECT
        au.id,
        au.email::text,
        au.raw_user_meta_data->>'full_name' as display_name,
        COALESCE(up.onboarding_state, 'NOT_STARTED') as onboarding_state,
        up.current_child_id
    FROM auth.users au
    LEFT JOIN public.user_profiles up ON up.id = au.id
    WHERE au.id = p_user_id
      AND au.id = auth.uid();
END;
$$;


--
-- Name: join_family(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.join_family(code text) RETURNS json
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
DECLARE
    caller uuid := auth.uid();
    normalized text := upper(regexp_replace(coalesce(code, ''), '[\s-]', '', 'g'));
    family uuid;
    current_family uuid;
BEGIN
    -- A read-only call (GET /rpc/join_family) could write neither the failure count nor the
    -- membership, and the error each write raises would tell a valid code from a wrong one
    -- outside the throttle. Refuse it first, whatever the code.
    IF current_setting('transaction_read_only') = 'on' THEN
        RAISE EXCEPTION 'join_family changes data: call it with POST' USING ERRCODE = '25006';
    END IF;
    IF caller IS NULL THEN
        RAISE EXCEPTION 'join_family needs a signed-in user' USING ERRCODE = '42501';
    END IF;
    IF (SELECT count(*) FROM public.family_join_failures
        WHERE user_id = caller AND attempted_at > now() - interval '1 hour') >= 10 THEN
        RAISE EXCEPTION 'Too many wrong invite codes; try again later'
            USING ERRCODE = 'PT429', DETAIL = 'join_rate_limited';
    END IF;
    SELECT id INTO family FROM public.families WHERE replace(invite_code, '-', '') = normalized;
    IF family IS NULL THEN
        -- Counted even though the call fails: answered as 404 with response.status, not raised,
        -- so this insert commits.
        DELETE FROM public.family_join_failures WHERE attempted_at < now() - interval '1 hour';
        INSERT INTO public.family_join_failures (user_id) VALUES (caller);
        PERFORM set_config('response.status', '404', true);
        RETURN json_build_object('code', 'PT404', 'message', 'No family has this invite code',
                                 'details', 'invalid_invite_code', 'hint', 'Check the code with the family''s owner.');
    END IF;
    SELECT family_id INTO current_family FROM public.family_members WHERE user_id = caller;
    IF current_family = family THEN
        RETURN public.get_family();
    ELSIF current_family IS NOT NULL THEN
        RAISE EXCEPTION 'You already belong to another family'
            USING ERRCODE = 'PT409', DETAIL = 'already_in_family', HINT = 'Leave it first with leave_family().';
    END IF;
    INSERT INTO public.family_members (family_id, user_id, role) VALUES (family, caller, 'parent');
    RETURN public.get_family();
END
$$;


--
-- Name: keep_row_owner(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.keep_row_owner() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- TG_ARGV[0] names the owner column; compare OLD's and NEW's values of it.
    IF to_jsonb(NEW) -> TG_ARGV[0] IS DISTINCT FROM to_jsonb(OLD) -> TG_ARGV[0] THEN
        RAISE EXCEPTION 'the owner of a row in % cannot be changed', TG_TABLE_NAME
            USING ERRCODE = '42501', HINT = 'Create a new row for the other user instead.';
    END IF;
    RETURN NEW;
END
$$;


--
-- Name: leave_family(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.leave_family() RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
DECLARE
    caller uuid := auth.uid();
BEGIN
    IF caller IS NULL THEN
        RAISE EXCEPTION 'leave_family needs a signed-in user' USING ERRCODE = '42501';
    END IF;
    DELETE FROM public.family_members WHERE user_id = caller;
END
$$;


--
-- Name: new_invite_code(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.new_invite_code() RETURNS text
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
DECLARE
    alphabet constant text := 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
    code text := '';
    bytes bytea;
    b int;
BEGIN
    WHILE char_length(code) < 10 LOOP
        bytes := uuid_send(gen_random_uuid());
        FOR i IN 0..15 LOOP
            b := get_byte(bytes, i);
            -- Skip the version/variant nibbles' bytes (6 and 8) and bytes ≥ 248 (= 8 × 31).
            CONTINUE WHEN i = 6 OR i = 8 OR b >= 248;
            code := code || substr(alphabet, 1 + b % 31, 1);
            EXIT WHEN char_length(code) = 10;
        END LOOP;
    END LOOP;
    RETURN substr(code, 1, 5) || '-' || substr(code, 6, 5);
END
$$;


--
-- Name: regenerate_invite_code(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.regenerate_invite_code() RETURNS json
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
DECLARE
    caller uuid := auth.uid();
    family uuid;
BEGIN
    SELECT family_id INTO family FROM public.family_members WHERE user_id = caller AND role = 'owner';
    IF family IS NULL THEN
        RAISE EXCEPTION 'Only the family''s owner can regenerate its invite code'
            USING ERRCODE = 'PT403', DETAIL = 'not_family_owner';
    END IF;
    UPDATE public.families SET invite_code = public.new_invite_code() WHERE id = family;
    RETURN public.get_family();
END
$$;


--
-- Name: stamp_onboarding_completed_at(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.stamp_onboarding_completed_at() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.onboarding_completed_at IS NOT NULL THEN
        NEW.onboarding_completed_at := OLD.onboarding_completed_at;
    ELSIF NEW.onboarding_state = 'COMPLETE' THEN
        NEW.onboarding_completed_at := now();
    ELSE
        NEW.onboarding_completed_at := NULL;
    END IF;
    RETURN NEW;
END
$$;


--
-- Name: track(text, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.track(event text, properties jsonb DEFAULT '{}'::jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
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
$_$;


--
-- Name: update_updated_at_column(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.update_updated_at_column() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END
$$;


--
-- Name: announce_message(); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.announce_message() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
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


--
-- Name: broadcast_changes(text, text, text, text, text, record, record, text); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, new record, old record, level text DEFAULT 'ROW'::text) RETURNS void
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


--
-- Name: disable_table(regclass); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.disable_table(target regclass) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_publication_rel r JOIN pg_catalog.pg_publication p ON p.oid = r.prpubid
                WHERE p.pubname = 'supabase_realtime' AND r.prrelid = target) THEN
        EXECUTE format('ALTER PUBLICATION supabase_realtime DROP TABLE %s', target);
    END IF;
    PERFORM realtime.disable_triggers(target);
    IF (SELECT relreplident FROM pg_catalog.pg_class WHERE oid = target) = 'f' THEN
        EXECUTE format('ALTER TABLE %s REPLICA IDENTITY DEFAULT', target);
    END IF;
END
$$;


--
-- Name: disable_triggers(regclass); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.disable_triggers(target regclass) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
BEGIN
    EXECUTE format('DROP TRIGGER IF EXISTS realtime_changes ON %s', target);
    EXECUTE format('DROP TRIGGER IF EXISTS realtime_changes_update ON %s', target);
    EXECUTE format('DROP FUNCTION IF EXISTS realtime.%I()', 'notify_' || target::oid);
END
$$;


--
-- Name: enable_table(regclass); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.enable_table(target regclass) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index WHERE indrelid = target AND indisprimary) THEN
        RAISE EXCEPTION 'realtime needs a primary key on %', target USING ERRCODE = '55000';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM realtime.enabled_tables() AS t WHERE t = target) THEN
        EXECUTE format('ALTER PUBLICATION supabase_realtime ADD TABLE %s', target);
    END IF;
    IF (SELECT relreplident FROM pg_catalog.pg_class WHERE oid = target) <> 'f' THEN
        EXECUTE format('ALTER TABLE %s REPLICA IDENTITY FULL', target);
    END IF;
    IF (SELECT triggers FROM realtime.settings) THEN
        PERFORM realtime.enable_triggers(target);
    END IF;
END
$$;


--
-- Name: enable_triggers(regclass); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.enable_triggers(target regclass) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
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


--
-- Name: enabled_tables(); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.enabled_tables() RETURNS SETOF regclass
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    SELECT format('%I.%I', t.schemaname, t.tablename)::regclass
      FROM pg_catalog.pg_publication_tables t
     WHERE t.pubname = 'supabase_realtime'
$$;


--
-- Name: is_current(anyelement); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.is_current(committed anyelement) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
DECLARE
    target regclass := (SELECT nullif(t.typrelid, 0) FROM pg_catalog.pg_type t WHERE t.oid = pg_catalog.pg_typeof(committed))::regclass;
    key_condition text;
    found boolean;
BEGIN
    IF target IS NULL THEN
        RAISE EXCEPTION 'realtime.is_current takes a row of a table, not %', pg_catalog.pg_typeof(committed) USING ERRCODE = '42804';
    END IF;
    SELECT string_agg(format('t.%1$I = ($1).%1$I', a.attname), ' AND ')
      INTO key_condition
      FROM pg_catalog.pg_index i
      JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
     WHERE i.indrelid = target AND i.indisprimary;
    IF key_condition IS NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s AS t WHERE %s AND t::text = $1::text)', target, key_condition)
       INTO found USING committed;
    RETURN found;
END
$_$;


--
-- Name: is_enabled(regclass); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.is_enabled(target regclass) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
    SELECT EXISTS (SELECT 1 FROM realtime.enabled_tables() AS t WHERE t = target)
$$;


--
-- Name: policies_allow(anyelement); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.policies_allow(committed anyelement) RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $_$
DECLARE
    target regclass := (SELECT nullif(t.typrelid, 0) FROM pg_catalog.pg_type t WHERE t.oid = pg_catalog.pg_typeof(committed))::regclass;
    permissive text;
    restrictive text;
    allowed boolean;
BEGIN
    IF target IS NULL THEN
        RAISE EXCEPTION 'realtime.policies_allow takes a row of a table, not %', pg_catalog.pg_typeof(committed) USING ERRCODE = '42804';
    END IF;
    IF NOT pg_catalog.has_table_privilege(target, 'SELECT') THEN
        RETURN false;
    END IF;
    IF NOT pg_catalog.row_security_active(target) THEN
        RETURN true;
    END IF;
    SELECT string_agg('(' || pg_catalog.pg_get_expr(p.polqual, p.polrelid) || ')', ' OR ') FILTER (WHERE p.polpermissive),
           string_agg('(' || pg_catalog.pg_get_expr(p.polqual, p.polrelid) || ')', ' AND ') FILTER (WHERE NOT p.polpermissive)
      INTO permissive, restrictive
      FROM pg_catalog.pg_policy p
     WHERE p.polrelid = target
       AND p.polcmd IN ('r', '*')
       AND p.polqual IS NOT NULL
       AND (0 = ANY (p.polroles)
            OR EXISTS (SELECT 1 FROM unnest(p.polroles) AS r(role_id) WHERE pg_catalog.pg_has_role(current_user, r.role_id, 'USAGE')));
    IF permissive IS NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('SELECT (%s) AND (%s) FROM (SELECT ($1).*) AS %I', permissive, coalesce(restrictive, 'true'),
                   (SELECT c.relname FROM pg_catalog.pg_class c WHERE c.oid = target))
       INTO allowed USING committed;
    RETURN coalesce(allowed, false);
END
$_$;


--
-- Name: presence_heartbeat(uuid, integer); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.presence_heartbeat(server uuid, seconds integer) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
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


--
-- Name: renew_listener(uuid, text[], text[], integer, boolean); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.renew_listener(server uuid, tables text[], row_keys text[], seconds integer, replace boolean) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
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


--
-- Name: send(jsonb, text, text, boolean); Type: FUNCTION; Schema: realtime; Owner: -
--

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


--
-- Name: topic(); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.topic() RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT nullif(current_setting('realtime.topic', true), '')::text;
$$;


--
-- Name: trigger_function_template(); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.trigger_function_template() RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $_$ SELECT $$
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
$$ $_$;


--
-- Name: use_triggers(boolean); Type: FUNCTION; Schema: realtime; Owner: -
--

CREATE FUNCTION realtime.use_triggers("on" boolean) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
DECLARE
    target regclass;
BEGIN
    -- One switch at a time (two servers falling back together).
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('realtime.use_triggers'));
    UPDATE realtime.settings SET triggers = "on";
    FOR target IN SELECT realtime.enabled_tables() LOOP
        IF "on" THEN
            IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger WHERE tgrelid = target AND tgname = 'realtime_changes') THEN
                PERFORM realtime.enable_triggers(target);
            END IF;
        ELSE
            PERFORM realtime.disable_triggers(target);
        END IF;
    END LOOP;
END
$$;


--
-- Name: bucket_has_objects(text); Type: FUNCTION; Schema: storage; Owner: -
--

CREATE FUNCTION storage.bucket_has_objects(bucket text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$ SELECT EXISTS (SELECT 1 FROM storage.objects o WHERE o.bucket_id = bucket_has_objects.bucket) $$;


--
-- Name: extension(text); Type: FUNCTION; Schema: storage; Owner: -
--

CREATE FUNCTION storage.extension(name text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT reverse(split_part(reverse(storage.filename(name)), '.', 1)) $$;


--
-- Name: filename(text); Type: FUNCTION; Schema: storage; Owner: -
--

CREATE FUNCTION storage.filename(name text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT (string_to_array(name, '/'))[array_length(string_to_array(name, '/'), 1)] $$;


--
-- Name: foldername(text); Type: FUNCTION; Schema: storage; Owner: -
--

CREATE FUNCTION storage.foldername(name text) RETURNS text[]
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT (string_to_array(name, '/'))[1:array_length(string_to_array(name, '/'), 1) - 1] $$;


--
-- Name: shares_family_with_folder(text); Type: FUNCTION; Schema: storage; Owner: -
--

CREATE FUNCTION storage.shares_family_with_folder(folder text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
    SELECT CASE WHEN folder ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
        THEN private.shares_family_with(folder::uuid) ELSE false END
$_$;


--
-- Name: former_users; Type: TABLE; Schema: analytics; Owner: -
--

CREATE TABLE analytics.former_users (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    signed_up_at timestamp with time zone NOT NULL,
    provider text NOT NULL,
    is_anonymous boolean NOT NULL,
    signed_up_anonymously boolean NOT NULL,
    onboarding_state text NOT NULL,
    profile_created_at timestamp with time zone,
    onboarding_completed_at timestamp with time zone,
    children integer NOT NULL
);


--
-- Name: onboarding_progress; Type: TABLE; Schema: analytics; Owner: -
--

CREATE TABLE analytics.onboarding_progress (
    user_id uuid NOT NULL,
    state text NOT NULL,
    state_since timestamp with time zone NOT NULL,
    furthest_step integer NOT NULL
);


--
-- Name: onboarding_transitions; Type: TABLE; Schema: analytics; Owner: -
--

CREATE TABLE analytics.onboarding_transitions (
    id bigint NOT NULL,
    user_id uuid NOT NULL,
    from_state text,
    to_state text NOT NULL,
    at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    from_state_since timestamp with time zone,
    CONSTRAINT onboarding_transitions_changes_state CHECK ((from_state IS DISTINCT FROM to_state)),
    CONSTRAINT onboarding_transitions_since_needs_from CHECK (((from_state_since IS NULL) OR (from_state IS NOT NULL)))
);


--
-- Name: onboarding_transitions_id_seq; Type: SEQUENCE; Schema: analytics; Owner: -
--

ALTER TABLE analytics.onboarding_transitions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME analytics.onboarding_transitions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: dashboard_revoked_sessions; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.dashboard_revoked_sessions (
    nonce text NOT NULL,
    expires_at timestamp with time zone NOT NULL
);


--
-- Name: flow_state; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.flow_state (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    auth_code text,
    code_challenge_method text NOT NULL,
    code_challenge text NOT NULL,
    provider_type text NOT NULL,
    authentication_method text NOT NULL,
    auth_code_issued_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    provider_access_token text,
    provider_refresh_token text,
    CONSTRAINT flow_state_code_challenge_method_check CHECK ((code_challenge_method = ANY (ARRAY['s256'::text, 'plain'::text])))
);


--
-- Name: identities; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.identities (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    provider_id text NOT NULL,
    user_id uuid NOT NULL,
    identity_data jsonb DEFAULT '{}'::jsonb NOT NULL,
    provider text NOT NULL,
    email text GENERATED ALWAYS AS (lower((identity_data ->> 'email'::text))) STORED,
    last_sign_in_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: mail_outbox; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.mail_outbox (
    id bigint NOT NULL,
    route text NOT NULL,
    kind text NOT NULL,
    recipient text NOT NULL,
    subject text,
    html text,
    link text,
    code text,
    status text DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    last_error text,
    hook_input jsonb,
    CONSTRAINT mail_outbox_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'sent'::text, 'logged'::text, 'failed'::text])))
);


--
-- Name: mail_outbox_id_seq; Type: SEQUENCE; Schema: auth; Owner: -
--

ALTER TABLE auth.mail_outbox ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME auth.mail_outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: mfa_amr_claims; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.mfa_amr_claims (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    session_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    authentication_method text NOT NULL
);


--
-- Name: mfa_challenges; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.mfa_challenges (
    id uuid NOT NULL,
    factor_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    verified_at timestamp with time zone,
    ip_address inet NOT NULL,
    otp_code text
);


--
-- Name: oauth_authorizations; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.oauth_authorizations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    authorization_id text NOT NULL,
    client_id uuid NOT NULL,
    user_id uuid,
    redirect_uri text NOT NULL,
    scope text NOT NULL,
    state text,
    resource text,
    nonce text,
    code_challenge text NOT NULL,
    code_challenge_method text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    authorization_code text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    approved_at timestamp with time zone,
    CONSTRAINT oauth_authorizations_check CHECK ((expires_at > created_at)),
    CONSTRAINT oauth_authorizations_code_challenge_check CHECK (((char_length(code_challenge) >= 43) AND (char_length(code_challenge) <= 128))),
    CONSTRAINT oauth_authorizations_code_challenge_method_check CHECK ((code_challenge_method = ANY (ARRAY['s256'::text, 'plain'::text]))),
    CONSTRAINT oauth_authorizations_nonce_check CHECK ((char_length(nonce) <= 255)),
    CONSTRAINT oauth_authorizations_redirect_uri_check CHECK ((char_length(redirect_uri) <= 2048)),
    CONSTRAINT oauth_authorizations_resource_check CHECK ((char_length(resource) <= 2048)),
    CONSTRAINT oauth_authorizations_scope_check CHECK ((char_length(scope) <= 4096)),
    CONSTRAINT oauth_authorizations_state_check CHECK ((char_length(state) <= 4096)),
    CONSTRAINT oauth_authorizations_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'approved'::text, 'denied'::text, 'expired'::text])))
);


--
-- Name: oauth_consents; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.oauth_consents (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    client_id uuid NOT NULL,
    scopes text NOT NULL,
    granted_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    CONSTRAINT oauth_consents_check CHECK (((revoked_at IS NULL) OR (revoked_at >= granted_at))),
    CONSTRAINT oauth_consents_scopes_check CHECK (((char_length(scopes) <= 2048) AND (char_length(TRIM(BOTH FROM scopes)) > 0)))
);


--
-- Name: one_time_tokens; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.one_time_tokens (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    token_type text NOT NULL,
    token_hash text,
    otp_hash text NOT NULL,
    relates_to text NOT NULL,
    flow_state_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    passwordless boolean DEFAULT false NOT NULL,
    CONSTRAINT one_time_tokens_token_type_check CHECK ((token_type = ANY (ARRAY['confirmation_token'::text, 'recovery_token'::text, 'email_change_token_new'::text, 'email_change_token_current'::text, 'reauthentication_token'::text, 'phone_change_token'::text])))
);


--
-- Name: rate_limits; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.rate_limits (
    key text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    hits integer NOT NULL
);


--
-- Name: refresh_tokens; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.refresh_tokens (
    id bigint NOT NULL,
    token character varying(255) NOT NULL,
    user_id uuid NOT NULL,
    session_id uuid NOT NULL,
    parent character varying(255),
    revoked boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: refresh_tokens_id_seq; Type: SEQUENCE; Schema: auth; Owner: -
--

CREATE SEQUENCE auth.refresh_tokens_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: refresh_tokens_id_seq; Type: SEQUENCE OWNED BY; Schema: auth; Owner: -
--

ALTER SEQUENCE auth.refresh_tokens_id_seq OWNED BY auth.refresh_tokens.id;


--
-- Name: sessions; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.sessions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    aal auth.aal_level DEFAULT 'aal1'::auth.aal_level NOT NULL,
    not_after timestamp with time zone,
    refreshed_at timestamp with time zone,
    user_agent text,
    ip inet,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    factor_id uuid,
    oauth_client_id uuid,
    scopes text,
    CONSTRAINT sessions_scopes_check CHECK ((char_length(scopes) <= 4096))
);


--
-- Name: web3_used_messages; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.web3_used_messages (
    digest bytea NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT web3_used_messages_digest_check CHECK ((octet_length(digest) = 32))
);


--
-- Name: webauthn_challenges; Type: TABLE; Schema: auth; Owner: -
--

CREATE TABLE auth.webauthn_challenges (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid,
    challenge_type text NOT NULL,
    session_data jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT webauthn_challenges_challenge_type_check CHECK ((challenge_type = ANY (ARRAY['signup'::text, 'registration'::text, 'authentication'::text])))
);


--
-- Name: schema_migrations; Type: TABLE; Schema: onboard_migrations; Owner: -
--

CREATE TABLE onboard_migrations.schema_migrations (
    version text NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL,
    duration_ms integer NOT NULL
);


--
-- Name: event_uuids; Type: TABLE; Schema: product_analytics; Owner: -
--

CREATE TABLE product_analytics.event_uuids (
    uuid uuid NOT NULL,
    received_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: events; Type: TABLE; Schema: product_analytics; Owner: -
--

CREATE TABLE product_analytics.events (
    uuid uuid NOT NULL,
    event text NOT NULL,
    distinct_id text NOT NULL,
    person_id bigint NOT NULL,
    user_id uuid,
    properties jsonb DEFAULT '{}'::jsonb NOT NULL,
    "timestamp" timestamp with time zone NOT NULL,
    received_at timestamp with time zone DEFAULT now() NOT NULL,
    source text NOT NULL
)
PARTITION BY RANGE ("timestamp");


--
-- Name: person_distinct_ids; Type: TABLE; Schema: product_analytics; Owner: -
--

CREATE TABLE product_analytics.person_distinct_ids (
    distinct_id text NOT NULL,
    person_id bigint NOT NULL,
    user_id uuid
);


--
-- Name: events_with_person; Type: VIEW; Schema: product_analytics; Owner: -
--

CREATE VIEW product_analytics.events_with_person AS
 SELECT e.uuid,
    e.event,
    e.distinct_id,
    e.person_id,
    e.user_id,
    e.properties,
    e."timestamp",
    e.received_at,
    e.source,
    d.person_id AS current_person_id,
    ( SELECT (max((u.user_id)::text))::uuid AS max
           FROM product_analytics.person_distinct_ids u
          WHERE (u.person_id = d.person_id)) AS person_user_id
   FROM (product_analytics.events e
     JOIN product_analytics.person_distinct_ids d ON ((d.distinct_id = e.distinct_id)));


--
-- Name: exposures; Type: TABLE; Schema: product_analytics; Owner: -
--

CREATE TABLE product_analytics.exposures (
    flag_key text NOT NULL,
    distinct_id text NOT NULL,
    variant text NOT NULL,
    first_seen timestamp with time zone NOT NULL
);


--
-- Name: feature_flags; Type: TABLE; Schema: product_analytics; Owner: -
--

CREATE TABLE product_analytics.feature_flags (
    id bigint NOT NULL,
    key text NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    active boolean DEFAULT true NOT NULL,
    filters jsonb DEFAULT '{"groups": [{"properties": [], "rollout_percentage": 100}]}'::jsonb NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT feature_flags_filters_check CHECK (product_analytics.valid_flag_filters(filters)),
    CONSTRAINT feature_flags_key_check CHECK ((key ~ '^[A-Za-z0-9_.-]{1,200}$'::text))
);


--
-- Name: feature_flags_id_seq; Type: SEQUENCE; Schema: product_analytics; Owner: -
--

ALTER TABLE product_analytics.feature_flags ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME product_analytics.feature_flags_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: persons; Type: TABLE; Schema: product_analytics; Owner: -
--

CREATE TABLE product_analytics.persons (
    id bigint NOT NULL,
    properties jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: persons_id_seq; Type: SEQUENCE; Schema: product_analytics; Owner: -
--

ALTER TABLE product_analytics.persons ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME product_analytics.persons_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: families; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.families (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    invite_code text NOT NULL,
    created_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT families_invite_code_format CHECK ((invite_code ~ '^[A-HJKMNP-Z2-9]{5}-[A-HJKMNP-Z2-9]{5}$'::text)),
    CONSTRAINT families_name_length CHECK (((char_length(btrim(name)) >= 1) AND (char_length(btrim(name)) <= 100)))
);


--
-- Name: family_join_failures; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.family_join_failures (
    user_id uuid NOT NULL,
    attempted_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: family_members; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.family_members (
    family_id uuid NOT NULL,
    user_id uuid NOT NULL,
    role text DEFAULT 'parent'::text NOT NULL,
    joined_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    CONSTRAINT family_members_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'parent'::text])))
);


--
-- Name: listeners; Type: TABLE; Schema: realtime; Owner: -
--

CREATE TABLE realtime.listeners (
    relid oid NOT NULL,
    row_key text DEFAULT ''::text NOT NULL,
    server_id uuid NOT NULL,
    expires_at timestamp with time zone NOT NULL
);


--
-- Name: messages; Type: TABLE; Schema: realtime; Owner: -
--

CREATE TABLE realtime.messages (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    topic text NOT NULL,
    extension text NOT NULL,
    payload jsonb,
    event text,
    private boolean DEFAULT false,
    updated_at timestamp without time zone DEFAULT now() NOT NULL,
    inserted_at timestamp without time zone DEFAULT now() NOT NULL
);


--
-- Name: nodes; Type: TABLE; Schema: realtime; Owner: -
--

CREATE TABLE realtime.nodes (
    server_id uuid NOT NULL,
    expires_at timestamp with time zone NOT NULL
);


--
-- Name: presences; Type: TABLE; Schema: realtime; Owner: -
--

CREATE TABLE realtime.presences (
    phx_ref text NOT NULL,
    topic text NOT NULL,
    private boolean NOT NULL,
    key text NOT NULL,
    meta jsonb NOT NULL,
    server_id uuid NOT NULL,
    tracked_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: settings; Type: TABLE; Schema: realtime; Owner: -
--

CREATE TABLE realtime.settings (
    id boolean DEFAULT true NOT NULL,
    triggers boolean NOT NULL,
    CONSTRAINT settings_id_check CHECK (id)
);


--
-- Name: buckets; Type: TABLE; Schema: storage; Owner: -
--

CREATE TABLE storage.buckets (
    id text NOT NULL,
    name text NOT NULL,
    owner uuid,
    owner_id text,
    public boolean DEFAULT false NOT NULL,
    avif_autodetection boolean DEFAULT false NOT NULL,
    file_size_limit bigint,
    allowed_mime_types text[],
    type text DEFAULT 'STANDARD'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: objects; Type: TABLE; Schema: storage; Owner: -
--

CREATE TABLE storage.objects (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    bucket_id text NOT NULL,
    name text NOT NULL,
    owner uuid,
    owner_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    last_accessed_at timestamp with time zone DEFAULT now() NOT NULL,
    metadata jsonb,
    user_metadata jsonb,
    path_tokens text[] GENERATED ALWAYS AS (string_to_array(name, '/'::text)) STORED,
    version text
);


--
-- Name: refresh_tokens id; Type: DEFAULT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.refresh_tokens ALTER COLUMN id SET DEFAULT nextval('auth.refresh_tokens_id_seq'::regclass);


--
-- Name: former_users former_users_pkey; Type: CONSTRAINT; Schema: analytics; Owner: -
--

ALTER TABLE ONLY analytics.former_users
    ADD CONSTRAINT former_users_pkey PRIMARY KEY (id);


--
-- Name: onboarding_progress onboarding_progress_pkey; Type: CONSTRAINT; Schema: analytics; Owner: -
--

ALTER TABLE ONLY analytics.onboarding_progress
    ADD CONSTRAINT onboarding_progress_pkey PRIMARY KEY (user_id);


--
-- Name: onboarding_transitions onboarding_transitions_pkey; Type: CONSTRAINT; Schema: analytics; Owner: -
--

ALTER TABLE ONLY analytics.onboarding_transitions
    ADD CONSTRAINT onboarding_transitions_pkey PRIMARY KEY (id);


--
-- Name: dashboard_revoked_sessions dashboard_revoked_sessions_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.dashboard_revoked_sessions
    ADD CONSTRAINT dashboard_revoked_sessions_pkey PRIMARY KEY (nonce);


--
-- Name: flow_state flow_state_auth_code_key; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.flow_state
    ADD CONSTRAINT flow_state_auth_code_key UNIQUE (auth_code);


--
-- Name: flow_state flow_state_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.flow_state
    ADD CONSTRAINT flow_state_pkey PRIMARY KEY (id);


--
-- Name: identities identities_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.identities
    ADD CONSTRAINT identities_pkey PRIMARY KEY (id);


--
-- Name: identities identities_provider_id_provider_unique; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.identities
    ADD CONSTRAINT identities_provider_id_provider_unique UNIQUE (provider_id, provider);


--
-- Name: mail_outbox mail_outbox_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.mail_outbox
    ADD CONSTRAINT mail_outbox_pkey PRIMARY KEY (id);


--
-- Name: mfa_amr_claims mfa_amr_claims_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.mfa_amr_claims
    ADD CONSTRAINT mfa_amr_claims_pkey PRIMARY KEY (id);


--
-- Name: mfa_amr_claims mfa_amr_claims_session_id_authentication_method_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.mfa_amr_claims
    ADD CONSTRAINT mfa_amr_claims_session_id_authentication_method_pkey UNIQUE (session_id, authentication_method);


--
-- Name: mfa_challenges mfa_challenges_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.mfa_challenges
    ADD CONSTRAINT mfa_challenges_pkey PRIMARY KEY (id);


--
-- Name: mfa_factors mfa_factors_phone_key; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.mfa_factors
    ADD CONSTRAINT mfa_factors_phone_key UNIQUE (phone);


--
-- Name: mfa_factors mfa_factors_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.mfa_factors
    ADD CONSTRAINT mfa_factors_pkey PRIMARY KEY (id);


--
-- Name: oauth_authorizations oauth_authorizations_authorization_code_key; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.oauth_authorizations
    ADD CONSTRAINT oauth_authorizations_authorization_code_key UNIQUE (authorization_code);


--
-- Name: oauth_authorizations oauth_authorizations_authorization_id_key; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.oauth_authorizations
    ADD CONSTRAINT oauth_authorizations_authorization_id_key UNIQUE (authorization_id);


--
-- Name: oauth_authorizations oauth_authorizations_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.oauth_authorizations
    ADD CONSTRAINT oauth_authorizations_pkey PRIMARY KEY (id);


--
-- Name: oauth_clients oauth_clients_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.oauth_clients
    ADD CONSTRAINT oauth_clients_pkey PRIMARY KEY (id);


--
-- Name: oauth_consents oauth_consents_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.oauth_consents
    ADD CONSTRAINT oauth_consents_pkey PRIMARY KEY (id);


--
-- Name: oauth_consents oauth_consents_user_id_client_id_key; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.oauth_consents
    ADD CONSTRAINT oauth_consents_user_id_client_id_key UNIQUE (user_id, client_id);


--
-- Name: one_time_tokens one_time_tokens_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.one_time_tokens
    ADD CONSTRAINT one_time_tokens_pkey PRIMARY KEY (id);


--
-- Name: one_time_tokens one_time_tokens_token_hash_key; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.one_time_tokens
    ADD CONSTRAINT one_time_tokens_token_hash_key UNIQUE (token_hash);


--
-- Name: one_time_tokens one_time_tokens_user_id_token_type_key; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.one_time_tokens
    ADD CONSTRAINT one_time_tokens_user_id_token_type_key UNIQUE (user_id, token_type);


--
-- Name: rate_limits rate_limits_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.rate_limits
    ADD CONSTRAINT rate_limits_pkey PRIMARY KEY (key);


--
-- Name: refresh_tokens refresh_tokens_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.refresh_tokens
    ADD CONSTRAINT refresh_tokens_pkey PRIMARY KEY (id);


--
-- Name: refresh_tokens refresh_tokens_token_key; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.refresh_tokens
    ADD CONSTRAINT refresh_tokens_token_key UNIQUE (token);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: web3_used_messages web3_used_messages_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.web3_used_messages
    ADD CONSTRAINT web3_used_messages_pkey PRIMARY KEY (digest);


--
-- Name: webauthn_challenges webauthn_challenges_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.webauthn_challenges
    ADD CONSTRAINT webauthn_challenges_pkey PRIMARY KEY (id);


--
-- Name: webauthn_credentials webauthn_credentials_pkey; Type: CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.webauthn_credentials
    ADD CONSTRAINT webauthn_credentials_pkey PRIMARY KEY (id);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: onboard_migrations; Owner: -
--

ALTER TABLE ONLY onboard_migrations.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: event_uuids event_uuids_pkey; Type: CONSTRAINT; Schema: product_analytics; Owner: -
--

ALTER TABLE ONLY product_analytics.event_uuids
    ADD CONSTRAINT event_uuids_pkey PRIMARY KEY (uuid);


--
-- Name: exposures exposures_pkey; Type: CONSTRAINT; Schema: product_analytics; Owner: -
--

ALTER TABLE ONLY product_analytics.exposures
    ADD CONSTRAINT exposures_pkey PRIMARY KEY (flag_key, distinct_id);


--
-- Name: feature_flags feature_flags_key_key; Type: CONSTRAINT; Schema: product_analytics; Owner: -
--

ALTER TABLE ONLY product_analytics.feature_flags
    ADD CONSTRAINT feature_flags_key_key UNIQUE (key);


--
-- Name: feature_flags feature_flags_pkey; Type: CONSTRAINT; Schema: product_analytics; Owner: -
--

ALTER TABLE ONLY product_analytics.feature_flags
    ADD CONSTRAINT feature_flags_pkey PRIMARY KEY (id);


--
-- Name: person_distinct_ids person_distinct_ids_pkey; Type: CONSTRAINT; Schema: product_analytics; Owner: -
--

ALTER TABLE ONLY product_analytics.person_distinct_ids
    ADD CONSTRAINT person_distinct_ids_pkey PRIMARY KEY (distinct_id);


--
-- Name: persons persons_pkey; Type: CONSTRAINT; Schema: product_analytics; Owner: -
--

ALTER TABLE ONLY product_analytics.persons
    ADD CONSTRAINT persons_pkey PRIMARY KEY (id);


--
-- Name: children children_id_user_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.children
    ADD CONSTRAINT children_id_user_id_key UNIQUE (id, user_id);


--
-- Name: children children_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.children
    ADD CONSTRAINT children_pkey PRIMARY KEY (id);


--
-- Name: families families_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.families
    ADD CONSTRAINT families_pkey PRIMARY KEY (id);


--
-- Name: family_members family_members_one_family_per_user; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.family_members
    ADD CONSTRAINT family_members_one_family_per_user UNIQUE (user_id);


--
-- Name: family_members family_members_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.family_members
    ADD CONSTRAINT family_members_pkey PRIMARY KEY (family_id, user_id);


--
-- Name: user_profiles user_profiles_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_profiles
    ADD CONSTRAINT user_profiles_pkey PRIMARY KEY (id);


--
-- Name: listeners listeners_pkey; Type: CONSTRAINT; Schema: realtime; Owner: -
--

ALTER TABLE ONLY realtime.listeners
    ADD CONSTRAINT listeners_pkey PRIMARY KEY (relid, row_key, server_id);


--
-- Name: messages messages_pkey; Type: CONSTRAINT; Schema: realtime; Owner: -
--

ALTER TABLE ONLY realtime.messages
    ADD CONSTRAINT messages_pkey PRIMARY KEY (id, inserted_at);


--
-- Name: nodes nodes_pkey; Type: CONSTRAINT; Schema: realtime; Owner: -
--

ALTER TABLE ONLY realtime.nodes
    ADD CONSTRAINT nodes_pkey PRIMARY KEY (server_id);


--
-- Name: presences presences_pkey; Type: CONSTRAINT; Schema: realtime; Owner: -
--

ALTER TABLE ONLY realtime.presences
    ADD CONSTRAINT presences_pkey PRIMARY KEY (phx_ref);


--
-- Name: settings settings_pkey; Type: CONSTRAINT; Schema: realtime; Owner: -
--

ALTER TABLE ONLY realtime.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (id);


--
-- Name: buckets buckets_pkey; Type: CONSTRAINT; Schema: storage; Owner: -
--

ALTER TABLE ONLY storage.buckets
    ADD CONSTRAINT buckets_pkey PRIMARY KEY (id);


--
-- Name: objects objects_pkey; Type: CONSTRAINT; Schema: storage; Owner: -
--

ALTER TABLE ONLY storage.objects
    ADD CONSTRAINT objects_pkey PRIMARY KEY (id);


--
-- Name: onboarding_transitions_at_idx; Type: INDEX; Schema: analytics; Owner: -
--

CREATE INDEX onboarding_transitions_at_idx ON analytics.onboarding_transitions USING btree (at);


--
-- Name: onboarding_transitions_completed_idx; Type: INDEX; Schema: analytics; Owner: -
--

CREATE INDEX onboarding_transitions_completed_idx ON analytics.onboarding_transitions USING btree (at) INCLUDE (user_id) WHERE ((to_state = 'COMPLETE'::text) AND (from_state IS NOT NULL));


--
-- Name: onboarding_transitions_user_at_idx; Type: INDEX; Schema: analytics; Owner: -
--

CREATE INDEX onboarding_transitions_user_at_idx ON analytics.onboarding_transitions USING btree (user_id, at);


--
-- Name: factor_id_created_at_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX factor_id_created_at_idx ON auth.mfa_factors USING btree (user_id, created_at);


--
-- Name: flow_state_created_at_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX flow_state_created_at_idx ON auth.flow_state USING btree (created_at);


--
-- Name: flow_state_user_id_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX flow_state_user_id_idx ON auth.flow_state USING btree (user_id);


--
-- Name: identities_user_id_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX identities_user_id_idx ON auth.identities USING btree (user_id);


--
-- Name: mail_outbox_finished_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX mail_outbox_finished_idx ON auth.mail_outbox USING btree (finished_at) WHERE (status <> 'pending'::text);


--
-- Name: mail_outbox_pending_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX mail_outbox_pending_idx ON auth.mail_outbox USING btree (route, next_attempt_at, id) WHERE (status = 'pending'::text);


--
-- Name: mfa_challenge_created_at_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX mfa_challenge_created_at_idx ON auth.mfa_challenges USING btree (created_at DESC);


--
-- Name: mfa_challenges_factor_id_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX mfa_challenges_factor_id_idx ON auth.mfa_challenges USING btree (factor_id);


--
-- Name: mfa_factors_user_friendly_name_unique; Type: INDEX; Schema: auth; Owner: -
--

CREATE UNIQUE INDEX mfa_factors_user_friendly_name_unique ON auth.mfa_factors USING btree (friendly_name, user_id) WHERE (TRIM(BOTH FROM friendly_name) <> ''::text);


--
-- Name: mfa_factors_user_id_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX mfa_factors_user_id_idx ON auth.mfa_factors USING btree (user_id);


--
-- Name: oauth_authorizations_expires_at_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX oauth_authorizations_expires_at_idx ON auth.oauth_authorizations USING btree (expires_at);


--
-- Name: oauth_clients_created_at_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX oauth_clients_created_at_idx ON auth.oauth_clients USING btree (created_at DESC) WHERE (deleted_at IS NULL);


--
-- Name: oauth_consents_client_id_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX oauth_consents_client_id_idx ON auth.oauth_consents USING btree (client_id);


--
-- Name: one_time_tokens_relates_to_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX one_time_tokens_relates_to_idx ON auth.one_time_tokens USING btree (relates_to);


--
-- Name: rate_limits_window_start; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX rate_limits_window_start ON auth.rate_limits USING btree (window_start);


--
-- Name: refresh_tokens_parent_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX refresh_tokens_parent_idx ON auth.refresh_tokens USING btree (parent);


--
-- Name: refresh_tokens_session_id_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX refresh_tokens_session_id_idx ON auth.refresh_tokens USING btree (session_id, revoked);


--
-- Name: sessions_factor_id_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX sessions_factor_id_idx ON auth.sessions USING btree (factor_id);


--
-- Name: sessions_oauth_client_id_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX sessions_oauth_client_id_idx ON auth.sessions USING btree (oauth_client_id) WHERE (oauth_client_id IS NOT NULL);


--
-- Name: sessions_user_id_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX sessions_user_id_idx ON auth.sessions USING btree (user_id);


--
-- Name: users_created_at_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX users_created_at_idx ON auth.users USING btree (created_at);


--
-- Name: users_email_key; Type: INDEX; Schema: auth; Owner: -
--

CREATE UNIQUE INDEX users_email_key ON auth.users USING btree (lower((email)::text)) WHERE (email IS NOT NULL);


--
-- Name: users_phone_key; Type: INDEX; Schema: auth; Owner: -
--

CREATE UNIQUE INDEX users_phone_key ON auth.users USING btree (phone) WHERE (phone IS NOT NULL);


--
-- Name: web3_used_messages_expires_at_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX web3_used_messages_expires_at_idx ON auth.web3_used_messages USING btree (expires_at);


--
-- Name: webauthn_challenges_expires_at_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX webauthn_challenges_expires_at_idx ON auth.webauthn_challenges USING btree (expires_at);


--
-- Name: webauthn_challenges_user_id_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX webauthn_challenges_user_id_idx ON auth.webauthn_challenges USING btree (user_id);


--
-- Name: webauthn_credentials_credential_id_key; Type: INDEX; Schema: auth; Owner: -
--

CREATE UNIQUE INDEX webauthn_credentials_credential_id_key ON auth.webauthn_credentials USING btree (credential_id);


--
-- Name: webauthn_credentials_user_id_idx; Type: INDEX; Schema: auth; Owner: -
--

CREATE INDEX webauthn_credentials_user_id_idx ON auth.webauthn_credentials USING btree (user_id);


--
-- Name: events_distinct_id_timestamp_idx; Type: INDEX; Schema: product_analytics; Owner: -
--

CREATE INDEX events_distinct_id_timestamp_idx ON ONLY product_analytics.events USING btree (distinct_id, "timestamp");


--
-- Name: events_event_timestamp_idx; Type: INDEX; Schema: product_analytics; Owner: -
--

CREATE INDEX events_event_timestamp_idx ON ONLY product_analytics.events USING btree (event, "timestamp");


--
-- Name: events_user_timestamp_idx; Type: INDEX; Schema: product_analytics; Owner: -
--

CREATE INDEX events_user_timestamp_idx ON ONLY product_analytics.events USING btree (user_id, "timestamp") WHERE (user_id IS NOT NULL);


--
-- Name: person_distinct_ids_person_idx; Type: INDEX; Schema: product_analytics; Owner: -
--

CREATE INDEX person_distinct_ids_person_idx ON product_analytics.person_distinct_ids USING btree (person_id);


--
-- Name: person_distinct_ids_user_idx; Type: INDEX; Schema: product_analytics; Owner: -
--

CREATE INDEX person_distinct_ids_user_idx ON product_analytics.person_distinct_ids USING btree (user_id) WHERE (user_id IS NOT NULL);


--
-- Name: families_invite_code_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX families_invite_code_key ON public.families USING btree (replace(invite_code, '-'::text, ''::text));


--
-- Name: family_join_failures_user_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX family_join_failures_user_idx ON public.family_join_failures USING btree (user_id, attempted_at);


--
-- Name: idx_children_user_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_children_user_id ON public.children USING btree (user_id);


--
-- Name: idx_user_profiles_onboarding_state; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_user_profiles_onboarding_state ON public.user_profiles USING btree (onboarding_state);


--
-- Name: messages_inserted_at_topic_index; Type: INDEX; Schema: realtime; Owner: -
--

CREATE INDEX messages_inserted_at_topic_index ON realtime.messages USING btree (inserted_at DESC, topic);


--
-- Name: presences_server_index; Type: INDEX; Schema: realtime; Owner: -
--

CREATE INDEX presences_server_index ON realtime.presences USING btree (server_id);


--
-- Name: presences_topic_index; Type: INDEX; Schema: realtime; Owner: -
--

CREATE INDEX presences_topic_index ON realtime.presences USING btree (topic, private);


--
-- Name: bname; Type: INDEX; Schema: storage; Owner: -
--

CREATE UNIQUE INDEX bname ON storage.buckets USING btree (name);


--
-- Name: bucketid_objname; Type: INDEX; Schema: storage; Owner: -
--

CREATE UNIQUE INDEX bucketid_objname ON storage.objects USING btree (bucket_id, name);


--
-- Name: name_prefix_search; Type: INDEX; Schema: storage; Owner: -
--

CREATE INDEX name_prefix_search ON storage.objects USING btree (name text_pattern_ops);


--
-- Name: onboarding_transitions onboarding_transitions_append_only; Type: TRIGGER; Schema: analytics; Owner: -
--

CREATE TRIGGER onboarding_transitions_append_only BEFORE DELETE OR UPDATE ON analytics.onboarding_transitions FOR EACH ROW EXECUTE FUNCTION analytics.onboarding_transitions_append_only();


--
-- Name: onboarding_transitions onboarding_transitions_fill_since; Type: TRIGGER; Schema: analytics; Owner: -
--

CREATE TRIGGER onboarding_transitions_fill_since BEFORE INSERT ON analytics.onboarding_transitions FOR EACH ROW EXECUTE FUNCTION analytics.onboarding_transitions_fill_since();


--
-- Name: onboarding_transitions onboarding_transitions_no_truncate; Type: TRIGGER; Schema: analytics; Owner: -
--

CREATE TRIGGER onboarding_transitions_no_truncate BEFORE TRUNCATE ON analytics.onboarding_transitions FOR EACH STATEMENT EXECUTE FUNCTION analytics.onboarding_transitions_append_only();


--
-- Name: onboarding_transitions onboarding_transitions_track_progress; Type: TRIGGER; Schema: analytics; Owner: -
--

CREATE TRIGGER onboarding_transitions_track_progress AFTER INSERT ON analytics.onboarding_transitions FOR EACH ROW EXECUTE FUNCTION analytics.onboarding_transitions_track_progress();


--
-- Name: users on_auth_user_created; Type: TRIGGER; Schema: auth; Owner: -
--

CREATE TRIGGER on_auth_user_created AFTER INSERT ON auth.users FOR EACH ROW EXECUTE FUNCTION public.create_user_profile();


--
-- Name: users on_auth_user_deleted_keep_analytics; Type: TRIGGER; Schema: auth; Owner: -
--

CREATE TRIGGER on_auth_user_deleted_keep_analytics BEFORE DELETE ON auth.users FOR EACH ROW EXECUTE FUNCTION analytics.keep_former_user();


--
-- Name: feature_flags feature_flags_changed; Type: TRIGGER; Schema: product_analytics; Owner: -
--

CREATE TRIGGER feature_flags_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON product_analytics.feature_flags FOR EACH STATEMENT EXECUTE FUNCTION product_analytics.notify_feature_flags_changed();


--
-- Name: children children_keep_owner; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER children_keep_owner BEFORE UPDATE OF user_id ON public.children FOR EACH ROW EXECUTE FUNCTION public.keep_row_owner('user_id');


--
-- Name: children children_server_timestamps; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER children_server_timestamps BEFORE INSERT OR UPDATE ON public.children FOR EACH ROW EXECUTE FUNCTION private.server_timestamps();


--
-- Name: family_members family_members_hand_over; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER family_members_hand_over AFTER DELETE ON public.family_members FOR EACH ROW EXECUTE FUNCTION private.hand_over_family();


--
-- Name: family_members family_members_lock_family; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER family_members_lock_family BEFORE DELETE ON public.family_members FOR EACH ROW EXECUTE FUNCTION private.lock_family_of_departing_member();


--
-- Name: children update_children_updated_at; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER update_children_updated_at BEFORE UPDATE ON public.children FOR EACH ROW EXECUTE FUNCTION public.update_updated_at_column();


--
-- Name: families update_families_updated_at; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER update_families_updated_at BEFORE UPDATE ON public.families FOR EACH ROW EXECUTE FUNCTION public.update_updated_at_column();


--
-- Name: user_profiles update_user_profiles_updated_at; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER update_user_profiles_updated_at BEFORE UPDATE ON public.user_profiles FOR EACH ROW EXECUTE FUNCTION public.update_updated_at_column();


--
-- Name: user_profiles user_profiles_explain_onboarding_state; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER user_profiles_explain_onboarding_state BEFORE INSERT OR UPDATE OF onboarding_state ON public.user_profiles FOR EACH ROW EXECUTE FUNCTION private.explain_onboarding_state();


--
-- Name: user_profiles user_profiles_guard_onboarding_state; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER user_profiles_guard_onboarding_state BEFORE INSERT OR UPDATE ON public.user_profiles FOR EACH ROW EXECUTE FUNCTION private.guard_onboarding_state();


--
-- Name: user_profiles user_profiles_keep_owner; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER user_profiles_keep_owner BEFORE UPDATE OF id ON public.user_profiles FOR EACH ROW EXECUTE FUNCTION public.keep_row_owner('id');


--
-- Name: user_profiles user_profiles_record_onboarding_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER user_profiles_record_onboarding_insert AFTER INSERT ON public.user_profiles FOR EACH ROW EXECUTE FUNCTION analytics.record_onboarding_transition();


--
-- Name: user_profiles user_profiles_record_onboarding_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER user_profiles_record_onboarding_update AFTER UPDATE ON public.user_profiles FOR EACH ROW WHEN ((old.onboarding_state IS DISTINCT FROM new.onboarding_state)) EXECUTE FUNCTION analytics.record_onboarding_transition();


--
-- Name: user_profiles user_profiles_server_timestamps; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER user_profiles_server_timestamps BEFORE INSERT OR UPDATE ON public.user_profiles FOR EACH ROW EXECUTE FUNCTION private.server_timestamps();


--
-- Name: user_profiles user_profiles_stamp_completed_at; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER user_profiles_stamp_completed_at BEFORE INSERT OR UPDATE ON public.user_profiles FOR EACH ROW EXECUTE FUNCTION public.stamp_onboarding_completed_at();


--
-- Name: messages realtime_messages_broadcast; Type: TRIGGER; Schema: realtime; Owner: -
--

CREATE TRIGGER realtime_messages_broadcast AFTER INSERT ON realtime.messages FOR EACH ROW WHEN ((new.extension = 'broadcast'::text)) EXECUTE FUNCTION realtime.announce_message();


--
-- Name: flow_state flow_state_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.flow_state
    ADD CONSTRAINT flow_state_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: identities identities_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.identities
    ADD CONSTRAINT identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: mfa_amr_claims mfa_amr_claims_session_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.mfa_amr_claims
    ADD CONSTRAINT mfa_amr_claims_session_id_fkey FOREIGN KEY (session_id) REFERENCES auth.sessions(id) ON DELETE CASCADE;


--
-- Name: mfa_challenges mfa_challenges_factor_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.mfa_challenges
    ADD CONSTRAINT mfa_challenges_factor_id_fkey FOREIGN KEY (factor_id) REFERENCES auth.mfa_factors(id) ON DELETE CASCADE;


--
-- Name: mfa_factors mfa_factors_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.mfa_factors
    ADD CONSTRAINT mfa_factors_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: oauth_authorizations oauth_authorizations_client_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.oauth_authorizations
    ADD CONSTRAINT oauth_authorizations_client_id_fkey FOREIGN KEY (client_id) REFERENCES auth.oauth_clients(id) ON DELETE CASCADE;


--
-- Name: oauth_authorizations oauth_authorizations_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.oauth_authorizations
    ADD CONSTRAINT oauth_authorizations_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: oauth_consents oauth_consents_client_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.oauth_consents
    ADD CONSTRAINT oauth_consents_client_id_fkey FOREIGN KEY (client_id) REFERENCES auth.oauth_clients(id) ON DELETE CASCADE;


--
-- Name: oauth_consents oauth_consents_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.oauth_consents
    ADD CONSTRAINT oauth_consents_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: one_time_tokens one_time_tokens_flow_state_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.one_time_tokens
    ADD CONSTRAINT one_time_tokens_flow_state_id_fkey FOREIGN KEY (flow_state_id) REFERENCES auth.flow_state(id) ON DELETE SET NULL;


--
-- Name: one_time_tokens one_time_tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.one_time_tokens
    ADD CONSTRAINT one_time_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: refresh_tokens refresh_tokens_session_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.refresh_tokens
    ADD CONSTRAINT refresh_tokens_session_id_fkey FOREIGN KEY (session_id) REFERENCES auth.sessions(id) ON DELETE CASCADE;


--
-- Name: refresh_tokens refresh_tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.refresh_tokens
    ADD CONSTRAINT refresh_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: sessions sessions_oauth_client_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.sessions
    ADD CONSTRAINT sessions_oauth_client_id_fkey FOREIGN KEY (oauth_client_id) REFERENCES auth.oauth_clients(id) ON DELETE CASCADE;


--
-- Name: sessions sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.sessions
    ADD CONSTRAINT sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: webauthn_challenges webauthn_challenges_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.webauthn_challenges
    ADD CONSTRAINT webauthn_challenges_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: webauthn_credentials webauthn_credentials_user_id_fkey; Type: FK CONSTRAINT; Schema: auth; Owner: -
--

ALTER TABLE ONLY auth.webauthn_credentials
    ADD CONSTRAINT webauthn_credentials_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: person_distinct_ids person_distinct_ids_person_id_fkey; Type: FK CONSTRAINT; Schema: product_analytics; Owner: -
--

ALTER TABLE ONLY product_analytics.person_distinct_ids
    ADD CONSTRAINT person_distinct_ids_person_id_fkey FOREIGN KEY (person_id) REFERENCES product_analytics.persons(id) ON DELETE CASCADE;


--
-- Name: children children_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.children
    ADD CONSTRAINT children_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: families families_created_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.families
    ADD CONSTRAINT families_created_by_fkey FOREIGN KEY (created_by) REFERENCES auth.users(id) ON DELETE SET NULL;


--
-- Name: family_join_failures family_join_failures_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.family_join_failures
    ADD CONSTRAINT family_join_failures_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: family_members family_members_family_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.family_members
    ADD CONSTRAINT family_members_family_id_fkey FOREIGN KEY (family_id) REFERENCES public.families(id) ON DELETE CASCADE;


--
-- Name: family_members family_members_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.family_members
    ADD CONSTRAINT family_members_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: user_profiles user_profiles_current_child_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_profiles
    ADD CONSTRAINT user_profiles_current_child_fkey FOREIGN KEY (current_child_id, id) REFERENCES public.children(id, user_id) ON DELETE SET NULL (current_child_id);


--
-- Name: user_profiles user_profiles_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_profiles
    ADD CONSTRAINT user_profiles_id_fkey FOREIGN KEY (id) REFERENCES auth.users(id) ON DELETE CASCADE;


--
-- Name: objects objects_bucket_id_fkey; Type: FK CONSTRAINT; Schema: storage; Owner: -
--

ALTER TABLE ONLY storage.objects
    ADD CONSTRAINT objects_bucket_id_fkey FOREIGN KEY (bucket_id) REFERENCES storage.buckets(id);


--
-- Name: children Creator or family owner can delete children; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Creator or family owner can delete children" ON public.children FOR DELETE USING (((auth.uid() = user_id) OR private.owns_family_of(user_id)));


--
-- Name: children Family can update children; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Family can update children" ON public.children FOR UPDATE USING (((user_id = auth.uid()) OR private.shares_family_with(user_id))) WITH CHECK (((user_id = auth.uid()) OR private.shares_family_with(user_id)));


--
-- Name: children Family can view children; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Family can view children" ON public.children FOR SELECT USING (((user_id = auth.uid()) OR private.shares_family_with(user_id)));


--
-- Name: families Members can view their family; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Members can view their family" ON public.families FOR SELECT USING ((id = private.my_family_id()));


--
-- Name: family_members Members can view their family's members; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Members can view their family's members" ON public.family_members FOR SELECT USING ((family_id = private.my_family_id()));


--
-- Name: families The owner can rename the family; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "The owner can rename the family" ON public.families FOR UPDATE USING (((id = private.my_family_id()) AND private.owns_family_of(auth.uid()))) WITH CHECK ((id = private.my_family_id()));


--
-- Name: children Users can insert own children; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Users can insert own children" ON public.children FOR INSERT WITH CHECK ((auth.uid() = user_id));


--
-- Name: user_profiles Users can insert own profile; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Users can insert own profile" ON public.user_profiles FOR INSERT WITH CHECK ((auth.uid() = id));


--
-- Name: user_profiles Users can update own profile; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Users can update own profile" ON public.user_profiles FOR UPDATE USING ((auth.uid() = id)) WITH CHECK ((auth.uid() = id));


--
-- Name: user_profiles Users can view own profile; Type: POLICY; Schema: public; Owner: -
--

CREATE POLICY "Users can view own profile" ON public.user_profiles FOR SELECT USING ((auth.uid() = id));


--
-- Name: children; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.children ENABLE ROW LEVEL SECURITY;

--
-- Name: families; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.families ENABLE ROW LEVEL SECURITY;

--
-- Name: family_join_failures; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.family_join_failures ENABLE ROW LEVEL SECURITY;

--
-- Name: family_members; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.family_members ENABLE ROW LEVEL SECURITY;

--
-- Name: user_profiles; Type: ROW SECURITY; Schema: public; Owner: -
--

ALTER TABLE public.user_profiles ENABLE ROW LEVEL SECURITY;

--
-- Name: messages; Type: ROW SECURITY; Schema: realtime; Owner: -
--

ALTER TABLE realtime.messages ENABLE ROW LEVEL SECURITY;

--
-- Name: objects Family reads the children's pictures; Type: POLICY; Schema: storage; Owner: -
--

CREATE POLICY "Family reads the children's pictures" ON storage.objects FOR SELECT TO authenticated USING (((bucket_id = 'avatars'::text) AND ((storage.foldername(name))[2] = 'children'::text) AND storage.shares_family_with_folder((storage.foldername(name))[1])));


--
-- Name: objects Users delete their own avatars; Type: POLICY; Schema: storage; Owner: -
--

CREATE POLICY "Users delete their own avatars" ON storage.objects FOR DELETE TO authenticated USING (((bucket_id = 'avatars'::text) AND ((storage.foldername(name))[1] = (auth.uid())::text)));


--
-- Name: objects Users read their own avatars; Type: POLICY; Schema: storage; Owner: -
--

CREATE POLICY "Users read their own avatars" ON storage.objects FOR SELECT TO authenticated USING (((bucket_id = 'avatars'::text) AND ((storage.foldername(name))[1] = (auth.uid())::text)));


--
-- Name: objects Users update their own avatars; Type: POLICY; Schema: storage; Owner: -
--

CREATE POLICY "Users update their own avatars" ON storage.objects FOR UPDATE TO authenticated USING (((bucket_id = 'avatars'::text) AND ((storage.foldername(name))[1] = (auth.uid())::text))) WITH CHECK (((bucket_id = 'avatars'::text) AND ((storage.foldername(name))[1] = (auth.uid())::text)));


--
-- Name: objects Users upload their own avatars; Type: POLICY; Schema: storage; Owner: -
--

CREATE POLICY "Users upload their own avatars" ON storage.objects FOR INSERT TO authenticated WITH CHECK (((bucket_id = 'avatars'::text) AND ((storage.foldername(name))[1] = (auth.uid())::text)));


--
-- Name: buckets; Type: ROW SECURITY; Schema: storage; Owner: -
--

ALTER TABLE storage.buckets ENABLE ROW LEVEL SECURITY;

--
-- Name: objects; Type: ROW SECURITY; Schema: storage; Owner: -
--

ALTER TABLE storage.objects ENABLE ROW LEVEL SECURITY;

--
-- Name: supabase_realtime; Type: PUBLICATION; Schema: -; Owner: -
--

CREATE PUBLICATION supabase_realtime WITH (publish = 'insert, update, delete');


--
-- Name: supabase_realtime children; Type: PUBLICATION TABLE; Schema: public; Owner: -
--

ALTER PUBLICATION supabase_realtime ADD TABLE ONLY public.children;


--
-- Name: supabase_realtime user_profiles; Type: PUBLICATION TABLE; Schema: public; Owner: -
--

ALTER PUBLICATION supabase_realtime ADD TABLE ONLY public.user_profiles;


--
-- Name: SCHEMA analytics; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA analytics TO service_role;


--
-- Name: SCHEMA auth; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA auth TO anon;
GRANT USAGE ON SCHEMA auth TO authenticated;
GRANT USAGE ON SCHEMA auth TO service_role;


--
-- Name: SCHEMA private; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA private TO anon;
GRANT USAGE ON SCHEMA private TO authenticated;
GRANT USAGE ON SCHEMA private TO service_role;


--
-- Name: SCHEMA product_analytics; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA product_analytics TO service_role;


--
-- Name: SCHEMA public; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA public TO anon;
GRANT USAGE ON SCHEMA public TO authenticated;
GRANT USAGE ON SCHEMA public TO service_role;


--
-- Name: SCHEMA realtime; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA realtime TO anon;
GRANT USAGE ON SCHEMA realtime TO authenticated;
GRANT USAGE ON SCHEMA realtime TO service_role;


--
-- Name: SCHEMA storage; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA storage TO anon;
GRANT USAGE ON SCHEMA storage TO authenticated;
GRANT USAGE ON SCHEMA storage TO service_role;


--
-- Name: FUNCTION anonymous_upgrades(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.anonymous_upgrades(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.anonymous_upgrades(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) TO service_role;


--
-- Name: FUNCTION children_per_completed_user(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.children_per_completed_user(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.children_per_completed_user(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) TO service_role;


--
-- Name: FUNCTION cohort_users(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.cohort_users(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.cohort_users(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) TO service_role;


--
-- Name: FUNCTION daily_completion(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.daily_completion(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.daily_completion(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) TO service_role;


--
-- Name: FUNCTION drop_off(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text, p_stuck_hours integer); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.drop_off(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text, p_stuck_hours integer) FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.drop_off(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text, p_stuck_hours integer) TO service_role;


--
-- Name: FUNCTION funnel(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.funnel(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.funnel(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) TO service_role;


--
-- Name: FUNCTION invalid_cohort(p_cohort text); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.invalid_cohort(p_cohort text) FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.invalid_cohort(p_cohort text) TO service_role;


--
-- Name: FUNCTION keep_former_user(); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.keep_former_user() FROM PUBLIC;


--
-- Name: FUNCTION onboarding_states(); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.onboarding_states() FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.onboarding_states() TO service_role;


--
-- Name: FUNCTION onboarding_steps(); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.onboarding_steps() FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.onboarding_steps() TO service_role;


--
-- Name: FUNCTION onboarding_transitions_append_only(); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.onboarding_transitions_append_only() FROM PUBLIC;


--
-- Name: FUNCTION onboarding_transitions_fill_since(); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.onboarding_transitions_fill_since() FROM PUBLIC;


--
-- Name: FUNCTION onboarding_transitions_track_progress(); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.onboarding_transitions_track_progress() FROM PUBLIC;


--
-- Name: FUNCTION record_onboarding_transition(); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.record_onboarding_transition() FROM PUBLIC;


--
-- Name: FUNCTION state_counts(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.state_counts(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.state_counts(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) TO service_role;


--
-- Name: FUNCTION step_durations(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.step_durations(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.step_durations(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) TO service_role;


--
-- Name: FUNCTION step_no(p_state text); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.step_no(p_state text) FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.step_no(p_state text) TO service_role;


--
-- Name: FUNCTION time_to_completion(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text); Type: ACL; Schema: analytics; Owner: -
--

REVOKE ALL ON FUNCTION analytics.time_to_completion(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) FROM PUBLIC;
GRANT ALL ON FUNCTION analytics.time_to_completion(p_from timestamp with time zone, p_to timestamp with time zone, p_cohort text) TO service_role;


--
-- Name: FUNCTION email(); Type: ACL; Schema: auth; Owner: -
--

GRANT ALL ON FUNCTION auth.email() TO anon;
GRANT ALL ON FUNCTION auth.email() TO authenticated;
GRANT ALL ON FUNCTION auth.email() TO service_role;


--
-- Name: FUNCTION factor_json(f auth.mfa_factors); Type: ACL; Schema: auth; Owner: -
--

REVOKE ALL ON FUNCTION auth.factor_json(f auth.mfa_factors) FROM PUBLIC;


--
-- Name: FUNCTION gotrue_time(t timestamp with time zone); Type: ACL; Schema: auth; Owner: -
--

REVOKE ALL ON FUNCTION auth.gotrue_time(t timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION jwt(); Type: ACL; Schema: auth; Owner: -
--

GRANT ALL ON FUNCTION auth.jwt() TO anon;
GRANT ALL ON FUNCTION auth.jwt() TO authenticated;
GRANT ALL ON FUNCTION auth.jwt() TO service_role;


--
-- Name: FUNCTION oauth_client_json(c auth.oauth_clients); Type: ACL; Schema: auth; Owner: -
--

REVOKE ALL ON FUNCTION auth.oauth_client_json(c auth.oauth_clients) FROM PUBLIC;


--
-- Name: FUNCTION passkey_json(c auth.webauthn_credentials); Type: ACL; Schema: auth; Owner: -
--

REVOKE ALL ON FUNCTION auth.passkey_json(c auth.webauthn_credentials) FROM PUBLIC;


--
-- Name: FUNCTION rate_limit_hit(keys text[], max_hits integer, window_seconds double precision); Type: ACL; Schema: auth; Owner: -
--

REVOKE ALL ON FUNCTION auth.rate_limit_hit(keys text[], max_hits integer, window_seconds double precision) FROM PUBLIC;


--
-- Name: FUNCTION rate_limit_reached(key text, max_hits integer, window_seconds double precision); Type: ACL; Schema: auth; Owner: -
--

REVOKE ALL ON FUNCTION auth.rate_limit_reached(key text, max_hits integer, window_seconds double precision) FROM PUBLIC;


--
-- Name: FUNCTION role(); Type: ACL; Schema: auth; Owner: -
--

GRANT ALL ON FUNCTION auth.role() TO anon;
GRANT ALL ON FUNCTION auth.role() TO authenticated;
GRANT ALL ON FUNCTION auth.role() TO service_role;


--
-- Name: FUNCTION uid(); Type: ACL; Schema: auth; Owner: -
--

GRANT ALL ON FUNCTION auth.uid() TO anon;
GRANT ALL ON FUNCTION auth.uid() TO authenticated;
GRANT ALL ON FUNCTION auth.uid() TO service_role;


--
-- Name: TABLE users; Type: ACL; Schema: auth; Owner: -
--

GRANT ALL ON TABLE auth.users TO service_role;


--
-- Name: FUNCTION user_json(u auth.users); Type: ACL; Schema: auth; Owner: -
--

REVOKE ALL ON FUNCTION auth.user_json(u auth.users) FROM PUBLIC;


--
-- Name: FUNCTION check_onboarding_completable(p_user uuid); Type: ACL; Schema: private; Owner: -
--

REVOKE ALL ON FUNCTION private.check_onboarding_completable(p_user uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION private.check_onboarding_completable(p_user uuid) TO anon;
GRANT ALL ON FUNCTION private.check_onboarding_completable(p_user uuid) TO authenticated;
GRANT ALL ON FUNCTION private.check_onboarding_completable(p_user uuid) TO service_role;


--
-- Name: FUNCTION explain_onboarding_state(); Type: ACL; Schema: private; Owner: -
--

REVOKE ALL ON FUNCTION private.explain_onboarding_state() FROM PUBLIC;


--
-- Name: FUNCTION guard_onboarding_state(); Type: ACL; Schema: private; Owner: -
--

REVOKE ALL ON FUNCTION private.guard_onboarding_state() FROM PUBLIC;


--
-- Name: FUNCTION hand_over_family(); Type: ACL; Schema: private; Owner: -
--

REVOKE ALL ON FUNCTION private.hand_over_family() FROM PUBLIC;


--
-- Name: FUNCTION is_end_user(); Type: ACL; Schema: private; Owner: -
--

REVOKE ALL ON FUNCTION private.is_end_user() FROM PUBLIC;
GRANT ALL ON FUNCTION private.is_end_user() TO anon;
GRANT ALL ON FUNCTION private.is_end_user() TO authenticated;
GRANT ALL ON FUNCTION private.is_end_user() TO service_role;


--
-- Name: FUNCTION lock_family_of_departing_member(); Type: ACL; Schema: private; Owner: -
--

REVOKE ALL ON FUNCTION private.lock_family_of_departing_member() FROM PUBLIC;


--
-- Name: FUNCTION my_family_id(); Type: ACL; Schema: private; Owner: -
--

REVOKE ALL ON FUNCTION private.my_family_id() FROM PUBLIC;
GRANT ALL ON FUNCTION private.my_family_id() TO anon;
GRANT ALL ON FUNCTION private.my_family_id() TO authenticated;
GRANT ALL ON FUNCTION private.my_family_id() TO service_role;


--
-- Name: FUNCTION owns_family_of(owner uuid); Type: ACL; Schema: private; Owner: -
--

REVOKE ALL ON FUNCTION private.owns_family_of(owner uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION private.owns_family_of(owner uuid) TO anon;
GRANT ALL ON FUNCTION private.owns_family_of(owner uuid) TO authenticated;
GRANT ALL ON FUNCTION private.owns_family_of(owner uuid) TO service_role;


--
-- Name: FUNCTION server_timestamps(); Type: ACL; Schema: private; Owner: -
--

REVOKE ALL ON FUNCTION private.server_timestamps() FROM PUBLIC;


--
-- Name: FUNCTION shares_family_with(owner uuid); Type: ACL; Schema: private; Owner: -
--

REVOKE ALL ON FUNCTION private.shares_family_with(owner uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION private.shares_family_with(owner uuid) TO anon;
GRANT ALL ON FUNCTION private.shares_family_with(owner uuid) TO authenticated;
GRANT ALL ON FUNCTION private.shares_family_with(owner uuid) TO service_role;


--
-- Name: FUNCTION drop_events_before(p_before timestamp with time zone); Type: ACL; Schema: product_analytics; Owner: -
--

REVOKE ALL ON FUNCTION product_analytics.drop_events_before(p_before timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION product_analytics.drop_events_before(p_before timestamp with time zone) TO service_role;


--
-- Name: FUNCTION ensure_partition(p_at timestamp with time zone); Type: ACL; Schema: product_analytics; Owner: -
--

REVOKE ALL ON FUNCTION product_analytics.ensure_partition(p_at timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION event_time(e jsonb); Type: ACL; Schema: product_analytics; Owner: -
--

REVOKE ALL ON FUNCTION product_analytics.event_time(e jsonb) FROM PUBLIC;


--
-- Name: FUNCTION experiment_counts(p_flag text, p_goal_state text, p_goal_event text, p_days integer); Type: ACL; Schema: product_analytics; Owner: -
--

REVOKE ALL ON FUNCTION product_analytics.experiment_counts(p_flag text, p_goal_state text, p_goal_event text, p_days integer) FROM PUBLIC;
GRANT ALL ON FUNCTION product_analytics.experiment_counts(p_flag text, p_goal_state text, p_goal_event text, p_days integer) TO service_role;


--
-- Name: FUNCTION ingest(p_events jsonb, p_source text); Type: ACL; Schema: product_analytics; Owner: -
--

REVOKE ALL ON FUNCTION product_analytics.ingest(p_events jsonb, p_source text) FROM PUBLIC;
GRANT ALL ON FUNCTION product_analytics.ingest(p_events jsonb, p_source text) TO service_role;


--
-- Name: FUNCTION merge_distinct_ids(p_distinct_id text, p_other text); Type: ACL; Schema: product_analytics; Owner: -
--

REVOKE ALL ON FUNCTION product_analytics.merge_distinct_ids(p_distinct_id text, p_other text) FROM PUBLIC;


--
-- Name: FUNCTION notify_feature_flags_changed(); Type: ACL; Schema: product_analytics; Owner: -
--

REVOKE ALL ON FUNCTION product_analytics.notify_feature_flags_changed() FROM PUBLIC;


--
-- Name: FUNCTION person_for(p_distinct_id text); Type: ACL; Schema: product_analytics; Owner: -
--

REVOKE ALL ON FUNCTION product_analytics.person_for(p_distinct_id text) FROM PUBLIC;


--
-- Name: TABLE children; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.children TO anon;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.children TO authenticated;
GRANT ALL ON TABLE public.children TO service_role;


--
-- Name: TABLE user_profiles; Type: ACL; Schema: public; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.user_profiles TO anon;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE public.user_profiles TO authenticated;
GRANT ALL ON TABLE public.user_profiles TO service_role;


--
-- Name: FUNCTION all_children(profile public.user_profiles); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.all_children(profile public.user_profiles) FROM PUBLIC;
GRANT ALL ON FUNCTION public.all_children(profile public.user_profiles) TO anon;
GRANT ALL ON FUNCTION public.all_children(profile public.user_profiles) TO authenticated;
GRANT ALL ON FUNCTION public.all_children(profile public.user_profiles) TO service_role;


--
-- Name: FUNCTION complete_onboarding(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.complete_onboarding() FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_onboarding() TO authenticated;
GRANT ALL ON FUNCTION public.complete_onboarding() TO service_role;


--
-- Name: FUNCTION create_family(name text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.create_family(name text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.create_family(name text) TO authenticated;
GRANT ALL ON FUNCTION public.create_family(name text) TO service_role;


--
-- Name: FUNCTION create_user_profile(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.create_user_profile() FROM PUBLIC;


--
-- Name: FUNCTION delete_account(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.delete_account() FROM PUBLIC;
GRANT ALL ON FUNCTION public.delete_account() TO authenticated;


--
-- Name: FUNCTION get_family(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.get_family() FROM PUBLIC;
GRANT ALL ON FUNCTION public.get_family() TO authenticated;
GRANT ALL ON FUNCTION public.get_family() TO service_role;


--
-- Name: FUNCTION get_user_with_profile(p_user_id uuid); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.get_user_with_profile(p_user_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.get_user_with_profile(p_user_id uuid) TO authenticated;
GRANT ALL ON FUNCTION public.get_user_with_profile(p_user_id uuid) TO service_role;


--
-- Name: FUNCTION join_family(code text); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.join_family(code text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.join_family(code text) TO authenticated;
GRANT ALL ON FUNCTION public.join_family(code text) TO service_role;


--
-- Name: FUNCTION keep_row_owner(); Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON FUNCTION public.keep_row_owner() TO anon;
GRANT ALL ON FUNCTION public.keep_row_owner() TO authenticated;
GRANT ALL ON FUNCTION public.keep_row_owner() TO service_role;


--
-- Name: FUNCTION leave_family(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.leave_family() FROM PUBLIC;
GRANT ALL ON FUNCTION public.leave_family() TO authenticated;
GRANT ALL ON FUNCTION public.leave_family() TO service_role;


--
-- Name: FUNCTION new_invite_code(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.new_invite_code() FROM PUBLIC;
GRANT ALL ON FUNCTION public.new_invite_code() TO service_role;


--
-- Name: FUNCTION regenerate_invite_code(); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.regenerate_invite_code() FROM PUBLIC;
GRANT ALL ON FUNCTION public.regenerate_invite_code() TO authenticated;
GRANT ALL ON FUNCTION public.regenerate_invite_code() TO service_role;


--
-- Name: FUNCTION stamp_onboarding_completed_at(); Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON FUNCTION public.stamp_onboarding_completed_at() TO anon;
GRANT ALL ON FUNCTION public.stamp_onboarding_completed_at() TO authenticated;
GRANT ALL ON FUNCTION public.stamp_onboarding_completed_at() TO service_role;


--
-- Name: FUNCTION track(event text, properties jsonb); Type: ACL; Schema: public; Owner: -
--

REVOKE ALL ON FUNCTION public.track(event text, properties jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION public.track(event text, properties jsonb) TO authenticated;
GRANT ALL ON FUNCTION public.track(event text, properties jsonb) TO service_role;


--
-- Name: FUNCTION update_updated_at_column(); Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON FUNCTION public.update_updated_at_column() TO anon;
GRANT ALL ON FUNCTION public.update_updated_at_column() TO authenticated;
GRANT ALL ON FUNCTION public.update_updated_at_column() TO service_role;


--
-- Name: FUNCTION announce_message(); Type: ACL; Schema: realtime; Owner: -
--

REVOKE ALL ON FUNCTION realtime.announce_message() FROM PUBLIC;


--
-- Name: FUNCTION broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, new record, old record, level text); Type: ACL; Schema: realtime; Owner: -
--

GRANT ALL ON FUNCTION realtime.broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, new record, old record, level text) TO anon;
GRANT ALL ON FUNCTION realtime.broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, new record, old record, level text) TO authenticated;
GRANT ALL ON FUNCTION realtime.broadcast_changes(topic_name text, event_name text, operation text, table_name text, table_schema text, new record, old record, level text) TO service_role;


--
-- Name: FUNCTION disable_table(target regclass); Type: ACL; Schema: realtime; Owner: -
--

REVOKE ALL ON FUNCTION realtime.disable_table(target regclass) FROM PUBLIC;


--
-- Name: FUNCTION disable_triggers(target regclass); Type: ACL; Schema: realtime; Owner: -
--

REVOKE ALL ON FUNCTION realtime.disable_triggers(target regclass) FROM PUBLIC;


--
-- Name: FUNCTION enable_table(target regclass); Type: ACL; Schema: realtime; Owner: -
--

REVOKE ALL ON FUNCTION realtime.enable_table(target regclass) FROM PUBLIC;


--
-- Name: FUNCTION enable_triggers(target regclass); Type: ACL; Schema: realtime; Owner: -
--

REVOKE ALL ON FUNCTION realtime.enable_triggers(target regclass) FROM PUBLIC;


--
-- Name: FUNCTION enabled_tables(); Type: ACL; Schema: realtime; Owner: -
--

REVOKE ALL ON FUNCTION realtime.enabled_tables() FROM PUBLIC;
GRANT ALL ON FUNCTION realtime.enabled_tables() TO anon;
GRANT ALL ON FUNCTION realtime.enabled_tables() TO authenticated;
GRANT ALL ON FUNCTION realtime.enabled_tables() TO service_role;


--
-- Name: FUNCTION is_current(committed anyelement); Type: ACL; Schema: realtime; Owner: -
--

REVOKE ALL ON FUNCTION realtime.is_current(committed anyelement) FROM PUBLIC;
GRANT ALL ON FUNCTION realtime.is_current(committed anyelement) TO anon;
GRANT ALL ON FUNCTION realtime.is_current(committed anyelement) TO authenticated;
GRANT ALL ON FUNCTION realtime.is_current(committed anyelement) TO service_role;


--
-- Name: FUNCTION is_enabled(target regclass); Type: ACL; Schema: realtime; Owner: -
--

GRANT ALL ON FUNCTION realtime.is_enabled(target regclass) TO anon;
GRANT ALL ON FUNCTION realtime.is_enabled(target regclass) TO authenticated;
GRANT ALL ON FUNCTION realtime.is_enabled(target regclass) TO service_role;


--
-- Name: FUNCTION policies_allow(committed anyelement); Type: ACL; Schema: realtime; Owner: -
--

REVOKE ALL ON FUNCTION realtime.policies_allow(committed anyelement) FROM PUBLIC;
GRANT ALL ON FUNCTION realtime.policies_allow(committed anyelement) TO anon;
GRANT ALL ON FUNCTION realtime.policies_allow(committed anyelement) TO authenticated;
GRANT ALL ON FUNCTION realtime.policies_allow(committed anyelement) TO service_role;


--
-- Name: FUNCTION presence_heartbeat(server uuid, seconds integer); Type: ACL; Schema: realtime; Owner: -
--

REVOKE ALL ON FUNCTION realtime.presence_heartbeat(server uuid, seconds integer) FROM PUBLIC;


--
-- Name: FUNCTION renew_listener(server uuid, tables text[], row_keys text[], seconds integer, replace boolean); Type: ACL; Schema: realtime; Owner: -
--

REVOKE ALL ON FUNCTION realtime.renew_listener(server uuid, tables text[], row_keys text[], seconds integer, replace boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION realtime.renew_listener(server uuid, tables text[], row_keys text[], seconds integer, replace boolean) TO service_role;


--
-- Name: FUNCTION send(payload jsonb, event text, topic text, private boolean); Type: ACL; Schema: realtime; Owner: -
--

GRANT ALL ON FUNCTION realtime.send(payload jsonb, event text, topic text, private boolean) TO anon;
GRANT ALL ON FUNCTION realtime.send(payload jsonb, event text, topic text, private boolean) TO authenticated;
GRANT ALL ON FUNCTION realtime.send(payload jsonb, event text, topic text, private boolean) TO service_role;


--
-- Name: FUNCTION topic(); Type: ACL; Schema: realtime; Owner: -
--

GRANT ALL ON FUNCTION realtime.topic() TO anon;
GRANT ALL ON FUNCTION realtime.topic() TO authenticated;
GRANT ALL ON FUNCTION realtime.topic() TO service_role;


--
-- Name: FUNCTION trigger_function_template(); Type: ACL; Schema: realtime; Owner: -
--

REVOKE ALL ON FUNCTION realtime.trigger_function_template() FROM PUBLIC;


--
-- Name: FUNCTION use_triggers("on" boolean); Type: ACL; Schema: realtime; Owner: -
--

REVOKE ALL ON FUNCTION realtime.use_triggers("on" boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION realtime.use_triggers("on" boolean) TO service_role;


--
-- Name: FUNCTION bucket_has_objects(bucket text); Type: ACL; Schema: storage; Owner: -
--

REVOKE ALL ON FUNCTION storage.bucket_has_objects(bucket text) FROM PUBLIC;
GRANT ALL ON FUNCTION storage.bucket_has_objects(bucket text) TO anon;
GRANT ALL ON FUNCTION storage.bucket_has_objects(bucket text) TO authenticated;
GRANT ALL ON FUNCTION storage.bucket_has_objects(bucket text) TO service_role;


--
-- Name: FUNCTION extension(name text); Type: ACL; Schema: storage; Owner: -
--

GRANT ALL ON FUNCTION storage.extension(name text) TO anon;
GRANT ALL ON FUNCTION storage.extension(name text) TO authenticated;
GRANT ALL ON FUNCTION storage.extension(name text) TO service_role;


--
-- Name: FUNCTION filename(name text); Type: ACL; Schema: storage; Owner: -
--

GRANT ALL ON FUNCTION storage.filename(name text) TO anon;
GRANT ALL ON FUNCTION storage.filename(name text) TO authenticated;
GRANT ALL ON FUNCTION storage.filename(name text) TO service_role;


--
-- Name: FUNCTION foldername(name text); Type: ACL; Schema: storage; Owner: -
--

GRANT ALL ON FUNCTION storage.foldername(name text) TO anon;
GRANT ALL ON FUNCTION storage.foldername(name text) TO authenticated;
GRANT ALL ON FUNCTION storage.foldername(name text) TO service_role;


--
-- Name: FUNCTION shares_family_with_folder(folder text); Type: ACL; Schema: storage; Owner: -
--

REVOKE ALL ON FUNCTION storage.shares_family_with_folder(folder text) FROM PUBLIC;
GRANT ALL ON FUNCTION storage.shares_family_with_folder(folder text) TO authenticated;
GRANT ALL ON FUNCTION storage.shares_family_with_folder(folder text) TO service_role;


--
-- Name: TABLE former_users; Type: ACL; Schema: analytics; Owner: -
--

GRANT SELECT ON TABLE analytics.former_users TO service_role;


--
-- Name: TABLE onboarding_progress; Type: ACL; Schema: analytics; Owner: -
--

GRANT SELECT ON TABLE analytics.onboarding_progress TO service_role;


--
-- Name: TABLE onboarding_transitions; Type: ACL; Schema: analytics; Owner: -
--

GRANT SELECT ON TABLE analytics.onboarding_transitions TO service_role;


--
-- Name: TABLE identities; Type: ACL; Schema: auth; Owner: -
--

GRANT ALL ON TABLE auth.identities TO service_role;


--
-- Name: TABLE mail_outbox; Type: ACL; Schema: auth; Owner: -
--

GRANT ALL ON TABLE auth.mail_outbox TO service_role;


--
-- Name: TABLE refresh_tokens; Type: ACL; Schema: auth; Owner: -
--

GRANT ALL ON TABLE auth.refresh_tokens TO service_role;


--
-- Name: SEQUENCE refresh_tokens_id_seq; Type: ACL; Schema: auth; Owner: -
--

GRANT ALL ON SEQUENCE auth.refresh_tokens_id_seq TO service_role;


--
-- Name: TABLE sessions; Type: ACL; Schema: auth; Owner: -
--

GRANT ALL ON TABLE auth.sessions TO service_role;


--
-- Name: TABLE event_uuids; Type: ACL; Schema: product_analytics; Owner: -
--

GRANT SELECT ON TABLE product_analytics.event_uuids TO service_role;


--
-- Name: TABLE events; Type: ACL; Schema: product_analytics; Owner: -
--

GRANT SELECT ON TABLE product_analytics.events TO service_role;


--
-- Name: TABLE person_distinct_ids; Type: ACL; Schema: product_analytics; Owner: -
--

GRANT SELECT ON TABLE product_analytics.person_distinct_ids TO service_role;


--
-- Name: TABLE events_with_person; Type: ACL; Schema: product_analytics; Owner: -
--

GRANT SELECT ON TABLE product_analytics.events_with_person TO service_role;


--
-- Name: TABLE exposures; Type: ACL; Schema: product_analytics; Owner: -
--

GRANT SELECT ON TABLE product_analytics.exposures TO service_role;


--
-- Name: TABLE feature_flags; Type: ACL; Schema: product_analytics; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE product_analytics.feature_flags TO service_role;


--
-- Name: TABLE persons; Type: ACL; Schema: product_analytics; Owner: -
--

GRANT SELECT ON TABLE product_analytics.persons TO service_role;


--
-- Name: TABLE families; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.families TO service_role;
GRANT SELECT ON TABLE public.families TO authenticated;


--
-- Name: COLUMN families.name; Type: ACL; Schema: public; Owner: -
--

GRANT UPDATE(name) ON TABLE public.families TO authenticated;


--
-- Name: TABLE family_join_failures; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.family_join_failures TO service_role;


--
-- Name: TABLE family_members; Type: ACL; Schema: public; Owner: -
--

GRANT ALL ON TABLE public.family_members TO service_role;
GRANT SELECT ON TABLE public.family_members TO authenticated;


--
-- Name: TABLE listeners; Type: ACL; Schema: realtime; Owner: -
--

GRANT SELECT ON TABLE realtime.listeners TO anon;
GRANT SELECT ON TABLE realtime.listeners TO authenticated;
GRANT SELECT ON TABLE realtime.listeners TO service_role;


--
-- Name: TABLE messages; Type: ACL; Schema: realtime; Owner: -
--

GRANT SELECT,INSERT,UPDATE ON TABLE realtime.messages TO anon;
GRANT SELECT,INSERT,UPDATE ON TABLE realtime.messages TO authenticated;
GRANT SELECT,INSERT,UPDATE ON TABLE realtime.messages TO service_role;


--
-- Name: TABLE settings; Type: ACL; Schema: realtime; Owner: -
--

GRANT SELECT ON TABLE realtime.settings TO anon;
GRANT SELECT ON TABLE realtime.settings TO authenticated;
GRANT SELECT ON TABLE realtime.settings TO service_role;


--
-- Name: TABLE buckets; Type: ACL; Schema: storage; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE storage.buckets TO anon;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE storage.buckets TO authenticated;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE storage.buckets TO service_role;


--
-- Name: TABLE objects; Type: ACL; Schema: storage; Owner: -
--

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE storage.objects TO anon;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE storage.objects TO authenticated;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE storage.objects TO service_role;


--
-- Name: DEFAULT PRIVILEGES FOR SEQUENCES; Type: DEFAULT ACL; Schema: public; Owner: -
--

ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT SELECT,USAGE ON SEQUENCES  TO anon;
ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT SELECT,USAGE ON SEQUENCES  TO authenticated;
ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT ALL ON SEQUENCES  TO service_role;


--
-- Name: DEFAULT PRIVILEGES FOR FUNCTIONS; Type: DEFAULT ACL; Schema: public; Owner: -
--

ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT ALL ON FUNCTIONS  TO anon;
ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT ALL ON FUNCTIONS  TO authenticated;
ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT ALL ON FUNCTIONS  TO service_role;


--
-- Name: DEFAULT PRIVILEGES FOR TABLES; Type: DEFAULT ACL; Schema: public; Owner: -
--

ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT SELECT,INSERT,DELETE,UPDATE ON TABLES  TO anon;
ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT SELECT,INSERT,DELETE,UPDATE ON TABLES  TO authenticated;
ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT ALL ON TABLES  TO service_role;


--
-- PostgreSQL database dump complete
--


