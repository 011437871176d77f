import Foundation
import HTTP
import Identity
import Postgres

/// `/admin/users…`: the service role's user management.
extension AuthService {
    func admin(_ request: HTTPRequest, _ operation: AuthRequest.Admin) throws -> HTTPResponse {
        guard let token = Credentials.bearerToken(request.headers["Authorization"]) else { throw AuthError.noAuthorization }
        let isService: Bool
        if Crypto.constantTimeEquals(Array(token.utf8), Array(config.keys.serviceRoleKey.utf8)) {
            isService = true
        } else if let claims = try? JWT.verifyHS256(token, secret: config.keys.jwtSecret).claims {
            isService = claims["role"] as? String == "service_role"
        } else {
            throw AuthError.badJWT("invalid token")
        }
        guard isService else { throw AuthError.notAdmin }
        switch operation {
        case .listUsers(let page, let perPage):
            let users = try pool.withConnection { connection in
                try connection.query("""
                    SELECT coalesce(jsonb_agg(auth.user_json(u) ORDER BY u.created_at), '[]'::jsonb)::text
                    FROM (SELECT * FROM auth.users ORDER BY created_at LIMIT \(perPage) OFFSET \((page - 1) * perPage)) u
                    """).scalar ?? "[]"
            }
            return .json(.ok, #"{"aud":"authenticated","users":\#(users)}"#)
        case .createUser(let email, let password, let metadata, let confirmed):
            guard let email, Self.isValidEmail(email) else {
                throw AuthError.validationFailed("Unable to validate email address: invalid format")
            }
            let hash = try password.map { try Password.hash(try checkedPassword($0), cost: config.bcryptCost) }
            let userID = UUID().uuidString.lowercased()
            let json = try pool.withConnection { connection in
                let results = try connection.pipeline([
                    """
                    WITH u AS (
                        INSERT INTO auth.users (id, email, encrypted_password, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
                        VALUES (\(userID)::uuid, \(email), \(hash), CASE WHEN \(confirmed)::boolean THEN now() END,
                                '{"provider":"email","providers":["email"]}'::jsonb, \(metadata)::jsonb)
                        ON CONFLICT ((lower(email))) WHERE email IS NOT NULL DO NOTHING RETURNING id, email
                    )
                    INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
                    SELECT id::text, id, jsonb_build_object('sub', id::text, 'email', email, 'email_verified', \(confirmed)::boolean), 'email' FROM u
                    """,
                    "SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid",
                ])
                guard let json = results[1].scalar else { throw AuthError.emailExists }
                return json
            }
            return .json(.ok, json)
        case .getUser(let id):
            guard let id else { throw AuthError.userNotFound }
            return .json(.ok, try userJSON(id))
        case .updateUser(let id, let changes):
            guard let id else { throw AuthError.userNotFound }
            return .json(.ok, try applyUserChanges(userID: id, changes))
        case .deleteUser(let id):
            guard let id else { throw AuthError.userNotFound }
            let json = try userJSON(id)
            _ = try pool.withConnection { try $0.query("DELETE FROM auth.users WHERE id = \(id)::uuid") }
            return .json(.ok, json)
        }
    }
}
