import Foundation
import HTTP

/// The OAuth server's readers: GoTrue's checks of each body and query, in its order and words.
extension AuthRoute.Input {
    /// A client id in the path (GoTrue's `LoadOAuthServerClient`).
    func oauthClientID() throws(AuthError) -> String {
        guard let id = uuid("client_id") else { throw .validationFailed("invalid client_id format") }
        return id
    }

    /// `POST /admin/oauth/clients` and `POST /oauth/clients/register`: GoTrue wraps the
    /// validation's error once more, so its message starts with `400: `.
    func registerOAuthClient(dynamic: Bool) throws(AuthError) -> AuthRequest {
        let body = try OAuthBody(body)
        do {
            return .oauthServer(.registerClient(try body.registration(dynamic: dynamic)))
        } catch {
            guard case .validationFailed(let message) = error else { throw error }
            throw .validationFailed("400: " + message)
        }
    }

    func updateOAuthClient() throws(AuthError) -> AuthRequest {
        let id = try oauthClientID()
        let changes = Result { () throws(AuthError) -> OAuthClientChanges in try OAuthBody(body).changes() }
        return .oauthServer(.updateClient(id, changes))
    }

    /// `GET /oauth/authorize`: only presence here; the rest is checked against the client.
    func oauthAuthorize() throws(AuthError) -> AuthRequest {
        let value = { (name: String) in queryValue(name) ?? "" }
        let query = OAuthAuthorizeQuery(
            clientID: value("client_id"), redirectURI: value("redirect_uri"), responseType: value("response_type"), scope: value("scope"),
            state: value("state"), resource: value("resource"), codeChallenge: value("code_challenge"),
            codeChallengeMethod: value("code_challenge_method"), nonce: value("nonce"))
        guard !query.clientID.isEmpty else { throw .validationFailed("client_id is required") }
        guard !query.redirectURI.isEmpty else { throw .validationFailed("redirect_uri is required") }
        return .oauthServer(.authorize(query))
    }

    /// `POST /oauth/authorizations/{authorization_id}/consent`.
    func oauthConsent() throws(AuthError) -> AuthRequest {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else { throw .badJSON("invalid JSON body") }
        let action = object["action"] as? String
        guard action == "approve" || action == "deny" else { throw .validationFailed("action must be 'approve' or 'deny'") }
        return .oauthServer(.consent(parameter("authorization_id"), approve: action == "approve"))
    }

    /// `DELETE /user/oauth/grants?client_id=…`.
    func revokeOAuthGrant() throws(AuthError) -> AuthRequest {
        let given = queryValue("client_id") ?? ""
        guard !given.isEmpty else { throw .validationFailed("client_id query parameter is required") }
        guard let id = AuthRequest.uuid(given) else { throw .validationFailed("invalid client_id format") }
        return .oauthServer(.revokeGrant(clientID: id))
    }

    /// `POST /oauth/token`: a JSON body or a form, and the client's credentials (HTTP Basic
    /// first, then the body's `client_id` and `client_secret`), as GoTrue's
    /// `ExtractClientCredentials` reads them.
    func oauthToken() throws(AuthError) -> AuthRequest {
        let isJSON = (headers["Content-Type"] ?? "").contains("application/json")
        var fields: [String: String] = [:]
        var readable = true
        if isJSON {
            if let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] {
                for (key, value) in object { if let text = value as? String { fields[key] = text } }
            } else {
                readable = false
            }
        } else {
            for (name, value) in query where fields[name] == nil { fields[name] = value }
            for (name, value) in parseQuery(String(decoding: body, as: UTF8.self)) { fields[name] = value }
        }
        let credentials = Result { () throws(AuthError) -> OAuthClientCredentials in
            if let basic = headers["Authorization"], basic.hasPrefix("Basic ") {
                guard let decoded = Data(base64Encoded: String(basic.dropFirst(6))).map({ String(decoding: $0, as: UTF8.self) }) else {
                    throw .invalidClientCredentials("Invalid client credentials: invalid basic auth encoding")
                }
                guard let colon = decoded.firstIndex(of: ":") else { throw .invalidClientCredentials("Invalid client credentials: invalid basic auth format") }
                return OAuthClientCredentials(
                    clientID: String(decoded[..<colon]), secret: String(decoded[decoded.index(after: colon)...]), method: .clientSecretBasic)
            }
            guard readable else { throw .invalidClientCredentials("Invalid client credentials: failed to parse JSON body") }
            let id = fields["client_id"] ?? ""
            guard !id.isEmpty else { throw .invalidClientCredentials("Invalid client credentials: client_id is required") }
            let secret = fields["client_secret"] ?? ""
            return OAuthClientCredentials(clientID: id, secret: secret, method: secret.isEmpty ? .none : .clientSecretPost)
        }
        if case .failure(let error) = credentials { throw error }
        guard readable else { throw .oauth("invalid_request", description: "Invalid JSON body") }
        let value = { (name: String) in fields[name] ?? "" }
        return .oauthServer(
            .token(
                OAuthTokenForm(
                    grantType: value("grant_type"), code: value("code"), refreshToken: value("refresh_token"), redirectURI: value("redirect_uri"),
                    codeVerifier: value("code_verifier"), resource: value("resource"), credentials: credentials)))
    }
}

/// A client body as Go's `json.Decoder` reads it into GoTrue's params: a field of the wrong
/// JSON type fails the whole body (`Invalid JSON body`).
struct OAuthBody {
    let object: [String: Any]

    init(_ body: [UInt8]) throws(AuthError) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else { throw .badJSON("Invalid JSON body") }
        self.object = object
    }

    func string(_ key: String) throws(AuthError) -> String? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw .badJSON("Invalid JSON body") }
        return text
    }

    func strings(_ key: String) throws(AuthError) -> [String]? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let list = value as? [Any], let texts = list as? [String] else { throw .badJSON("Invalid JSON body") }
        return texts
    }

    /// GoTrue's `OAuthServerClientRegisterParams.validate`, then its defaults.
    func registration(dynamic: Bool) throws(AuthError) -> OAuthClientRegistration {
        let redirectURIs = try strings("redirect_uris") ?? []
        let grantTypes = try strings("grant_types") ?? []
        let name = try string("client_name") ?? ""
        let clientURI = try string("client_uri") ?? ""
        let logoURI = try string("logo_uri") ?? ""
        let typeText = try string("client_type") ?? ""
        let methodText = try string("token_endpoint_auth_method") ?? ""
        try OAuthClientRules.checkRedirectURIs(redirectURIs, required: true)
        if !grantTypes.isEmpty { try OAuthClientRules.checkGrantTypes(grantTypes) }
        try OAuthClientRules.checkName(name)
        try OAuthClientRules.checkURI(clientURI, field: "client_uri")
        try OAuthClientRules.checkURI(logoURI, field: "logo_uri")
        let explicitType = OAuthClientType(rawValue: typeText)
        guard typeText.isEmpty || explicitType != nil else { throw .validationFailed("client_type must be 'public' or 'confidential'") }
        let method = OAuthTokenEndpointAuthMethod(rawValue: methodText)
        guard methodText.isEmpty || method != nil else {
            throw .validationFailed("token_endpoint_auth_method must be one of: [none client_secret_basic client_secret_post]")
        }
        if let explicitType, let method, method.clientType != explicitType {
            throw .validationFailed(
                "client_type '\(typeText)' is inconsistent with token_endpoint_auth_method '\(methodText)' (expected client_type '\(method.clientType.rawValue)')"
            )
        }
        let clientType = explicitType ?? method?.clientType ?? .confidential
        return OAuthClientRegistration(
            dynamic: dynamic, clientType: clientType, authMethod: method ?? (clientType == .public ? .none : .clientSecretBasic),
            redirectURIs: redirectURIs, grantTypes: grantTypes.isEmpty ? ["authorization_code", "refresh_token"] : grantTypes,
            clientName: name, clientURI: clientURI, logoURI: logoURI)
    }

    /// GoTrue's `OAuthServerClientUpdateParams`: at least one field, each validated.
    func changes() throws(AuthError) -> OAuthClientChanges {
        let changes = OAuthClientChanges(
            redirectURIs: try strings("redirect_uris"), grantTypes: try strings("grant_types"), clientName: try string("client_name"),
            clientURI: try string("client_uri"), logoURI: try string("logo_uri"),
            authMethod: try string("token_endpoint_auth_method").map { text throws(AuthError) in
                guard let method = OAuthTokenEndpointAuthMethod(rawValue: text) else {
                    throw .validationFailed("invalid token_endpoint_auth_method: must be one of [none client_secret_basic client_secret_post]")
                }
                return method
            })
        guard changes != OAuthClientChanges() else { throw .validationFailed("No fields provided for update") }
        if let uris = changes.redirectURIs { try OAuthClientRules.checkRedirectURIs(uris, required: false) }
        if let grants = changes.grantTypes { try OAuthClientRules.checkGrantTypes(grants) }
        if let name = changes.clientName { try OAuthClientRules.checkName(name) }
        if let uri = changes.clientURI { try OAuthClientRules.checkURI(uri, field: "client_uri") }
        if let uri = changes.logoURI { try OAuthClientRules.checkURI(uri, field: "logo_uri") }
        return changes
    }
}
