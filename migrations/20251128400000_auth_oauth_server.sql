-- GoTrue's OAuth 2.1 server: the third-party applications registered with this project
-- (`oauth_clients`, the client id is the row's id), the authorization requests they start
-- (`oauth_authorizations`, each ending in a single-use code), the consents users give
-- (`oauth_consents`, one per user and client, revocable), and the sessions those codes start
-- (`sessions.oauth_client_id`). Secrets and codes are stored as their SHA-256 only.

CREATE TABLE auth.oauth_clients (
    id                          uuid PRIMARY KEY,
    -- base64url SHA-256 of the secret (GoTrue's form); NULL for a public client.
    client_secret_hash          text,
    registration_type           text NOT NULL CHECK (registration_type IN ('dynamic', 'manual')),
    client_type                 text NOT NULL CHECK (client_type IN ('public', 'confidential')),
    token_endpoint_auth_method  text NOT NULL CHECK (token_endpoint_auth_method IN ('none', 'client_secret_basic', 'client_secret_post')),
    redirect_uris               text[] NOT NULL,
    grant_types                 text[] NOT NULL,
    client_name                 text CHECK (char_length(client_name) <= 1024),
    client_uri                  text CHECK (char_length(client_uri) <= 2048),
    logo_uri                    text CHECK (char_length(logo_uri) <= 2048),
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now(),
    deleted_at                  timestamptz,
    CHECK ((client_type = 'public') = (client_secret_hash IS NULL))
);
CREATE INDEX oauth_clients_created_at_idx ON auth.oauth_clients (created_at DESC) WHERE deleted_at IS NULL;

-- `authorization_code`: SHA-256 (hex) of the code handed to the client once approved.
-- `authorization_id`: the random name the consent page is given (32 alphanumerics).
CREATE TABLE auth.oauth_authorizations (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    authorization_id       text NOT NULL UNIQUE,
    client_id              uuid NOT NULL REFERENCES auth.oauth_clients (id) ON DELETE CASCADE,
    user_id                uuid REFERENCES auth.users (id) ON DELETE CASCADE,
    redirect_uri           text NOT NULL CHECK (char_length(redirect_uri) <= 2048),
    scope                  text NOT NULL CHECK (char_length(scope) <= 4096),
    state                  text CHECK (char_length(state) <= 4096),
    resource               text CHECK (char_length(resource) <= 2048),
    nonce                  text CHECK (char_length(nonce) <= 255),
    code_challenge         text NOT NULL CHECK (char_length(code_challenge) BETWEEN 43 AND 128),
    code_challenge_method  text NOT NULL CHECK (code_challenge_method IN ('s256', 'plain')),
    status                 text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
    authorization_code     text UNIQUE,
    created_at             timestamptz NOT NULL DEFAULT now(),
    expires_at             timestamptz NOT NULL,
    approved_at            timestamptz,
    CHECK (expires_at > created_at)
);
CREATE INDEX oauth_authorizations_expires_at_idx ON auth.oauth_authorizations (expires_at);

CREATE TABLE auth.oauth_consents (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id     uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    client_id   uuid NOT NULL REFERENCES auth.oauth_clients (id) ON DELETE CASCADE,
    scopes      text NOT NULL CHECK (char_length(scopes) <= 2048 AND char_length(trim(scopes)) > 0),
    granted_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz,
    UNIQUE (user_id, client_id),
    CHECK (revoked_at IS NULL OR revoked_at >= granted_at)
);
CREATE INDEX oauth_consents_client_id_idx ON auth.oauth_consents (client_id);

-- `scopes`: the scopes granted to the OAuth client, space-separated (the tokens' `scope`).
ALTER TABLE auth.sessions
    ADD COLUMN oauth_client_id uuid REFERENCES auth.oauth_clients (id) ON DELETE CASCADE,
    ADD COLUMN scopes text CHECK (char_length(scopes) <= 4096);
CREATE INDEX sessions_oauth_client_id_idx ON auth.sessions (oauth_client_id) WHERE oauth_client_id IS NOT NULL;

-- A client as GoTrue's admin API answers it (empty fields left out, as Go's `omitempty`).
CREATE FUNCTION auth.oauth_client_json(c auth.oauth_clients) RETURNS json
LANGUAGE sql STABLE
SET search_path = ''
AS $$
  SELECT json_strip_nulls(json_build_object(
    'client_id', c.id,
    'client_type', c.client_type,
    'redirect_uris', nullif(c.redirect_uris, '{}'),
    'token_endpoint_auth_method', c.token_endpoint_auth_method,
    'grant_types', nullif(c.grant_types, '{}'),
    'response_types', json_build_array('code'),
    'client_name', nullif(c.client_name, ''),
    'client_uri', nullif(c.client_uri, ''),
    'logo_uri', nullif(c.logo_uri, ''),
    'registration_type', c.registration_type,
    'created_at', auth.gotrue_time(c.created_at),
    'updated_at', auth.gotrue_time(c.updated_at)
  ))
$$;

REVOKE ALL ON auth.oauth_clients, auth.oauth_authorizations, auth.oauth_consents FROM PUBLIC, anon, authenticated;
REVOKE ALL ON FUNCTION auth.oauth_client_json(auth.oauth_clients) FROM PUBLIC, anon, authenticated;
