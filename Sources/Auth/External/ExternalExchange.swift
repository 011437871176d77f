import Foundation
import Identity
import Postgres

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The server-to-server half of the redirect flow: the code exchanged at the provider's token
/// endpoint, then the user read from the verified id_token, the userinfo endpoint, or GitHub's
/// `/user` and `/user/emails` (GoTrue's `provider/*.go`).
extension AuthService {
    struct ExternalTokens {
        var accessToken: String
        var refreshToken: String?
        var idToken: String?
    }

    /// `grant_type=authorization_code` with the client's credentials in the body (the
    /// providers here all take them there); failures are GoTrue's "Unable to exchange external code".
    func exchangeExternalCode(_ code: String, provider: ExternalProvider, endpoints: ExternalEndpoints) throws -> ExternalTokens {
        let refusal = AuthError.externalProviderFailed("Unable to exchange external code: \(code.prefix(4))")
        guard let url = URL(string: endpoints.token) else { throw refusal }
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let form = [
            ("client_id", provider.clientID), ("client_secret", provider.clientSecret()), ("code", code), ("grant_type", "authorization_code"),
            ("redirect_uri", externalCallbackURL(provider))
        ]
        request.httpBody = Data(Self.formEncode(form).utf8)
        guard case .success(let answer) = BlockingFetch.exchange(request), answer.status == 200,
            let body = (try? JSONSerialization.jsonObject(with: Data(answer.body))) as? [String: Any],
            let accessToken = body["access_token"] as? String, !accessToken.isEmpty
        else {
            logger.info("oauth code exchange refused", metadata: ["provider": "\(provider.kind.rawValue)"])
            throw refusal
        }
        return ExternalTokens(accessToken: accessToken, refreshToken: body["refresh_token"] as? String, idToken: body["id_token"] as? String)
    }

    /// The user's claims, in id_token terms (`iss`, `sub`, `email`, `email_verified`, `name`,
    /// `picture`), which the id_token sign-in turns into the identity and the user.
    func externalUserClaims(_ tokens: ExternalTokens, provider: ExternalProvider, endpoints: ExternalEndpoints) throws -> [String: Any] {
        let refusal = AuthError.externalProviderFailed("Error getting user profile from external provider")
        switch provider.kind {
        case .github:
            guard let api = endpoints.api, let user = try getJSON(api + "/user", bearer: tokens.accessToken) as? [String: Any],
                let id = user["id"].map({ "\($0)" })
            else { throw refusal }
            let emails = (try getJSON(api + "/user/emails", bearer: tokens.accessToken) as? [[String: Any]]) ?? []
            // GoTrue's choice: the primary address; else the last one listed.
            let chosen = emails.first { $0["primary"] as? Bool == true } ?? emails.last
            var claims: [String: Any] = ["iss": api + "/user", "sub": id]
            if let email = chosen?["email"] as? String {
                claims["email"] = email
                claims["email_verified"] = chosen?["verified"] as? Bool ?? false
            }
            if let name = user["name"] as? String, !name.isEmpty { claims["name"] = name }
            if let avatar = user["avatar_url"] as? String { claims["picture"] = avatar }
            if let login = user["login"] as? String { claims["user_name"] = login }
            return claims
        case .google, .apple, .oidc:
            if let idToken = tokens.idToken { return try verifiedExternalIDToken(idToken, provider: provider, endpoints: endpoints) }
            guard let userinfo = endpoints.userinfo, var claims = try getJSON(userinfo, bearer: tokens.accessToken) as? [String: Any] else {
                throw refusal
            }
            if claims["sub"] == nil, let id = claims["id"] { claims["sub"] = "\(id)" }
            if claims["email_verified"] == nil, let verified = claims["verified_email"] { claims["email_verified"] = verified }
            claims["iss"] = endpoints.issuer ?? userinfo
            return claims
        }
    }

    /// An id_token from the token endpoint: its signature against the provider's JWKS, its
    /// times, its issuer and its audience (the client id).
    func verifiedExternalIDToken(_ token: String, provider: ExternalProvider, endpoints: ExternalEndpoints) throws -> [String: Any] {
        let refusal = AuthError.externalProviderFailed("Error getting user profile from external provider")
        guard let jwks = endpoints.jwks else { throw refusal }
        let source = external.keys(jwks)
        let claims: [String: Any]
        do {
            do {
                claims = try JWT.verify(token, keys: try source.keys())
            } catch JWTError.badSignature {
                claims = try JWT.verify(token, keys: try source.keys(refresh: true))
            }
        } catch {
            logger.info("oauth id_token refused", metadata: ["reason": "\(logText(error))"])
            throw refusal
        }
        let issuers = provider.kind == .apple && provider.url == nil ? ["https://appleid.apple.com", "https://account.apple.com"] : [endpoints.issuer ?? ""]
        let audiences = (claims["aud"] as? String).map { [$0] } ?? (claims["aud"] as? [String]) ?? []
        guard let issuer = claims["iss"] as? String, issuers.contains(issuer), audiences.contains(provider.clientID) else {
            logger.info("oauth id_token refused", metadata: ["reason": "issuer or audience"])
            throw refusal
        }
        return claims
    }

    /// A JSON document fetched with the provider's access token; nil when it answers other than 200.
    func getJSON(_ location: String, bearer: String) throws -> Any? {
        guard let url = URL(string: location) else { return nil }
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        guard case .success(let answer) = BlockingFetch.exchange(request), answer.status == 200 else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(answer.body))
    }
}
