import Foundation
import Identity

/// The public discovery documents: the access tokens' public keys, and OpenID's configuration.
extension AuthService {
    /// `/.well-known/jwks.json`: every `JWT_KEYS` public key, for verifying access tokens without
    /// a call to this server (`auth.getClaims()`). Never a private part, never the HS256 secret:
    /// with no asymmetric key the set is empty.
    func jwksJSON() -> String {
        let keys = config.keys.verificationKeys.keys.map { key -> [String: Any] in
            var jwk = key.key.publicJWK
            jwk["kid"] = key.keyID
            jwk["alg"] = key.algorithm
            jwk["use"] = "sig"
            jwk["key_ops"] = ["verify"]
            jwk["ext"] = true
            return jwk
        }
        return JWT.serialize(["keys": keys])
    }

    /// `/.well-known/openid-configuration`: where the keys are and what signs the tokens.
    func openIDConfigurationJSON() -> String {
        let algorithms = [config.keys.signingKey?.algorithm ?? "HS256"] + Set(config.keys.verificationKeys.keys.map(\.algorithm)).sorted()
        let document: [String: Any] = [
            "issuer": config.issuer, "jwks_uri": config.issuer + "/.well-known/jwks.json",
            "authorization_endpoint": config.issuer + "/authorize", "token_endpoint": config.issuer + "/token",
            "userinfo_endpoint": config.issuer + "/user", "response_types_supported": ["code", "token"],
            "subject_types_supported": ["public"], "grant_types_supported": ["password", "refresh_token", "id_token", "pkce"],
            "id_token_signing_alg_values_supported": Array(NSOrderedSet(array: algorithms)), "scopes_supported": ["openid", "email", "profile"],
            "code_challenge_methods_supported": ["plain", "S256"]
        ]
        return JWT.serialize(document)
    }
}
