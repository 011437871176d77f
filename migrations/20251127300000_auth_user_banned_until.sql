-- The user object with `banned_until` (omitted when the user was never banned, as GoTrue's
-- omitempty), for the admin API's `ban_duration`. Replaces auth.user_json of
-- 20251127000000_auth_mfa.sql; everything else is unchanged.
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
    'banned_until', auth.gotrue_time(u.banned_until),
    'factors', (SELECT jsonb_agg(auth.factor_json(f) ORDER BY f.created_at) FROM auth.mfa_factors f WHERE f.user_id = u.id)
  ))
$$;
