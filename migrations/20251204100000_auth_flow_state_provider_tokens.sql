-- GoTrue's flow_state keeps the provider's tokens of an OAuth redirect flow's PKCE code, which
-- `grant_type=pkce` answers as `provider_token` and `provider_refresh_token`, then deletes with
-- the flow.
ALTER TABLE auth.flow_state
    ADD COLUMN provider_access_token text,
    ADD COLUMN provider_refresh_token text;
