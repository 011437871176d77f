-- Supabase Storage's tables, with its column names, and its path helpers. Who may read and write
-- an object is decided here, by row-level security: the server runs every object and bucket
-- statement as the caller's role with their claims (`request.jwt.claims`), as Storage does.
-- service_role bypasses RLS (BYPASSRLS); the server also uses it for what Storage does as its
-- superuser: a bucket's limits and public flag, and reads through the public route.
CREATE SCHEMA IF NOT EXISTS storage;

CREATE TABLE storage.buckets (
    id text PRIMARY KEY,
    name text NOT NULL,
    owner uuid,
    owner_id text,
    public boolean NOT NULL DEFAULT false,
    avif_autodetection boolean NOT NULL DEFAULT false,
    file_size_limit bigint,
    allowed_mime_types text[],
    type text NOT NULL DEFAULT 'STANDARD',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX bname ON storage.buckets (name);

CREATE TABLE storage.objects (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    bucket_id text NOT NULL REFERENCES storage.buckets (id),
    name text NOT NULL,
    owner uuid,
    owner_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    last_accessed_at timestamptz NOT NULL DEFAULT now(),
    metadata jsonb,
    user_metadata jsonb,
    path_tokens text[] GENERATED ALWAYS AS (string_to_array(name, '/')) STORED,
    -- The name of the object's bytes on disk (a new one for every upload, so that bytes once
    -- written never change and an overwrite never exposes half a file).
    version text
);
CREATE UNIQUE INDEX bucketid_objname ON storage.objects (bucket_id, name);
CREATE INDEX name_prefix_search ON storage.objects (name text_pattern_ops);

-- The folders of a name ('a/b/c.png' → {a,b}), its last part ('c.png'), its extension ('png').
CREATE FUNCTION storage.foldername(name text) RETURNS text[]
LANGUAGE sql IMMUTABLE
AS $$ SELECT (string_to_array(name, '/'))[1:array_length(string_to_array(name, '/'), 1) - 1] $$;

CREATE FUNCTION storage.filename(name text) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$ SELECT (string_to_array(name, '/'))[array_length(string_to_array(name, '/'), 1)] $$;

CREATE FUNCTION storage.extension(name text) RETURNS text
LANGUAGE sql IMMUTABLE
AS $$ SELECT reverse(split_part(reverse(storage.filename(name)), '.', 1)) $$;

ALTER TABLE storage.buckets ENABLE ROW LEVEL SECURITY;
ALTER TABLE storage.objects ENABLE ROW LEVEL SECURITY;

GRANT USAGE ON SCHEMA storage TO anon, authenticated, service_role;
GRANT SELECT, INSERT, UPDATE, DELETE ON storage.buckets, storage.objects TO anon, authenticated, service_role;
GRANT EXECUTE ON FUNCTION storage.foldername(text), storage.filename(text), storage.extension(text) TO anon, authenticated, service_role;

-- ============================================================================
-- The seed apps' bucket: `avatars`, private. Each user reads and writes under `<their id>/…`;
-- the members of a family read each other's `<id>/children/…` (the children's pictures).
-- ============================================================================

INSERT INTO storage.buckets (id, name, public) VALUES ('avatars', 'avatars', false) ON CONFLICT DO NOTHING;

-- Whether `folder` (a name's first folder) is the id of a user who shares the caller's family.
-- SECURITY DEFINER: private.shares_family_with is not granted to the API roles. A folder that is
-- not a UUID is nobody's.
CREATE FUNCTION storage.shares_family_with_folder(folder text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = ''
AS $$
    SELECT CASE WHEN folder ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
        THEN private.shares_family_with(folder::uuid) ELSE false END
$$;
REVOKE ALL ON FUNCTION storage.shares_family_with_folder(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storage.shares_family_with_folder(text) TO authenticated, service_role;

CREATE POLICY "Users read their own avatars" ON storage.objects FOR SELECT TO authenticated
    USING (bucket_id = 'avatars' AND (storage.foldername(name))[1] = auth.uid()::text);
CREATE POLICY "Users upload their own avatars" ON storage.objects FOR INSERT TO authenticated
    WITH CHECK (bucket_id = 'avatars' AND (storage.foldername(name))[1] = auth.uid()::text);
CREATE POLICY "Users update their own avatars" ON storage.objects FOR UPDATE TO authenticated
    USING (bucket_id = 'avatars' AND (storage.foldername(name))[1] = auth.uid()::text)
    WITH CHECK (bucket_id = 'avatars' AND (storage.foldername(name))[1] = auth.uid()::text);
CREATE POLICY "Users delete their own avatars" ON storage.objects FOR DELETE TO authenticated
    USING (bucket_id = 'avatars' AND (storage.foldername(name))[1] = auth.uid()::text);
CREATE POLICY "Family reads the children's pictures" ON storage.objects FOR SELECT TO authenticated
    USING (
        bucket_id = 'avatars' AND (storage.foldername(name))[2] = 'children'
        AND storage.shares_family_with_folder((storage.foldername(name))[1])
    );

-- Whether bucket `id` holds any object, whoever may see them: a bucket is deleted only when
-- empty, as Storage refuses otherwise, and a caller's policies may hide some of its objects.
CREATE FUNCTION storage.bucket_has_objects(bucket text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = ''
AS $$ SELECT EXISTS (SELECT 1 FROM storage.objects o WHERE o.bucket_id = bucket_has_objects.bucket) $$;
REVOKE ALL ON FUNCTION storage.bucket_has_objects(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION storage.bucket_has_objects(text) TO anon, authenticated, service_role;
