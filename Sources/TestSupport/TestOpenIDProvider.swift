import Foundation
import HTTP
import Identity
import Synchronization

/// An OpenID Connect provider on loopback, for the OAuth redirect flow's tests: one HTTP server
/// holding several issuers (`http://127.0.0.1:<port>/<name>`), each with its discovery document,
/// an authorization endpoint that sends the browser back with a code at once, a token endpoint
/// that exchanges each code once for an id_token signed with the issuer's own key, its JWKS and
/// its userinfo endpoint.
public final class TestOpenIDProvider: Sendable {
    public static let clientID = "onboard-test-client"
    public static let secret = "onboard-test-secret"

    /// Who signs in at the authorization endpoint (`login_hint=<sub>,<email>` chooses; else the
    /// one set by `signInNext`).
    public struct Account: Sendable {
        public var subject: String
        public var email: String
        public var verified: Bool
        public var name: String

        public init(subject: String = UUID().uuidString, email: String, verified: Bool = true, name: String = "Test User") {
            self.subject = subject
            self.email = email
            self.verified = verified
            self.name = name
        }
    }

    struct Grant {
        var issuer: String
        var account: Account
        var clientID: String
        var redirectURI: String
    }

    let server: HTTPServer
    let keys: [String: SigningKey]
    let grants = Mutex<[String: Grant]>([:])
    let next = Mutex<Account?>(nil)
    /// The access tokens issued, for the GitHub-style API (`/api/v3/user`, `/api/v3/user/emails`).
    let accessTokens = Mutex<[String: Account]>([:])
    /// Issuers whose token endpoint takes Apple's signed client secret: the team and its key.
    let signedSecrets = Mutex<[String: (team: String, key: JWK)]>([:])
    /// Every request the provider received: `(method, path, form or query)`.
    public let received = Mutex<[(String, String, [String: String])]>([])

    public init(issuers: [String] = ["idp"]) throws {
        var keys: [String: SigningKey] = [:]
        for name in issuers { keys[name] = SigningKey(kind: .rsa, keyID: "\(name)-key") }
        self.keys = keys
        let box = Mutex<TestOpenIDProvider?>(nil)
        server = HTTPServer(port: 0, responder: { request in box.withLock { $0 }?.respond(request) ?? HTTPResponse(status: .serviceUnavailable) })
        box.withLock { $0 = self }
        try server.start()
    }

    /// Stops serving (the provider and its server live until then).
    public func stop() { server.shutdown() }

    public var port: Int { server.port }

    /// `http://127.0.0.1:<port>/<name>`.
    public func issuer(_ name: String = "idp") -> String { "http://127.0.0.1:\(port)/\(name)" }

    /// The issuer's token endpoint then wants Apple's client secret: an ES256 JWT from `team`
    /// for the client id, with `aud` `https://appleid.apple.com`, signed with `key` (its `kid`
    /// in the header).
    public func requireSignedClientSecret(issuer name: String, team: String, key: PublicKey, keyID: String) {
        signedSecrets.withLock { $0[name] = (team, JWK(keyID: keyID, algorithm: "ES256", key: key)) }
    }

    /// The account the next authorization without `login_hint` signs in.
    public func signInNext(_ account: Account) { next.withLock { $0 = account } }

    func respond(_ request: HTTPRequest) -> HTTPResponse {
        let parts = request.path.split(separator: "/").map(String.init)
        var fields: [String: String] = [:]
        for (name, value) in request.query { fields[name] = value }
        if request.method == .post { for (name, value) in parseQuery(request.bodyText) { fields[name] = value } }
        received.withLock { $0.append((request.method.rawValue, request.path, fields)) }
        guard parts.count >= 2, let key = keys[parts[0]] else { return .json(.notFound, #"{"error":"not_found"}"#) }
        let issuer = issuer(parts[0])
        switch parts[1...].joined(separator: "/") {
        case ".well-known/openid-configuration":
            return .json(
                .ok,
                JWT.serialize([
                    "issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
                    "jwks_uri": issuer + "/jwks", "userinfo_endpoint": issuer + "/userinfo", "response_types_supported": ["code"],
                    "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"]
                ]))
        case "jwks", "auth/keys":
            return .json(.ok, JWT.serialize(["keys": [key.jwk]]))
        case "api/v3/user", "api/v3/user/emails":
            let bearer = String((request.headers["Authorization"] ?? "").dropFirst("Bearer ".count))
            guard let account = accessTokens.withLock({ $0[bearer] }) else { return .json(.unauthorized, #"{"message":"Bad credentials"}"#) }
            if parts.last == "emails" {
                return .json(
                    .ok,
                    JWT.serialize([
                        ["email": "old-" + account.email, "primary": false, "verified": true],
                        ["email": account.email, "primary": true, "verified": account.verified]
                    ]))
            }
            let id = abs(account.subject.hashValue) % 1_000_000_000
            return .json(.ok, JWT.serialize(["id": id, "login": "user\(id)", "name": account.name, "avatar_url": "https://avatars.example/\(id)"]))
        case "authorize", "auth/authorize", "login/oauth/authorize":
            return authorize(issuer: issuer, fields)
        case "token" where request.method == .post, "auth/token" where request.method == .post:
            return token(issuer: issuer, key: key, secretRule: signedSecrets.withLock { $0[parts[0]] }, fields)
        case "login/oauth/access_token" where request.method == .post:
            // GitHub's: OAuth 2.0 only, no id_token.
            return token(issuer: issuer, key: nil, secretRule: nil, fields)
        default:
            return .json(.notFound, #"{"error":"not_found"}"#)
        }
    }

    func authorize(issuer: String, _ fields: [String: String]) -> HTTPResponse {
        guard fields["client_id"] == Self.clientID, fields["response_type"] == "code", let redirect = fields["redirect_uri"], let state = fields["state"]
        else { return .json(.badRequest, #"{"error":"invalid_request"}"#) }
        var account = next.withLock { $0 } ?? Account(email: "someone-\(UUID().uuidString.prefix(8).lowercased())@example.com")
        if let hint = fields["login_hint"]?.split(separator: ",").map(String.init), hint.count == 2 {
            account = Account(subject: hint[0], email: hint[1])
        }
        let code = "code-" + UUID().uuidString
        grants.withLock { $0[code] = Grant(issuer: issuer, account: account, clientID: Self.clientID, redirectURI: redirect) }
        let query = "code=\(Self.escape(code))&state=\(Self.escape(state))"
        var headers = HTTPHeaders()
        headers.add("Location", redirect + (redirect.contains("?") ? "&" : "?") + query)
        return HTTPResponse(status: .found, headers: headers)
    }

    /// RFC 6749 §4.1.3: the code once, for the client it was issued to, with the same redirect URI.
    func token(issuer: String, key: SigningKey?, secretRule: (team: String, key: JWK)?, _ fields: [String: String]) -> HTTPResponse {
        var authenticated = fields["client_secret"] == Self.secret
        if let secretRule {
            let keys = JWKSet(keys: [secretRule.key])
            let claims = (try? JWT.verify(fields["client_secret"] ?? "", keys: keys)) ?? [:]
            authenticated =
                claims["iss"] as? String == secretRule.team && claims["sub"] as? String == Self.clientID
                && claims["aud"] as? String == "https://appleid.apple.com"
        }
        guard fields["grant_type"] == "authorization_code", fields["client_id"] == Self.clientID, authenticated else {
            return .json(.unauthorized, #"{"error":"invalid_client"}"#)
        }
        let grant = grants.withLock { $0.removeValue(forKey: fields["code"] ?? "") }
        guard let grant, grant.issuer == issuer, grant.redirectURI == fields["redirect_uri"] else {
            return .json(.badRequest, #"{"error":"invalid_grant"}"#)
        }
        let accessToken = "at-" + UUID().uuidString
        accessTokens.withLock { $0[accessToken] = grant.account }
        guard let key else { return .json(.ok, JWT.serialize(["access_token": accessToken, "token_type": "bearer", "scope": "user:email"])) }
        let now = Int(Date().timeIntervalSince1970)
        let idToken = key.sign(claims: [
            "iss": issuer, "aud": grant.clientID, "sub": grant.account.subject, "email": grant.account.email,
            "email_verified": grant.account.verified, "name": grant.account.name, "iat": now, "exp": now + 600
        ])
        return .json(
            .ok, JWT.serialize(["access_token": accessToken, "token_type": "Bearer", "expires_in": 3600, "id_token": idToken]))
    }

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))
            ?? ""
    }
}
