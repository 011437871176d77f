import Foundation
import HTTP
import Identity
import Postgres

/// The signed-in user: `GET /user`, `PUT /user`, and the token check every user endpoint makes.
extension AuthService {
    /// The bearer's user (and session id), or GoTrue's 401/403.
    func authenticatedUser(_ request: HTTPRequest) throws -> (userID: String, sessionID: String?) {
        guard let token = Credentials.bearerToken(request.headers["Authorization"]) else { throw AuthError.noAuthorization }
        let claims: [String: Any]
        do {
            claims = try JWT.verifyHS256(token, secret: config.keys.jwtSecret).claims
        } catch {
            throw AuthError.badJWT(error.message)
        }
        guard let sub = claims["sub"] as? String, let userID = UUID(uuidString: sub)?.uuidString.lowercased() else {
            throw AuthError.badJWT("missing sub claim")
        }
        let sessionID = (claims["session_id"] as? String).flatMap { UUID(uuidString: $0)?.uuidString.lowercased() }
        let state = try pool.withConnection { connection in
            try connection.query("""
                SELECT EXISTS (SELECT 1 FROM auth.users WHERE id = \(userID)::uuid) AS user_exists,
                       \(sessionID)::uuid IS NULL OR EXISTS (SELECT 1 FROM auth.sessions WHERE id = \(sessionID)::uuid AND user_id = \(userID)::uuid) AS session_exists
                """)
        }
        guard state[0, "user_exists"] == "t" else { throw AuthError.userFromTokenNotFound }
        guard state[0, "session_exists"] == "t" else { throw AuthError.sessionNotFound }
        return (userID, sessionID)
    }

    /// The user's JSON; `missing` when there is no such user (404 for the admin API, GoTrue's 403
    /// when the user came from a token).
    func userJSON(_ userID: String, missing: AuthError = .userNotFound) throws -> String {
        try pool.withConnection { connection in
            guard let json = try connection.query("SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid").scalar else {
                throw missing
            }
            return json
        }
    }

    /// `PUT /user` and `PUT /admin/users/{id}`: metadata merged key by key (null deletes), e-mail
    /// and password changes, and the in-place upgrade of an anonymous user.
    func applyUserChanges(userID: String, _ changes: AuthRequest.UserChanges, missing: AuthError = .userNotFound) throws -> String {
        let email = changes.email
        if let email, !Self.isValidEmail(email) { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let hash = try changes.password.map { try Password.hash(try checkedPassword($0), cost: config.bcryptCost) }
        // Two users changing to one address at once: the unique index decides (23505).
        do {
            return try pool.withTransaction { connection in
                let current = try connection.query("SELECT is_anonymous, email FROM auth.users WHERE id = \(userID)::uuid FOR UPDATE")
                guard current.count == 1 else { throw missing }
                let anonymous = current[0, 0] == "t"
                if anonymous && hash != nil && email == nil && current[0, 1] == nil {
                    throw AuthError.validationFailed("Updating password of an anonymous user without an email or phone is not allowed")
                }
                if let metadata = changes.metadataJSON {
                    _ = try connection.query("""
                        UPDATE auth.users SET raw_user_meta_data = coalesce((
                            SELECT jsonb_object_agg(key, value) FROM jsonb_each(raw_user_meta_data || \(metadata)::jsonb)
                            WHERE value <> 'null'::jsonb), '{}'::jsonb), updated_at = now()
                        WHERE id = \(userID)::uuid
                        """)
                }
                if let email, email != current[0, 1] {
                    let taken = try connection.query("SELECT 1 FROM auth.users WHERE lower(email) = \(email) AND id <> \(userID)::uuid")
                    guard taken.isEmpty else { throw AuthError.emailExists }
                    // Auto-confirm mode: the address is confirmed at once, as for sign-ups.
                    _ = try connection.pipeline([
                        """
                        UPDATE auth.users SET email = \(email), email_confirmed_at = now(), updated_at = now(), is_anonymous = false,
                            raw_app_meta_data = CASE WHEN is_anonymous THEN '{"provider":"email","providers":["email"]}'::jsonb ELSE raw_app_meta_data END
                        WHERE id = \(userID)::uuid
                        """,
                        """
                        INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
                        VALUES (\(userID), \(userID)::uuid, jsonb_build_object('sub', \(userID)::text, 'email', \(email)::text, 'email_verified', true, 'phone_verified', false), 'email')
                        ON CONFLICT (provider_id, provider) DO UPDATE SET identity_data = EXCLUDED.identity_data, updated_at = now()
                        """,
                    ])
                }
                if let hash {
                    _ = try connection.query("UPDATE auth.users SET encrypted_password = \(hash), updated_at = now() WHERE id = \(userID)::uuid")
                }
                let json = try connection.query("SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid").scalar ?? "{}"
                return json
            }
        } catch let error as PostgresError where error.sqlState == "23505" {
            throw AuthError.emailExists
        }
    }
}
