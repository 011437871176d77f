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

-- Runs as the caller (SECURITY INVOKER), so RLS limits it to the caller's own rows. Errors are
-- SQLSTATE P0001 (PostgREST answers 400) with a message an app can show and the failing rule
-- in DETAIL; nothing changes on error. Calling it again once complete changes nothing.
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
        RAISE EXCEPTION 'no profile for this user' USING ERRCODE = 'P0001';
    END IF;
    IF profile.onboarding_state = 'COMPLETE' THEN
        RETURN profile;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM public.children WHERE user_id = caller) THEN
        RAISE EXCEPTION 'Add at least one child before completing onboarding'
            USING ERRCODE = 'P0001', DETAIL = 'no_children', HINT = 'Insert a row into children first.';
    END IF;
    FOR child IN
        SELECT name, coalesce(cardinality(goals), 0) AS goal_count, coalesce(cardinality(topics), 0) AS topic_count
        FROM public.children WHERE user_id = caller ORDER BY created_at, id
    LOOP
        IF child.goal_count NOT BETWEEN 1 AND 3 THEN
            RAISE EXCEPTION 'Choose 1 to 3 goals for %', child.name
                USING ERRCODE = 'P0001', DETAIL = format('goals: child %s has %s', child.name, child.goal_count);
        END IF;
        IF child.topic_count < 3 THEN
            RAISE EXCEPTION 'Choose at least 3 topics for %', child.name
                USING ERRCODE = 'P0001', DETAIL = format('topics: child %s has %s', child.name, child.topic_count);
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

-- SECURITY DEFINER because the API roles cannot touch auth.users; it deletes only the caller.
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
REVOKE ALL ON FUNCTION public.delete_account() FROM PUBLIC, anon;
GRANT EXECUTE ON FUNCTION public.delete_account() TO authenticated;
