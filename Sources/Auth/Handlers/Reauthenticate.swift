import Foundation
import HTTP
import Identity
import Postgres

/// `GET /reauthenticate` and the code it mails, which a password change may need.
extension AuthService {
    /// `GET /reauthenticate`: a code (no link) to the signed-in user's confirmed address, spent
    /// as `nonce` with a password change.
    func reauthenticate(_ caller: SignedIn) throws -> HTTPResponse {
        let userID = caller.userID
        let mail = try pool.withTransaction { connection -> OutgoingMail in
            guard let row = try Users.lockForMail(connection, id: userID) else { throw AuthError.userFromTokenNotFound }
            guard !row.user.email.isEmpty else {
                throw AuthError.validationFailed("Reauthentication requires the user to have an email or a phone number")
            }
            guard row.confirmed else { throw AuthError.reauthenticationEmailNotConfirmed }
            try checkFrequency(secondsAgo: row.reauthenticationAgo)
            try countMailBudget(connection)
            let mail = try issueMail(
                connection, kind: .reauthentication, type: .reauthentication, user: row.user, to: row.user.email,
                flowStateID: nil, redirectTo: config.siteURL)
            try Users.stampSent(connection, id: userID, .reauthentication)
            return mail
        }
        send([mail])
        return .json(.ok, "{}")
    }

    /// With `SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION`: a session older than 24 hours
    /// changes the password only with the mailed code, which is spent.
    func checkReauthentication(userID: String, sessionID: String?, nonce: String?) throws {
        try pool.withTransaction { connection in
            if let age = try Sessions.age(connection, id: sessionID), age <= 24 * 3600 { return }
            guard let nonce else { throw AuthError.reauthenticationNeeded }
            guard let token = try OneTimeTokens.lock(connection, userID: userID, type: .reauthentication), let stored = token.otpHash,
                let address = token.relatesTo,
                Crypto.constantTimeEquals(Array(otpHash(nonce, type: .reauthentication, userID: userID, address: address).utf8), Array(stored.utf8)),
                token.age ?? .infinity <= config.mail.otpExpiry
            else {
                throw AuthError.reauthenticationNotValid
            }
            try OneTimeTokens.delete(connection, id: token.id)
        }
    }
}
