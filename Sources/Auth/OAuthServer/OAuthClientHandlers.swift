import Foundation
import HTTP
import Identity
import Postgres

/// The OAuth server's dispatch, and its clients: the admin API (`/admin/oauth/clients…`, the
/// service role only) and dynamic registration, answered as GoTrue's `oauthserver/handlers.go`.
extension AuthService {
    func oauthServer(_ request: HTTPRequest, _ operation: OAuthServerRequest, caller: SignedIn?) throws -> HTTPResponse {
        func signedIn() throws -> SignedIn {
            guard let caller else { throw AuthError.noAuthorization }
            return caller
        }
        switch operation {
        case .registerClient(let registration):
            if registration.dynamic && !config.oauthServer.allowDynamicRegistration { throw AuthError.oauthDynamicRegistrationDisabled }
            return try registerOAuthClient(registration)
        case .listClients:
            let list = try pool.withConnection { try OAuthClients.listJSON($0) }
            // Go's `omitempty`: no clients, no `clients`.
            return .json(.ok, list == "[]" ? "{}" : #"{"clients":\#(list)}"#)
        case .getClient(let id):
            return .json(.ok, try pool.withConnection { try OAuthClients.json($0, id: id) } ?? { throw AuthError.oauthClientNotFound }())
        case .updateClient(let id, let changes):
            return .json(.ok, try updateOAuthClient(id: id, changes))
        case .deleteClient(let id):
            try pool.withTransaction { connection in
                guard try OAuthClients.find(connection, id: id) != nil else { throw AuthError.oauthClientNotFound }
                try OAuthClients.delete(connection, id: id)
            }
            return HTTPResponse(status: .noContent)
        case .regenerateSecret(let id):
            return .json(.ok, try regenerateOAuthClientSecret(id: id))
        case .authorize(let query):
            return try authorize(query)
        case .authorization(let id):
            try checkConsentOrigin(request)
            return .json(.ok, try authorizationDetails(id: id, caller: try signedIn()))
        case .consent(let id, let approve):
            try checkConsentOrigin(request)
            return .json(.ok, try consent(id: id, approve: approve, caller: try signedIn()))
        case .token(let form):
            return .json(.ok, try oauthToken(form))
        case .listGrants:
            return .json(.ok, try pool.withConnection { try OAuthConsents.listJSON($0, userID: try signedIn().userID) })
        case .revokeGrant(let clientID):
            let userID = try signedIn().userID
            guard try pool.withTransaction({ try OAuthConsents.revoke($0, userID: userID, clientID: clientID) }) else {
                throw AuthError.oauthConsentNotFound
            }
            return HTTPResponse(status: .noContent)
        case .metadata:
            var response = HTTPResponse.json(.ok, authorizationServerMetadataJSON())
            response.headers.replace("Cache-Control", "public, max-age=600")
            return response
        }
    }

    func registerOAuthClient(_ registration: OAuthClientRegistration) throws -> HTTPResponse {
        let secret = registration.clientType == .confidential ? Self.newClientSecret() : nil
        let id = UUID().uuidString.lowercased()
        let json = try pool.withConnection { try OAuthClients.create($0, id: id, registration, secretHash: secret.map(Self.clientSecretHash)) }
        return .json(.created, Self.addingSecret(secret, to: json))
    }

    func updateOAuthClient(id: String, _ changes: Result<OAuthClientChanges, AuthError>) throws -> String {
        try pool.withTransaction { connection in
            guard let client = try OAuthClients.find(connection, id: id) else { throw AuthError.oauthClientNotFound }
            let changes = try changes.get()
            if let method = changes.authMethod, method.clientType != client.type {
                let valid = client.type == .public ? "[none]" : "[client_secret_basic client_secret_post]"
                throw AuthError.validationFailed(
                    "token_endpoint_auth_method '\(method.rawValue)' is not valid for client_type '\(client.type.rawValue)'; valid methods: \(valid)")
            }
            return try OAuthClients.update(connection, id: id, changes) ?? { throw AuthError.oauthClientNotFound }()
        }
    }

    func regenerateOAuthClientSecret(id: String) throws -> String {
        try pool.withTransaction { connection in
            guard let client = try OAuthClients.find(connection, id: id) else { throw AuthError.oauthClientNotFound }
            guard client.type == .confidential else { throw AuthError.validationFailed("Cannot regenerate secret for public client") }
            let secret = Self.newClientSecret()
            let json = try OAuthClients.setSecretHash(connection, id: id, hash: Self.clientSecretHash(secret)) ?? "{}"
            return Self.addingSecret(secret, to: json)
        }
    }

    /// 256 random bits, base64url (GoTrue's `generateClientSecret`); answered once, stored only
    /// as `clientSecretHash`.
    static func newClientSecret() -> String { Base64URL.encode(Crypto.randomBytes(32)) }

    /// base64url(SHA-256(secret)), GoTrue's stored form.
    static func clientSecretHash(_ secret: String) -> String { Base64URL.encode(Crypto.sha256(Array(secret.utf8))) }

    /// Whether `secret` is the one whose hash is stored, in constant time.
    static func clientSecretMatches(_ secret: String, hash: String?) -> Bool {
        guard let hash else { return false }
        return Crypto.constantTimeEquals(Array(clientSecretHash(secret).utf8), Array(hash.utf8))
    }

    /// A client's JSON with `client_secret` (registration and regeneration only).
    static func addingSecret(_ secret: String?, to json: String) -> String {
        guard let secret, json.hasPrefix("{") else { return json }
        return #"{"client_secret":\#(jsonString(secret)),"# + json.dropFirst()
    }

    /// GoTrue's `validateRequestOrigin`: a browser's `Origin` must be one redirects may go to.
    func checkConsentOrigin(_ request: HTTPRequest) throws {
        guard let origin = request.headers["Origin"], !origin.isEmpty else { return }
        guard allowedRedirect(origin) == origin else { throw AuthError.validationFailed("unauthorized request origin") }
    }

    /// RFC 8414's metadata, which GoTrue serves for OpenID discovery too.
    func authorizationServerMetadataJSON() -> String {
        var issuer = config.issuer
        while issuer.hasSuffix("/") { issuer.removeLast() }
        var document: [String: Any] = [
            "issuer": config.issuer, "authorization_endpoint": issuer + "/oauth/authorize", "token_endpoint": issuer + "/oauth/token",
            "jwks_uri": issuer + "/.well-known/jwks.json", "userinfo_endpoint": issuer + "/oauth/userinfo",
            "response_types_supported": ["code"], "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"], "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": [config.keys.signingKey?.algorithm ?? "HS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "code_challenge_methods_supported": ["S256", "plain"], "scopes_supported": OAuthScopes.supported
        ]
        if config.oauthServer.allowDynamicRegistration { document["registration_endpoint"] = issuer + "/oauth/clients/register" }
        return JWT.serialize(document)
    }
}

/// GoTrue's scopes (`models/oauth_scope.go`).
enum OAuthScopes {
    static let supported = ["openid", "profile", "email", "phone", "offline_access"]

    /// Space-separated, blanks dropped.
    static func parse(_ text: String) -> [String] { text.split(separator: " ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
}
