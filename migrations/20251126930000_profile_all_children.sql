-- One read of a profile with all of its user's children: the computed relationship
-- `all_children`, selected by name:
--   GET /rest/v1/user_profiles?select=*,all_children(*)
-- answers the profile with an array of every child the user may read through the family (their
-- own and their family members'), oldest first. The embed `children(*)` keeps its meaning (the
-- foreign key current_child_id: the child being edited, null after completion); a function
-- named `children` would have replaced that relationship, so this one has a name of its own.
-- SQL, STABLE, SECURITY INVOKER and without SET clauses, so it is inlined into the read, and
-- the caller's row-level security decides the rows as for any read of children.
CREATE FUNCTION public.all_children(profile public.user_profiles) RETURNS SETOF public.children
LANGUAGE sql STABLE
AS $$
    SELECT c.*
      FROM public.children c
     WHERE c.user_id = profile.id
        OR c.user_id IN (SELECT theirs.user_id
                           FROM public.family_members mine
                           JOIN public.family_members theirs ON theirs.family_id = mine.family_id
                          WHERE mine.user_id = profile.id)
     ORDER BY c.created_at, c.id
$$;
REVOKE ALL ON FUNCTION public.all_children(public.user_profiles) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.all_children(public.user_profiles) TO anon, authenticated, service_role;
COMMENT ON FUNCTION public.all_children(public.user_profiles) IS
    'Computed relationship: every child the profile''s user may read through the family, oldest first (select=*,all_children(*))';
