-- The Eko seed's onboarding migration (supabase/migrations/20251019000000_create_onboarding_tables.sql,
-- seed 000, Phase 1 Step 1.1), kept as close to the original as is safe. Every change is marked
-- "DEVIATION" where it is made:
--   1. Names are schema-qualified (public.user_profiles, public.children, ...): the migrator does
--      not promise a search_path.
--   2. current_child_id must be a child of the SAME user: instead of `REFERENCES children(id)`,
--      a composite key (current_child_id, id) -> children (id, user_id) with
--      ON DELETE SET NULL (current_child_id) (PostgreSQL 15), which needs UNIQUE (id, user_id)
--      on children. Same constraint name PostgreSQL gives the seed's key.
--   3. create_user_profile() (SECURITY DEFINER) gets SET search_path = '' and is executable by
--      nobody directly.
--   4. RLS on children (the seed had none: every child readable and writable by every user):
--      select/insert/update/delete all `auth.uid() = user_id`, the update with WITH CHECK.
--   5. Owner columns (user_profiles.id, children.user_id) cannot be changed by any UPDATE, not
--      even the service role's (trigger, SQLSTATE 42501).
--   6. Table privileges are granted explicitly (Supabase's default privileges do it there).
--   7. get_user_with_profile keeps its signature and output columns but answers only for the
--      caller (another p_user_id gives no rows), is not executable by PUBLIC or anon, pins
--      search_path, is STABLE, and casts email to text (auth.users.email is varchar(255) as in
--      GoTrue; the seed's RETURN QUERY fails there with "structure of query does not match
--      function result type"). Its COMMENT says "the caller's".

-- ============================================================================
-- 1. user_profiles
-- ============================================================================

CREATE TABLE IF NOT EXISTS public.user_profiles (
    id UUID PRIMARY KEY REFERENCES auth.users(id) ON DELETE CASCADE,
    onboarding_state TEXT NOT NULL DEFAULT 'NOT_STARTED',
    current_child_id UUID,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);

ALTER TABLE public.user_profiles
ADD CONSTRAINT valid_onboarding_state CHECK (
    onboarding_state IN (
        'NOT_STARTED',
        'USER_INFO',
        'CHILD_INFO',
        'GOALS',
        'TOPICS',
        'DISPOSITIONS',
        'REVIEW',
        'COMPLETE'
    )
);

CREATE INDEX IF NOT EXISTS idx_user_profiles_onboarding_state
ON public.user_profiles(onboarding_state);

DROP TRIGGER IF EXISTS update_user_profiles_updated_at ON public.user_profiles;
CREATE TRIGGER update_user_profiles_updated_at
    BEFORE UPDATE ON public.user_profiles
    FOR EACH ROW
    EXECUTE FUNCTION public.update_updated_at_column();

COMMENT ON TABLE public.user_profiles IS 'Extended user data including onboarding state';
COMMENT ON COLUMN public.user_profiles.onboarding_state IS 'Current step in onboarding flow';
COMMENT ON COLUMN public.user_profiles.current_child_id IS 'Temporary field tracking which child is being edited during onboarding';

-- ============================================================================
-- 2. Onboarding fields on children
-- ============================================================================

ALTER TABLE public.children
ADD COLUMN IF NOT EXISTS birthday DATE,
ADD COLUMN IF NOT EXISTS goals TEXT[] DEFAULT '{}',
ADD COLUMN IF NOT EXISTS topics TEXT[] DEFAULT '{}',
ADD COLUMN IF NOT EXISTS temperament_talkative INTEGER DEFAULT 5,
ADD COLUMN IF NOT EXISTS temperament_sensitivity INTEGER DEFAULT 5,
ADD COLUMN IF NOT EXISTS temperament_accountability INTEGER DEFAULT 5;

ALTER TABLE public.children
ADD CONSTRAINT valid_birthday CHECK (birthday <= CURRENT_DATE),
ADD CONSTRAINT valid_temperament_talkative CHECK (temperament_talkative BETWEEN 1 AND 10),
ADD CONSTRAINT valid_temperament_sensitivity CHECK (temperament_sensitivity BETWEEN 1 AND 10),
ADD CONSTRAINT valid_temperament_accountability CHECK (temperament_accountability BETWEEN 1 AND 10);

COMMENT ON COLUMN public.children.birthday IS 'Child''s date of birth (ISO date)';
COMMENT ON COLUMN public.children.goals IS 'Parent conversation goals (1-3 items from onboarding)';
COMMENT ON COLUMN public.children.topics IS 'Selected conversation topic IDs (minimum 3 from onboarding)';
COMMENT ON COLUMN public.children.temperament_talkative IS 'Communication style: 1 (Quiet) to 10 (Talkative)';
COMMENT ON COLUMN public.children.temperament_sensitivity IS 'Emotional response: 1 (Argumentative) to 10 (Sensitive)';
COMMENT ON COLUMN public.children.temperament_accountability IS 'Responsibility: 1 (Denial) to 10 (Accountable)';

-- DEVIATION: the seed's `current_child_id REFERENCES children(id)` let a profile point at
-- another user's child. The composite key makes it a child of the same user; deleting that
-- child still nulls only current_child_id (PostgreSQL 15's column list for SET NULL).
ALTER TABLE public.children ADD CONSTRAINT children_id_user_id_key UNIQUE (id, user_id);
ALTER TABLE public.user_profiles
ADD CONSTRAINT user_profiles_current_child_fkey
    FOREIGN KEY (current_child_id, id) REFERENCES public.children (id, user_id)
    ON DELETE SET NULL (current_child_id);

-- ============================================================================
-- 3. Auto-create user_profile on signup
-- ============================================================================

-- DEVIATION: pinned search_path, schema-qualified (SECURITY DEFINER hygiene).
CREATE OR REPLACE FUNCTION public.create_user_profile()
RETURNS TRIGGER
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    INSERT INTO public.user_profiles (id, onboarding_state)
    VALUES (NEW.id, 'NOT_STARTED')
    ON CONFLICT (id) DO NOTHING;
    RETURN NEW;
END;
$$;
-- A trigger function: nobody calls it directly.
REVOKE ALL ON FUNCTION public.create_user_profile() FROM PUBLIC, anon, authenticated, service_role;

DROP TRIGGER IF EXISTS on_auth_user_created ON auth.users;
CREATE TRIGGER on_auth_user_created
    AFTER INSERT ON auth.users
    FOR EACH ROW
    EXECUTE FUNCTION public.create_user_profile();

COMMENT ON FUNCTION public.create_user_profile IS 'Automatically creates user_profile record when new user signs up';

-- ============================================================================
-- 4. Row Level Security
-- ============================================================================

ALTER TABLE public.user_profiles ENABLE ROW LEVEL SECURITY;

CREATE POLICY "Users can view own profile"
ON public.user_profiles FOR SELECT
USING (auth.uid() = id);

CREATE POLICY "Users can insert own profile"
ON public.user_profiles FOR INSERT
WITH CHECK (auth.uid() = id);

CREATE POLICY "Users can update own profile"
ON public.user_profiles FOR UPDATE
USING (auth.uid() = id)
WITH CHECK (auth.uid() = id);

-- Note: No delete policy - user_profiles cascade deletes with auth.users

-- DEVIATION: the seed had no RLS on children at all.
ALTER TABLE public.children ENABLE ROW LEVEL SECURITY;

CREATE POLICY "Users can view own children"
ON public.children FOR SELECT
USING (auth.uid() = user_id);

CREATE POLICY "Users can insert own children"
ON public.children FOR INSERT
WITH CHECK (auth.uid() = user_id);

CREATE POLICY "Users can update own children"
ON public.children FOR UPDATE
USING (auth.uid() = user_id)
WITH CHECK (auth.uid() = user_id);

CREATE POLICY "Users can delete own children"
ON public.children FOR DELETE
USING (auth.uid() = user_id);

-- DEVIATION: explicit grants (on Supabase, default privileges give these); RLS decides the rows.
GRANT SELECT, INSERT, UPDATE, DELETE ON public.user_profiles, public.children TO anon, authenticated, service_role;

-- DEVIATION: the owner columns never change. RLS's WITH CHECK already stops a user from moving a
-- row to someone else; this also stops the service role and table owners, so a row's owner is
-- fixed for its life (move data by insert + delete).
CREATE FUNCTION public.keep_row_owner() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    -- TG_ARGV[0] names the owner column; compare OLD's and NEW's values of it.
    IF to_jsonb(NEW) -> TG_ARGV[0] IS DISTINCT FROM to_jsonb(OLD) -> TG_ARGV[0] THEN
        RAISE EXCEPTION 'the owner of a row in % cannot be changed', TG_TABLE_NAME
            USING ERRCODE = '42501', HINT = 'Create a new row for the other user instead.';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER user_profiles_keep_owner
    BEFORE UPDATE OF id ON public.user_profiles
    FOR EACH ROW EXECUTE FUNCTION public.keep_row_owner('id');
CREATE TRIGGER children_keep_owner
    BEFORE UPDATE OF user_id ON public.children
    FOR EACH ROW EXECUTE FUNCTION public.keep_row_owner('user_id');

-- ============================================================================
-- 5. Helper function to get user profile with onboarding state
-- ============================================================================

-- DEVIATION: the seed's version returned any user's row (and e-mail) to any caller. This one
-- keeps the signature and output columns, but answers only for the caller: another user's id
-- gives no rows. It still needs SECURITY DEFINER to read auth.users, so search_path is pinned.
CREATE OR REPLACE FUNCTION public.get_user_with_profile(p_user_id UUID)
RETURNS TABLE (
    user_id UUID,
    email TEXT,
    display_name TEXT,
    onboarding_state TEXT,
    current_child_id UUID
)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = ''
AS $$
BEGIN
    RETURN QUERY
    SELECT
        au.id,
        au.email::text,
        au.raw_user_meta_data->>'full_name' as display_name,
        COALESCE(up.onboarding_state, 'NOT_STARTED') as onboarding_state,
        up.current_child_id
    FROM auth.users au
    LEFT JOIN public.user_profiles up ON up.id = au.id
    WHERE au.id = p_user_id
      AND au.id = auth.uid();
END;
$$;
REVOKE ALL ON FUNCTION public.get_user_with_profile(UUID) FROM PUBLIC, anon;
GRANT EXECUTE ON FUNCTION public.get_user_with_profile(UUID) TO authenticated, service_role;

COMMENT ON FUNCTION public.get_user_with_profile IS 'Fetches the caller''s user data combined with profile/onboarding state';
