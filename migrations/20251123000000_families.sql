-- Families (FamilySync step 2 "Create or Join Your Family"): a family has one owner and
-- parents; a user belongs to at most one family; every member reads and edits the children of
-- every member, deleting a child stays with its creator and the family owner. Invite codes join.
-- Writes to the family tables go through the RPCs below (SECURITY DEFINER, caller only).

CREATE TABLE public.families (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name        text NOT NULL CONSTRAINT families_name_length CHECK (char_length(btrim(name)) BETWEEN 1 AND 100),
    -- Shown grouped (ABCDE-FGHJK); matched case-insensitively without the dash.
    invite_code text NOT NULL CONSTRAINT families_invite_code_format CHECK (invite_code ~ '^[A-HJKMNP-Z2-9]{5}-[A-HJKMNP-Z2-9]{5}$'),
    created_by  uuid REFERENCES auth.users (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX families_invite_code_key ON public.families (replace(invite_code, '-', ''));

CREATE TABLE public.family_members (
    family_id uuid NOT NULL REFERENCES public.families (id) ON DELETE CASCADE,
    user_id   uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    role      text NOT NULL DEFAULT 'parent' CONSTRAINT family_members_role_check CHECK (role IN ('owner', 'parent')),
    joined_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (family_id, user_id),
    CONSTRAINT family_members_one_family_per_user UNIQUE (user_id)
);

-- Wrong invite codes per user, for the join throttle (kept an hour).
CREATE TABLE public.family_join_failures (
    user_id      uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    attempted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX family_join_failures_user_idx ON public.family_join_failures (user_id, attempted_at);

CREATE TRIGGER update_families_updated_at
    BEFORE UPDATE ON public.families
    FOR EACH ROW EXECUTE FUNCTION public.update_updated_at_column();

-- ============================================================================
-- Helpers for the policies. SECURITY DEFINER so a policy on family_members can ask about
-- family_members without recursing into its own policy; they answer only about the caller.
-- ============================================================================

-- The caller's family, or NULL.
CREATE FUNCTION public.my_family_id() RETURNS uuid
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = ''
AS $$ SELECT family_id FROM public.family_members WHERE user_id = auth.uid() $$;

-- Whether the caller may read and edit rows owned by `owner`: their own, or a family member's.
CREATE FUNCTION public.shares_family_with(owner uuid) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT owner = auth.uid() OR EXISTS (
        SELECT 1 FROM public.family_members mine
        JOIN public.family_members theirs ON theirs.family_id = mine.family_id
        WHERE mine.user_id = auth.uid() AND theirs.user_id = owner)
$$;

-- Whether the caller owns the family that `owner` belongs to.
CREATE FUNCTION public.owns_family_of(owner uuid) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT EXISTS (
        SELECT 1 FROM public.family_members mine
        JOIN public.family_members theirs ON theirs.family_id = mine.family_id
        WHERE mine.user_id = auth.uid() AND mine.role = 'owner' AND theirs.user_id = owner)
$$;

-- anon may call them (policies on children run them for anon too); without a user they answer no.
REVOKE ALL ON FUNCTION public.my_family_id(), public.shares_family_with(uuid), public.owns_family_of(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.my_family_id(), public.shares_family_with(uuid), public.owns_family_of(uuid) TO anon, authenticated, service_role;

-- ============================================================================
-- Row-level security
-- ============================================================================

ALTER TABLE public.families ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.family_members ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.family_join_failures ENABLE ROW LEVEL SECURITY;

CREATE POLICY "Members can view their family" ON public.families FOR SELECT
    USING (id = public.my_family_id());
CREATE POLICY "The owner can rename the family" ON public.families FOR UPDATE
    USING (id = public.my_family_id() AND public.owns_family_of(auth.uid()))
    WITH CHECK (id = public.my_family_id());
CREATE POLICY "Members can view their family's members" ON public.family_members FOR SELECT
    USING (family_id = public.my_family_id());

-- Children: shared with the creator's family; deleting stays with the creator and the owner.
DROP POLICY "Users can view own children" ON public.children;
DROP POLICY "Users can update own children" ON public.children;
DROP POLICY "Users can delete own children" ON public.children;
CREATE POLICY "Family can view children" ON public.children FOR SELECT
    USING (public.shares_family_with(user_id));
CREATE POLICY "Family can update children" ON public.children FOR UPDATE
    USING (public.shares_family_with(user_id))
    WITH CHECK (public.shares_family_with(user_id));
CREATE POLICY "Creator or family owner can delete children" ON public.children FOR DELETE
    USING (auth.uid() = user_id OR public.owns_family_of(user_id));

-- Writes to the family tables only through the RPCs; the owner may rename.
REVOKE ALL ON public.families, public.family_members, public.family_join_failures FROM anon, authenticated;
GRANT SELECT ON public.families, public.family_members TO authenticated;
GRANT UPDATE (name) ON public.families TO authenticated;
GRANT ALL ON public.families, public.family_members, public.family_join_failures TO service_role;

-- ============================================================================
-- RPCs
-- ============================================================================

-- A fresh invite code: 10 characters from 31 without look-alikes (no 0/O, 1/I/L), ≈ 49.5 bits
-- from gen_random_uuid()'s CSPRNG bytes (rejection sampling, so no modulo bias).
CREATE FUNCTION public.new_invite_code() RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = ''
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
REVOKE ALL ON FUNCTION public.new_invite_code() FROM PUBLIC, anon, authenticated;

-- The caller's family as the apps show it: members with roles and full names, never e-mails.
CREATE FUNCTION public.get_family() RETURNS json
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = ''
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

CREATE FUNCTION public.create_family(name text) RETURNS json
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = ''
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

-- Joins by code (any case, with or without the dash). A wrong code answers 404 and is counted;
-- ten wrong codes within an hour answer 429 until the hour has passed.
CREATE FUNCTION public.join_family(code text) RETURNS json
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    caller uuid := auth.uid();
    normalized text := upper(regexp_replace(coalesce(code, ''), '[\s-]', '', 'g'));
    family uuid;
    current_family uuid;
BEGIN
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

-- Leaves the caller's family. The last owner leaving hands ownership to the longest-standing
-- parent; a family left empty is deleted. Not in a family: a no-op.
CREATE FUNCTION public.leave_family() RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = ''
AS $$
DECLARE
    caller uuid := auth.uid();
    membership public.family_members;
BEGIN
    IF caller IS NULL THEN
        RAISE EXCEPTION 'leave_family needs a signed-in user' USING ERRCODE = '42501';
    END IF;
    DELETE FROM public.family_members WHERE user_id = caller RETURNING * INTO membership;
    IF membership IS NULL THEN
        RETURN;
    END IF;
    -- Serialise concurrent leaves of one family.
    PERFORM 1 FROM public.families WHERE id = membership.family_id FOR UPDATE;
    IF NOT EXISTS (SELECT 1 FROM public.family_members WHERE family_id = membership.family_id) THEN
        DELETE FROM public.families WHERE id = membership.family_id;
    ELSIF NOT EXISTS (SELECT 1 FROM public.family_members WHERE family_id = membership.family_id AND role = 'owner') THEN
        UPDATE public.family_members SET role = 'owner'
        WHERE family_id = membership.family_id
          AND user_id = (SELECT user_id FROM public.family_members WHERE family_id = membership.family_id
                         ORDER BY joined_at, user_id LIMIT 1);
    END IF;
END
$$;

CREATE FUNCTION public.regenerate_invite_code() RETURNS json
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = ''
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

REVOKE ALL ON FUNCTION public.get_family(), public.create_family(text), public.join_family(text),
    public.leave_family(), public.regenerate_invite_code() FROM PUBLIC, anon;
GRANT EXECUTE ON FUNCTION public.get_family(), public.create_family(text), public.join_family(text),
    public.leave_family(), public.regenerate_invite_code() TO authenticated;
