-- Onboarding's state machine, kept by the database whatever path a write takes (REST's PATCH,
-- PUT, POST and upserts of user_profiles, complete_onboarding(), psql as an API role):
--   1. Entering COMPLETE runs one check, private.check_onboarding_completable(user), the one
--      complete_onboarding() runs too: the same errors (P0001, details 'no_children' /
--      'goals_count' / 'topics_count', the child's name in the message and its id in the hint),
--      raised before anything is written.
--   2. COMPLETE is final for users: leaving it raises P0001 with details
--      'onboarding_complete_final'. The states before COMPLETE move freely (forward, back,
--      skipping), as the apps' progressive saves need.
--   3. The children checked are the ones the user may read through the family: their own and
--      those of every member of their family (FamilySync: a co-parent completes with the
--      family's children).
-- "Users" are the API's end-user roles, anon and authenticated: the role a statement runs as,
-- or the role claim of the request (so a SECURITY DEFINER function called by a user is held to
-- the rules too). The service role (support resets) and connections without an API role (psql,
-- the migrations, `onboard backfill-profiles` for accounts that predate onboarding) may set
-- and leave COMPLETE directly. onboarding_completed_at stays as
-- 20251020000000_onboarding_completion.sql stamps it: once, by the database.

-- Whether the current statement acts for an end user (anon or authenticated).
CREATE FUNCTION private.is_end_user() RETURNS boolean
LANGUAGE sql STABLE
SET search_path = ''
AS $$
    SELECT current_user IN ('anon', 'authenticated') OR coalesce(auth.role(), '') IN ('anon', 'authenticated')
$$;

-- The completion checks for `p_user`; returns when they pass, else raises:
--   no signed-in user, or another user's onboarding asked for by a signed-in user: 42501;
--   no child readable through the family: P0001 'no_children';
--   per child, in creation order: goals not 1..3 (P0001 'goals_count'), fewer than 3 topics
--   (P0001 'topics_count'); message names the child, hint gives its id.
-- The children are locked FOR SHARE, so the ones checked cannot change or go before the
-- caller's transaction ends. SECURITY DEFINER: it reads the family's children and membership
-- whatever the caller's policies, for the caller only (or for anyone, without a signed-in user:
-- the service role and the database owner).
CREATE FUNCTION private.check_onboarding_completable(p_user uuid) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = ''
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

-- The trigger below runs as the writer, so the API roles call both helpers; neither is
-- reachable through REST (the schema `private` is not exposed).
REVOKE ALL ON FUNCTION private.is_end_user(), private.check_onboarding_completable(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION private.is_end_user(), private.check_onboarding_completable(uuid) TO anon, authenticated, service_role;

-- Rules 1 and 2 for every INSERT and UPDATE of user_profiles by a user.
CREATE FUNCTION private.guard_onboarding_state() RETURNS trigger
LANGUAGE plpgsql
SET search_path = ''
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
REVOKE ALL ON FUNCTION private.guard_onboarding_state() FROM PUBLIC, anon, authenticated, service_role;

CREATE TRIGGER user_profiles_guard_onboarding_state
    BEFORE INSERT OR UPDATE ON public.user_profiles
    FOR EACH ROW EXECUTE FUNCTION private.guard_onboarding_state();

-- Replaces complete_onboarding() of 20251020000000_onboarding_completion.sql: the checks are
-- private.check_onboarding_completable's (the family's children, rule 3); everything else is
-- as before: 42501 without a user, P0001 'no_profile' without a profile, the profile returned
-- unchanged once COMPLETE (a retried request is a success), the profile locked FOR UPDATE so a
-- concurrent completion waits, current_child_id cleared on completion. (For a user the
-- trigger runs the same checks once more on the UPDATE; they read the rows already locked.)
CREATE OR REPLACE FUNCTION public.complete_onboarding() RETURNS public.user_profiles
LANGUAGE plpgsql VOLATILE
SET search_path = ''
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

COMMENT ON COLUMN public.user_profiles.onboarding_state IS
    'Current step in onboarding flow. Users move freely between the steps before COMPLETE; entering COMPLETE needs the checks of complete_onboarding() (P0001 no_children / goals_count / topics_count), and COMPLETE is final for users (P0001 onboarding_complete_final); the service role may set and leave it';
