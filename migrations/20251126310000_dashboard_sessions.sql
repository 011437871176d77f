-- Signed-out dashboard sessions (their cookie's nonce) until the cookie would have expired: every
-- server behind the load balancer refuses a cookie signed out on any of them. The dashboard's
-- failed sign-ins are counted in auth.rate_limits (`dashboard_sign_in:<client>`).
CREATE TABLE auth.dashboard_revoked_sessions (
    nonce      text PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
REVOKE ALL ON auth.dashboard_revoked_sessions FROM PUBLIC, anon, authenticated;
