-- A family never stays without an owner: whenever a member row goes (leave_family(), or the
-- account's deletion through ON DELETE CASCADE from auth.users, by delete_account() or the
-- admin API), a family left without an owner is handed to the member who joined earliest, and
-- a family left with no member is deleted. Triggers on family_members, so every path obeys.

-- Before a member row goes: lock its family, so concurrent departures from one family are
-- decided one after the other (each sees the others' result).
CREATE FUNCTION private.lock_family_of_departing_member() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    PERFORM 1 FROM public.families WHERE id = OLD.family_id FOR UPDATE;
    RETURN OLD;
END
$$;

-- After: delete the empty family, or hand an ownerless one to the earliest member.
CREATE FUNCTION private.hand_over_family() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = ''
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
REVOKE ALL ON FUNCTION private.lock_family_of_departing_member(), private.hand_over_family()
    FROM PUBLIC, anon, authenticated, service_role;

CREATE TRIGGER family_members_lock_family
    BEFORE DELETE ON public.family_members
    FOR EACH ROW EXECUTE FUNCTION private.lock_family_of_departing_member();
CREATE TRIGGER family_members_hand_over
    AFTER DELETE ON public.family_members
    FOR EACH ROW EXECUTE FUNCTION private.hand_over_family();

-- Replaces leave_family() of 20251123000000_families.sql: the hand-over it did itself is the
-- triggers' now (the same rule for every way a member leaves). Not in a family: a no-op.
CREATE OR REPLACE FUNCTION public.leave_family() RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = ''
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

-- Families emptied before this migration (every member deleted their account) go now, and
-- families whose owner deleted the account get one.
DELETE FROM public.families f WHERE NOT EXISTS (SELECT 1 FROM public.family_members m WHERE m.family_id = f.id);
UPDATE public.family_members m SET role = 'owner'
 WHERE NOT EXISTS (SELECT 1 FROM public.family_members o WHERE o.family_id = m.family_id AND o.role = 'owner')
   AND m.user_id = (SELECT e.user_id FROM public.family_members e WHERE e.family_id = m.family_id
                    ORDER BY e.joined_at, e.user_id LIMIT 1);
