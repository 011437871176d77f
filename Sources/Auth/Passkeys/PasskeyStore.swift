import Postgres

/// `auth.webauthn_credentials`: the users' passkeys.
enum Passkeys {
    /// The user's passkeys as GoTrue lists them (a JSON array, oldest first); nil when there is
    /// no such user.
    static func listJSON(_ connection: Connection, userID: String) throws -> String? {
        try connection.query(
            """
            SELECT coalesce((SELECT jsonb_agg(auth.passkey_json(c) ORDER BY c.created_at, c.id) FROM auth.webauthn_credentials c
                WHERE c.user_id = u.id), '[]'::jsonb)::text
            FROM auth.users u WHERE u.id = \(userID)::uuid
            """
        ).scalar
    }

    /// The passkey renamed; its JSON, nil when the user has no passkey with this id.
    static func rename(_ connection: Connection, id: String, userID: String, friendlyName: String) throws -> String? {
        try connection.query(
            """
            UPDATE auth.webauthn_credentials c SET friendly_name = \(friendlyName)::text, updated_at = now()
            WHERE c.id = \(id)::uuid AND c.user_id = \(userID)::uuid RETURNING auth.passkey_json(c)::text
            """
        ).scalar
    }

    /// Whether the user had a passkey with this id, now removed.
    static func delete(_ connection: Connection, id: String, userID: String) throws -> Bool {
        try connection.query("DELETE FROM auth.webauthn_credentials WHERE id = \(id)::uuid AND user_id = \(userID)::uuid RETURNING 1").count == 1
    }

    static func userExists(_ connection: Connection, id: String) throws -> Bool {
        try connection.query("SELECT 1 FROM auth.users WHERE id = \(id)::uuid").count == 1
    }

    /// Whether the user has a verified MFA factor (GoTrue's `HasMFAEnabled`).
    static func hasVerifiedFactor(_ connection: Connection, userID: String) throws -> Bool {
        try connection.query("SELECT 1 FROM auth.mfa_factors WHERE user_id = \(userID)::uuid AND status = 'verified' LIMIT 1").count == 1
    }
}
