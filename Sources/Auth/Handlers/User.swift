import Foundation
import HTTP
import Identity
import Postgres

/// The signed-in user: `GET /user`, `PUT /user`, and the token check every user endpoint makes.
extension AuthService {
    /// The bearer's user, session id and `is_anonymous` claim, or GoTrue's 401/403.
    func signedIn(_ request: HTTPRequest) throws -> SignedIn {
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
        return SignedIn(userID: userID, sessionID: sessionID, isAnonymous: claims["is_anonymous"] as? Bool ?? false)
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
                if current.isAnonymous && hash != nil && email == nil && changes.phone == nil && current.email == nil {
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

    /// `PUT /user`: a new e-mail waits for its confirmation mails (an anonymous user with
    /// autoconfirm on gets it at once, as GoTrue); a password change may need the
    /// reauthentication code; everything else as the admin API applies it.
    func updateSignedInUser(_ request: HTTPRequest, _ caller: SignedIn, _ changes: AuthRequest.UserChanges) throws -> HTTPResponse {
        let (userID, sessionID) = (caller.userID, caller.sessionID)
        var changes = changes
        // A credential (the password, the address) changes only at the level the user enrolled
        // for: a phished password alone must not lock the owner out. Metadata stays open at aal1.
        if changes.password != nil || changes.email != nil || changes.phone != nil {
            let current = try pool.withConnection { try Assurance.credentialGuard($0, userID: userID, sessionID: sessionID) }
            if current.belowLevel && (changes.password != nil || changes.phone != nil || changes.email.map { $0.lowercased() } != current.email) {
                throw AuthError.insufficientAAL("AAL2 session is required to update email or password when MFA is enabled.", status: .unauthorized)
            }
        }
        if let password = changes.password {
            _ = try checkedPassword(password)
            if config.mail.requireReauthentication { try checkReauthentication(userID: userID, sessionID: sessionID, nonce: changes.nonce) }
        }
        if let email = changes.email {
            guard Self.isValidEmail(email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
            let redirectTo = redirectTarget(request, given: changes.redirectTo)
            try spend(emailChangeBudget(request))
            let mails = try pool.withTransaction { connection -> [OutgoingMail]? in
                guard let row = try Users.lockForMail(connection, id: userID) else { throw AuthError.userFromTokenNotFound }
                if email == row.user.email.lowercased() { return [] }
                if row.isAnonymous && config.mail.autoconfirm { return nil }
                guard try !Users.emailTaken(connection, email: email, byOtherThan: userID) else { throw AuthError.emailExists }
                return try emailChangeMails(connection, row, newEmail: email, pkce: changes.pkce, redirectTo: redirectTo)
            }
            if let mails {
                send(mails)
                changes.email = nil
            }
        }
        if let phone = changes.phone {
            try spend(emailChangeBudget(request))
            try changePhone(userID: userID, newPhone: phone, channel: changes.channel)
        }
        return .json(.ok, try applyUserChanges(userID: userID, changes, missing: .userFromTokenNotFound))
    }
}
