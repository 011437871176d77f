import Auth
import Foundation
import HTTP
import Identity
import TestSupport
import Testing

/// GoTrue's OAuth redirect flow against a real OpenID provider on loopback (`TestOpenIDProvider`):
/// `/authorize` → the provider's authorization endpoint → `/callback` → `redirect_to`, each hop
/// a real HTTP request, the code exchanged by the server at the provider's token endpoint and
/// the id_token verified against its JWKS. Then each way an attacker could bend the flow,
/// refused with GoTrue's error.
@Suite("Auth: OAuth redirect flow", .serialized)
struct ExternalOAuthTests {
    static let app = "http://127.0.0.1:3000/welcome"
    let provider: TestOpenIDProvider
    let server: TestServer

    init() throws {
        provider = try TestOpenIDProvider(issuers: ["idp", "other", "apple", "gh"])
        let (idp, other, apple) = (provider.issuer("idp"), provider.issuer("other"), provider.issuer("apple"))
        let appleKey = SigningKey(kind: .p256, keyID: "K1")
        let github = provider.issuer("gh")
        provider.requireSignedClientSecret(issuer: "apple", team: "TEAM1", key: appleKey.publicKey, keyID: "K1")
        server = try TestServer { config in
            // GitHub Enterprise's layout under the fourth: `/login/oauth/…` and `/api/v3`.
            config.auth.external["github"] = ExternalProvider(
                kind: .github, clientID: TestOpenIDProvider.clientID, secret: TestOpenIDProvider.secret, url: github)
            // Apple's flow: its fixed endpoints under the third issuer, the client secret signed here.
            config.auth.external["apple"] = ExternalProvider(
                kind: .apple, clientID: TestOpenIDProvider.clientID, secret: "", url: apple, appleTeamID: "TEAM1", appleKey: appleKey)
            config.auth.external["oidc"] = ExternalProvider(
                kind: .oidc, clientID: TestOpenIDProvider.clientID, secret: TestOpenIDProvider.secret, url: idp)
            // Google's flow, its discovery pointed at the second loopback issuer.
            config.auth.external["google"] = ExternalProvider(
                kind: .google, clientID: TestOpenIDProvider.clientID, secret: TestOpenIDProvider.secret, url: other)
        }
    }

    /// Parameters of a query or fragment.
    static func fields(_ text: some StringProtocol) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in parseQuery(String(text)) { fields[name] = value }
        return fields
    }

    static func query(_ url: String) -> [String: String] {
        let beforeFragment = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = beforeFragment.split(separator: "?", maxSplits: 1)
        return parts.count > 1 ? fields(parts[1]) : [:]
    }

    static func fragment(_ url: String) -> [String: String] {
        let parts = url.split(separator: "#", maxSplits: 1)
        return parts.count > 1 ? fields(parts[1]) : [:]
    }

    /// The path and query of an absolute URL on loopback.
    static func target(_ url: String) -> String {
        if url.hasPrefix("/") { return url }
        let afterScheme = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        return "/" + (afterScheme.count > 3 ? afterScheme[3] : "")
    }

    /// `/authorize` → provider: the provider's authorization URL.
    func authorizeURL(_ query: String, token: String? = nil, link: Bool = false) throws -> String {
        let response =
            link
            ? try server.get("/auth/v1/user/identities/authorize?\(query)&skip_http_redirect=true", token: token)
            : try server.client().request("GET", "/auth/v1/authorize?\(query)")
        if link {
            #expect(response.status == 200, "\(response.text)")
            return try #require(response.jsonObject?["url"] as? String)
        }
        #expect(response.status == 302, "\(response.text)")
        return try #require(response.header("Location"))
    }

    /// The provider's authorization endpoint signs `hint` in and answers the callback URL.
    func providerCallback(_ url: String, hint: String? = nil) throws -> String {
        let hinted = hint.map { url + "&login_hint=" + $0 } ?? url
        let response = try TestHTTPClient(port: provider.port).request("GET", Self.target(hinted))
        #expect(response.status == 302, "\(response.text)")
        return try #require(response.header("Location"))
    }

    /// The server's `/callback`: where it sends the browser, and the status.
    func callback(_ url: String) throws -> (status: Int, location: String) {
        let response = try server.client().request("GET", Self.target(url))
        return (response.status, response.header("Location") ?? "")
    }

    /// The whole flow for a new account; the final `Location`.
    func signIn(_ provider: String = "oidc", redirectTo: String = app, extra: String = "", hint: String? = nil) throws -> String {
        let redirect = Self.escape(redirectTo)
        let url = try authorizeURL("provider=\(provider)&redirect_to=\(redirect)\(extra)")
        let answer = try callback(try providerCallback(url, hint: hint ?? "\(UUID().uuidString),\(TestServer.email("oauth"))"))
        #expect(answer.status == 302)
        return answer.location
    }

    static func escape(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "" }

    func user(_ token: String) throws -> [String: Any] {
        let response = try server.get("/auth/v1/user", token: token)
        #expect(response.status == 200, "\(response.text)")
        return try #require(response.jsonObject)
    }

    @Test func theImplicitFlowEndsOnRedirectToWithASession() throws {
        let email = TestServer.email("implicit")
        let url = try authorizeURL("provider=oidc&redirect_to=\(Self.escape(Self.app))&scopes=offline_access")
        #expect(url.hasPrefix(provider.issuer("idp") + "/authorize?"))
        let asked = Self.query(url)
        #expect(asked["client_id"] == TestOpenIDProvider.clientID)
        #expect(asked["response_type"] == "code")
        #expect(asked["scope"] == "openid email profile offline_access")
        #expect(asked["redirect_uri"]?.hasSuffix("/auth/v1/callback") == true)
        #expect(asked["state"]?.split(separator: ".").count == 3, "a signed state")
        let location = try callback(try providerCallback(url, hint: "sub-\(UUID().uuidString),\(email)"))
        #expect(location.status == 302)
        #expect(location.location.hasPrefix(Self.app + "#"), "\(location.location)")
        let session = Self.fragment(location.location)
        #expect(session["token_type"] == "bearer")
        #expect(session["expires_in"] == "3600")
        #expect(session["refresh_token"]?.isEmpty == false)
        #expect(session["provider_token"]?.hasPrefix("at-") == true)
        let user = try user(try #require(session["access_token"]))
        #expect(user["email"] as? String == email)
        #expect((user["app_metadata"] as? [String: Any])?["provider"] as? String == "oidc")
        let identities = try #require(user["identities"] as? [[String: Any]])
        #expect(identities.map { $0["provider"] as? String } == ["oidc"])
        // The refresh token works as any other.
        let refreshed = try server.post("/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"\#(session["refresh_token"]!)"}"#)
        #expect(refreshed.status == 200, "\(refreshed.text)")
    }

    @Test func thePKCEFlowAnswersACodeRedeemedOnceForASession() throws {
        let verifier = Base64URL.encode(Crypto.randomBytes(48))
        let challenge = Base64URL.encode(Crypto.sha256(Array(verifier.utf8)))
        let email = TestServer.email("pkce")
        let location = try signIn(extra: "&code_challenge=\(challenge)&code_challenge_method=s256", hint: "\(UUID().uuidString),\(email)")
        #expect(location.hasPrefix(Self.app + "?code="), "\(location)")
        let code = try #require(Self.query(location)["code"])
        #expect(Self.fragment(location)["access_token"] == nil, "no session in the URL")
        let body = #"{"auth_code":"\#(code)","code_verifier":"\#(verifier)"}"#
        let exchanged = try server.post("/auth/v1/token?grant_type=pkce", body)
        #expect(exchanged.status == 200, "\(exchanged.text)")
        #expect((exchanged.jsonObject?["user"] as? [String: Any])?["email"] as? String == email)
        #expect((exchanged.jsonObject?["provider_token"] as? String)?.hasPrefix("at-") == true, "GoTrue's provider_token")
        // Replayed: GoTrue's 404.
        let replayed = try server.post("/auth/v1/token?grant_type=pkce", body, headers: [("X-Supabase-Api-Version", "2024-01-01")])
        #expect(replayed.status == 404)
        #expect(replayed.text == #"{"code":"flow_state_not_found","message":"invalid flow state, no valid flow state found"}"#)
    }

    @Test func aVerifiedEmailSignsInTheAccountThatHasIt() throws {
        let email = TestServer.email("matched")
        let account = try server.signUp(email: email)
        let location = try signIn(hint: "\(UUID().uuidString),\(email)")
        let token = try #require(Self.fragment(location)["access_token"])
        let user = try user(token)
        #expect(user["id"] as? String == account.id)
        #expect(Set((user["identities"] as? [[String: Any]] ?? []).compactMap { $0["provider"] as? String }) == ["email", "oidc"])
    }

    @Test func aSignedInUserLinksASecondIdentity() throws {
        let first = try #require(Self.fragment(try signIn())["access_token"])
        let owner = try user(first)
        let url = try authorizeURL("provider=google&redirect_to=\(Self.escape(Self.app))", token: first, link: true)
        #expect(url.hasPrefix(provider.issuer("other") + "/authorize?"))
        let location = try callback(try providerCallback(url, hint: "\(UUID().uuidString),\(TestServer.email("second"))"))
        #expect(location.location.hasPrefix(Self.app + "#access_token="), "\(location.location)")
        let linked = try user(try #require(Self.fragment(location.location)["access_token"]))
        #expect(linked["id"] as? String == owner["id"] as? String)
        #expect(Set((linked["identities"] as? [[String: Any]] ?? []).compactMap { $0["provider"] as? String }) == ["oidc", "google"])
        // Linking needs a session.
        let anonymous = try server.client().request("GET", "/auth/v1/user/identities/authorize?provider=google", headers: [("apikey", server.anonKey)])
        #expect(anonymous.status == 401)
    }

    @Test func anIdentityAnotherUserOwnsIsNotLinked() throws {
        let subject = UUID().uuidString
        _ = try signIn(hint: "\(subject),\(TestServer.email("owner"))")
        let other = try server.signUp(email: TestServer.email("thief"))
        let url = try authorizeURL("provider=oidc&redirect_to=\(Self.escape(Self.app))", token: other.token, link: true)
        let location = try callback(try providerCallback(url, hint: "\(subject),\(TestServer.email("owner2"))")).location
        for fields in [Self.query(location), Self.fragment(location)] {
            #expect(fields["error"] == "server_error", "\(location)")
            #expect(fields["error_code"] == "identity_already_exists")
            #expect(fields["error_description"] == "Identity is already linked to another user")
        }
        #expect(location.hasPrefix(Self.app + "?"))
        let identities = try user(other.token)["identities"] as? [[String: Any]] ?? []
        #expect(identities.map { $0["provider"] as? String } == ["email"])
    }

    /// A state the server did not sign, or altered, or another of its tokens: SITE_URL with
    /// GoTrue's `bad_oauth_state` (303, in the query).
    @Test func aForgedOrAlteredStateIsRefused() throws {
        let url = try authorizeURL("provider=oidc&redirect_to=\(Self.escape(Self.app))")
        let callbackURL = try providerCallback(url)
        let code = try #require(Self.query(callbackURL)["code"])
        let state = try #require(Self.query(callbackURL)["state"])
        let parts = state.split(separator: ".").map(String.init)
        var claims = try #require(try JSONSerialization.jsonObject(with: Data(Base64URL.decode(Substring(parts[1]))!)) as? [String: Any])
        claims["referrer"] = "https://evil.example/steal"
        let altered = parts[0] + "." + Base64URL.encode(Array(JWT.serialize(claims).utf8)) + "." + parts[2]
        let forged = JWT.signHS256(claims: claims, secret: Array("not-the-servers-secret-but-long-enough".utf8))
        let accessToken = try server.signUp().token
        for candidate in [altered, forged, accessToken, "garbage"] {
            let answer = try callback("/auth/v1/callback?code=\(code)&state=\(Self.escape(candidate))")
            #expect(answer.status == 303)
            #expect(answer.location.hasPrefix("http://127.0.0.1:3000?"), "\(answer.location)")
            let fields = Self.query(answer.location)
            #expect(fields["error"] == "invalid_request")
            #expect(fields["error_code"] == "bad_oauth_state")
            #expect(fields["error_description"] == "OAuth callback with invalid state")
        }
        let missing = try callback("/auth/v1/callback?code=\(code)")
        #expect(Self.query(missing.location)["error_code"] == "bad_oauth_callback")
        #expect(Self.query(missing.location)["error_description"] == "OAuth state parameter missing")
    }

    @Test func anExpiredStateIsRefused() throws {
        let now = Int(Date().timeIntervalSince1970)
        let claims: [String: Any] = [
            "purpose": "oauth_state", "provider": "oidc", "referrer": Self.app, "iat": now - 900, "exp": now - 600, "site_url": "http://127.0.0.1:3000"
        ]
        let state = JWT.signHS256(claims: claims, secret: Array(TestServer.secret.utf8))
        let answer = try callback("/auth/v1/callback?code=abc&state=\(state)")
        #expect(answer.status == 303)
        #expect(Self.query(answer.location)["error_code"] == "bad_oauth_state")
        #expect(Self.query(answer.location)["error_description"] == "OAuth state has expired")
    }

    /// A state issued for one provider with a code of another: the code goes to the state's
    /// provider, which refuses it; a state naming a provider that is not enabled is refused first.
    @Test func aStateForAnotherProviderIsRefused() throws {
        let googleState = try #require(Self.query(try authorizeURL("provider=google&redirect_to=\(Self.escape(Self.app))"))["state"])
        let idpCode = try #require(Self.query(try providerCallback(try authorizeURL("provider=oidc")))["code"])
        let answer = try callback("/auth/v1/callback?code=\(Self.escape(idpCode))&state=\(googleState)")
        #expect(answer.status == 302)
        #expect(answer.location.hasPrefix(Self.app + "?"), "\(answer.location)")
        #expect(Self.query(answer.location)["error"] == "server_error")
        #expect(Self.query(answer.location)["error_description"] == "Unable to exchange external code: code")
        #expect(Self.fragment(answer.location)["access_token"] == nil)

        let now = Int(Date().timeIntervalSince1970)
        let github = JWT.signHS256(
            claims: ["purpose": "oauth_state", "provider": "github", "referrer": Self.app, "iat": now, "exp": now + 300], secret: Array(TestServer.secret.utf8))
        // A server on which GitHub is not enabled (the states of every test server share a secret).
        let bare = try TestServer()
        let answer2 = try bare.client().request("GET", "/auth/v1/callback?code=abc&state=\(github)")
        let disabled = (status: answer2.status, location: answer2.header("Location") ?? "")
        #expect(Self.query(disabled.location)["error_code"] == "oauth_provider_not_supported")
        #expect(Self.query(disabled.location)["error_description"] == "Unsupported provider: provider is not enabled")
    }

    @Test func aDisallowedRedirectGoesToTheSiteURL() throws {
        let location = try signIn(redirectTo: "https://evil.example/steal")
        #expect(location.hasPrefix("http://127.0.0.1:3000#access_token="), "\(location)")
        #expect(!location.contains("evil"))
    }

    @Test func theProvidersRefusalAndAppleStylePostsReachTheApp() throws {
        let url = try authorizeURL("provider=oidc&redirect_to=\(Self.escape(Self.app))")
        let state = try #require(Self.query(url)["state"])
        let refused = try callback("/auth/v1/callback?error=access_denied&error_description=User+cancelled&state=\(state)")
        #expect(Self.query(refused.location)["error"] == "access_denied")
        #expect(Self.query(refused.location)["error_description"] == "User cancelled")
        #expect(Self.query(refused.location)["error_code"] == nil)
        let missingCode = try callback("/auth/v1/callback?state=\(state)")
        #expect(Self.query(missingCode.location)["error_description"] == "OAuth callback with missing authorization code missing")

        // `response_mode=form_post`: the code and state in a POST body.
        let back = Self.query(try providerCallback(url))
        let form = "code=\(Self.escape(back["code"] ?? ""))&state=\(Self.escape(back["state"] ?? ""))"
        let posted = try server.client().request(
            "POST", "/auth/v1/callback", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: form)
        #expect(posted.status == 302)
        #expect(posted.header("Location")?.hasPrefix(Self.app + "#access_token=") == true, "\(posted.header("Location") ?? "")")
    }

    /// Apple: `response_mode=form_post`, the answer POSTed back with the user's name, and the
    /// client secret an ES256 JWT the provider checks against the team's key.
    @Test func appleSignsInWithASignedClientSecretAndAFormPost() throws {
        let email = TestServer.email("apple")
        let url = try authorizeURL("provider=apple&redirect_to=\(Self.escape(Self.app))")
        #expect(url.hasPrefix(provider.issuer("apple") + "/auth/authorize?"))
        #expect(Self.query(url)["response_mode"] == "form_post")
        #expect(Self.query(url)["scope"] == "email name")
        let back = Self.query(try providerCallback(url, hint: "\(UUID().uuidString),\(email)"))
        let name = Self.escape(#"{"name":{"firstName":"Ada","lastName":"Lovelace"}}"#)
        let form = "code=\(Self.escape(back["code"] ?? ""))&state=\(Self.escape(back["state"] ?? ""))&user=\(name)"
        let posted = try server.client().request(
            "POST", "/auth/v1/callback", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: form)
        let location = posted.header("Location") ?? ""
        #expect(location.hasPrefix(Self.app + "#access_token="), "\(location)")
        let signedIn = try user(try #require(Self.fragment(location)["access_token"]))
        #expect(signedIn["email"] as? String == email)
        #expect((signedIn["user_metadata"] as? [String: Any])?["full_name"] as? String == "Ada Lovelace")
        // The provider saw a JWT as the secret, never a fixed one.
        let exchanges = provider.received.withLock { $0.filter { $0.1 == "/apple/auth/token" } }
        #expect(exchanges.last?.2["client_secret"]?.split(separator: ".").count == 3)
    }

    /// GitHub: no OpenID; the token endpoint, then `/user` and `/user/emails` (the primary address).
    @Test func gitHubSignsInByItsAPI() throws {
        let email = TestServer.email("github")
        let location = try signIn("github", hint: "\(UUID().uuidString),\(email)")
        #expect(location.hasPrefix(Self.app + "#access_token="), "\(location)")
        let signedIn = try user(try #require(Self.fragment(location)["access_token"]))
        #expect(signedIn["email"] as? String == email)
        let identity = try #require((signedIn["identities"] as? [[String: Any]])?.first)
        #expect(identity["provider"] as? String == "github")
        #expect(((identity["identity_data"] as? [String: Any])?["iss"] as? String)?.hasSuffix("/gh/api/v3/user") == true)
    }

    @Test func unknownAndDisabledProvidersAndTheSettings() throws {
        let api = [("X-Supabase-Api-Version", "2024-01-01")]
        let disabled = try server.client().request("GET", "/auth/v1/authorize?provider=oidc", headers: api)
        #expect(disabled.status == 302, "enabled")
        let off = try TestServer { $0.auth.external["oidc"] = ExternalProvider(kind: .oidc, enabled: false, clientID: "c", secret: "s", url: "http://x") }
        let refused = try off.client().request("GET", "/auth/v1/authorize?provider=oidc", headers: api)
        #expect(refused.status == 400)
        #expect(refused.text == #"{"code":"validation_failed","message":"Unsupported provider: provider is not enabled"}"#)
        let noSecret = try TestServer { $0.auth.external["github"] = ExternalProvider(kind: .github, clientID: "c", secret: "") }
        let missing = try noSecret.client().request("GET", "/auth/v1/authorize?provider=github", headers: api)
        #expect(missing.text == #"{"code":"validation_failed","message":"Unsupported provider: missing OAuth secret"}"#)
        let github = try off.client().request("GET", "/auth/v1/authorize?provider=github", headers: api)
        #expect(github.text == #"{"code":"validation_failed","message":"Unsupported provider: provider is not enabled"}"#)
        let unknown = try server.client().request("GET", "/auth/v1/authorize?provider=myspace", headers: api)
        #expect(unknown.text == #"{"code":"validation_failed","message":"Unsupported provider: Provider myspace could not be found"}"#)
        let badPKCE = try server.client().request("GET", "/auth/v1/authorize?provider=oidc&code_challenge=short&code_challenge_method=s256", headers: api)
        #expect(badPKCE.status == 400)
        let external = try #require(try server.get("/auth/v1/settings").jsonObject?["external"] as? [String: Any])
        #expect(external["oidc"] as? Bool == true)
        #expect(external["google"] as? Bool == true)
        #expect(external["github"] as? Bool == true)
        #expect(try off.get("/auth/v1/settings").jsonObject?["external"].flatMap { ($0 as? [String: Any])?["oidc"] as? Bool } == false)
        #expect(external["apple"] as? Bool == true)
    }
}
