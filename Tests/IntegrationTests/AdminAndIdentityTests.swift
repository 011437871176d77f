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

/// The admin API beyond plain user CRUD, and the settings that turn providers and sign-ups off.
@Suite("Admin API", .serialized)
struct AdminAPITests {
    static let site = "http://127.0.0.1:3000"
    let sink: TestSMTPServer
    let server: TestServer

    init() throws {
        let sink = try TestSMTPServer()
        self.sink = sink
        server = try TestServer { config in
            config.auth.siteURL = Self.site
            config.auth.mail.allowList = ["myapp://**"]
            var smtp = SMTPConfig(host: "127.0.0.1")
            smtp.port = sink.port
            config.auth.mail.smtp = smtp
        }
    }

    @Test func updateAppliesAppMetadataEmailConfirmAndBans() throws {
        let email = TestServer.email("adm")
        let created = try server.service.post("/auth/v1/admin/users", #"{"email":"\#(email)","password":"Secret-pass-1","app_metadata":{"plan":"pro"}}"#)
        #expect(created.status == 200, "\(created.text)")
        let user = try #require(created.jsonObject)
        let id = try #require(user["id"] as? String)
        #expect((user["app_metadata"] as? [String: Any])?["plan"] as? String == "pro")
        #expect((user["app_metadata"] as? [String: Any])?["provider"] as? String == "email")
        #expect(user["email_confirmed_at"] == nil || user["email_confirmed_at"] is NSNull)
        // Not confirmed: no password sign-in yet.
        let password = #"{"email":"\#(email)","password":"Secret-pass-1"}"#
        #expect(try server.post("/auth/v1/token?grant_type=password", password).header("x-sb-error-code") == "email_not_confirmed")
        let updated = try server.service.request("PUT", "/auth/v1/admin/users/\(id)", body: #"{"app_metadata":{"plan":null,"tier":2},"email_confirm":true}"#)
        #expect(updated.status == 200)
        let app = try #require(updated.jsonObject?["app_metadata"] as? [String: Any])
        #expect(app["plan"] == nil && app["tier"] as? Int == 2 && app["provider"] as? String == "email")
        #expect(updated.jsonObject?["email_confirmed_at"] is String)
        let session = try server.post("/auth/v1/token?grant_type=password", password)
        #expect(session.status == 200)
        let token = try #require(session.jsonObject?["access_token"] as? String)
        let refresh = try #require(session.jsonObject?["refresh_token"] as? String)
        // Banned: sign-in, the token in hand and its refresh are refused with user_banned.
        let banned = try server.service.request("PUT", "/auth/v1/admin/users/\(id)", body: #"{"ban_duration":"1h30m"}"#)
        #expect(banned.jsonObject?["banned_until"] is String)
        let signIn = try server.post("/auth/v1/token?grant_type=password", password)
        #expect(signIn.status == 400 && signIn.header("x-sb-error-code") == "user_banned" && signIn.jsonObject?["message"] as? String == "User is banned")
        let me = try server.get("/auth/v1/user", token: token)
        #expect(me.status == 403 && me.header("x-sb-error-code") == "user_banned")
        let refreshed = try server.post("/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"\#(refresh)"}"#)
        #expect(refreshed.status == 400 && refreshed.jsonObject?["message"] as? String == "Invalid Refresh Token: User Banned")
        let badDuration = try server.service.request("PUT", "/auth/v1/admin/users/\(id)", body: #"{"ban_duration":"2d"}"#)
        #expect(
            badDuration.status == 400
                && badDuration.jsonObject?["message"] as? String == #"invalid format for ban duration: time: unknown unit "d" in duration "2d""#,
            "\(badDuration.text)")
        let lifted = try server.service.request("PUT", "/auth/v1/admin/users/\(id)", body: #"{"ban_duration":"none"}"#)
        #expect(lifted.jsonObject?["banned_until"] == nil)
        #expect(try server.post("/auth/v1/token?grant_type=password", password).status == 200)
    }

    @Test func usersAreListedNewestFirstWithPaginationHeaders() throws {
        let first = try server.service.post("/auth/v1/admin/users", #"{"email":"\#(TestServer.email("adm"))"}"#)
        let second = try server.service.post("/auth/v1/admin/users", #"{"email":"\#(TestServer.email("adm"))"}"#)
        let page = try server.service.get("/auth/v1/admin/users?per_page=1&page=1")
        #expect(page.status == 200)
        let users = try #require(page.jsonObject?["users"] as? [[String: Any]])
        #expect(users.count == 1 && users[0]["id"] as? String == second.jsonObject?["id"] as? String)
        let total = try #require(page.header("X-Total-Count").flatMap(Int.init))
        #expect(total >= 2)
        #expect(page.header("Link") == #"</auth/v1/admin/users?page=2&per_page=1>; rel="next", </auth/v1/admin/users?page=\#(total)&per_page=1>; rel="last""#)
        let next = try server.service.get("/auth/v1/admin/users?per_page=1&page=2")
        #expect((next.jsonObject?["users"] as? [[String: Any]])?.first?["id"] as? String == first.jsonObject?["id"] as? String)
        let bad = try server.service.get("/auth/v1/admin/users?page=x")
        #expect(bad.status == 400 && bad.header("x-sb-error-code") == "validation_failed")
    }

    @Test func generateLinkAnswersTheTokensAndMailsNothing() throws {
        let http = server.client()
        // signup: a new unconfirmed user; its token_hash confirms and signs in.
        let signupEmail = TestServer.email("adm")
        let signup = try server.service.post(
            "/auth/v1/admin/generate_link?redirect_to=myapp://done",
            #"{"type":"signup","email":"\#(signupEmail)","password":"Secret-pass-1","data":{"source":"ops"}}"#)
        #expect(signup.status == 200, "\(signup.text)")
        let link = try #require(signup.jsonObject)
        #expect(link["verification_type"] as? String == "signup" && link["redirect_to"] as? String == "myapp://done")
        #expect(link["email"] as? String == signupEmail && (link["user_metadata"] as? [String: Any])?["source"] as? String == "ops")
        let hashed = try #require(link["hashed_token"] as? String)
        let actionLink = try #require(link["action_link"] as? String)
        #expect(actionLink.contains("/auth/v1/verify?token=\(hashed)&type=signup&redirect_to=myapp%3A%2F%2Fdone"), "\(actionLink)")
        #expect((link["email_otp"] as? String)?.count == 6)
        let verified = try server.post("/auth/v1/verify", #"{"type":"signup","token_hash":"\#(hashed)"}"#)
        #expect(verified.status == 200 && (verified.jsonObject?["user"] as? [String: Any])?["email_confirmed_at"] is String)
        // magiclink for an unknown address signs it up; recovery for one is 404.
        let magic = try server.service.post("/auth/v1/admin/generate_link", #"{"type":"magiclink","email":"\#(TestServer.email("adm"))"}"#)
        #expect(magic.jsonObject?["verification_type"] as? String == "signup")
        #expect(magic.jsonObject?["redirect_to"] as? String == Self.site)
        let unknown = try server.service.post("/auth/v1/admin/generate_link", #"{"type":"recovery","email":"\#(TestServer.email("adm"))"}"#)
        #expect(unknown.status == 404 && unknown.header("x-sb-error-code") == "user_not_found")
        // recovery and magiclink codes of an existing user verify by e-mail and code.
        let recovery = try server.service.post("/auth/v1/admin/generate_link", #"{"type":"recovery","email":"\#(signupEmail)"}"#)
        let code = try #require(recovery.jsonObject?["email_otp"] as? String)
        #expect(try server.post("/auth/v1/verify", #"{"type":"recovery","email":"\#(signupEmail)","token":"\#(code)"}"#).status == 200)
        // invite: invited_at set, the link's token verifies as type invite.
        let inviteEmail = TestServer.email("adm")
        let invite = try server.service.post("/auth/v1/admin/generate_link", #"{"type":"invite","email":"\#(inviteEmail)"}"#)
        #expect(invite.jsonObject?["invited_at"] is String && invite.jsonObject?["verification_type"] as? String == "invite")
        let inviteHash = try #require(invite.jsonObject?["hashed_token"] as? String)
        let opened = try http.request("GET", "/auth/v1/verify?token=\(inviteHash)&type=invite&redirect_to=myapp://in", headers: [])
        #expect(opened.status == 303 && opened.header("Location")?.hasPrefix("myapp://in#access_token=") == true, "\(opened.header("Location") ?? "")")
        #expect(opened.header("Location")?.contains("type=invite") == true)
        // email_change_new: the new address's token completes the change.
        let newEmail = TestServer.email("adm")
        let change = try server.service.post(
            "/auth/v1/admin/generate_link", #"{"type":"email_change_new","email":"\#(signupEmail)","new_email":"\#(newEmail)"}"#)
        #expect(change.status == 200 && change.jsonObject?["new_email"] as? String == newEmail, "\(change.text)")
        let changeCode = try #require(change.jsonObject?["email_otp"] as? String)
        let changed = try server.post("/auth/v1/verify", #"{"type":"email_change","email":"\#(newEmail)","token":"\#(changeCode)"}"#)
        #expect((changed.jsonObject?["user"] as? [String: Any])?["email"] as? String == newEmail, "\(changed.text)")
        let taken = try server.service.post("/auth/v1/admin/generate_link", #"{"type":"signup","email":"\#(newEmail)","password":"Secret-pass-1"}"#)
        #expect(taken.status == 422 && taken.header("x-sb-error-code") == "email_exists")
        let badType = try server.service.post("/auth/v1/admin/generate_link", #"{"type":"sms","email":"\#(newEmail)"}"#)
        #expect(badType.status == 400 && badType.jsonObject?["message"] as? String == "Invalid email action link type requested: sms")
        // None of these was mailed: an invitation sent afterwards is the only mail there is.
        let marker = TestServer.email("adm")
        #expect(try server.service.post("/auth/v1/invite", #"{"email":"\#(marker)"}"#).status == 200)
        _ = try sink.waitForMail(to: marker)
        let addresses = Set(sink.messages().flatMap(\.to))
        #expect(addresses.isDisjoint(with: [signupEmail, inviteEmail, newEmail]))
    }

    @Test func anInvitationIsMailedAndItsLinkSignsIn() throws {
        let email = TestServer.email("adm")
        let invited = try server.service.post("/auth/v1/invite?redirect_to=myapp://welcome", #"{"email":"\#(email)","data":{"family":"Lee"}}"#)
        #expect(invited.status == 200, "\(invited.text)")
        #expect(invited.jsonObject?["invited_at"] is String && (invited.jsonObject?["user_metadata"] as? [String: Any])?["family"] as? String == "Lee")
        let mail = try sink.waitForMail(to: email)
        #expect(mail.headers["subject"] == "You have been invited")
        let path = try #require(mail.verifyPath)
        #expect(path.contains("type=invite") && path.contains("redirect_to=myapp%3A%2F%2Fwelcome"), "\(path)")
        let opened = try server.client().request("GET", path, headers: [])
        #expect(opened.status == 303 && opened.header("Location")?.hasPrefix("myapp://welcome#access_token=") == true)
        let again = try server.service.post("/auth/v1/invite", #"{"email":"\#(email)"}"#)
        #expect(again.status == 422 && again.header("x-sb-error-code") == "email_exists")
        let notAdmin = try server.post("/auth/v1/invite", #"{"email":"\#(TestServer.email("adm"))"}"#)
        #expect(notAdmin.status == 401 || notAdmin.status == 403)
    }

    @Test func whatIsNotOfferedAnswersGoTruesErrors() throws {
        let sso = try server.post("/auth/v1/sso", #"{"domain":"example.com"}"#)
        #expect(
            sso.status == 404 && sso.header("x-sb-error-code") == "saml_provider_disabled" && sso.jsonObject?["message"] as? String == "SAML 2.0 is disabled")
        let phone = try server.post("/auth/v1/signup", #"{"phone":"+15555550100","password":"Secret-pass-1"}"#)
        #expect(
            phone.status == 400 && phone.header("x-sb-error-code") == "phone_provider_disabled"
                && phone.jsonObject?["message"] as? String == "Phone signups are disabled")
        let phoneLogin = try server.post("/auth/v1/token?grant_type=password", #"{"phone":"+15555550100","password":"Secret-pass-1"}"#)
        #expect(phoneLogin.status == 422 && phoneLogin.header("x-sb-error-code") == "phone_provider_disabled")
        let sms = try server.post("/auth/v1/verify", #"{"type":"sms","phone":"+15555550100","token":"123456"}"#)
        #expect(
            sms.status == 403 && sms.header("x-sb-error-code") == "otp_expired" && sms.jsonObject?["message"] as? String == "Token has expired or is invalid")
        let badPhone = try server.post("/auth/v1/verify", #"{"type":"sms","phone":"12ab","token":"123456"}"#)
        #expect(badPhone.status == 400 && badPhone.jsonObject?["message"] as? String == "Invalid phone number format (E.164 required)")
        let oauth = try server.get("/auth/v1/oauth/authorize?client_id=x")
        #expect(oauth.status == 404 && oauth.header("x-sb-error-code") == "feature_disabled")
        let adminSSO = try server.service.get("/auth/v1/admin/sso/providers")
        #expect(adminSSO.status == 404 && adminSSO.header("x-sb-error-code") == "saml_provider_disabled")
    }
}

/// `DISABLE_SIGNUP`, `EXTERNAL_ANONYMOUS_USERS_ENABLED`, `EXTERNAL_EMAIL_ENABLED`.
@Suite("Auth provider settings", .serialized)
struct AuthProviderSettingsTests {
    @Test func disabledSignUpsAndProvidersAnswerGoTruesErrors() throws {
        let server = try TestServer { config in
            config.auth.disableSignup = true
            config.auth.anonymousUsersEnabled = false
            config.auth.emailEnabled = false
        }
        let http = server.client()
        let settings = try #require(try http.request("GET", "/auth/v1/settings", headers: server.headers()).jsonObject)
        #expect(settings["disable_signup"] as? Bool == true)
        let external = try #require(settings["external"] as? [String: Any])
        #expect(external["anonymous_users"] as? Bool == false && external["email"] as? Bool == false)
        let anonymous = try http.request("POST", "/auth/v1/signup", headers: server.headers(), body: "{}")
        #expect(anonymous.status == 422 && anonymous.header("x-sb-error-code") == "anonymous_provider_disabled")
        let signUp = try http.request("POST", "/auth/v1/signup", headers: server.headers(), body: #"{"email":"x@example.com","password":"Secret-pass-1"}"#)
        #expect(signUp.status == 422 && signUp.header("x-sb-error-code") == "signup_disabled")
        let otp = try http.request("POST", "/auth/v1/otp", headers: server.headers(), body: #"{"email":"x@example.com"}"#)
        #expect(otp.status == 422 && otp.header("x-sb-error-code") == "email_provider_disabled")
        let password = try http.request(
            "POST", "/auth/v1/token?grant_type=password", headers: server.headers(), body: #"{"email":"x@example.com","password":"p"}"#)
        #expect(password.status == 422 && password.jsonObject?["message"] as? String == "Email logins are disabled")
        let recover = try http.request("POST", "/auth/v1/recover", headers: server.headers(), body: #"{"email":"x@example.com"}"#)
        #expect(recover.status == 400 && recover.header("x-sb-error-code") == "email_provider_disabled")
        // The admin API still creates users.
        let created = try http.request("POST", "/auth/v1/admin/users", headers: server.headers(server.serviceKey), body: #"{"email":"ops@example.com"}"#)
        #expect(created.status == 200)
    }

    @Test func disabledSignUpsKeepEmailUsersSigningIn() throws {
        let server = try TestServer { config in config.auth.disableSignup = true }
        let http = server.client()
        let email = "existing-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        _ = try http.request(
            "POST", "/auth/v1/admin/users", headers: server.headers(server.serviceKey),
            body: #"{"email":"\#(email)","password":"Secret-pass-1","email_confirm":true}"#)
        let signIn = try http.request(
            "POST", "/auth/v1/token?grant_type=password", headers: server.headers(), body: #"{"email":"\#(email)","password":"Secret-pass-1"}"#)
        #expect(signIn.status == 200)
        let otp = try http.request("POST", "/auth/v1/otp", headers: server.headers(), body: #"{"email":"new@example.com"}"#)
        #expect(otp.status == 422 && otp.header("x-sb-error-code") == "otp_disabled")
        let anonymous = try http.request("POST", "/auth/v1/signup", headers: server.headers(), body: "{}")
        #expect(anonymous.status == 422 && anonymous.header("x-sb-error-code") == "signup_disabled")
    }
}
