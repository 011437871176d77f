-- GoTrue's e-mail flows (confirmation, recovery, magic link / OTP, e-mail change,
-- reauthentication) and PKCE.

-- When each kind of mail was last sent (the per-address resend interval, SMTP_MAX_FREQUENCY,
-- reads these), and how far a secure e-mail change has come (0: no address confirmed yet,
-- 1: one of the two confirmed). confirmation_sent_at, recovery_sent_at and email_change (the
-- pending new address) exist since the first migration.
ALTER TABLE auth.users
    ADD COLUMN email_change_sent_at timestamptz,
    ADD COLUMN email_change_confirm_status smallint NOT NULL DEFAULT 0
        CHECK (email_change_confirm_status BETWEEN 0 AND 2),
    ADD COLUMN reauthentication_sent_at timestamptz;

-- A PKCE flow: the challenge a client sent with its request (sign-up, recovery, magic link,
-- e-mail change), and, once the mailed link was opened, the sha256 hex of the code issued for
-- it. The code is exchanged once (the row is deleted) against the verifier.
CREATE TABLE auth.flow_state (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id               uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    auth_code             text UNIQUE,
    code_challenge_method text NOT NULL CHECK (code_challenge_method IN ('s256', 'plain')),
    code_challenge        text NOT NULL,
    provider_type         text NOT NULL,
    authentication_method text NOT NULL,
    auth_code_issued_at   timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX flow_state_user_id_idx ON auth.flow_state (user_id);
CREATE INDEX flow_state_created_at_idx ON auth.flow_state (created_at);

-- The outstanding token of each kind per user (a new one replaces the previous: one row per
-- user and type). Nothing here is usable as read: `token_hash` is the sha256 hex of the token
-- in the mailed link, `otp_hash` an HMAC (keyed by the server's secret) of the code in the mail.
-- `relates_to` is the address the mail went to (the new address for email_change_token_new).
-- A reauthentication mail carries a code only (no link): its token_hash is null.
CREATE TABLE auth.one_time_tokens (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id       uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    token_type    text NOT NULL CHECK (token_type IN ('confirmation_token', 'recovery_token', 'email_change_token_new',
                                                      'email_change_token_current', 'reauthentication_token')),
    token_hash    text UNIQUE,
    otp_hash      text NOT NULL,
    relates_to    text NOT NULL,
    flow_state_id uuid REFERENCES auth.flow_state (id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT one_time_tokens_user_id_token_type_key UNIQUE (user_id, token_type)
);
CREATE INDEX one_time_tokens_relates_to_idx ON auth.one_time_tokens (relates_to);

REVOKE ALL ON auth.flow_state, auth.one_time_tokens FROM PUBLIC, anon, authenticated;

-- True once `key` has `max_hits` or more hits in its current window: a check that counts nothing
-- (wrong codes are counted with auth.rate_limit_hit only when they are wrong).
CREATE FUNCTION auth.rate_limit_reached(key text, max_hits integer, window_seconds double precision) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = ''
AS $$
  SELECT coalesce((SELECT r.hits >= max_hits FROM auth.rate_limits r
                   WHERE r.key = rate_limit_reached.key
                     AND r.window_start > now() - make_interval(secs => window_seconds)), false)
$$;
REVOKE ALL ON FUNCTION auth.rate_limit_reached(text, integer, double precision) FROM PUBLIC, anon, authenticated;

-- The user object as GoTrue renders it, now with the mail fields (omitted while null, as
-- GoTrue's omitempty): confirmation_sent_at, recovery_sent_at, email_change_sent_at,
-- new_email (the pending address), reauthentication_sent_at, invited_at.
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
    'invited_at', auth.gotrue_time(u.invited_at)
  ))
$$;
