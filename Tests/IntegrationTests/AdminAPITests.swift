import Auth
import Foundation
import HTTP
import Identity
import Postgres
import TestSupport
import Testing

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
