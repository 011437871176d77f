import Foundation
import HTTP
import Identity
import Postgres

/// `POST /token`: the password, refresh-token, id_token and PKCE grants (Web3's is in `Web3/`).
extension AuthService {
    func token(_ grant: AuthRequest.TokenGrant, request: HTTPRequest) throws -> HTTPResponse {
        switch grant {
        case .password(let email, let phone, let password):
            if !email.isEmpty {
                try checkEmailProvider(status: .unprocessableContent)
            } else if let phone, !phone.isEmpty {
                try checkPhoneProvider(.phoneDisabled("Phone logins are disabled", status: .unprocessableContent))
                guard let password else { throw AuthError.validationFailed("missing email or phone") }
                return try signInWithPassword(phone: try PhoneNumber.normalize(phone), password: password)
            }
            guard let password, !email.isEmpty else {
                throw AuthError.validationFailed("missing email or phone")
            }
            return try signInWithPassword(email: email, password: password)
        case .refreshToken(let token):
            guard let token, !token.isEmpty else { throw AuthError.refreshTokenNotFound }
            return try refresh(token)
        case .idToken(let grant):
            return try signInWithIDToken(grant, request: request)
        case .pkce(let code, let verifier):
            return try exchangePKCE(authCode: code, codeVerifier: verifier)
        case .web3(let grant):
            return try signInWithWeb3(grant, request: request)
        case .unsupported:
            throw AuthError.unsupportedGrantType
        }
    }

    /// A password sign-in by e-mail, or by number (`phone`, normalized; then `email` is empty).
    func signInWithPassword(email: String = "", phone: String? = nil, password: String) throws -> HTTPResponse {
        try pool.withConnection { connection in
            let found = try phone.map { try Users.passwordSignIn(connection, phone: $0) } ?? Users.passwordSignIn(connection, email: email)
            // Unknown e-mail and wrong password answer alike, in about the same time.
            let hash = found?.passwordHash ?? Password.dummyHash
            let valid = Password.verify(password, hash: hash) && password.utf8.count <= Password.maxBytes
            guard let found else { throw AuthError.invalidCredentials }
            try passwordAttempt(connection, userID: found.id, valid: valid)
            guard valid else { throw AuthError.invalidCredentials }
            // GoTrue tells a banned user so before checking the password; here only the
            // password's holder learns it.
            guard !found.banned else { throw AuthError.userBanned("User is banned", status: .badRequest) }
            // As GoTrue: only once the password is right, so the answer tells nothing to others.
            guard found.confirmed else { throw phone == nil ? AuthError.emailNotConfirmed : AuthError.phoneNotConfirmed }
            return .json(.ok, try startSession(connection, userID: found.id, method: "password"))
        }
    }

    /// A new session with its first refresh token and its `method` claim; updates
    /// last_sign_in_at; returns session JSON. The session and its access token are one
    /// transaction (the caller's, or one of its own): a refused token leaves no session.
    /// `oauth`: the session is an OAuth client's (its tokens carry `client_id` and `scope`).
    func startSession(_ connection: Connection, userID: String, method: String, oauth: OAuthSessionGrant? = nil) throws -> String {
        guard connection.isIdle else { return try startSessionInTransaction(connection, userID: userID, method: method, oauth: oauth) }
        return try connection.withTransaction { try startSessionInTransaction($0, userID: userID, method: method, oauth: oauth) }
    }

    private func startSessionInTransaction(_ connection: Connection, userID: String, method: String, oauth: OAuthSessionGrant?) throws -> String {
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Self.newRefreshToken()
        let user = try Sessions.start(
            connection, id: sessionID, userID: userID, refreshTokenDigest: Self.digest(refreshToken), method: method, oauth: oauth)
        return try sessionJSON(
            connection, userJSON: user ?? "{}", sessionID: sessionID, refreshToken: refreshToken, assurance: Self.firstFactor(method), method: method,
            oauth: oauth)
    }

    /// Rotation with GoTrue's reuse detection: the presented token is revoked and a child issued
    /// in the same session. A revoked token presented again within the reuse interval gets a
    /// fresh child (concurrent refreshes from one client); later, it is treated as stolen and the
    /// whole session is revoked.
    func refresh(_ token: String) throws -> HTTPResponse {
        .json(.ok, try refreshedSession(token, oauthClientID: nil))
    }

    /// The refresh of `refresh(_:)`; `oauthClientID` is the client that authenticated at
    /// `/oauth/token` (nil at `/token`): an OAuth session is refreshed by its client only, and
    /// a first-party session by no client (GoTrue's `invalid_client`).
    func refreshedSession(_ token: String, oauthClientID: String?) throws -> String {
        // A reused token revokes its session; that must commit, so it is returned, then thrown.
        enum Outcome { case session(String), reused }
        let outcome = try pool.withTransaction { connection -> Outcome in
            guard let found = try RefreshTokens.lock(connection, digest: Self.digest(token)) else { throw AuthError.refreshTokenNotFound }
            guard !found.userBanned else { throw AuthError.userBanned("Invalid Refresh Token: User Banned", status: .badRequest) }
            switch (found.oauth?.clientID, oauthClientID) {
            case (nil, nil): break
            case (.some, nil): throw AuthError.oauth("invalid_client", description: "Client authentication required for OAuth session")
            case (nil, .some): throw AuthError.oauth("invalid_client", description: "Client authentication not allowed for non-OAuth session")
            case (.some(let held), .some(let given)):
                guard held == given else { throw AuthError.oauth("invalid_client", description: "Client does not match the session's OAuth client") }
            }
            if found.revoked {
                guard found.revokedFor ?? .infinity <= config.refreshReuseInterval else {
                    try Sessions.delete(connection, id: found.sessionID)
                    return .reused
                }
            }
            let newToken = Self.newRefreshToken()
            try RefreshTokens.rotate(connection, found, parentDigest: Self.digest(token), childDigest: Self.digest(newToken))
            let user = try Users.json(connection, id: found.userID) ?? "{}"
            let assurance = try Assurance.of(connection, sessionID: found.sessionID)
            return .session(
                try sessionJSON(
                    connection, userJSON: user, sessionID: found.sessionID, refreshToken: newToken, assurance: assurance, method: "token_refresh",
                    oauth: found.oauth))
        }
        switch outcome {
        case .session(let json): return json
        case .reused: throw AuthError.refreshTokenAlreadyUsed
        }
    }
}
