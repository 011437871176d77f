-- The family policies of children test the caller's own rows first. private.shares_family_with
-- is SECURITY DEFINER with its own search_path, so PostgreSQL never inlines it: each call parses
-- and plans its query again, once per row. It answers true for the caller's own rows
-- (`owner = auth.uid() OR …`), so putting that test in front allows exactly the same rows, and
-- the common case (a user reading and updating their own children) never calls it.
-- Replaces the USING and WITH CHECK of these two policies from 20251123000000_families.sql
-- (the function itself, moved to the private schema later, is unchanged).
ALTER POLICY "Family can view children" ON public.children
    USING (user_id = auth.uid() OR private.shares_family_with(user_id));
ALTER POLICY "Family can update children" ON public.children
    USING (user_id = auth.uid() OR private.shares_family_with(user_id))
    WITH CHECK (user_id = auth.uid() OR private.shares_family_with(user_id));
