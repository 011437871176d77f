import Postgres

/// `auth.identities` of id_token providers (e-mail identities are written with their user, in
/// `Users`).
enum Identities {
    /// The identity's data replaced and its sign-in stamped; its user's id, nil when there is no
    /// such identity.
    static func touch(_ connection: Connection, provider: String, subject: String, identityJSON: String) throws -> String? {
        try connection.query(
            """
            UPDATE auth.identities SET identity_data = \(identityJSON)::jsonb, last_sign_in_at = now(), updated_at = now()
            WHERE provider = \(provider) AND provider_id = \(subject) RETURNING user_id::text
            """
        ).scalar
    }

    /// The identity, unless it exists.
    static func insertIfAbsent(_ connection: Connection, provider: String, subject: String, userID: String, identityJSON: String) throws {
        _ = try connection.query(
            """
            INSERT INTO auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at)
            VALUES (\(subject), \(userID)::uuid, \(identityJSON)::jsonb, \(provider), now())
            ON CONFLICT (provider_id, provider) DO NOTHING
            """)
    }
}
