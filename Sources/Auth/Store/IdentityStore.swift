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

    /// The user the identity is linked to; nil when it is linked to nobody.
    static func owner(_ connection: Connection, provider: String, subject: String) throws -> String? {
        try connection.query("SELECT user_id::text FROM auth.identities WHERE provider = \(provider) AND provider_id = \(subject)").scalar
    }

    /// A new identity (a concurrent insert of the same one fails with 23505).
    static func insert(_ connection: Connection, provider: String, subject: String, userID: String, identityJSON: String) throws {
        _ = try connection.query(
            """
            INSERT INTO auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at)
            VALUES (\(subject), \(userID)::uuid, \(identityJSON)::jsonb, \(provider), now())
            """)
    }

    /// What unlinking reads of each identity of a user.
    struct Summary {
        var id: String
        /// Lower-cased; empty when the identity has none.
        var email: String
        var verified: Bool
        /// Its position by creation (then id), as GoTrue orders identities.
        var order: Int
    }

    static func list(_ connection: Connection, userID: String) throws -> [Summary] {
        let found = try connection.query(
            """
            SELECT id::text, coalesce(email, ''), identity_data ->> 'email_verified' = 'true' FROM auth.identities
            WHERE user_id = \(userID)::uuid ORDER BY created_at, id::text
            """)
        return (0..<found.count).compactMap { index in
            found[index, 0].map { Summary(id: $0, email: found[index, 1] ?? "", verified: found[index].bool(2) == true, order: index) }
        }
    }

    static func delete(_ connection: Connection, id: String) throws {
        _ = try connection.query("DELETE FROM auth.identities WHERE id = \(id)::uuid")
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
