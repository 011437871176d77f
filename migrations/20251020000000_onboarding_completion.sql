-- What the other seed apps need on top of Eko's migration:
--   * AirFit: completion recorded by the server, exactly once (onboarding_completed_at);
--   * NutriSync: atomic completion (complete_onboarding) and account deletion (delete_account).

-- ============================================================================
-- 1. onboarding_completed_at: set by the database, once
-- ============================================================================

ALTER TABLE public.user_profiles ADD COLUMN onboarding_completed_at TIMESTAMPTZ;
COMMENT ON COLUMN public.user_profiles.onboarding_completed_at IS
    'When onboarding_state first became COMPLETE; set by the database, never moved afterwards';

-- Clients cannot write the column: the trigger decides it from the state alone.
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
CREATE TRIGGER user_profiles_stamp_completed_at
    BEFORE INSERT OR UPDATE ON public.user_profiles
    FOR EACH ROW EXECUTE FUNCTION public.stamp_onboarding_completed_at();

-- ============================================================================
-- 2. complete_onboarding(): the caller's onboarding, checked and completed atomically
-- ============================================================================

-- Runs as the caller (SECURITY INVOKER), so RLS limits it to the caller's own rows; the search
-- path is pinned anyway and every name is qualified.
--
-- Error convention (what a client can show and branch on): a rule that fails raises SQLSTATE
-- P0001 (PostgREST and our REST layer answer 400 with {"code","message","details","hint"}):
--   message  a sentence for the user, naming the child;
--   details  a stable machine code: 'no_children' | 'goals_count' | 'topics_count';
--   hint     what to do, with the child's id.
-- No signed-in user: 42501 (401 for anon, 403 otherwise). Nothing changes on error (the
-- function's work is one statement's transaction). Calling it again once COMPLETE returns the
-- profile unchanged, whatever the children look like now (a retried request is a success).
-- The profile row is locked FOR UPDATE and the children FOR SHARE, so a concurrent completion
-- waits, and the children checked cannot be changed or deleted before this commits.
CREATE FUNCTION public.complete_onboarding() RETURNS public.user_profiles
LANGUAGE plpgsql VOLATILE
SET search_path = ''
AS $$
DECLARE
    caller  uuid := auth.uid();
    profile public.user_profiles;
    child   record;
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
    PERFORM 1 FROM public.children WHERE user_id = caller FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'Add at least one child before completing onboarding'
            USING ERRCODE = 'P0001', DETAIL = 'no_children', HINT = 'Add a child first.';
    END IF;
    FOR child IN
        SELECT id, name, coalesce(cardinality(goals), 0) AS goal_count, coalesce(cardinality(topics), 0) AS topic_count
        FROM public.children WHERE user_id = caller ORDER BY created_at, id
    LOOP
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
    UPDATE public.user_profiles
    SET onboarding_state = 'COMPLETE', current_child_id = NULL
    WHERE id = caller
    RETURNING * INTO profile;
    RETURN profile;
END
$$;
REVOKE ALL ON FUNCTION public.complete_onboarding() FROM PUBLIC, anon;
GRANT EXECUTE ON FUNCTION public.complete_onboarding() TO authenticated, service_role;

-- ============================================================================
-- 3. delete_account(): the caller deletes their own account and everything they own
-- ============================================================================

-- SECURITY DEFINER because the API roles cannot touch auth.users; it deletes only the caller
-- (auth.uid()), and the foreign keys' ON DELETE CASCADE remove the profile, children, identities,
-- sessions and refresh tokens. A retry after success deletes nothing and succeeds.
CREATE FUNCTION public.delete_account() RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = ''
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
-- Not for anon, and not for the service role (it has no user of its own; the admin API deletes users).
REVOKE ALL ON FUNCTION public.delete_account() FROM PUBLIC, anon, service_role;
GRANT EXECUTE ON FUNCTION public.delete_account() TO authenticated;
