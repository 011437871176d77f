import Foundation
import HTTP
import Identity
import Postgres

/// The authorization code flow up to the code (GoTrue's `oauthserver/authorize.go`):
/// `/oauth/authorize` records the request and sends the browser to the app's consent page,
/// which reads the request and approves or denies it as the signed-in user.
extension AuthService {
    func authorize(_ given: OAuthAuthorizeQuery) throws -> HTTPResponse {
        var query = given
        guard let clientID = AuthRequest.uuid(query.clientID) else { throw AuthError.oauthClientRefused("invalid client_id format") }
        guard let client = try pool.withConnection({ try OAuthClients.find($0, id: clientID) }) else {
            throw AuthError.oauthClientRefused("invalid client_id")
        }
        guard client.redirectURIs.contains(query.redirectURI) else { throw AuthError.validationFailed("invalid redirect_uri") }
        // From here on the redirect URI is the client's: errors go back to it (RFC 6749 §4.1.2.1).
        if query.responseType.isEmpty { query.responseType = "code" }
        if query.scope.isEmpty { query.scope = config.oauthServer.defaultScope }
        if let problem = Self.authorizeProblem(query) {
            return Self.redirect(to: Self.errorRedirect(query.redirectURI, "invalid_request", problem, state: query.state))
        }
        guard !config.oauthServer.authorizationPath.isEmpty else {
            return Self.redirect(to: Self.errorRedirect(query.redirectURI, "server_error", "oauth authorization path not configured", state: query.state))
        }
        let id = Self.authorizationID()
        try pool.withConnection { try OAuthAuthorizations.create($0, id: id, clientID: client.id, query, ttl: config.oauthServer.authorizationTTL) }
        var site = config.siteURL
        while site.hasSuffix("/") { site.removeLast() }
        let path = config.oauthServer.authorizationPath
        return Self.redirect(to: site + (path.hasPrefix("/") ? path : "/" + path) + "?authorization_id=" + id)
    }

    /// GoTrue's `validateRemainingAuthorizeParams`: why the request is refused, or nil.
    static func authorizeProblem(_ query: OAuthAuthorizeQuery) -> String? {
        guard query.responseType == "code" else { return "only response_type=code is supported" }
        let scopes = OAuthScopes.parse(query.scope)
        guard !scopes.isEmpty else { return "scope parameter cannot be empty" }
        if let unsupported = scopes.first(where: { !OAuthScopes.supported.contains($0) }) { return "unsupported scope: \(unsupported)" }
        if !query.resource.isEmpty {
            guard let resource = GoURL(query.resource) else { return "resource must be a valid URI" }
            guard !resource.scheme.isEmpty else { return "resource must be an absolute URI" }
            guard resource.fragment.isEmpty, !query.resource.contains("#") else { return "resource must not include a fragment component" }
            guard !query.resource.contains("?") else { return "resource must not include a query component" }
        }
        guard !query.codeChallenge.isEmpty, !query.codeChallengeMethod.isEmpty else {
            return "PKCE flow requires both code_challenge and code_challenge_method"
        }
        guard ["s256", "plain"].contains(query.codeChallengeMethod.lowercased()) else { return "code_challenge_method must be 'S256' or 'plain'" }
        guard (43...128).contains(query.codeChallenge.count) else { return "code_challenge must be between 43 and 128 characters" }
        return nil
    }

    /// `GET /oauth/authorizations/{id}`: the request's details for the consent page; the first
    /// signed-in user to read it claims it. A consent already covering its scopes approves it
    /// at once (answered with `redirect_url`).
    func authorizationDetails(id: String, caller: SignedIn) throws -> String {
        enum Outcome { case details(String), approved(String), expired }
        let outcome = try pool.withTransaction { connection -> Outcome in
            guard let request = try OAuthAuthorizations.lock(connection, id: id) else { throw AuthError.oauthAuthorizationNotFound }
            if request.expired {
                try OAuthAuthorizations.mark(connection, id: id, .expired)
                return .expired
            }
            guard request.status == .pending else { throw AuthError.validationFailed("authorization request cannot be processed") }
            if let owner = request.userID {
                guard owner == caller.userID else { throw AuthError.oauthAuthorizationNotFound }
            } else {
                try OAuthAuthorizations.setUser(connection, id: id, userID: caller.userID)
                let granted = try OAuthConsents.activeScopes(connection, userID: caller.userID, clientID: request.clientID).map(OAuthScopes.parse) ?? []
                if !granted.isEmpty && Set(OAuthScopes.parse(request.scope)).isSubset(of: granted) {
                    return .approved(try approve(connection, request))
                }
            }
            return .details(try OAuthAuthorizations.detailsJSON(connection, id: id, userID: caller.userID) ?? "{}")
        }
        switch outcome {
        case .details(let json): return json
        case .approved(let url): return #"{"redirect_url":\#(jsonString(url))}"#
        case .expired: throw AuthError.oauthAuthorizationNotFound
        }
    }

    /// `POST /oauth/authorizations/{id}/consent`: approval issues the code and remembers the
    /// consent; denial sends `access_denied` back to the client.
    func consent(id: String, approve approved: Bool, caller: SignedIn) throws -> String {
        enum Outcome { case redirect(String), expired }
        let outcome = try pool.withTransaction { connection -> Outcome in
            guard let request = try OAuthAuthorizations.lock(connection, id: id) else { throw AuthError.oauthAuthorizationNotFound }
            if request.expired {
                try OAuthAuthorizations.mark(connection, id: id, .expired)
                return .expired
            }
            guard request.status == .pending else { throw AuthError.validationFailed("authorization request is no longer pending") }
            guard request.userID == caller.userID else { throw AuthError.oauthAuthorizationNotFound }
            guard approved else {
                try OAuthAuthorizations.mark(connection, id: id, .denied)
                return .redirect(Self.errorRedirect(request.redirectURI, "access_denied", "User denied the request", state: request.state))
            }
            let url = try approve(connection, request)
            try OAuthConsents.grant(
                connection, userID: caller.userID, clientID: request.clientID, scopes: OAuthScopes.parse(request.scope).joined(separator: " "))
            return .redirect(url)
        }
        switch outcome {
        case .redirect(let url): return #"{"redirect_url":\#(jsonString(url))}"#
        case .expired: throw AuthError.oauthAuthorizationNotFound
        }
    }

    /// The request approved with a new code (only its digest kept); the client's redirect with it.
    private func approve(_ connection: Connection, _ request: OAuthAuthorizations.Row) throws -> String {
        let code = UUID().uuidString.lowercased()
        try OAuthAuthorizations.approve(connection, id: request.id, codeDigest: Self.digest(code))
        var fields = [("code", code)]
        if !request.state.isEmpty { fields.append(("state", request.state)) }
        return Self.settingQuery(request.redirectURI, fields)
    }

    /// 32 random alphanumerics (GoTrue's `crypto.SecureAlphanumeric(32)`).
    static func authorizationID() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String(Crypto.randomBytes(32).map { alphabet[Int($0) % alphabet.count] })
    }

    static func errorRedirect(_ uri: String, _ error: String, _ description: String, state: String) -> String {
        var fields = [("error", error), ("error_description", description)]
        if !state.isEmpty { fields.append(("state", state)) }
        return settingQuery(uri, fields)
    }

    /// `uri` with `fields` set in its query, keys sorted as Go's `url.Values.Encode` writes them.
    static func settingQuery(_ uri: String, _ fields: [(String, String)]) -> String {
        let hash = uri.firstIndex(of: "#") ?? uri.endIndex
        let base = uri[..<hash]
        let question = base.firstIndex(of: "?") ?? base.endIndex
        let names = Set(fields.map(\.0))
        var pairs = (question < base.endIndex ? parseQuery(String(base[base.index(after: question)...])) : [])
            .filter { !names.contains($0.name) }.map { ($0.name, $0.value) }
        pairs += fields
        pairs.sort { $0.0 < $1.0 }
        return String(base[..<question]) + "?" + formEncode(pairs) + uri[hash...]
    }

    static func redirect(to location: String) -> HTTPResponse {
        HTTPResponse(status: HTTPStatus(code: 302), headers: ["Location": location])
    }
}
