import Postgres

/// `auth.flow_state`: PKCE flows, from the mail-sending request to the code exchange.
enum FlowStates {
    struct Row {
        var id: String
        var userID: String
        var codeChallengeMethod: String
        var codeChallenge: String
        var authenticationMethod: String
        /// Seconds since its auth code was issued; nil when none was.
        var codeAge: Double?
        /// The OAuth provider's tokens (the redirect flow's codes only).
        var providerAccessToken: String? = nil
        var providerRefreshToken: String? = nil
    }

    /// A new flow for `userID` (and, once in a hundred, the flows older than a day deleted).
    static func create(
        _ connection: Connection, id: String, userID: String, challenge: AuthRequest.PKCEChallenge, providerType: String,
        method: String
    ) throws {
        _ = try connection.query(
            """
            INSERT INTO auth.flow_state (id, user_id, code_challenge_method, code_challenge, provider_type, authentication_method)
            VALUES (\(id)::uuid, \(userID)::uuid, \(challenge.method), \(challenge.challenge), \(providerType), \(method))
            """)
        if Int.random(in: 0..<100) == 0 {
            _ = try connection.query("DELETE FROM auth.flow_state WHERE created_at < now() - interval '1 day'")
        }
    }

    /// The flow whose auth code has this digest, locked for the transaction.
    static func lock(_ connection: Connection, authCodeDigest: String) throws -> Row? {
        let found = try connection.query(
            """
            SELECT id::text, user_id::text, code_challenge_method, code_challenge, authentication_method,
                   extract(epoch FROM now() - auth_code_issued_at), provider_access_token, provider_refresh_token
            FROM auth.flow_state WHERE auth_code = \(authCodeDigest) FOR UPDATE
            """)
        guard found.count == 1, let id = found[0, 0], let userID = found[0, 1], let method = found[0, 2],
            let challenge = found[0, 3], let authenticationMethod = found[0, 4]
        else { return nil }
        return Row(
            id: id, userID: userID, codeChallengeMethod: method, codeChallenge: challenge, authenticationMethod: authenticationMethod,
            codeAge: found[0].double(5), providerAccessToken: found[0, 6], providerRefreshToken: found[0, 7])
    }

    /// The auth code (its digest) set on the user's flow; false when there is no such flow.
    static func issueAuthCode(_ connection: Connection, id: String?, userID: String, codeDigest: String) throws -> Bool {
        try connection.query(
            """
            UPDATE auth.flow_state SET auth_code = \(codeDigest), auth_code_issued_at = now(), updated_at = now()
            WHERE id = \(id)::uuid AND user_id = \(userID)::uuid RETURNING id
            """
        ).count == 1
    }

    /// The OAuth provider's tokens kept with the flow until its code is exchanged.
    static func keepProviderTokens(_ connection: Connection, id: String, access: String, refresh: String?) throws {
        _ = try connection.query(
            "UPDATE auth.flow_state SET provider_access_token = \(access), provider_refresh_token = \(refresh) WHERE id = \(id)::uuid")
    }

    static func delete(_ connection: Connection, id: String) throws {
        _ = try connection.query("DELETE FROM auth.flow_state WHERE id = \(id)::uuid")
    }
}
