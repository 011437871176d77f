-- The columns the server owns on children and user_profiles:
--   * children.user_id defaults to auth.uid() (Supabase's habit: a client inserts a child
--     without naming itself). A value other than the caller's is still refused by row-level
--     security (42501), and the owner never changes (keep_row_owner).
--   * created_at and updated_at are the server's: whatever a client sends for them is ignored,
--     silently replaced by the server's clock (created_at = updated_at = now() on insert;
--     created_at kept and updated_at = now() on update). "Clients" are every API role (anon,
--     authenticated, service_role: the role a statement runs as, or the request's role claim);
--     the database owner (psql, migrations, imports) may still write them.

ALTER TABLE public.children ALTER COLUMN user_id SET DEFAULT auth.uid();

CREATE FUNCTION private.server_timestamps() RETURNS trigger
LANGUAGE plpgsql
SET search_path = ''
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
REVOKE ALL ON FUNCTION private.server_timestamps() FROM PUBLIC, anon, authenticated, service_role;

CREATE TRIGGER children_server_timestamps
    BEFORE INSERT OR UPDATE ON public.children
    FOR EACH ROW EXECUTE FUNCTION private.server_timestamps();
CREATE TRIGGER user_profiles_server_timestamps
    BEFORE INSERT OR UPDATE ON public.user_profiles
    FOR EACH ROW EXECUTE FUNCTION private.server_timestamps();

COMMENT ON COLUMN public.children.user_id IS 'The parent who created the child; defaults to the caller (auth.uid()) and never changes';
COMMENT ON COLUMN public.children.created_at IS 'Set by the server on insert; client values are ignored';
COMMENT ON COLUMN public.children.updated_at IS 'Set by the server on every write; client values are ignored';
COMMENT ON COLUMN public.user_profiles.created_at IS 'Set by the server on insert; client values are ignored';
COMMENT ON COLUMN public.user_profiles.updated_at IS 'Set by the server on every write; client values are ignored';
