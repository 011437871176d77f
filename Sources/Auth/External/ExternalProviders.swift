import Foundation
import Identity
import Postgres
import Synchronization

/// An OAuth provider of GoTrue's redirect flow (`/authorize` → provider → `/callback`), set by
/// GoTrue's `EXTERNAL_<NAME>_*` settings.
public struct ExternalProvider: Sendable {
    /// How the provider's endpoints are found and its user read.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// OpenID Connect by discovery at `accounts.google.com` (or `EXTERNAL_GOOGLE_URL`).
        case google
        /// Apple's fixed endpoints under `appleid.apple.com` (or `EXTERNAL_APPLE_URL`), the answer
        /// posted back (`response_mode=form_post`), the client secret an ES256 JWT.
        case apple
        /// OAuth 2.0 without OpenID: the token endpoint, then the API's `/user` and `/user/emails`.
        case github
        /// Any OpenID Connect provider, by its issuer's discovery document (`EXTERNAL_OIDC_URL`).
        case oidc
    }

    public var kind: Kind
    /// `EXTERNAL_<NAME>_ENABLED`.
    public var enabled: Bool
    /// `EXTERNAL_<NAME>_CLIENT_ID`: the first of the comma-separated ids is the one sent.
    public var clientID: String
    /// `EXTERNAL_<NAME>_SECRET` (Apple: a client-secret JWT made beforehand, or empty when
    /// `appleKey` makes one for each exchange).
    public var secret: String
    /// `EXTERNAL_<NAME>_REDIRECT_URI`; nil: `API_EXTERNAL_URL/auth/v1/callback`.
    public var redirectURI: String?
    /// `EXTERNAL_<NAME>_URL`: the provider's base URL or issuer; nil: the provider's own.
    public var url: String?
    /// Apple's client secret made here (`EXTERNAL_APPLE_TEAM_ID`, `_KEY_ID`, `_PRIVATE_KEY`):
    /// an ES256 JWT issued by the team for the client id, signed with the team's key.
    public var appleTeamID: String?
    public var appleKey: SigningKey?

    public init(
        kind: Kind, enabled: Bool = true, clientID: String, secret: String, redirectURI: String? = nil, url: String? = nil, appleTeamID: String? = nil,
        appleKey: SigningKey? = nil
    ) {
        self.kind = kind
        self.enabled = enabled
        self.clientID = clientID
        self.secret = secret
        self.redirectURI = redirectURI
        self.url = url
        self.appleTeamID = appleTeamID
        self.appleKey = appleKey
    }

    /// GoTrue's `ValidateOAuth`: why the provider cannot be used; nil when it can.
    var unusable: String? {
        if !enabled { return "provider is not enabled" }
        if clientID.isEmpty { return "missing OAuth client ID" }
        if secret.isEmpty && (appleTeamID == nil || appleKey == nil) { return "missing OAuth secret" }
        if kind == .oidc && (url ?? "").isEmpty { return "missing OpenID issuer URL" }
        return nil
    }

    /// The scopes always asked for; `scopes=` adds to them (comma- or space-separated, as GoTrue
    /// splits them).
    var defaultScopes: [String] {
        switch kind {
        case .google: return ["email", "profile"]
        case .apple: return ["email", "name"]
        case .github: return ["user:email"]
        case .oidc: return ["openid", "email", "profile"]
        }
    }

    /// The base URL of the provider's own endpoints (without a trailing `/`).
    var base: String {
        var text = url ?? ""
        if text.isEmpty {
            switch kind {
            case .google: text = "https://accounts.google.com"
            case .apple: text = "https://appleid.apple.com"
            case .github: text = "https://github.com"
            case .oidc: text = ""
            }
        }
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// The client secret sent to the token endpoint: Apple's JWT signed now (valid 5 minutes)
    /// when a key is configured, the configured secret otherwise.
    func clientSecret(now: Date = Date()) -> String {
        guard kind == .apple, let appleKey, let appleTeamID else { return secret }
        let issued = Int(now.timeIntervalSince1970)
        return appleKey.sign(claims: [
            "iss": appleTeamID, "iat": issued, "exp": issued + 300, "aud": "https://appleid.apple.com", "sub": clientID
        ])
    }
}

/// The endpoints of one provider: fixed (Apple, GitHub) or read from its discovery document.
struct ExternalEndpoints: Sendable {
    var authorization: String
    var token: String
    /// OpenID providers: where the id_token's keys are, and the issuer it must name.
    var jwks: String?
    var issuer: String?
    var userinfo: String?
    /// GitHub: its REST API.
    var api: String?
}

/// Discovery documents and key sets of the external providers, each fetched once an hour.
final class ExternalDirectory: Sendable {
    private let documents = Mutex<[String: (endpoints: ExternalEndpoints, at: Double)]>([:])
    private let keySets = Mutex<[String: JWKSSource]>([:])

    func endpoints(_ provider: ExternalProvider) throws -> ExternalEndpoints {
        let base = provider.base
        switch provider.kind {
        case .apple:
            return ExternalEndpoints(
                authorization: base + "/auth/authorize", token: base + "/auth/token", jwks: base + "/auth/keys", issuer: base, userinfo: nil, api: nil)
        case .github:
            let api = base == "https://github.com" ? "https://api.github.com" : base + "/api/v3"
            return ExternalEndpoints(
                authorization: base + "/login/oauth/authorize", token: base + "/login/oauth/access_token", jwks: nil, issuer: nil, userinfo: nil,
                api: api)
        case .google, .oidc:
            return try discovered(issuer: base)
        }
    }

    /// `<issuer>/.well-known/openid-configuration`, whose `issuer` must be the one configured.
    private func discovered(issuer: String) throws -> ExternalEndpoints {
        let now = Date().timeIntervalSince1970
        if let cached = documents.withLock({ $0[issuer] }), now - cached.at < 3600 { return cached.endpoints }
        let body = try JWKSSource.fetch(issuer + "/.well-known/openid-configuration")
        guard let document = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
            let authorization = document["authorization_endpoint"] as? String, let token = document["token_endpoint"] as? String,
            let jwks = document["jwks_uri"] as? String, let named = document["issuer"] as? String
        else { throw AuthError.unexpected("OpenID discovery of \(issuer): not a discovery document") }
        guard named.trimmingSuffix("/") == issuer else { throw AuthError.unexpected("OpenID discovery of \(issuer) names issuer \(named)") }
        let endpoints = ExternalEndpoints(
            authorization: authorization, token: token, jwks: jwks, issuer: named, userinfo: document["userinfo_endpoint"] as? String, api: nil)
        documents.withLock { $0[issuer] = (endpoints, now) }
        return endpoints
    }

    /// The key set at `location`, kept across requests (so that its hour-long cache holds).
    func keys(_ location: String) -> JWKSSource {
        keySets.withLock { sets in
            if let known = sets[location] { return known }
            let source = JWKSSource(location)
            sets[location] = source
            return source
        }
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
    }
}
