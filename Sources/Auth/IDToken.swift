import Foundation
import HTTP
import JWT

/// A configured id_token provider (Google, Apple): who issues its tokens and for whom.
public struct IDTokenProvider: Sendable {
    public var issuers: [String]
    public var clientIDs: [String]

    public init(issuers: [String], clientIDs: [String]) {
        self.issuers = issuers
        self.clientIDs = clientIDs
    }
}

extension AuthService {
    /// `grant_type=id_token`. Verifying RS256/ES256 signatures against the providers' JWKS is not
    /// built yet, so every id_token is refused as GoTrue refuses an unverifiable one.
    func signInWithIDToken(_ body: [String: Any]) throws -> HTTPResponse {
        guard let provider = body["provider"] as? String, config.providers[provider] != nil else {
            throw AuthError.validationFailed("Custom OIDC provider \"\((body["provider"] as? String) ?? "")\" not allowed")
        }
        throw AuthError.badIDToken
    }
}
