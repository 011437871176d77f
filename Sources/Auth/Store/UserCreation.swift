import Postgres

/// Creating `auth.users` rows: the ways a user comes to exist (signed up with a password, anonymous,
/// by an admin, unconfirmed, passwordless, through an external provider), each with the identity
/// created beside it.
extension Users {
    /// A confirmed e-mail user with its identity, a session with its `password` claim and its
    /// first refresh token (one statement), then its JSON (pipelined); nil when the address is taken.
    static func createSignedIn(
        _ connection: Connection, id: String, email: String, passwordHash: String, metadataJSON: String,
        sessionID: String, refreshTokenDigest: String
    ) throws -> String? {
        let results = try connection.pipeline([
            """
            WITH u AS (
                INSERT INTO auth.users (id, email, encrypted_password, email_confirmed_at, last_sign_in_at, raw_app_meta_data, raw_user_meta_data)
                VALUES (\(id)::uuid, \(email), \(passwordHash), now(), now(), \(emailAppMetadata)::jsonb, \(metadataJSON)::jsonb)
                ON CONFLICT ((lower(email))) WHERE email IS NOT NULL DO NOTHING
                RETURNING id, email
            ), i AS (
                INSERT INTO auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at)
                SELECT id::text, id, jsonb_build_object('sub', id::text, 'email', email, 'email_verified', true, 'phone_verified', false), 'email', now() FROM u
            ), s AS (
                INSERT INTO auth.sessions (id, user_id) SELECT \(sessionID)::uuid, id FROM u RETURNING id, user_id
            ), c AS (
                INSERT INTO auth.mfa_amr_claims (session_id, authentication_method) SELECT id, 'password' FROM s
            )
            INSERT INTO auth.refresh_tokens (token, user_id, session_id) SELECT \(refreshTokenDigest), user_id, id FROM s
            """,
            jsonStatement(id: id)
        ])
        return results[1].scalar
    }

    /// An anonymous user with a session (its `anonymous` claim) and its first refresh token, then
    /// its JSON (pipelined).
    static func createAnonymousSignedIn(
        _ connection: Connection, id: String, metadataJSON: String, sessionID: String,
        refreshTokenDigest: String
    ) throws -> String? {
        let results = try connection.pipeline([
            """
            WITH u AS (
                INSERT INTO auth.users (id, is_anonymous, last_sign_in_at, raw_app_meta_data, raw_user_meta_data)
                VALUES (\(id)::uuid, true, now(), '{"provider":"anonymous","providers":[]}'::jsonb, \(metadataJSON)::jsonb)
                RETURNING id
            ), s AS (
                INSERT INTO auth.sessions (id, user_id) SELECT \(sessionID)::uuid, id FROM u RETURNING id, user_id
            ), c AS (
                INSERT INTO auth.mfa_amr_claims (session_id, authentication_method) SELECT id, 'anonymous' FROM s
            )
            INSERT INTO auth.refresh_tokens (token, user_id, session_id) SELECT \(refreshTokenDigest), user_id, id FROM s
            """,
            jsonStatement(id: id)
        ])
        return results[1].scalar
    }

    /// The admin API's new e-mail user with its identity (one statement), then its JSON
    /// (pipelined); nil when the address is taken.
    static func createByAdmin(
        _ connection: Connection, id: String, email: String, passwordHash: String?, confirmed: Bool,
        metadataJSON: String
    ) throws -> String? {
        let results = try connection.pipeline([
            """
            WITH u AS (
                INSERT INTO auth.users (id, email, encrypted_password, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
                VALUES (\(id)::uuid, \(email), \(passwordHash), CASE WHEN \(confirmed)::boolean THEN now() END,
                        '{"provider":"email","providers":["email"]}'::jsonb, \(metadataJSON)::jsonb)
                ON CONFLICT ((lower(email))) WHERE email IS NOT NULL DO NOTHING RETURNING id, email
            )
            INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
            SELECT id::text, id, jsonb_build_object('sub', id::text, 'email', email, 'email_verified', \(confirmed)::boolean), 'email' FROM u
            """,
            jsonStatement(id: id)
        ])
        return results[1].scalar
    }

    /// A sign-up awaiting its confirmation mail: the user and its unverified identity (pipelined).
    static func createUnconfirmed(_ connection: Connection, id: String, email: String, passwordHash: String, metadataJSON: String) throws {
        _ = try connection.pipeline([
            """
            INSERT INTO auth.users (id, email, encrypted_password, raw_app_meta_data, raw_user_meta_data)
            VALUES (\(id)::uuid, \(email), \(passwordHash), '{"provider":"email","providers":["email"]}'::jsonb, \(metadataJSON)::jsonb)
            """,
            """
            INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
            VALUES (\(id), \(id)::uuid, jsonb_build_object('sub', \(id)::text, 'email', \(email)::text, 'email_verified', false, 'phone_verified', false), 'email')
            """
        ])
    }

    /// `/otp`'s new user without a password, confirmed at once when `confirmed`, and its
    /// identity (pipelined).
    static func createPasswordless(_ connection: Connection, id: String, email: String, confirmed: Bool, metadataJSON: String) throws {
        _ = try connection.pipeline([
            """
            INSERT INTO auth.users (id, email, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
            VALUES (\(id)::uuid, \(email), CASE WHEN \(confirmed)::boolean THEN now() END,
                    '{"provider":"email","providers":["email"]}'::jsonb, \(metadataJSON)::jsonb)
            """,
            """
            INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
            VALUES (\(id), \(id)::uuid, jsonb_build_object('sub', \(id)::text, 'email', \(email)::text,
                    'email_verified', \(confirmed)::boolean, 'phone_verified', false), 'email')
            """
        ])
    }

    /// An id_token sign-in's new user; its e-mail left out when another account holds it.
    static func createExternal(
        _ connection: Connection, id: String, email: String?, verified: Bool, appMetadataJSON: String,
        metadataJSON: String
    ) throws {
        _ = try connection.query(
            """
            INSERT INTO auth.users (id, email, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
            SELECT \(id)::uuid, e.email, CASE WHEN e.email IS NOT NULL AND \(verified)::boolean THEN now() END,
                   \(appMetadataJSON)::jsonb, \(metadataJSON)::jsonb
            FROM (SELECT CASE WHEN EXISTS (SELECT 1 FROM auth.users WHERE lower(email) = \(email)) THEN NULL
                              ELSE \(email)::text END AS email) e
            """)
    }
}
