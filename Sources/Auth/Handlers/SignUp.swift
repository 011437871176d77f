import Foundation
import HTTP
import Identity
import Postgres

/// `POST /signup`: an e-mail user with a session, or an anonymous user when no e-mail is given.
extension AuthService {
    func signUp(_ body: AuthRequest.SignUp, client: String) throws -> HTTPResponse {
        try checkRate(config.signInLimit, "signin", keys: ["ip:\(client)"] + (body.email.map { ["email:\($0)"] } ?? []))
        guard let email = body.email else {
            guard body.phone == nil else { throw AuthError.validationFailed("Phone signups are disabled") }
            return try signInAnonymously(metadataJSON: body.metadataJSON)
        }
        guard Self.isValidEmail(email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let hash = try Password.hash(try checkedPassword(body.password), cost: config.bcryptCost)
        let userID = UUID().uuidString.lowercased()
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Self.newRefreshToken()
        let appMetadata = #"{"provider":"email","providers":["email"]}"#
        return try pool.withConnection { connection in
            let results = try connection.pipeline([
                """
                WITH u AS (
                    INSERT INTO auth.users (id, email, encrypted_password, email_confirmed_at, last_sign_in_at, raw_app_meta_data, raw_user_meta_data)
                    VALUES (\(userID)::uuid, \(email), \(hash), now(), now(), \(appMetadata)::jsonb, \(body.metadataJSON)::jsonb)
                    ON CONFLICT ((lower(email))) WHERE email IS NOT NULL DO NOTHING
                    RETURNING id, email
                ), i AS (
                    INSERT INTO auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at)
                    SELECT id::text, id, jsonb_build_object('sub', id::text, 'email', email, 'email_verified', true, 'phone_verified', false), 'email', now() FROM u
                ), s AS (
                    INSERT INTO auth.sessions (id, user_id) SELECT \(sessionID)::uuid, id FROM u RETURNING id, user_id
                )
                INSERT INTO auth.refresh_tokens (token, user_id, session_id) SELECT \(Self.digest(refreshToken)), user_id, id FROM s
                """,
                "SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid",
            ])
            guard let user = results[1].scalar else { throw AuthError.userAlreadyExists }
            return .json(.ok, try sessionJSON(userJSON: user, sessionID: sessionID, refreshToken: refreshToken, method: "password"))
        }
    }

    func signInAnonymously(metadataJSON: String) throws -> HTTPResponse {
        let userID = UUID().uuidString.lowercased()
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Self.newRefreshToken()
        return try pool.withConnection { connection in
            let results = try connection.pipeline([
                """
                WITH u AS (
                    INSERT INTO auth.users (id, is_anonymous, last_sign_in_at, raw_app_meta_data, raw_user_meta_data)
                    VALUES (\(userID)::uuid, true, now(), '{"provider":"anonymous","providers":[]}'::jsonb, \(metadataJSON)::jsonb)
                    RETURNING id
                ), s AS (
                    INSERT INTO auth.sessions (id, user_id) SELECT \(sessionID)::uuid, id FROM u RETURNING id, user_id
                )
                INSERT INTO auth.refresh_tokens (token, user_id, session_id) SELECT \(Self.digest(refreshToken)), user_id, id FROM s
                """,
                "SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid",
            ])
            return .json(.ok, try sessionJSON(userJSON: results[1].scalar ?? "{}", sessionID: sessionID, refreshToken: refreshToken, method: "anonymous"))
        }
    }
}
