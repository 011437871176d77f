import Auth
import Foundation
import HTTP
import Identity
import Postgres
import TestSupport
import Testing

/// Linking provider identities to the signed-in user (`grant_type=id_token` with
/// `link_identity`), listing and unlinking them, over HTTP with id_tokens signed by test provider
/// keys whose JWKS files the server reads.
@Suite("Linked identities", .serialized)
struct LinkedIdentityTests {
    static let appleClient = "com.familysync.app"
    static let googleClient = "eko-ios.apps.googleusercontent.com"
    let apple = SigningKey(kind: .p256, keyID: "a1")
    let google = SigningKey(kind: .rsa, keyID: "g1")
    let server: TestServer

    init() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("onboard-link-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let appleFile = folder.appendingPathComponent("apple.json")
        let googleFile = folder.appendingPathComponent("google.json")
        try Data(JWT.serialize(["keys": [apple.jwk]]).utf8).write(to: appleFile)
        try Data(JWT.serialize(["keys": [google.jwk]]).utf8).write(to: googleFile)
        server = try TestServer { config in
            config.auth.providers["apple"] = .apple(clientIDs: [Self.appleClient], jwks: appleFile.path)
            config.auth.providers["google"] = .google(clientIDs: [Self.googleClient], jwks: googleFile.path)
        }
    }

    func appleToken(sub: String = UUID().uuidString, email: String? = nil, verified: Any = "true") -> String {
        let now = Int(Date().timeIntervalSince1970)
        let claims: [String: Any] = [
            "iss": "https://appleid.apple.com", "aud": Self.appleClient, "sub": sub, "iat": now, "exp": now + 600,
            "email": email ?? "a-\(UUID().uuidString.prefix(8).lowercased())@privaterelay.appleid.com", "email_verified": verified
        ]
        return apple.sign(claims: claims)
    }

    func googleToken(sub: String = UUID().uuidString, email: String) -> String {
        let now = Int(Date().timeIntervalSince1970)
        return google.sign(claims: [
            "iss": "https://accounts.google.com", "aud": Self.googleClient, "sub": sub, "iat": now, "exp": now + 600, "email": email,
            "email_verified": true
        ])
    }

    /// `POST /token?grant_type=id_token`; with `link`, as the linking call with that bearer.
    func idToken(_ provider: String, _ token: String, link bearer: String? = nil) throws -> TestResponse {
        var body: [String: Any] = ["provider": provider, "id_token": token]
        if bearer != nil { body["link_identity"] = true }
        return try server.post("/auth/v1/token?grant_type=id_token", JWT.serialize(body), token: bearer)
    }

    func anonymous() throws -> (id: String, token: String) {
        let response = try server.post("/auth/v1/signup", #"{"data":{"nickname":"Sam"}}"#)
        let session = try #require(response.jsonObject)
        let user = try #require(session["user"] as? [String: Any])
        return (try #require(user["id"] as? String), try #require(session["access_token"] as? String))
    }

    func user(_ token: String) throws -> [String: Any] {
        let response = try server.get("/auth/v1/user", token: token)
        #expect(response.status == 200, "\(response.text)")
        return try #require(response.jsonObject)
    }

    @Test func anAnonymousUserLinksAppleInPlaceAndKeepsItsData() throws {
        let anon = try anonymous()
        let child = try server.post("/rest/v1/children", #"{"name":"Kid"}"#, token: anon.token, headers: [("Prefer", "return=minimal")])
        #expect(child.status == 201, "\(child.text)")
        let subject = UUID().uuidString
        let email = "upgrade-\(UUID().uuidString.prefix(8).lowercased())@privaterelay.appleid.com"
        let linked = try idToken("apple", appleToken(sub: subject, email: email), link: anon.token)
        #expect(linked.status == 200, "\(linked.text)")
        let session = try #require(linked.jsonObject)
        let user = try #require(session["user"] as? [String: Any])
        #expect(user["id"] as? String == anon.id)
        #expect(user["is_anonymous"] as? Bool == false)
        #expect(user["email"] as? String == email)
        #expect(user["email_confirmed_at"] is String)
        #expect((user["user_metadata"] as? [String: Any])?["nickname"] as? String == "Sam")
        #expect((user["app_metadata"] as? [String: Any])?["provider"] as? String == "apple")
        #expect((user["app_metadata"] as? [String: Any])?["providers"] as? [String] == ["apple"])
        let identities = try #require(user["identities"] as? [[String: Any]])
        #expect(identities.map { $0["provider"] as? String } == ["apple"])
        // The new session is the same user's: its data is still there.
        let token = try #require(session["access_token"] as? String)
        let current = try self.user(token)
        #expect(current["id"] as? String == anon.id && current["is_anonymous"] as? Bool == false)
        let children = try server.get("/rest/v1/children?select=name", token: token)
        #expect(children.text == #"[{"name":"Kid"}]"#)
        // A later plain Apple sign-in (another device) finds the same user.
        let again = try idToken("apple", appleToken(sub: subject, email: email))
        #expect((again.jsonObject?["user"] as? [String: Any])?["id"] as? String == anon.id)
        // The identity is listed by GET /user.
        #expect((try self.user(token)["identities"] as? [[String: Any]])?.first?["id"] as? String == subject)
    }

    @Test func anIdentityLinkedElsewhereOrAlreadyIsRefused() throws {
        let subject = UUID().uuidString
        let owner = try idToken("apple", appleToken(sub: subject))
        #expect(owner.status == 200)
        let ownerToken = try #require(owner.jsonObject?["access_token"] as? String)
        let anon = try anonymous()
        let elsewhere = try idToken("apple", appleToken(sub: subject), link: anon.token)
        #expect(elsewhere.status == 422)
        #expect(elsewhere.header("x-sb-error-code") == "identity_already_exists")
        #expect(elsewhere.jsonObject?["message"] as? String == "Identity is already linked to another user")
        // Nothing changed for the anonymous user.
        let after = try user(anon.token)
        #expect(after["is_anonymous"] as? Bool == true && (after["identities"] as? [Any])?.isEmpty == true)
        let same = try idToken("apple", appleToken(sub: subject), link: ownerToken)
        #expect(same.status == 422 && same.jsonObject?["message"] as? String == "Identity is already linked")
    }

    @Test func linkingNeedsAValidBearer() throws {
        let missing = try server.client().request(
            "POST", "/auth/v1/token?grant_type=id_token", headers: [("apikey", server.anonKey), ("Content-Type", "application/json")],
            body: JWT.serialize(["provider": "apple", "id_token": appleToken(), "link_identity": true]))
        #expect(missing.status == 400)
        #expect(missing.text == #"{"error":"invalid request","error_description":"Linking requires a valid user access token in Authorization"}"#)
        let anon = try server.post(
            "/auth/v1/token?grant_type=id_token", JWT.serialize(["provider": "apple", "id_token": appleToken(), "link_identity": true]), token: server.anonKey)
        #expect(anon.status == 403 && anon.header("x-sb-error-code") == "bad_jwt", "\(anon.text)")
    }

    @Test func anEmailTakenByAnotherUserIsNotLinkedIn() throws {
        let other = try server.signUp()
        let address = try #require((try user(other.token))["email"] as? String)
        let anon = try anonymous()
        let response = try idToken("apple", appleToken(email: address), link: anon.token)
        #expect(response.status == 400 && response.header("x-sb-error-code") == "email_exists", "\(response.text)")
        #expect((try user(anon.token))["is_anonymous"] as? Bool == true)
    }

    @Test func unlinkingKeepsAtLeastOneIdentity() throws {
        let signedUp = try server.signUp()
        let email = try #require((try user(signedUp.token))["email"] as? String)
        let lone = try #require((try user(signedUp.token))["identities"] as? [[String: Any]])
        let emailIdentity = try #require(lone.first?["identity_id"] as? String)
        let http = server.client()
        let refused = try http.request("DELETE", "/auth/v1/user/identities/\(emailIdentity)", headers: server.headers(signedUp.token))
        #expect(refused.status == 422 && refused.header("x-sb-error-code") == "single_identity_not_deletable")
        // An e-mail user links Google (another address), then unlinks it.
        let gmail = "g-\(UUID().uuidString.prefix(8).lowercased())@gmail.com"
        let linked = try idToken("google", googleToken(email: gmail), link: signedUp.token)
        #expect(linked.status == 200, "\(linked.text)")
        let both = try user(signedUp.token)
        #expect(both["email"] as? String == email)
        #expect(((both["app_metadata"] as? [String: Any])?["providers"] as? [String]) == ["email", "google"])
        let googleIdentity = try #require((both["identities"] as? [[String: Any]])?.first { $0["provider"] as? String == "google" }?["identity_id"] as? String)
        let unknown = try http.request("DELETE", "/auth/v1/user/identities/\(UUID().uuidString)", headers: server.headers(signedUp.token))
        #expect(unknown.status == 422 && unknown.header("x-sb-error-code") == "identity_not_found")
        let notUUID = try http.request("DELETE", "/auth/v1/user/identities/nope", headers: server.headers(signedUp.token))
        #expect(notUUID.status == 404 && notUUID.header("x-sb-error-code") == "validation_failed")
        let unlinked = try http.request("DELETE", "/auth/v1/user/identities/\(googleIdentity)", headers: server.headers(signedUp.token))
        #expect(unlinked.status == 200 && unlinked.text == "{}", "\(unlinked.text)")
        let after = try user(signedUp.token)
        #expect((after["identities"] as? [[String: Any]])?.map { $0["provider"] as? String } == ["email"])
        #expect(((after["app_metadata"] as? [String: Any])?["providers"] as? [String]) == ["email"])
        #expect(after["email"] as? String == email)
        // Unlinked: signing in with that Google account makes a new user.
        let fresh = try idToken("google", googleToken(email: "other-\(gmail)"))
        #expect((fresh.jsonObject?["user"] as? [String: Any])?["id"] as? String != signedUp.id)
    }

    @Test func theOAuthRedirectLinkIsNotOffered() throws {
        let signedUp = try server.signUp()
        let response = try server.get("/auth/v1/user/identities/authorize?provider=google", token: signedUp.token)
        #expect(response.status == 400 && response.jsonObject?["message"] as? String == "Unsupported provider: provider is not enabled")
        let unauthenticated = try server.get("/auth/v1/user/identities/authorize?provider=google")
        #expect(unauthenticated.status == 403 && unauthenticated.header("x-sb-error-code") == "bad_jwt")
    }
}
