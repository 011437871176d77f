import Foundation
import HTTP
import Identity
import Postgres

/// GoTrue's OAuth redirect flow (`internal/api/external.go`): `GET /authorize` sends the browser
/// to the provider with a signed `state`; the provider sends it back to `/callback` with a code,
/// which is exchanged server to server; the user is signed in (or the identity linked to the
/// user who asked, `GET /user/identities/authorize`) and the browser sent on to `redirect_to`
/// with the session in the fragment (implicit flow) or a code for `grant_type=pkce`.
extension AuthService {
    /// The state's contents: signed with the JWT secret (HS256), so that it cannot be forged
    /// or altered, and expiring after `EXTERNAL_FLOW_STATE_EXPIRY_DURATION`.
    struct ExternalState {
        var provider: String
        var referrer: String
        var pkce: AuthRequest.PKCEChallenge?
        var linkingTargetID: String?
    }

    /// The claim that tells a state from every other token signed with the same secret.
    static let statePurpose = "oauth_state"

    /// `GET /authorize` (302 to the provider) and `GET /user/identities/authorize` (`{"url"}`
    /// with `skip_http_redirect=true`, as supabase-js asks; 302 otherwise).
    func externalAuthorize(_ authorize: AuthRequest.ExternalAuthorize, request: HTTPRequest, linkTo: String?) throws -> HTTPResponse {
        let url = try externalAuthorizationURL(authorize, request: request, linkTo: linkTo)
        if linkTo != nil && authorize.skipHTTPRedirect { return .json(.ok, JWT.serialize(["url": url])) }
        var headers = HTTPHeaders()
        headers.add("Location", url)
        return HTTPResponse(status: .found, headers: headers)
    }

    func externalAuthorizationURL(_ authorize: AuthRequest.ExternalAuthorize, request: HTTPRequest, linkTo: String?) throws -> String {
        let name = authorize.provider.lowercased()
        let provider = try enabledExternalProvider(name, refusal: { .validationFailed("Unsupported provider: \($0)") })
        let referrer = redirectTarget(request, given: authorize.redirectTo)
        let endpoints: ExternalEndpoints
        do {
            endpoints = try external.endpoints(provider)
        } catch {
            throw AuthError.validationFailed("Unsupported provider: \(logText(error))")
        }
        let now = Int(Date().timeIntervalSince1970)
        var claims: [String: Any] = [
            "purpose": Self.statePurpose, "provider": name, "referrer": referrer, "site_url": config.siteURL, "iat": now,
            "exp": now + Int(config.mail.flowStateExpiry)
        ]
        if let pkce = authorize.pkce {
            claims["code_challenge"] = pkce.challenge
            claims["code_challenge_method"] = pkce.method
        }
        if let linkTo { claims["linking_target_id"] = linkTo }
        let state = JWT.signHS256(claims: claims, secret: config.keys.jwtSecret)
        var scopes = provider.defaultScopes
        for scope in authorize.scopes.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init) where !scopes.contains(scope) {
            scopes.append(scope)
        }
        var fields: [String: String] = [:]
        for (key, value) in authorize.extra { fields[key] = value }
        fields["client_id"] = provider.clientID
        fields["redirect_uri"] = externalCallbackURL(provider)
        fields["response_type"] = "code"
        fields["scope"] = scopes.joined(separator: " ")
        fields["state"] = state
        if provider.kind == .apple { fields["response_mode"] = "form_post" }
        // Go's `url.Values.Encode`: sorted by name.
        let query = Self.formEncode(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        return endpoints.authorization + (endpoints.authorization.contains("?") ? "&" : "?") + query
    }

    /// The provider's `_REDIRECT_URI`, else `API_EXTERNAL_URL/auth/v1/callback`.
    func externalCallbackURL(_ provider: ExternalProvider) -> String {
        if let uri = provider.redirectURI, !uri.isEmpty { return uri }
        var base = config.mail.externalURL ?? String(config.issuer.dropLast(config.issuer.hasSuffix("/auth/v1") ? "/auth/v1".count : 0))
        while base.hasSuffix("/") { base.removeLast() }
        return base + "/auth/v1/callback"
    }

    /// A provider GoTrue knows and this server has enabled; `refusal` words the refusal.
    func enabledExternalProvider(_ name: String, refusal: (String) -> AuthError) throws -> ExternalProvider {
        guard ExternalProvider.Kind(rawValue: name) != nil else { throw refusal("Provider \(name) could not be found") }
        guard let provider = config.external[name] else { throw refusal("provider is not enabled") }
        if let why = provider.unusable { throw refusal(why) }
        return provider
    }

    /// `GET|POST /callback`: always a redirect. A state that is missing, forged or expired goes
    /// to `SITE_URL` (303, the error in the query, as GoTrue's `loadFlowState`); every later
    /// failure to the flow's `redirect_to` (302, the error in the query and the fragment).
    func externalCallback(_ fields: [String: String], request: HTTPRequest) -> HTTPResponse {
        let state: ExternalState
        do {
            state = try loadExternalState(fields["state"])
        } catch {
            return Self.redirect(Self.addingQuery(config.siteURL, Self.errorFields(error)), status: .seeOther)
        }
        let target = allowedRedirect(state.referrer)
        do {
            return Self.redirect(try completeExternalSignIn(state, fields, target: target), status: .found)
        } catch {
            // The cause goes to the log (an `unexpected`'s words never reach the browser).
            logger.info("oauth callback refused", metadata: ["request.id": "\(request.id)", "error": "\(logText(error))"])
            let errorFields = Self.errorFields(error)
            return Self.redirect(
                Self.addingQuery(target, errorFields).split(separator: "#")[0] + "#" + Self.formEncode(errorFields + [("sb", "")]), status: .found)
        }
    }

    func loadExternalState(_ text: String?) throws -> ExternalState {
        guard let text, !text.isEmpty else { throw AuthError.badOAuthCallback("OAuth state parameter missing") }
        let claims: [String: Any]
        do {
            claims = try JWT.verifyHS256(text, secret: config.keys.jwtSecret).claims
        } catch .expired {
            throw AuthError.badOAuthState("OAuth state has expired")
        } catch {
            throw AuthError.badOAuthState("OAuth callback with invalid state")
        }
        guard claims["purpose"] as? String == Self.statePurpose, claims["exp"] != nil, let provider = claims["provider"] as? String, !provider.isEmpty,
            let referrer = claims["referrer"] as? String
        else { throw AuthError.badOAuthState("OAuth callback with invalid state") }
        var pkce: AuthRequest.PKCEChallenge?
        if let challenge = claims["code_challenge"] as? String, let method = claims["code_challenge_method"] as? String {
            pkce = AuthRequest.PKCEChallenge(challenge: challenge, method: method)
        }
        return ExternalState(provider: provider, referrer: referrer, pkce: pkce, linkingTargetID: claims["linking_target_id"] as? String)
    }

    /// The code exchanged, the user read, signed in or linked; the `Location` to send the browser to.
    func completeExternalSignIn(_ state: ExternalState, _ fields: [String: String], target: String) throws -> String {
        let provider = try enabledExternalProvider(state.provider, refusal: { .oauthProviderNotSupported("Unsupported provider: \($0)") })
        if let error = fields["error"], !error.isEmpty { throw AuthError.oauth(error, description: fields["error_description"] ?? "") }
        guard let code = fields["code"], !code.isEmpty else { throw AuthError.badOAuthCallback("OAuth callback with missing authorization code missing") }
        let endpoints = try external.endpoints(provider)
        let tokens = try exchangeExternalCode(code, provider: provider, endpoints: endpoints)
        var claims = try externalUserClaims(tokens, provider: provider, endpoints: endpoints)
        if provider.kind == .apple, let user = fields["user"], let name = Self.appleUserName(user) { claims["name"] = name }
        guard let subject = claims["sub"] as? String, !subject.isEmpty else {
            throw AuthError.externalProviderFailed("Error getting user profile from external provider")
        }
        guard (claims["email"] as? String)?.isEmpty == false else {
            throw AuthError.externalProviderFailed("Error getting user email from external provider")
        }
        // With PKCE the transaction ends with a code for `grant_type=pkce` (returned), else
        // with a session (its JSON returned).
        let finish: (Connection, String) throws -> String = { [self] connection, userID in
            guard let pkce = state.pkce else { return try startSession(connection, userID: userID, method: "oauth") }
            let flowID = try createFlowState(connection, userID: userID, pkce: pkce, providerType: state.provider, method: "oauth")
            let authCode = UUID().uuidString.lowercased()
            guard try FlowStates.issueAuthCode(connection, id: flowID, userID: userID, codeDigest: Self.digest(authCode)) else {
                throw AuthError.unexpected("flow state")
            }
            try FlowStates.keepProviderTokens(connection, id: flowID, access: tokens.accessToken, refresh: tokens.refreshToken)
            return authCode
        }
        let finished: String
        if let linkTo = state.linkingTargetID {
            finished = try linkExternal(provider: state.provider, subject: subject, claims: claims, to: linkTo, finish: finish)
        } else {
            finished = try signInExternal(provider: state.provider, subject: subject, claims: claims, finish: finish)
        }
        switch state.pkce {
        case .some:
            return Self.addingQuery(target, [("code", finished)])
        case .none:
            let json = finished
            guard let session = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else {
                throw AuthError.unexpected("session JSON")
            }
            var values: [String: String] = [
                "access_token": session["access_token"] as? String ?? "", "expires_at": "\(session["expires_at"] ?? "")",
                "expires_in": "\(session["expires_in"] ?? "")", "refresh_token": session["refresh_token"] as? String ?? "", "sb": "",
                "token_type": "bearer", "provider_token": tokens.accessToken
            ]
            if let refresh = tokens.refreshToken, !refresh.isEmpty { values["provider_refresh_token"] = refresh }
            return target + "#" + Self.formEncode(values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        }
    }

    /// GoTrue's `getErrorQueryString`: `error` (OAuth's word for the status, `access_denied` for
    /// a refused user), `error_code` and `error_description`; a provider's own error as it sent it.
    static func errorFields(_ error: any Error) -> [(String, String)] {
        guard let error = error as? AuthError else {
            return [("error", "server_error"), ("error_code", "unexpected_failure"), ("error_description", AuthError.unexpected("").message)]
        }
        if case .oauth(let word, let description) = error { return [("error", word), ("error_description", description)] }
        let word: String
        switch error.code {
        case "signup_disabled", "user_banned", "provider_email_needs_verification":
            word = "access_denied"
        default:
            let words: [Int: String] = [
                400: "invalid_request", 401: "unauthorized_client", 403: "access_denied", 500: "server_error", 503: "temporarily_unavailable"
            ]
            word = words[error.status.code] ?? "server_error"
        }
        return [("error", word), ("error_code", error.code), ("error_description", error.message)]
    }

    static func redirect(_ location: some StringProtocol, status: HTTPStatus) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Location", String(location))
        return HTTPResponse(status: status, headers: headers)
    }

    /// Apple's `user` form field, sent on the first sign-in only: `{"name":{"firstName","lastName"}}`.
    static func appleUserName(_ json: String) -> String? {
        guard let user = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any], let name = user["name"] as? [String: Any]
        else { return nil }
        let full = "\(name["firstName"] as? String ?? "") \(name["lastName"] as? String ?? "")".trimmingCharacters(in: .whitespaces)
        return full.isEmpty ? nil : full
    }
}
