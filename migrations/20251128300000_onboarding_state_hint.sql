-- An unknown onboarding_state is refused as valid_onboarding_state refuses it (23514, the same
-- message and constraint name), and says which states there are: the detail names the value,
-- the hint lists analytics.onboarding_states() in onboarding order. The CHECK constraint stays
-- the rule; this trigger only runs first (BEFORE triggers run before constraints).
CREATE FUNCTION private.explain_onboarding_state() RETURNS trigger
LANGUAGE plpgsql
-- As its owner: the analytics schema (the list's home) stays closed to the API roles.
SECURITY DEFINER
SET search_path = ''
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
REVOKE ALL ON FUNCTION private.explain_onboarding_state() FROM PUBLIC, anon, authenticated, service_role;

CREATE TRIGGER user_profiles_explain_onboarding_state
    BEFORE INSERT OR UPDATE OF onboarding_state ON public.user_profiles
    FOR EACH ROW EXECUTE FUNCTION private.explain_onboarding_state();
