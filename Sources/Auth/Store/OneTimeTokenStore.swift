import Postgres

/// `auth.one_time_tokens`: the mailed tokens, one outstanding per user and kind, the link token
/// stored as its SHA-256 and the code as its keyed hash.
enum OneTimeTokens {
    struct Row {
        var id: String
        var userID: String?
        var tokenType: String?
        var otpHash: String?
        /// The address the token was mailed to.
        var relatesTo: String?
        var flowStateID: String?
        /// Seconds since it was issued.
        var age: Double?
        /// Mailed for a passwordless sign-in or a recovery (not a sign-up's confirmation).
        var passwordless = false
    }

    /// A new token of `type` for `userID`, replacing the previous one (so only the latest mail works).
    static func issue(
        _ connection: Connection, userID: String, type: TokenType, tokenDigest: String?, otpHash: String, relatesTo: String,
        flowStateID: String?, passwordless: Bool
    ) throws {
        _ = try connection.query(
            """
            INSERT INTO auth.one_time_tokens (user_id, token_type, token_hash, otp_hash, relates_to, flow_state_id, passwordless)
            VALUES (\(userID)::uuid, \(type.rawValue), \(tokenDigest), \(otpHash), \(relatesTo), \(flowStateID)::uuid, \(passwordless))
            ON CONFLICT (user_id, token_type) DO UPDATE SET token_hash = EXCLUDED.token_hash, otp_hash = EXCLUDED.otp_hash,
                relates_to = EXCLUDED.relates_to, flow_state_id = EXCLUDED.flow_state_id, passwordless = EXCLUDED.passwordless,
                created_at = now()
            """)
    }

    private static let columns: SQL =
        "id::text, user_id::text, token_type, otp_hash, relates_to, flow_state_id::text, extract(epoch FROM now() - created_at), passwordless"

    private static func rows(_ result: QueryResult) -> [Row] {
        (0..<result.count).compactMap { index in
            result[index, 0].map {
                Row(
                    id: $0, userID: result[index, 1], tokenType: result[index, 2], otpHash: result[index, 3],
                    relatesTo: result[index, 4], flowStateID: result[index, 5], age: result[index].double(6),
                    passwordless: result[index].bool(7) == true)
            }
        }
    }

    /// The tokens of these types whose link token has this digest, locked for the transaction.
    static func lock(_ connection: Connection, linkDigest: String, types: [TokenType]) throws -> [Row] {
        let types = types.map(\.rawValue)
        return rows(
            try connection.query(
                """
                SELECT \(columns)
                FROM auth.one_time_tokens WHERE token_hash = \(linkDigest) AND token_type = ANY(\(array: types)::text[]) FOR UPDATE
                """))
    }

    /// The tokens of these types mailed to `address`, in the order of `types`, locked for the
    /// transaction.
    static func lock(_ connection: Connection, address: String, types: [TokenType]) throws -> [Row] {
        let types = types.map(\.rawValue)
        return rows(
            try connection.query(
                """
                SELECT \(columns)
                FROM auth.one_time_tokens WHERE relates_to = \(address) AND token_type = ANY(\(array: types)::text[])
                ORDER BY array_position(\(array: types)::text[], token_type) FOR UPDATE
                """))
    }

    /// The user's token of `type`, locked for the transaction.
    static func lock(_ connection: Connection, userID: String, type: TokenType) throws -> Row? {
        let found = try connection.query(
            """
            SELECT id::text, otp_hash, relates_to, extract(epoch FROM now() - created_at) FROM auth.one_time_tokens
            WHERE user_id = \(userID)::uuid AND token_type = \(type.rawValue) FOR UPDATE
            """)
        guard found.count == 1, let id = found[0, 0] else { return nil }
        return Row(
            id: id, userID: userID, tokenType: type.rawValue, otpHash: found[0, 1], relatesTo: found[0, 2], flowStateID: nil,
            age: found[0, 3].flatMap(Double.init))
    }

    /// Whether the user has another e-mail change token than `excluding`.
    static func otherEmailChangeExists(_ connection: Connection, userID: String, excluding id: String) throws -> Bool {
        try !connection.query(
            """
            SELECT 1 FROM auth.one_time_tokens WHERE user_id = \(userID)::uuid
            AND token_type IN ('email_change_token_new', 'email_change_token_current') AND id <> \(id)::uuid
            """
        ).isEmpty
    }

    static func delete(_ connection: Connection, id: String) throws {
        _ = try connection.query(deleteStatement(id: id))
    }

    static func deleteStatement(id: String) -> SQL {
        "DELETE FROM auth.one_time_tokens WHERE id = \(id)::uuid"
    }

    static func delete(_ connection: Connection, userID: String, type: TokenType) throws {
        _ = try connection.query("DELETE FROM auth.one_time_tokens WHERE user_id = \(userID)::uuid AND token_type = \(type.rawValue)")
    }

    /// Every outstanding token of the user.
    static func deleteAllStatement(userID: String) -> SQL {
        "DELETE FROM auth.one_time_tokens WHERE user_id = \(userID)::uuid"
    }
}
