import Postgres

/// `auth.mfa_factors`, `auth.mfa_challenges` and `auth.mfa_amr_claims`.
enum Factors {
    struct Row {
        var id: String
        var friendlyName: String
        var type: String
        var verified: Bool
        /// The sealed secret.
        var secret: String?
        var lastStep: Int64?
    }

    static func row(_ result: QueryResult, _ index: Int) -> Row {
        Row(
            id: result[index, "id"] ?? "", friendlyName: result[index, "friendly_name"] ?? "", type: result[index, "factor_type"] ?? "",
            verified: result[index, "status"] == "verified", secret: result[index, "secret"], lastStep: result[index, "last_totp_step"].flatMap { Int64($0) })
    }

    static let columns: SQL = "id::text, coalesce(friendly_name, '') AS friendly_name, factor_type::text, status::text, secret, last_totp_step"

    /// The user's factors, after the unverified ones never challenged and older than `expiry`
    /// seconds are removed; the user row locked, so concurrent enrolments count one another.
    static func lockForEnrolment(_ connection: Connection, userID: String, expiry: Double) throws -> [Row]? {
        let results = try connection.pipeline([
            "SELECT 1 FROM auth.users WHERE id = \(userID)::uuid FOR UPDATE",
            """
            DELETE FROM auth.mfa_factors f WHERE f.user_id = \(userID)::uuid AND f.status <> 'verified'
              AND f.created_at < now() - make_interval(secs => \(expiry)::double precision)
              AND NOT EXISTS (SELECT 1 FROM auth.mfa_challenges c WHERE c.factor_id = f.id)
            """,
            "SELECT \(columns) FROM auth.mfa_factors WHERE user_id = \(userID)::uuid ORDER BY created_at"
        ])
        guard results[0].count == 1 else { return nil }
        return (0..<results[2].count).map { row(results[2], $0) }
    }

    /// A new unverified TOTP factor.
    static func createTOTP(_ connection: Connection, id: String, userID: String, friendlyName: String, sealedSecret: String) throws {
        _ = try connection.query(
            """
            INSERT INTO auth.mfa_factors (id, user_id, friendly_name, factor_type, status, secret)
            VALUES (\(id)::uuid, \(userID)::uuid, \(friendlyName), 'totp', 'unverified', \(sealedSecret))
            """)
    }

    /// The user's factor, locked for the transaction when `lock`; nil when the user has none
    /// with this id.
    static func find(_ connection: Connection, id: String, userID: String, lock: Bool = false) throws -> Row? {
        let found =
            try lock
            ? connection.query("SELECT \(columns) FROM auth.mfa_factors WHERE id = \(id)::uuid AND user_id = \(userID)::uuid FOR UPDATE")
            : connection.query("SELECT \(columns) FROM auth.mfa_factors WHERE id = \(id)::uuid AND user_id = \(userID)::uuid")
        return found.count == 1 ? row(found, 0) : nil
    }

    /// The factors of a user as GoTrue renders them (a JSON array); nil when there is no such user.
    static func listJSON(_ connection: Connection, userID: String) throws -> String? {
        try connection.query(
            """
            SELECT coalesce((SELECT jsonb_agg(auth.factor_json(f) ORDER BY f.created_at) FROM auth.mfa_factors f WHERE f.user_id = u.id), '[]'::jsonb)::text
            FROM auth.users u WHERE u.id = \(userID)::uuid
            """
        ).scalar
    }

    /// The factor's friendly name changed (an empty name changes nothing); its JSON, nil when
    /// the user has no such factor.
    static func rename(_ connection: Connection, id: String, userID: String, friendlyName: String) throws -> String? {
        try connection.query(
            """
            UPDATE auth.mfa_factors f SET friendly_name = CASE WHEN \(friendlyName)::text = '' THEN f.friendly_name ELSE \(friendlyName)::text END,
                updated_at = CASE WHEN \(friendlyName)::text = '' THEN f.updated_at ELSE now() END
            WHERE f.id = \(id)::uuid AND f.user_id = \(userID)::uuid RETURNING auth.factor_json(f)::text
            """
        ).scalar
    }

    /// The factor removed and the sessions it raised lowered to `aal1` (their `totp` claims
    /// removed), as GoTrue's DowngradeSessionsToAAL1; the factor's JSON as it was.
    static func delete(_ connection: Connection, id: String, userID: String) throws -> String? {
        let results = try connection.pipeline([
            "DELETE FROM auth.mfa_factors f WHERE f.id = \(id)::uuid AND f.user_id = \(userID)::uuid RETURNING auth.factor_json(f)::text",
            """
            DELETE FROM auth.mfa_amr_claims WHERE authentication_method = 'totp'
              AND session_id IN (SELECT id FROM auth.sessions WHERE user_id = \(userID)::uuid AND factor_id = \(id)::uuid)
            """,
            "UPDATE auth.sessions SET aal = 'aal1', factor_id = NULL WHERE user_id = \(userID)::uuid AND factor_id = \(id)::uuid"
        ])
        return results[0].scalar
    }

    /// A new challenge from `ip`, the factor stamped; the challenge's expiry (Unix seconds).
    static func challenge(_ connection: Connection, id: String, factorID: String, ip: String, expiry: Double) throws -> Int {
        let results = try connection.pipeline([
            "INSERT INTO auth.mfa_challenges (id, factor_id, ip_address) VALUES (\(id)::uuid, \(factorID)::uuid, \(ip)::inet) RETURNING created_at",
            "UPDATE auth.mfa_factors SET last_challenged_at = now() WHERE id = \(factorID)::uuid",
            "SELECT floor(extract(epoch FROM now()) + \(expiry)::double precision)::bigint"
        ])
        return results[2].first?.int(0) ?? 0
    }

    struct Challenge {
        var verified: Bool
        var ip: String
        var age: Double
    }

    /// The factor's challenge, locked for the transaction; nil when the factor has none with this id.
    static func lockChallenge(_ connection: Connection, id: String, factorID: String) throws -> Challenge? {
        let found = try connection.query(
            """
            SELECT verified_at IS NOT NULL, host(ip_address), extract(epoch FROM now() - created_at)
            FROM auth.mfa_challenges WHERE id = \(id)::uuid AND factor_id = \(factorID)::uuid FOR UPDATE
            """)
        guard found.count == 1 else { return nil }
        return Challenge(verified: found[0].bool(0) == true, ip: found[0, 1] ?? "", age: found[0].double(2) ?? .infinity)
    }

    static func deleteChallenge(_ connection: Connection, id: String) throws {
        _ = try connection.query("DELETE FROM auth.mfa_challenges WHERE id = \(id)::uuid")
    }

    /// A code accepted: the challenge verified, the factor verified with the code's step, the
    /// session given the `totp` claim and `aal2` and a new refresh token (every earlier one of
    /// the session deleted, so none issued at `aal1` can refresh into this level), the user's
    /// other sessions below `aal2` ended and its other unverified TOTP factors removed; the
    /// user's JSON.
    static func verified(
        _ connection: Connection, challengeID: String, factorID: String, step: Int64, userID: String, sessionID: String,
        refreshTokenDigest: String
    ) throws -> String? {
        let results = try connection.pipeline([
            "UPDATE auth.mfa_challenges SET verified_at = now() WHERE id = \(challengeID)::uuid",
            "UPDATE auth.mfa_factors SET status = 'verified', last_totp_step = \(step), updated_at = now() WHERE id = \(factorID)::uuid",
            """
            INSERT INTO auth.mfa_amr_claims (session_id, authentication_method) VALUES (\(sessionID)::uuid, 'totp')
            ON CONFLICT ON CONSTRAINT mfa_amr_claims_session_id_authentication_method_pkey DO UPDATE SET updated_at = now()
            """,
            "UPDATE auth.sessions SET aal = 'aal2', factor_id = \(factorID)::uuid, updated_at = now() WHERE id = \(sessionID)::uuid",
            "DELETE FROM auth.refresh_tokens WHERE session_id = \(sessionID)::uuid",
            "INSERT INTO auth.refresh_tokens (token, user_id, session_id) VALUES (\(refreshTokenDigest), \(userID)::uuid, \(sessionID)::uuid)",
            "DELETE FROM auth.sessions WHERE user_id = \(userID)::uuid AND aal < 'aal2'",
            "DELETE FROM auth.mfa_factors WHERE user_id = \(userID)::uuid AND status = 'unverified' AND factor_type = 'totp'",
            Users.jsonStatement(id: userID)
        ])
        return results[8].scalar
    }
}

/// The assurance of a session: `aal2` once a second factor was verified in it, and its
/// authentication methods, most recent first (the `aal` and `amr` of its access tokens).
enum Assurance {
    static func of(_ connection: Connection, sessionID: String) throws -> (aal: String, amrJSON: String) {
        let found = try connection.query(
            """
            SELECT coalesce(bool_or(authentication_method IN ('totp', 'mfa/phone', 'mfa/webauthn')), false),
                   coalesce(jsonb_agg(jsonb_build_object('method', authentication_method, 'timestamp', floor(extract(epoch FROM updated_at))::bigint)
                                      ORDER BY updated_at DESC), '[]'::jsonb)::text
            FROM auth.mfa_amr_claims WHERE session_id = \(sessionID)::uuid
            """)
        return (found[0].bool(0) == true ? "aal2" : "aal1", found[0, 1] ?? "[]")
    }

    /// Whether the user has a verified factor while this session (none: a token without one) is
    /// below `aal2` — GoTrue's condition for refusing a change of credentials — and the user's
    /// current address.
    static func credentialGuard(_ connection: Connection, userID: String, sessionID: String?) throws -> (belowLevel: Bool, email: String?) {
        let found = try connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM auth.mfa_factors WHERE user_id = u.id AND status = 'verified')
                     AND coalesce((SELECT aal::text FROM auth.sessions WHERE id = \(sessionID)::uuid), 'aal1') <> 'aal2',
                   lower(u.email)
            FROM auth.users u WHERE u.id = \(userID)::uuid
            """)
        guard found.count == 1 else { return (false, nil) }
        return (found[0].bool(0) == true, found[0, 1])
    }

    /// The level stored with the session (`aal1` when it has none).
    static func sessionLevel(_ connection: Connection, sessionID: String) throws -> String {
        try connection.query("SELECT coalesce(aal::text, 'aal1') FROM auth.sessions WHERE id = \(sessionID)::uuid").scalar ?? "aal1"
    }
}
