import Foundation
import HTTP
import Identity
import Postgres

/// The signed-in user: `GET /user`, `PUT /user`, and the token check every user endpoint makes.
extension AuthService {
    /// The bearer's user (and session id), or GoTrue's 401/403.
    func authenticatedUser(_ request: HTTPRequest) throws -> (userID: String, sessionID: String?) {
        let caller = try authenticatedSession(request)
        return (caller.userID, caller.sessionID)
    }

    /// The bearer's user, session id and `is_anonymous` claim, or GoTrue's 401/403.
    func authenticatedSession(_ request: HTTPRequest) throws -> (userID: String, sessionID: String?, isAnonymous: Bool) {
        guard let token = Credentials.bearerToken(request.headers["Authorization"]) else { throw AuthError.noAuthorization }
        let claims: [String: Any]
        do {
            claims = try JWT.verify(token, keys: config.keys).claims
        } catch {
            throw AuthError.badJWT(error.message)
        }
        guard let sub = claims["sub"] as? String, let userID = UUID(uuidString: sub)?.uuidString.lowercased() else {
            throw AuthError.badJWT("missing sub claim")
        }
        let sessionID = (claims["session_id"] as? String).flatMap { UUID(uuidString: $0)?.uuidString.lowercased() }
        let exists = try pool.withConnection { try Sessions.holderExists($0, userID: userID, sessionID: sessionID) }
        guard exists.user else { throw AuthError.userFromTokenNotFound }
        guard exists.session else { throw AuthError.sessionNotFound }
        guard !exists.banned else { throw AuthError.userBanned("User is banned", status: .forbidden) }
        return (userID, sessionID, claims["is_anonymous"] as? Bool ?? false)
    }

    /// The user's JSON; `missing` when there is no such user (404 for the admin API, GoTrue's 403
    /// when the user came from a token).
    func userJSON(_ userID: String, missing: AuthError = .userNotFound) throws -> String {
        guard let json = try pool.withConnection({ try Users.json($0, id: userID) }) else { throw missing }
        return json
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
                guard let current = try Users.lockForUpdate(connection, id: userID) else { throw missing }
                if current.isAnonymous && hash != nil && email == nil && current.email == nil {
                    throw AuthError.validationFailed("Updating password of an anonymous user without an email or phone is not allowed")
                }
                if let metadata = changes.metadataJSON {
                    try Users.mergeMetadata(connection, id: userID, metadataJSON: metadata)
                }
                if let appMetadata = changes.appMetadataJSON {
                    try Users.mergeMetadata(connection, id: userID, metadataJSON: appMetadata, column: .app)
                }
                if changes.emailConfirm { try Users.confirmByAdmin(connection, id: userID) }
                if let ban = changes.ban { try Users.ban(connection, id: userID, ban) }
                if let email, email != current.email {
                    guard try !Users.emailTaken(connection, email: email, byOtherThan: userID) else { throw AuthError.emailExists }
                    // Auto-confirm mode: the address is confirmed at once, as for sign-ups.
                    try Users.setConfirmedEmail(connection, id: userID, email: email)
                }
                if let hash {
                    try Users.setPassword(connection, id: userID, hash: hash)
                }
                return try Users.json(connection, id: userID) ?? "{}"
            }
        } catch let error as PostgresError where error.sqlState == "23505" {
            throw AuthError.emailExists
        }
    }
}
