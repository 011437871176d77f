import Foundation
import HTTP
import Identity
import TestSupport
import Testing

/// Native Google/Apple sign-in (`grant_type=id_token`) against key sets the test publishes
/// itself: Google's as a JWKS file (RS256), Apple's served over HTTP from a URL (ES256).
@Suite("id_token sign-in", .serialized)
struct IDTokenTests {
    static let googleClient = "eko-ios.apps.googleusercontent.com"
    static let appleClient = "com.familysync.app"
    let google = SigningKey(kind: .rsa, keyID: "g1")
    let apple = SigningKey(kind: .p256, keyID: "a1")
    let folder: URL
    let keyServer: HTTPServer
    let server: TestServer

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("onboard-jwks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let googleFile = folder.appendingPathComponent("google.json")
        try Data(JWT.serialize(["keys": [google.jwk]]).utf8).write(to: googleFile)
        let appleJWKS = JWT.serialize(["keys": [apple.jwk]])
        keyServer = HTTPServer(
            port: 0,
            responder: { request in
                request.path == "/auth/keys" ? .json(.ok, appleJWKS) : .json(.notFound, "{}")
            })
        try keyServer.start()
        let appleURL = "http://127.0.0.1:\(keyServer.port)/auth/keys"
        server = try TestServer { config in
            config.auth.providers["google"] = .google(clientIDs: [Self.googleClient], jwks: googleFile.path)
            config.auth.providers["apple"] = .apple(clientIDs: [Self.appleClient], jwks: appleURL)
        }
    }

    func googleClaims(sub: String = UUID().uuidString, email: String? = nil, extra: [String: Any] = [:]) -> [String: Any] {
        let now = Int(Date().timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": "https://accounts.google.com", "aud": Self.googleClient, "sub": sub, "iat": now, "exp": now + 600,
            "email": email ?? "g-\(UUID().uuidString.prefix(8).lowercased())@gmail.com", "email_verified": true, "name": "Gee Oogle"
        ]
        claims.merge(extra) { $1 }
        return claims
    }

    func signIn(provider: String = "google", _ token: String, nonce: String? = nil) throws -> TestResponse {
        var body: [String: Any] = ["provider": provider, "id_token": token]
        if let nonce { body["nonce"] = nonce }
        return try server.post("/auth/v1/token?grant_type=id_token", JWT.serialize(body))
    }

    static let badIDToken = #"{"error":"invalid request","error_description":"Bad ID token"}"#

    @Test func googleSignInCreatesThenFindsTheUser() throws {
        let claims = googleClaims()
        let first = try signIn(google.sign(claims: claims))
        #expect(first.status == 200, "\(first.text)")
        let user = try #require(first.jsonObject?["user"] as? [String: Any])
        #expect(user["email"] as? String == claims["email"] as? String)
        #expect((user["app_metadata"] as? [String: Any])?["provider"] as? String == "google")
        #expect((user["user_metadata"] as? [String: Any])?["full_name"] as? String == "Gee Oogle")
        #expect((user["identities"] as? [[String: Any]])?.first?["provider"] as? String == "google")
        let again = try signIn(google.sign(claims: claims))
        #expect((again.jsonObject?["user"] as? [String: Any])?["id"] as? String == user["id"] as? String)
        // The session is a real one: its access token reads the trigger-created profile.
        let token = try #require(again.jsonObject?["access_token"] as? String)
        let profile = try server.get("/rest/v1/user_profiles?select=onboarding_state", token: token)
        #expect(profile.text == #"[{"onboarding_state":"NOT_STARTED"}]"#)
    }

    @Test func aVerifiedEmailLinksTheExistingAccount() throws {
        let address = "link-\(UUID().uuidString.prefix(8).lowercased())@gmail.com"
        let existing = try server.signUp(email: address)
        let response = try signIn(google.sign(claims: googleClaims(email: address)))
        #expect(response.status == 200)
        let user = try #require(response.jsonObject?["user"] as? [String: Any])
        #expect(user["id"] as? String == existing.id)
        #expect(((user["app_metadata"] as? [String: Any])?["providers"] as? [String])?.sorted() == ["email", "google"])
    }

    @Test func appleSignInWithNonceOverAJWKSURL() throws {
        let nonce = "raw-nonce-\(UUID().uuidString)"
        let hashed = Crypto.hex(Crypto.sha256(Array(nonce.utf8)))
        let now = Int(Date().timeIntervalSince1970)
        let claims: [String: Any] = [
            "iss": "https://appleid.apple.com", "aud": Self.appleClient, "sub": "001234.\(UUID().uuidString)",
            "iat": now, "exp": now + 600, "nonce": hashed, "email": "x@privaterelay.appleid.com", "email_verified": "true"
        ]
        let ok = try signIn(provider: "apple", apple.sign(claims: claims), nonce: nonce)
        #expect(ok.status == 200, "\(ok.text)")
        #expect(((ok.jsonObject?["user"] as? [String: Any])?["app_metadata"] as? [String: Any])?["provider"] as? String == "apple")

        let wrongNonce = try signIn(provider: "apple", apple.sign(claims: claims), nonce: "something-else")
        #expect(wrongNonce.status == 400)
        #expect(wrongNonce.text == #"{"error":"invalid nonce","error_description":"Nonces mismatch"}"#)
        let missingNonce = try signIn(provider: "apple", apple.sign(claims: claims))
        #expect(missingNonce.status == 400)
        #expect(missingNonce.jsonObject?["error_description"] as? String == "Passed nonce and nonce in id_token should either both exist or not.")
    }

    @Test func badTokensAreRefused() throws {
        let impostor = SigningKey(kind: .rsa, keyID: "g1")  // same kid, other key
        let now = Int(Date().timeIntervalSince1970)
        let cases: [(String, String)] = [
            ("wrong signature", impostor.sign(claims: googleClaims())),
            ("wrong issuer", google.sign(claims: googleClaims(extra: ["iss": "https://evil.example.com"]))),
            ("expired", google.sign(claims: googleClaims(extra: ["exp": now - 3600, "iat": now - 7200]))),
            ("alg none", google.sign(claims: googleClaims()).split(separator: ".").prefix(2).joined(separator: ".") + "."),
            ("unknown kid", google.sign(claims: googleClaims(), kid: "g9")),
            ("Apple's key for Google", apple.sign(claims: googleClaims())),
            ("garbage", "not.a.token")
        ]
        for (name, token) in cases {
            let response = try signIn(token)
            #expect(response.status == 400, "\(name)")
            #expect(response.text == Self.badIDToken, "\(name): \(response.text)")
        }
        // `alg: none` with a rewritten header, and HS256 signed with the anon key's secret.
        let noneHeader = Base64URL.encode(Array(#"{"alg":"none","kid":"g1"}"#.utf8))
        let payload = Base64URL.encode(Array(JWT.serialize(googleClaims()).utf8))
        #expect(try signIn("\(noneHeader).\(payload).").text == Self.badIDToken)
        let hs = JWT.signHS256(claims: googleClaims(), secret: Array(TestServer.secret.utf8))
        #expect(try signIn(hs).text == Self.badIDToken)

        let wrongAudience = try signIn(google.sign(claims: googleClaims(extra: ["aud": "someone-else"])))
        #expect(wrongAudience.status == 400)
        #expect(wrongAudience.text == #"{"error":"invalid request","error_description":"Unacceptable audience in id_token"}"#)
        // Nothing was created by any refusal.
        let users = try server.service.get("/auth/v1/admin/users?per_page=1000")
        #expect((users.jsonObject?["users"] as? [[String: Any]])?.isEmpty == true)
    }

    @Test func unconfiguredAndUnknownProviders() throws {
        let plain = try TestServer()
        let http = plain.client()
        let disabled = try http.request(
            "POST", "/auth/v1/token?grant_type=id_token", headers: plain.headers(),
            body: JWT.serialize(["provider": "google", "id_token": google.sign(claims: googleClaims())]))
        #expect(disabled.status == 400 && disabled.jsonObject?["code"] as? String == "provider_disabled")
        let unknown = try http.request(
            "POST", "/auth/v1/token?grant_type=id_token", headers: plain.headers(),
            body: #"{"provider":"myspace","id_token":"x"}"#)
        #expect(unknown.status == 400 && unknown.jsonObject?["code"] as? String == "validation_failed")
        let settings = try http.request("GET", "/auth/v1/settings", headers: plain.headers())
        #expect((settings.jsonObject?["external"] as? [String: Any])?["google"] as? Bool == false)
        #expect(
            ((try server.get("/auth/v1/settings")).jsonObject?["external"] as? [String: Any])?["google"] as? Bool
                == true)
    }
}
