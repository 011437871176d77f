import Foundation
import HTTP
import Identity
import Postgres

/// `POST /signup`: an e-mail user with a session, or an anonymous user when no e-mail is given.
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
        return try pool.withConnection { connection in
            guard
                let user = try Users.createSignedIn(
                    connection, id: userID, email: email, passwordHash: hash, metadataJSON: body.metadataJSON,
                    sessionID: sessionID, refreshTokenDigest: Self.digest(refreshToken))
            else {
                throw AuthError.userAlreadyExists
            }
            return .json(.ok, try sessionJSON(userJSON: user, sessionID: sessionID, refreshToken: refreshToken, assurance: Self.firstFactor("password")))
        }
    }

    func signInAnonymously(metadataJSON: String) throws -> HTTPResponse {
        let userID = UUID().uuidString.lowercased()
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Self.newRefreshToken()
        return try pool.withConnection { connection in
            let user = try Users.createAnonymousSignedIn(
                connection, id: userID, metadataJSON: metadataJSON, sessionID: sessionID,
                refreshTokenDigest: Self.digest(refreshToken))
            return .json(
                .ok, try sessionJSON(userJSON: user ?? "{}", sessionID: sessionID, refreshToken: refreshToken, assurance: Self.firstFactor("anonymous")))
        }
    }
}
