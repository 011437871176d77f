-- Multi-factor authentication (TOTP) with GoTrue's tables: the factors of a user, the
-- challenges issued for them, and the authentication methods of each session (the `amr` of its
-- access tokens; a `totp` claim makes the session `aal2`).

CREATE TYPE auth.factor_type AS ENUM ('totp', 'webauthn', 'phone');
CREATE TYPE auth.factor_status AS ENUM ('unverified', 'verified');
CREATE TYPE auth.aal_level AS ENUM ('aal1', 'aal2', 'aal3');

-- `secret`: the TOTP secret sealed with AES-256-GCM under a key derived (HKDF-SHA-256) from the
-- server's encryption key and the factor's id, in GoTrue's text form
-- {"key_id","alg":"aes-gcm-hkdf","data","nonce"}. `last_totp_step` (onboard's, not GoTrue's):
-- the 30-second step of the last code accepted, so a code is used once.
CREATE TABLE auth.mfa_factors (
    id                 uuid PRIMARY KEY,
    user_id            uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    friendly_name      text,
    factor_type        auth.factor_type NOT NULL,
    status             auth.factor_status NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    secret             text,
    phone              text UNIQUE DEFAULT NULL,
    last_challenged_at timestamptz DEFAULT NULL,
    last_totp_step     bigint
);
CREATE UNIQUE INDEX mfa_factors_user_friendly_name_unique ON auth.mfa_factors (friendly_name, user_id) WHERE trim(friendly_name) <> '';
CREATE INDEX mfa_factors_user_id_idx ON auth.mfa_factors (user_id);
CREATE INDEX factor_id_created_at_idx ON auth.mfa_factors (user_id, created_at);

CREATE TABLE auth.mfa_challenges (
    id          uuid PRIMARY KEY,
    factor_id   uuid NOT NULL REFERENCES auth.mfa_factors (id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    verified_at timestamptz,
    ip_address  inet NOT NULL,
    otp_code    text
);
CREATE INDEX mfa_challenge_created_at_idx ON auth.mfa_challenges (created_at DESC);
CREATE INDEX mfa_challenges_factor_id_idx ON auth.mfa_challenges (factor_id);

CREATE TABLE auth.mfa_amr_claims (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    session_id            uuid NOT NULL REFERENCES auth.sessions (id) ON DELETE CASCADE,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    authentication_method text NOT NULL,
    CONSTRAINT mfa_amr_claims_session_id_authentication_method_pkey UNIQUE (session_id, authentication_method)
);

-- The level a session has reached (now GoTrue's enum, ordered, so `aal < 'aal2'` compares
-- levels) and the factor that raised it.
ALTER TABLE auth.sessions
    ADD COLUMN factor_id uuid,
    ALTER COLUMN aal DROP DEFAULT,
    ALTER COLUMN aal TYPE auth.aal_level USING aal::auth.aal_level,
    ALTER COLUMN aal SET DEFAULT 'aal1';
CREATE INDEX sessions_factor_id_idx ON auth.sessions (factor_id);

REVOKE ALL ON auth.mfa_factors, auth.mfa_challenges, auth.mfa_amr_claims FROM PUBLIC, anon, authenticated;

-- A factor as GoTrue renders it (the secret never).
CREATE FUNCTION auth.factor_json(f auth.mfa_factors) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = ''
AS $$
  SELECT jsonb_build_object(
    'id', f.id,
    'created_at', auth.gotrue_time(f.created_at),
    'updated_at', auth.gotrue_time(f.updated_at),
    'status', f.status,
    'factor_type', f.factor_type,
    'phone', coalesce(f.phone, ''),
    'last_challenged_at', auth.gotrue_time(f.last_challenged_at)
  ) || CASE WHEN coalesce(f.friendly_name, '') <> '' THEN jsonb_build_object('friendly_name', f.friendly_name) ELSE '{}'::jsonb END
$$;

-- The user object, now with its `factors` (omitted when there are none, as GoTrue's omitempty).
CREATE OR REPLACE FUNCTION auth.user_json(u auth.users) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = ''
AS $$
  SELECT jsonb_build_object(
    'id', u.id,
    'aud', u.aud,
    'role', u.role,
    'email', coalesce(u.email, ''),
    'email_confirmed_at', auth.gotrue_time(u.email_confirmed_at),
    'phone', coalesce(u.phone, ''),
    'confirmed_at', auth.gotrue_time(coalesce(u.email_confirmed_at, u.phone_confirmed_at)),
    'last_sign_in_at', auth.gotrue_time(u.last_sign_in_at),
    'app_metadata', u.raw_app_meta_data,
    'user_metadata', u.raw_user_meta_data,
    'identities', coalesce((
        SELECT jsonb_agg(jsonb_build_object(
                 'identity_id', i.id,
                 'id', i.provider_id,
                 'user_id', i.user_id,
                 'identity_data', i.identity_data,
                 'provider', i.provider,
                 'last_sign_in_at', auth.gotrue_time(i.last_sign_in_at),
                 'created_at', auth.gotrue_time(i.created_at),
                 'updated_at', auth.gotrue_time(i.updated_at),
                 'email', i.email) ORDER BY i.created_at)
        FROM auth.identities i WHERE i.user_id = u.id), '[]'::jsonb),
    'created_at', auth.gotrue_time(u.created_at),
    'updated_at', auth.gotrue_time(u.updated_at),
    'is_anonymous', u.is_anonymous
  ) || jsonb_strip_nulls(jsonb_build_object(
    'confirmation_sent_at', auth.gotrue_time(u.confirmation_sent_at),
    'recovery_sent_at', auth.gotrue_time(u.recovery_sent_at),
    'email_change_sent_at', auth.gotrue_time(u.email_change_sent_at),
    'new_email', nullif(u.email_change, ''),
    'reauthentication_sent_at', auth.gotrue_time(u.reauthentication_sent_at),
    'invited_at', auth.gotrue_time(u.invited_at),
    'factors', (SELECT jsonb_agg(auth.factor_json(f) ORDER BY f.created_at) FROM auth.mfa_factors f WHERE f.user_id = u.id)
  ))
$$;

REVOKE ALL ON FUNCTION auth.factor_json(auth.mfa_factors) FROM PUBLIC, anon, authenticated;
