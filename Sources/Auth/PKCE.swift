import Foundation
import HTTP
import Identity
import Postgres

/// `POST /token?grant_type=pkce`: the code `GET /verify` issued, exchanged once for a session
/// against the verifier whose challenge the mail-sending request carried.
extension AuthService {
    func exchangePKCE(authCode: String, codeVerifier: String, client: String) throws -> HTTPResponse {
        try checkRate(config.refreshLimit, "refresh", keys: ["ip:\(client)"])
        enum Outcome { case session(String), expired }
        let outcome = try pool.withConnection { connection in
            try inTransaction(connection) { () -> Outcome in
                let found = try connection.query("""
                    SELECT id::text, user_id::text, code_challenge_method, code_challenge, authentication_method,
                           extract(epoch FROM now() - auth_code_issued_at)
                    FROM auth.flow_state WHERE auth_code = \(Self.digest(authCode)) FOR UPDATE
                    """)
                guard found.count == 1, let id = found[0, 0], let userID = found[0, 1], let method = found[0, 2],
                      let challenge = found[0, 3], let authenticationMethod = found[0, 4] else {
                    throw AuthError.flowStateNotFound("invalid flow state, no valid flow state found", status: .notFound)
                }
                guard (Double(found[0, 5] ?? "") ?? .infinity) <= config.mail.flowStateExpiry else {
                    _ = try connection.query("DELETE FROM auth.flow_state WHERE id = \(id)::uuid")
                    return .expired
                }
                guard Self.pkceMatches(verifier: codeVerifier, challenge: challenge, method: method) else { throw AuthError.badCodeVerifier }
                _ = try connection.query("DELETE FROM auth.flow_state WHERE id = \(id)::uuid")
                return .session(try startSession(connection, userID: userID, method: authenticationMethod))
            }
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
