import Postgres

/// `auth.sessions`.
enum Sessions {
    /// A new session with its first refresh token and its authentication method (its `amr`),
    /// the user's `last_sign_in_at` stamped; the user's JSON (one pipeline). `oauth`: the OAuth
    /// client the session is for, and the scopes granted to it.
    static func start(
        _ connection: Connection, id: String, userID: String, refreshTokenDigest: String, method: String, oauth: OAuthSessionGrant? = nil
    ) throws -> String? {
        let results = try connection.pipeline([
            "UPDATE auth.users SET last_sign_in_at = now() WHERE id = \(userID)::uuid",
            "INSERT INTO auth.sessions (id, user_id, oauth_client_id, scopes) VALUES (\(id)::uuid, \(userID)::uuid, \(oauth?.clientID)::uuid, \(oauth?.scope))",
            "INSERT INTO auth.refresh_tokens (token, user_id, session_id) VALUES (\(refreshTokenDigest), \(userID)::uuid, \(id)::uuid)",
            "INSERT INTO auth.mfa_amr_claims (session_id, authentication_method) VALUES (\(id)::uuid, \(method))",
            Users.jsonStatement(id: userID)
        ])
        return results[4].scalar
    }

    /// Whether a token's user exists, and its session (none named: true), and whether the user is banned.
    static func holderExists(_ connection: Connection, userID: String, sessionID: String?) throws -> (user: Bool, session: Bool, banned: Bool) {
        let state = try connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM auth.users WHERE id = \(userID)::uuid) AS user_exists,
                   \(sessionID)::uuid IS NULL OR EXISTS (SELECT 1 FROM auth.sessions WHERE id = \(sessionID)::uuid AND user_id = \(userID)::uuid) AS session_exists,
                   EXISTS (SELECT 1 FROM auth.users WHERE id = \(userID)::uuid AND banned_until > now()) AS banned
            """)
        return (state[0].bool("user_exists") == true, state[0].bool("session_exists") == true, state[0].bool("banned") == true)
    }

    /// Seconds since the session began; nil when there is no such session.
    static func age(_ connection: Connection, id: String?) throws -> Double? {
        try connection.query("SELECT extract(epoch FROM now() - created_at) FROM auth.sessions WHERE id = \(id)::uuid").scalar.flatMap(Double.init)
    }

    /// The session (and, by the foreign key, its refresh tokens).
    static func delete(_ connection: Connection, id: String?) throws {
        _ = try connection.query("DELETE FROM auth.sessions WHERE id = \(id)::uuid")
    }

    /// Every session of the user.
    static func deleteAll(_ connection: Connection, userID: String) throws {
        _ = try connection.query("DELETE FROM auth.sessions WHERE user_id = \(userID)::uuid")
    }

    /// Every session of the user but `keeping`.
    static func deleteOthers(_ connection: Connection, userID: String, keeping: String?) throws {
        _ = try connection.query("DELETE FROM auth.sessions WHERE user_id = \(userID)::uuid AND id IS DISTINCT FROM \(keeping)::uuid")
    }
}

/// `auth.refresh_tokens`: stored only as their SHA-256.
enum RefreshTokens {
    struct Row {
        var id: String
        var userID: String
        var sessionID: String
        var revoked: Bool
        /// Seconds since it was revoked (its last update); nil when not a number.
        var revokedFor: Double?
        /// The token's user is banned.
        var userBanned = false
        /// The OAuth client and scopes of the token's session; nil for a first-party session.
        var oauth: OAuthSessionGrant? = nil
    }

    /// The token with this digest in a live session, locked for the transaction.
    static func lock(_ connection: Connection, digest: String) throws -> Row? {
        let found = try connection.query(
            """
            SELECT r.id, r.user_id::text, r.session_id::text, r.revoked,
                   extract(epoch FROM now() - r.updated_at) AS revoked_for, coalesce(u.banned_until > now(), false),
                   s.oauth_client_id::text, coalesce(s.scopes, '')
            FROM auth.refresh_tokens r JOIN auth.sessions s ON s.id = r.session_id JOIN auth.users u ON u.id = r.user_id
            WHERE r.token = \(digest)
            FOR UPDATE OF r
            """)
        guard found.count == 1, let id = found[0, 0], let userID = found[0, 1], let sessionID = found[0, 2] else { return nil }
        return Row(
            id: id, userID: userID, sessionID: sessionID, revoked: found[0].bool(3) == true, revokedFor: found[0].double(4),
            userBanned: found[0].bool(5) == true, oauth: found[0, 6].map { OAuthSessionGrant(clientID: $0, scope: found[0, 7] ?? "") })
    }

    /// `row` revoked (its first revocation time kept), its child issued in the same session, the
    /// session stamped refreshed (one pipeline).
    static func rotate(_ connection: Connection, _ row: Row, parentDigest: String, childDigest: String) throws {
        _ = try connection.pipeline([
            "UPDATE auth.refresh_tokens SET revoked = true, updated_at = CASE WHEN revoked THEN updated_at ELSE now() END WHERE id = \(row.id)::bigint",
            "INSERT INTO auth.refresh_tokens (token, user_id, session_id, parent) VALUES (\(childDigest), \(row.userID)::uuid, \(row.sessionID)::uuid, \(parentDigest))",
            "UPDATE auth.sessions SET refreshed_at = now(), updated_at = now() WHERE id = \(row.sessionID)::uuid"
        ])
    }
}
