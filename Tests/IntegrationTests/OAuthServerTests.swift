import Auth
import Foundation
import Identity
import TestSupport
import Testing

/// GoTrue's OAuth 2.1 server over HTTP: the admin API for clients, and the authorization code
/// flow from `/oauth/authorize` through consent to `/oauth/token` and refresh, with the
/// attacker's attempts refused in GoTrue's words.
@Suite("OAuth server", .serialized)
struct OAuthServerTests {
    static let site = "http://127.0.0.1:3000"
    static let callback = "https://client.example/callback"
    let server: TestServer

    init() throws {
        server = try TestServer { config in
            config.auth.siteURL = Self.site
            config.auth.oauthServer.enabled = true
            config.auth.oauthServer.authorizationPath = "/consent"
        }
    }

    func register(_ body: String) throws -> [String: Any] {
        let created = try server.service.post("/auth/v1/admin/oauth/clients", body)
        #expect(created.status == 201, "\(created.text)")
        return try #require(created.jsonObject)
    }

    @Test func adminManagesClientsAndOthersAreRefused() throws {
        let client = try register(#"{"client_name":"App","redirect_uris":["\#(Self.callback)"]}"#)
        let id = try #require(client["client_id"] as? String)
        #expect(client["client_type"] as? String == "confidential" && client["token_endpoint_auth_method"] as? String == "client_secret_basic")
        #expect((client["client_secret"] as? String)?.count == 43 && client["registration_type"] as? String == "manual")
        let fetched = try server.service.get("/auth/v1/admin/oauth/clients/\(id)")
        #expect(fetched.status == 200 && fetched.jsonObject?["client_secret"] == nil)
        let listed = try server.service.get("/auth/v1/admin/oauth/clients")
        #expect((listed.jsonObject?["clients"] as? [[String: Any]])?.contains { $0["client_id"] as? String == id } == true)
        let renamed = try server.service.request("PUT", "/auth/v1/admin/oauth/clients/\(id)", body: #"{"client_name":"Renamed"}"#)
        #expect(renamed.jsonObject?["client_name"] as? String == "Renamed")
        let wrongMethod = try server.service.request("PUT", "/auth/v1/admin/oauth/clients/\(id)", body: #"{"token_endpoint_auth_method":"none"}"#)
        #expect(wrongMethod.status == 400 && wrongMethod.header("x-sb-error-code") == "validation_failed")
        let regenerated = try server.service.post("/auth/v1/admin/oauth/clients/\(id)/regenerate_secret", "")
        #expect(regenerated.status == 200 && regenerated.jsonObject?["client_secret"] as? String != client["client_secret"] as? String)
        // Redirect URIs as GoTrue validates them.
        for (uri, problem) in [
            ("http://evil.example/cb", "HTTP scheme only allowed for localhost"),
            ("javascript://x/alert", "scheme 'javascript' is not allowed for security reasons"),
            ("https://client.example/cb#frag", "fragment not allowed in redirect URI"), ("/relative", "must have scheme and host")
        ] {
            let refused = try server.service.post("/auth/v1/admin/oauth/clients", #"{"redirect_uris":["\#(uri)"]}"#)
            #expect(refused.status == 400 && refused.text.contains("400: invalid redirect_uri '\(uri)': \(problem)"), "\(refused.text)")
        }
        // Only the service role; dynamic registration is off.
        let user = try server.signUp()
        for token in [nil, user.token] {
            let refused = try server.caller(token).get("/auth/v1/admin/oauth/clients")
            #expect(refused.status == 403 && refused.header("x-sb-error-code") == "not_admin")
        }
        let dynamic = try server.post("/auth/v1/oauth/clients/register", #"{"redirect_uris":["\#(Self.callback)"]}"#)
        #expect(dynamic.status == 403 && dynamic.header("x-sb-error-code") == "oauth_dynamic_client_registration_disabled")
        #expect(try server.service.request("DELETE", "/auth/v1/admin/oauth/clients/\(id)").status == 204)
        #expect(try server.service.get("/auth/v1/admin/oauth/clients/\(id)").header("x-sb-error-code") == "oauth_client_not_found")
    }

    /// `/oauth/authorize` → consent page → approval → code, for a public client with PKCE.
    func authorize(clientID: String, user: String, verifier: String) throws -> String {
        let challenge = Base64URL.encode(Crypto.sha256(Array(verifier.utf8)))
        let query =
            "client_id=\(clientID)&redirect_uri=\(Self.callback)&response_type=code&scope=email&state=xyz&code_challenge=\(challenge)&code_challenge_method=S256"
        let started = try server.get("/auth/v1/oauth/authorize?\(query)")
        let location = try #require(started.header("location"))
        #expect(started.status == 302 && location.hasPrefix("\(Self.site)/consent?authorization_id="))
        let authorizationID = String(location.split(separator: "=").last ?? "")
        let details = try server.get("/auth/v1/oauth/authorizations/\(authorizationID)", token: user)
        if let redirect = details.jsonObject?["redirect_url"] as? String { return try Self.code(redirect) }
        #expect(details.status == 200 && (details.jsonObject?["client"] as? [String: Any])?["id"] as? String == clientID, "\(details.text)")
        let approved = try server.post("/auth/v1/oauth/authorizations/\(authorizationID)/consent", #"{"action":"approve"}"#, token: user)
        return try Self.code(try #require(approved.jsonObject?["redirect_url"] as? String))
    }

    static func code(_ redirect: String) throws -> String {
        #expect(redirect.hasPrefix(callback + "?code=") && redirect.hasSuffix("&state=xyz"), "\(redirect)")
        return try #require(URLComponents(string: redirect)?.queryItems?.first { $0.name == "code" }?.value)
    }

    func token(_ body: String) throws -> TestResponse {
        try server.post("/auth/v1/oauth/token", body)
    }

    @Test func codeFlowIssuesClientTokensAndRefusesAttackers() throws {
        let client = try register(#"{"client_name":"Public","redirect_uris":["\#(Self.callback)"],"client_type":"public"}"#)
        let other = try register(#"{"redirect_uris":["\#(Self.callback)"],"token_endpoint_auth_method":"none"}"#)
        let clientID = try #require(client["client_id"] as? String)
        let otherID = try #require(other["client_id"] as? String)
        let user = try server.signUp()
        let verifier = String(repeating: "v", count: 50)
        let code = try authorize(clientID: clientID, user: user.token, verifier: verifier)
        // The attacker's view: no verifier, a wrong one, another client, another redirect URI.
        for (body, description) in [
            (#""client_id":"\#(clientID)","code":"\#(code)""#, "PKCE verification failed: code_verifier is required when PKCE challenge is present"),
            (
                #""client_id":"\#(clientID)","code":"\#(code)","code_verifier":"\#(String(repeating: "w", count: 50))""#,
                "PKCE verification failed: code challenge does not match previously saved code verifier"
            ),
            (#""client_id":"\#(otherID)","code":"\#(code)","code_verifier":"\#(verifier)""#, "Authorization code was not issued for this client"),
            (#""client_id":"\#(clientID)","code":"\#(code)","code_verifier":"\#(verifier)","redirect_uri":"https://evil.example/cb""#, "Invalid redirect_uri")
        ] {
            let refused = try token(#"{"grant_type":"authorization_code",\#(body)}"#)
            #expect(refused.status == 400 && refused.jsonObject?["error"] as? String == "invalid_grant", "\(refused.text)")
            #expect(refused.jsonObject?["error_description"] as? String == description)
        }
        let exchange =
            #"{"grant_type":"authorization_code","client_id":"\#(clientID)","code":"\#(code)","code_verifier":"\#(verifier)","redirect_uri":"\#(Self.callback)"}"#
        let tokens = try token(exchange)
        #expect(tokens.status == 200 && tokens.jsonObject?["user"] == nil, "\(tokens.text)")
        let access = try #require(tokens.jsonObject?["access_token"] as? String)
        let claims = try TestServer.claims(access)
        #expect(claims["client_id"] as? String == clientID && claims["scope"] as? String == "email" && claims["sub"] as? String == user.id)
        // Replayed: the code is gone.
        let replayed = try token(exchange)
        #expect(replayed.jsonObject?["error_description"] as? String == "Invalid authorization code")
        // Refresh by its client only.
        let refresh = try #require(tokens.jsonObject?["refresh_token"] as? String)
        let firstParty = try server.post("/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"\#(refresh)"}"#)
        #expect(firstParty.status == 400 && firstParty.jsonObject?["error"] as? String == "invalid_client")
        let stolen = try token(#"{"grant_type":"refresh_token","client_id":"\#(otherID)","refresh_token":"\#(refresh)"}"#)
        #expect(stolen.jsonObject?["error_description"] as? String == "Client does not match the session's OAuth client")
        let refreshed = try token(#"{"grant_type":"refresh_token","client_id":"\#(clientID)","refresh_token":"\#(refresh)"}"#)
        #expect(refreshed.status == 200, "\(refreshed.text)")
        #expect(try TestServer.claims(try #require(refreshed.jsonObject?["access_token"] as? String))["client_id"] as? String == clientID)
        // The consent is remembered (the next request is approved at once), listed and revocable.
        _ = try authorize(clientID: clientID, user: user.token, verifier: verifier)
        let grants = try server.get("/auth/v1/user/oauth/grants", token: user.token)
        #expect((grants.json as? [[String: Any]])?.first.flatMap { $0["client"] as? [String: Any] }?["id"] as? String == clientID, "\(grants.text)")
        #expect(try server.request("DELETE", "/auth/v1/user/oauth/grants?client_id=\(clientID)", token: user.token).status == 204)
        let revoked = try token(
            #"{"grant_type":"refresh_token","client_id":"\#(clientID)","refresh_token":"\#(try #require(refreshed.jsonObject?["refresh_token"] as? String))"}"#)
        #expect(revoked.status == 400 && revoked.header("x-sb-error-code") == "refresh_token_not_found", "\(revoked.text)")
        let again = try server.request("DELETE", "/auth/v1/user/oauth/grants?client_id=\(clientID)", token: user.token)
        #expect(again.status == 404 && again.header("x-sb-error-code") == "oauth_consent_not_found")
    }

    @Test func confidentialClientsAuthenticateAsRegistered() throws {
        let client = try register(#"{"redirect_uris":["\#(Self.callback)"]}"#)
        let id = try #require(client["client_id"] as? String)
        let secret = try #require(client["client_secret"] as? String)
        let form = "grant_type=authorization_code&code=nope&code_verifier=x"
        let wrong = Data("\(id):wrong".utf8).base64EncodedString()
        let refused = try server.post(
            "/auth/v1/oauth/token", form, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", "Basic \(wrong)")])
        #expect(refused.status == 400 && refused.header("x-sb-error-code") == "invalid_credentials", "\(refused.text)")
        let posted = try server.post(
            "/auth/v1/oauth/token", form + "&client_id=\(id)&client_secret=\(secret)", headers: [("Content-Type", "application/x-www-form-urlencoded")])
        #expect(posted.text.contains("invalid authentication method: client is registered for 'client_secret_basic' but 'client_secret_post' was used"))
        let basic = Data("\(id):\(secret)".utf8).base64EncodedString()
        let authenticated = try server.post(
            "/auth/v1/oauth/token", form, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", "Basic \(basic)")])
        #expect(authenticated.jsonObject?["error_description"] as? String == "Invalid authorization code", "\(authenticated.text)")
        let metadata = try server.get("/auth/v1/.well-known/oauth-authorization-server")
        #expect(metadata.status == 200 && (metadata.jsonObject?["token_endpoint"] as? String)?.hasSuffix("/oauth/token") == true)
    }
}
