import Foundation
import HTTP
import Identity
import Postgres

/// `POST /token?grant_type=pkce`: the code `GET /verify` issued, exchanged once for a session
/// against the verifier whose challenge the mail-sending request carried.
extension AuthService {
    func exchangePKCE(authCode: String, codeVerifier: String) throws -> HTTPResponse {
        enum Outcome { case session(String), expired }
        let outcome = try pool.withTransaction { connection -> Outcome in
            guard let flow = try FlowStates.lock(connection, authCodeDigest: Self.digest(authCode)) else {
                throw AuthError.flowStateNotFound("invalid flow state, no valid flow state found", status: .notFound)
            }
            guard flow.codeAge ?? .infinity <= config.mail.flowStateExpiry else {
                try FlowStates.delete(connection, id: flow.id)
                return .expired
            }
            guard Self.pkceMatches(verifier: codeVerifier, challenge: flow.codeChallenge, method: flow.codeChallengeMethod) else {
                throw AuthError.badCodeVerifier
            }
            try FlowStates.delete(connection, id: flow.id)
            var session = try startSession(connection, userID: flow.userID, method: flow.authenticationMethod)
            // GoTrue's `provider_token` and `provider_refresh_token` of an OAuth flow's code.
            for (name, value) in [("provider_token", flow.providerAccessToken), ("provider_refresh_token", flow.providerRefreshToken)] {
                if let value, !value.isEmpty, session.hasSuffix("}") { session = session.dropLast() + ",\(jsonString(name)):\(jsonString(value))}" }
            }
            return .session(session)
        }
        switch outcome {
        case .session(let json): return .json(.ok, json)
        case .expired: throw AuthError.flowStateExpired
        }
    }

    /// RFC 7636: `s256` compares base64url(SHA-256(verifier)), `plain` the verifier itself; in
    /// constant time.
    static func pkceMatches(verifier: String, challenge: String, method: String) -> Bool {
        let expected = method == "s256" ? Base64URL.encode(Crypto.sha256(Array(verifier.utf8))) : verifier
        return Crypto.constantTimeEquals(Array(expected.utf8), Array(challenge.utf8))
    }
}
