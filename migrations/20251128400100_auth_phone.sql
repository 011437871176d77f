-- GoTrue's phone sign-in: the pending new number of a phone change and when its code was sent,
-- the phone change token kind, and the user object's phone fields.
ALTER TABLE auth.users
    ADD COLUMN phone_change text NOT NULL DEFAULT '',
    ADD COLUMN phone_change_sent_at timestamptz;

-- A phone change's code is sent to the new number (`relates_to`); its token_hash is null (an SMS
-- carries a code only).
ALTER TABLE auth.one_time_tokens DROP CONSTRAINT one_time_tokens_token_type_check;
ALTER TABLE auth.one_time_tokens ADD CONSTRAINT one_time_tokens_token_type_check
    CHECK (token_type IN ('confirmation_token', 'recovery_token', 'email_change_token_new',
                          'email_change_token_current', 'reauthentication_token', 'phone_change_token'));

-- The user object with `phone_confirmed_at`, `new_phone` and `phone_change_sent_at` (omitted when
-- unset, as GoTrue's omitempty). Replaces auth.user_json of 20251127300000_auth_user_banned_until.sql;
-- everything else is unchanged.
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
    'phone_confirmed_at', auth.gotrue_time(u.phone_confirmed_at),
    'confirmation_sent_at', auth.gotrue_time(u.confirmation_sent_at),
    'recovery_sent_at', auth.gotrue_time(u.recovery_sent_at),
    'email_change_sent_at', auth.gotrue_time(u.email_change_sent_at),
    'new_email', nullif(u.email_change, ''),
    'new_phone', nullif(u.phone_change, ''),
    'phone_change_sent_at', auth.gotrue_time(u.phone_change_sent_at),
    'reauthentication_sent_at', auth.gotrue_time(u.reauthentication_sent_at),
    'invited_at', auth.gotrue_time(u.invited_at),
    'banned_until', auth.gotrue_time(u.banned_until),
    'factors', (SELECT jsonb_agg(auth.factor_json(f) ORDER BY f.created_at) FROM auth.mfa_factors f WHERE f.user_id = u.id)
  ))
$$;
