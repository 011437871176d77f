-- The API surface, hardened.
--
-- 1. The row-level-security helpers leave the exposed schema. Policies call them for anon and
--    authenticated requests, so those roles keep EXECUTE, but in `public` they were also RPC
--    endpoints (`/rest/v1/rpc/shares_family_with`) and listed in the OpenAPI document. Policies
--    refer to functions by identity, so moving them changes no policy.
CREATE SCHEMA private;
GRANT USAGE ON SCHEMA private TO anon, authenticated, service_role;
ALTER FUNCTION public.my_family_id() SET SCHEMA private;
ALTER FUNCTION public.shares_family_with(uuid) SET SCHEMA private;
ALTER FUNCTION public.owns_family_of(uuid) SET SCHEMA private;

-- 2. join_family answers a read-only call the same way whatever the code (see below).
CREATE OR REPLACE FUNCTION public.join_family(code text) RETURNS json
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = ''
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
