import Foundation
import HTTP
import Identity
import Postgres

/// `POST /signup`: an e-mail user with a session, or an anonymous user when no e-mail is given;
/// with `MAILER_AUTOCONFIRM=false`, an e-mail user awaiting the confirmation mail.
extension AuthService {
    func signUp(_ body: AuthRequest.SignUp) throws -> HTTPResponse {
        guard let email = body.email else {
            guard body.phone == nil else { throw AuthError.phoneDisabled("Phone signups are disabled", status: .badRequest) }
            return try signInAnonymously(metadataJSON: body.metadataJSON)
        }
        guard Self.isValidEmail(email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let hash = try Password.hash(try checkedPassword(body.password), cost: config.bcryptCost)
        let userID = UUID().uuidString.lowercased()
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Self.newRefreshToken()
        return try pool.withTransaction { connection in
            guard
                let user = try Users.createSignedIn(
                    connection, id: userID, email: email, passwordHash: hash, metadataJSON: body.metadataJSON,
                    sessionID: sessionID, refreshTokenDigest: Self.digest(refreshToken))
            else {
                throw AuthError.userAlreadyExists
            }
            try userCreated(connection, userID: userID)
            return .json(
                .ok,
                try sessionJSON(
                    connection, userJSON: user, sessionID: sessionID, refreshToken: refreshToken, assurance: Self.firstFactor("password"), method: "password"))
        }
    }

    func signInAnonymously(metadataJSON: String) throws -> HTTPResponse {
        let userID = UUID().uuidString.lowercased()
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Self.newRefreshToken()
        return try pool.withTransaction { connection in
            let user = try Users.createAnonymousSignedIn(
                connection, id: userID, metadataJSON: metadataJSON, sessionID: sessionID,
                refreshTokenDigest: Self.digest(refreshToken))
            try userCreated(connection, userID: userID)
            return .json(
                .ok,
                try sessionJSON(
                    connection, userJSON: user ?? "{}", sessionID: sessionID, refreshToken: refreshToken, assurance: Self.firstFactor("anonymous"),
                    method: "anonymous"))
        }
    }

    /// `POST /signup` with `MAILER_AUTOCONFIRM=false`: the user without a session, and a
    /// confirmation mail. An address already confirmed gets no mail and a made-up user (GoTrue's
    /// answer, which tells nobody the address is registered).
    func signUpAwaitingConfirmation(_ body: AuthRequest.SignUp, email: String, request: HTTPRequest) throws -> HTTPResponse {
        guard Self.isValidEmail(email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let hash = try Password.hash(try checkedPassword(body.password), cost: config.bcryptCost)
        let redirectTo = redirectTarget(request, given: body.redirectTo)
        let (json, mail) = try pool.withTransaction { connection -> (String, OutgoingMail?) in
            if let existing = try Users.lockForMail(connection, email: email) {
                if existing.confirmed { return (Self.obfuscatedUserJSON(email: email, metadataJSON: body.metadataJSON), nil) }
                let mail = try confirmationMail(connection, existing, pkce: body.pkce, redirectTo: redirectTo)
                return (try userJSON(connection, existing.user.id), mail)
            }
            let userID = UUID().uuidString.lowercased()
            try Users.createUnconfirmed(connection, id: userID, email: email, passwordHash: hash, metadataJSON: body.metadataJSON)
            try userCreated(connection, userID: userID)
            let row = try Users.lockForMail(connection, id: userID)!
            let mail = try confirmationMail(connection, row, pkce: body.pkce, redirectTo: redirectTo)
            return (try userJSON(connection, userID), mail)
        }
        send(mail.map { [$0] } ?? [])
        return .json(.ok, json)
    }

    /// GoTrue's answer to a sign-up for an address that is already confirmed (autoconfirm off):
    /// a user that does not exist, shaped like a new one.
    static func obfuscatedUserJSON(email: String, metadataJSON: String) -> String {
        let now = timestamp()
        return
            #"{"id":"\#(UUID().uuidString.lowercased())","aud":"authenticated","role":"","email":\#(jsonString(email)),"phone":"","confirmation_sent_at":"\#(now)","app_metadata":{"provider":"email","providers":["email"]},"user_metadata":\#(metadataJSON),"identities":[],"created_at":"\#(now)","updated_at":"\#(now)","is_anonymous":false}"#
    }
}
