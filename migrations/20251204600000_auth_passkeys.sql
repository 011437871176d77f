-- GoTrue's passkeys (WebAuthn): the credentials registered by users and the challenges of the
-- registration and authentication ceremonies, with GoTrue's columns. A challenge is removed when
-- it is answered (whatever the answer) and is not answered past `expires_at`.
CREATE TABLE auth.webauthn_credentials (
    id                uuid NOT NULL DEFAULT gen_random_uuid(),
    user_id           uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    credential_id     bytea NOT NULL,
    public_key        bytea NOT NULL,
    attestation_type  text NOT NULL DEFAULT '',
    aaguid            uuid,
    sign_count        bigint NOT NULL DEFAULT 0,
    transports        jsonb NOT NULL DEFAULT '[]'::jsonb,
    backup_eligible   boolean NOT NULL DEFAULT false,
    backed_up         boolean NOT NULL DEFAULT false,
    friendly_name     text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    last_used_at      timestamptz,
    CONSTRAINT webauthn_credentials_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX webauthn_credentials_credential_id_key ON auth.webauthn_credentials (credential_id);
CREATE INDEX webauthn_credentials_user_id_idx ON auth.webauthn_credentials (user_id);

CREATE TABLE auth.webauthn_challenges (
    id              uuid NOT NULL DEFAULT gen_random_uuid(),
    user_id         uuid REFERENCES auth.users (id) ON DELETE CASCADE,
    challenge_type  text NOT NULL CHECK (challenge_type IN ('signup', 'registration', 'authentication')),
    session_data    jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL,
    CONSTRAINT webauthn_challenges_pkey PRIMARY KEY (id)
);
CREATE INDEX webauthn_challenges_user_id_idx ON auth.webauthn_challenges (user_id);
CREATE INDEX webauthn_challenges_expires_at_idx ON auth.webauthn_challenges (expires_at);

REVOKE ALL ON auth.webauthn_credentials, auth.webauthn_challenges FROM PUBLIC, anon, authenticated;

-- A passkey as GoTrue lists it (`PasskeyListItem`): `friendly_name` and `last_used_at` left out
-- when empty, as Go's `omitempty` does.
CREATE FUNCTION auth.passkey_json(c auth.webauthn_credentials) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = ''
AS $$
  SELECT jsonb_build_object('id', c.id, 'created_at', auth.gotrue_time(c.created_at))
    || CASE WHEN c.friendly_name <> '' THEN jsonb_build_object('friendly_name', c.friendly_name) ELSE '{}'::jsonb END
    || CASE WHEN c.last_used_at IS NOT NULL THEN jsonb_build_object('last_used_at', auth.gotrue_time(c.last_used_at)) ELSE '{}'::jsonb END
$$;
REVOKE ALL ON FUNCTION auth.passkey_json(auth.webauthn_credentials) FROM PUBLIC, anon, authenticated;
