import Foundation
import HTTP
import Identity
import Postgres

/// `POST /token`: the password, refresh-token, id_token and PKCE grants.
extension AuthService {
    func token(_ grant: AuthRequest.TokenGrant, client: String) throws -> HTTPResponse {
        switch grant {
        case .password(let email, let phone, let password):
            try checkRate(config.signInLimit, "signin", keys: ["ip:\(client)", "email:\(email)"])
            guard let password, !email.isEmpty || phone != nil else {
                throw AuthError.validationFailed("missing email or phone")
            }
            return try signInWithPassword(email: email, password: password)
        case .refreshToken(let token):
            try checkRate(config.refreshLimit, "refresh", keys: ["ip:\(client)"])
            guard let token, !token.isEmpty else { throw AuthError.refreshTokenNotFound }
            return try refresh(token)
        case .idToken(let grant):
            try checkRate(config.signInLimit, "signin", keys: ["ip:\(client)"])
            return try signInWithIDToken(grant)
        case .pkce(let code, let verifier):
            return try exchangePKCE(authCode: code, codeVerifier: verifier, client: client)
        case .unsupported:
            throw AuthError.validationFailed("unsupported_grant_type")
        }
    }

    func signInWithPassword(email: String, password: String) throws -> HTTPResponse {
        try pool.withConnection { connection in
            let found = try connection.query("""
                SELECT id::text, encrypted_password, email_confirmed_at IS NOT NULL FROM auth.users
                WHERE lower(email) = \(email) AND deleted_at IS NULL AND (banned_until IS NULL OR banned_until < now())
                """)
            // Unknown e-mail and wrong password answer alike, in about the same time.
            let hash = found.count == 1 ? (found[0, 1] ?? Password.dummyHash) : Password.dummyHash
            guard Password.verify(password, hash: hash), password.utf8.count <= Password.maxBytes, found.count == 1, let userID = found[0, 0] else {
                throw AuthError.invalidCredentials
            }
            // As GoTrue: only once the password is right, so the answer tells nothing to others.
            guard found[0, 2] == "t" else { throw AuthError.emailNotConfirmed }
            return .json(.ok, try startSession(connection, userID: userID, method: "password"))
        }
    }

    /// A new session with its first refresh token; updates last_sign_in_at; returns session JSON.
    func startSession(_ connection: Connection, userID: String, method: String) throws -> String {
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Self.newRefreshToken()
        let results = try connection.pipeline([
            "UPDATE auth.users SET last_sign_in_at = now() WHERE id = \(userID)::uuid",
            "INSERT INTO auth.sessions (id, user_id) VALUES (\(sessionID)::uuid, \(userID)::uuid)",
            "INSERT INTO auth.refresh_tokens (token, user_id, session_id) VALUES (\(Self.digest(refreshToken)), \(userID)::uuid, \(sessionID)::uuid)",
            "SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid",
        ])
        return try sessionJSON(userJSON: results[3].scalar ?? "{}", sessionID: sessionID, refreshToken: refreshToken, method: method)
    }

    /// Rotation with GoTrue's reuse detection: the presented token is revoked and a child issued
    /// in the same session. A revoked token presented again within the reuse interval gets a
    /// fresh child (concurrent refreshes from one client); later, it is treated as stolen and the
    /// whole session is revoked.
    func refresh(_ token: String) throws -> HTTPResponse {
        // A reused token revokes its session; that must commit, so it is returned, then thrown.
        enum Outcome { case session(String), reused }
        let outcome = try pool.withTransaction { connection -> Outcome in
            let found = try connection.query("""
                SELECT r.id, r.user_id::text, r.session_id::text, r.revoked,
                       extract(epoch FROM now() - r.updated_at) AS revoked_for
                FROM auth.refresh_tokens r JOIN auth.sessions s ON s.id = r.session_id
                WHERE r.token = \(Self.digest(token))
                FOR UPDATE OF r
                """)
            guard found.count == 1, let tokenID = found[0, 0], let userID = found[0, 1], let sessionID = found[0, 2] else {
                throw AuthError.refreshTokenNotFound
            }
            if found[0, 3] == "t" {
                let revokedFor = Double(found[0, 4] ?? "") ?? .infinity
                guard revokedFor <= config.refreshReuseInterval else {
                    _ = try connection.query("DELETE FROM auth.sessions WHERE id = \(sessionID)::uuid")
                    return .reused
                }
            }
            let newToken = Self.newRefreshToken()
            _ = try connection.pipeline([
                "UPDATE auth.refresh_tokens SET revoked = true, updated_at = CASE WHEN revoked THEN updated_at ELSE now() END WHERE id = \(tokenID)::bigint",
                "INSERT INTO auth.refresh_tokens (token, user_id, session_id, parent) VALUES (\(Self.digest(newToken)), \(userID)::uuid, \(sessionID)::uuid, \(Self.digest(token)))",
                "UPDATE auth.sessions SET refreshed_at = now(), updated_at = now() WHERE id = \(sessionID)::uuid",
            ])
            let user = try connection.query("SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid").scalar ?? "{}"
            return .session(try sessionJSON(userJSON: user, sessionID: sessionID, refreshToken: newToken, method: "token_refresh"))
        }
        switch outcome {
        case .session(let json): return .json(.ok, json)
        case .reused: throw AuthError.refreshTokenAlreadyUsed
        }
    }
}
