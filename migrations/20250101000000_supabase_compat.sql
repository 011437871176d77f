-- The parts of a Supabase project that the apps' migrations assume exist: the API roles, the
-- auth schema shaped like GoTrue's, auth.uid()/role()/jwt(), default grants, and the
-- pre-existing public.children table.

-- ---------------------------------------------------------------- roles
-- Roles are cluster-wide: create them only once (many databases may share a cluster). Two
-- databases may be migrated at the same moment (the migrator's advisory lock is per database),
-- so a role or membership that the other run creates meanwhile is not an error: CREATE waits for
-- the other transaction and then fails with unique_violation, which is caught here.
DO $$
BEGIN
  BEGIN
    CREATE ROLE anon NOLOGIN NOINHERIT;
  EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
  END;
  BEGIN
    CREATE ROLE authenticated NOLOGIN NOINHERIT;
  EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
  END;
  BEGIN
    CREATE ROLE service_role NOLOGIN NOINHERIT BYPASSRLS;
  EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
  END;
  IF NOT (SELECT rolbypassrls FROM pg_roles WHERE rolname = 'service_role') THEN
    -- Made elsewhere without it: the service key must see every row, as on Supabase.
    ALTER ROLE service_role BYPASSRLS;
  END IF;
  -- The role a server may log in as (PostgREST's "authenticator"): nothing by itself, it
  -- switches to anon/authenticated/service_role per request with SET LOCAL ROLE.
  BEGIN
    CREATE ROLE authenticator LOGIN NOINHERIT;
  EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
  END;
  -- Whatever role runs the migrations (and the server) may switch to the API roles too.
  BEGIN
    GRANT anon, authenticated, service_role TO authenticator;
  EXCEPTION WHEN unique_violation THEN NULL;
  END;
  BEGIN
    EXECUTE format('GRANT anon, authenticated, service_role TO %I', current_user);
  EXCEPTION WHEN unique_violation THEN NULL;
  END;
END
$$;

-- Timestamps go out in UTC whatever the connection's setting (postgres-notes §7).
DO $$
BEGIN
  EXECUTE format('ALTER DATABASE %I SET timezone TO %L', current_database(), 'UTC');
END
$$;

-- ---------------------------------------------------------------- auth schema
CREATE SCHEMA IF NOT EXISTS auth;

CREATE TABLE auth.users (
    instance_id          uuid,
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    aud                  varchar(255) NOT NULL DEFAULT 'authenticated',
    role                 varchar(255) NOT NULL DEFAULT 'authenticated',
    email                varchar(255),
    encrypted_password   varchar(255),
    email_confirmed_at   timestamptz,
    invited_at           timestamptz,
    confirmation_sent_at timestamptz,
    recovery_sent_at     timestamptz,
    email_change         varchar(255),
    last_sign_in_at      timestamptz,
    raw_app_meta_data    jsonb NOT NULL DEFAULT '{}'::jsonb,
    raw_user_meta_data   jsonb NOT NULL DEFAULT '{}'::jsonb,
    is_super_admin       boolean,
    phone                text,
    phone_confirmed_at   timestamptz,
    banned_until         timestamptz,
    is_sso_user          boolean NOT NULL DEFAULT false,
    is_anonymous         boolean NOT NULL DEFAULT false,
    deleted_at           timestamptz,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);
-- E-mails are unique case-insensitively, and only where present (anonymous users have none).
CREATE UNIQUE INDEX users_email_key ON auth.users (lower(email)) WHERE email IS NOT NULL;
CREATE UNIQUE INDEX users_phone_key ON auth.users (phone) WHERE phone IS NOT NULL;

CREATE TABLE auth.identities (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    provider_id     text NOT NULL,
    user_id         uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    identity_data   jsonb NOT NULL DEFAULT '{}'::jsonb,
    provider        text NOT NULL,
    email           text GENERATED ALWAYS AS (lower(identity_data ->> 'email')) STORED,
    last_sign_in_at timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT identities_provider_id_provider_unique UNIQUE (provider_id, provider)
);
CREATE INDEX identities_user_id_idx ON auth.identities (user_id);

CREATE TABLE auth.sessions (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    aal          text NOT NULL DEFAULT 'aal1',
    not_after    timestamptz,
    refreshed_at timestamptz,
    user_agent   text,
    ip           inet,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_user_id_idx ON auth.sessions (user_id);

-- Refresh tokens are stored as sha256 hex digests, never in the clear: a database read does
-- not hand out sessions. `parent` links a rotated token to the one it replaced.
CREATE TABLE auth.refresh_tokens (
    id         bigserial PRIMARY KEY,
    token      varchar(255) NOT NULL UNIQUE,
    user_id    uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    session_id uuid NOT NULL REFERENCES auth.sessions (id) ON DELETE CASCADE,
    parent     varchar(255),
    revoked    boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refresh_tokens_session_id_idx ON auth.refresh_tokens (session_id, revoked);
CREATE INDEX refresh_tokens_parent_idx ON auth.refresh_tokens (parent);

-- The request's claims, as Supabase reads them. A transaction-local setting reads '' (not
-- NULL) once a pooled connection has seen it, so '' is treated as "no claims" (postgres-notes §1).
CREATE FUNCTION auth.jwt() RETURNS jsonb
LANGUAGE sql STABLE
AS $$
  SELECT coalesce(
    nullif(current_setting('request.jwt.claim', true), ''),
    nullif(current_setting('request.jwt.claims', true), '')
  )::jsonb
$$;

CREATE FUNCTION auth.uid() RETURNS uuid
LANGUAGE sql STABLE
AS $$
  SELECT coalesce(
    nullif(current_setting('request.jwt.claim.sub', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
  )::uuid
$$;

CREATE FUNCTION auth.role() RETURNS text
LANGUAGE sql STABLE
AS $$
  SELECT coalesce(
    nullif(current_setting('request.jwt.claim.role', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
  )::text
$$;

-- Supabase's older helper, still used by some policies.
CREATE FUNCTION auth.email() RETURNS text
LANGUAGE sql STABLE
AS $$
  SELECT coalesce(
    nullif(current_setting('request.jwt.claim.email', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'email')
  )::text
$$;

-- The API roles may call the helpers but never read or write auth's tables.
REVOKE ALL ON SCHEMA auth FROM PUBLIC;
GRANT USAGE ON SCHEMA auth TO anon, authenticated, service_role;
REVOKE ALL ON ALL TABLES IN SCHEMA auth FROM anon, authenticated;
GRANT EXECUTE ON FUNCTION auth.jwt(), auth.uid(), auth.role(), auth.email() TO anon, authenticated, service_role;
GRANT ALL ON ALL TABLES IN SCHEMA auth TO service_role;
GRANT ALL ON ALL SEQUENCES IN SCHEMA auth TO service_role;

-- ---------------------------------------------------------------- public: Supabase defaults
-- The API roles may use public; table privileges are granted and RLS decides the rows.
-- Unlike Supabase's `GRANT ALL`, anon/authenticated get only the four DML privileges: TRUNCATE
-- ignores row security, and REFERENCES/TRIGGER are of no use to an API role.
GRANT USAGE ON SCHEMA public TO anon, authenticated, service_role;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO anon, authenticated;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON TABLES TO service_role;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO anon, authenticated;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON SEQUENCES TO service_role;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO anon, authenticated, service_role;

CREATE FUNCTION public.update_updated_at_column() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END
$$;

-- The table the Eko seed's migration alters: it exists before onboarding.
CREATE TABLE public.children (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id     uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    name        text NOT NULL,
    age         integer,
    temperament text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idx_children_user_id ON public.children (user_id);
CREATE TRIGGER update_children_updated_at
    BEFORE UPDATE ON public.children
    FOR EACH ROW EXECUTE FUNCTION public.update_updated_at_column();
