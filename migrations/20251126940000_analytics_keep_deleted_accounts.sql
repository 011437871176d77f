-- Account deletion keeps the onboarding analytics, without the person.
--
-- Until now a user's onboarding history went with the account (ON DELETE CASCADE from
-- auth.users), so every user who deleted the account left the funnel, the drop-off, the
-- durations and the cohorts. Now, just before an auth.users row is deleted (delete_account(),
-- the admin API, the dashboard, psql), a trigger:
--   * writes one analytics.former_users row under a fresh random id (gen_random_uuid(), stored
--     nowhere else): what the questions need to count the account, and nothing that names it
--     (no user id, no e-mail, no name, no metadata, no identities);
--   * moves the account's onboarding_transitions and onboarding_progress rows to that id.
-- Nothing then links those rows to the person: the account row, its identities, profile and
-- children are gone, and the random id was never the user's id anywhere.
-- The analytics functions count former users with the live ones (cohort_users answers both),
-- in the window and cohort of their sign-up, at the state where they stopped.

CREATE TABLE analytics.former_users (
    id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    signed_up_at            timestamptz NOT NULL,
    provider                text NOT NULL,
    is_anonymous            boolean NOT NULL,
    signed_up_anonymously   boolean NOT NULL,
    onboarding_state        text NOT NULL,
    profile_created_at      timestamptz,
    onboarding_completed_at timestamptz,
    children                integer NOT NULL
);
COMMENT ON TABLE analytics.former_users IS
    'Deleted accounts, as the onboarding analytics count them: a random id (the user_id of their onboarding_transitions and onboarding_progress rows) and no user id, e-mail or other link to the person';
COMMENT ON COLUMN analytics.former_users.provider IS
    'As analytics.cohort_users names it: ''anonymous'' for an anonymous account, else app_metadata''s provider (''unknown'' without one)';
COMMENT ON COLUMN analytics.former_users.signed_up_anonymously IS
    'Whether analytics.anonymous_upgrades counted the account (anonymous, or an e-mail account whose first identity came after sign-up)';
COMMENT ON COLUMN analytics.former_users.children IS 'How many children the account had created when it was deleted';

REVOKE ALL ON analytics.former_users FROM PUBLIC, anon, authenticated, service_role;
GRANT SELECT ON analytics.former_users TO service_role;

-- The history and progress no longer go with the account.
ALTER TABLE analytics.onboarding_transitions DROP CONSTRAINT onboarding_transitions_user_id_fkey;
ALTER TABLE analytics.onboarding_progress DROP CONSTRAINT onboarding_progress_user_id_fkey;
COMMENT ON TABLE analytics.onboarding_transitions IS
    'Append-only history of user_profiles.onboarding_state (triggers on user_profiles write it); when the account is deleted its rows move to an analytics.former_users id and stay';
COMMENT ON COLUMN analytics.onboarding_transitions.user_id IS
    'The user''s id (auth.users) while the account exists; after its deletion the random id of its analytics.former_users row';
COMMENT ON COLUMN analytics.onboarding_progress.user_id IS
    'The user''s id (auth.users) while the account exists; after its deletion the random id of its analytics.former_users row';

-- Replaces analytics.onboarding_transitions_append_only() of
-- 20251125000000_onboarding_analytics.sql: rows are never deleted any more (an account's
-- deletion keeps them), and the one UPDATE allowed is the move of a deleted account's rows to
-- its former_users id, changing user_id and nothing else.
CREATE OR REPLACE FUNCTION analytics.onboarding_transitions_append_only() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = ''
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

-- Before an account is deleted: its former_users row, and its history moved to it.
CREATE FUNCTION analytics.keep_former_user() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = ''
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
REVOKE ALL ON FUNCTION analytics.keep_former_user() FROM PUBLIC, anon, authenticated, service_role;

CREATE TRIGGER on_auth_user_deleted_keep_analytics
    BEFORE DELETE ON auth.users
    FOR EACH ROW EXECUTE FUNCTION analytics.keep_former_user();

-- Replaces analytics.cohort_users() of 20251125000000_onboarding_analytics.sql: the same
-- columns for the live users, and the former users after them (user_id their random id,
-- their sign-up, provider and onboarding as they were at deletion).
CREATE OR REPLACE FUNCTION analytics.cohort_users(p_from timestamptz, p_to timestamptz, p_cohort text DEFAULT NULL)
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

-- Replaces analytics.children_per_completed_user() of 20251125000000_onboarding_analytics.sql:
-- a former user's children are the count kept at deletion.
CREATE OR REPLACE FUNCTION analytics.children_per_completed_user(p_from timestamptz, p_to timestamptz, p_cohort text DEFAULT NULL)
RETURNS TABLE (cohort text, users_completed bigint, children bigint, average numeric, median double precision)
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

-- Replaces analytics.anonymous_upgrades() of 20251125000000_onboarding_analytics.sql: a former
-- user counts as it did at deletion (signed_up_anonymously).
CREATE OR REPLACE FUNCTION analytics.anonymous_upgrades(p_from timestamptz, p_to timestamptz, p_cohort text DEFAULT NULL)
RETURNS TABLE (cohort text, anonymous_users bigint, upgraded_users bigint, pct_upgraded numeric)
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
