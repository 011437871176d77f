import Auth
import Foundation
import Identity
import Logging
import Postgres
import Synchronization
import TestSupport
import Testing

/// GoTrue's e-mail flows over HTTP, with mails going through a real SMTP server.
@Suite("Mail flows over HTTP", .serialized)
struct MailFlowTests {
    let sink: TestSMTPServer
    let server: TestServer
    static let site = "http://127.0.0.1:3000"

    init() throws {
        let sink = try TestSMTPServer()
        self.sink = sink
        server = try TestServer { config in
            config.auth.mail.autoconfirm = false
            config.auth.mail.requireReauthentication = true
            // The per-client verify budget (30 per 5 minutes) would answer part of a burst of
            // codes from this one address before the per-address code limit is reached.
            config.auth.mail.verifyLimit = RateLimit(hits: 1000, window: 300)
            config.auth.mail.allowList = ["myapp://**", "https://*.example.org/**"]
            config.auth.siteURL = Self.site
            var smtp = SMTPConfig(host: "127.0.0.1")
            smtp.port = sink.port
            config.auth.mail.smtp = smtp
            config.auth.mail.sender = MailSender(address: "noreply@onboard.test", name: "Onboard \"Team\"")
        }
    }

    func sql(_ text: SQL) throws -> QueryResult {
        try Connection(conninfo: server.databaseURL).query(text)
    }

    /// A confirmed user signed in with a password; returns (id, access token).
    func confirmedUser(_ email: String, password: String = "Secret-pass-1") throws -> (id: String, token: String) {
        // Through the admin API: a confirmed user, and no confirmation mail.
        let created = try server.service.post("/auth/v1/admin/users", #"{"email":"\#(email)","password":"\#(password)","email_confirm":true}"#)
        #expect(created.status == 200)
        let session = try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"\#(password)"}"#)
        let token = try #require(session.jsonObject?["access_token"] as? String)
        let id = try #require((session.jsonObject?["user"] as? [String: Any])?["id"] as? String)
        return (id, token)
    }

    /// Lets the next mail of every kind go out now (the per-address interval has passed).
    func forgetSentTimes(_ email: String) throws {
        _ = try sql(
            """
            UPDATE auth.users SET confirmation_sent_at = NULL, recovery_sent_at = NULL, email_change_sent_at = NULL, reauthentication_sent_at = NULL
            WHERE lower(email) = \(email)
            """)
    }

    static func fragment(_ location: String) -> [String: String] {
        guard let hash = location.firstIndex(of: "#") else { return [:] }
        var out: [String: String] = [:]
        for pair in location[location.index(after: hash)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            out[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return out
    }

    @Test func signUpWaitsForTheConfirmationLink() throws {
        let email = TestServer.email("m")
        let signUp = try server.post("/auth/v1/signup", #"{"email":"\#(email)","password":"Secret-pass-1","data":{"full_name":"Ann"}}"#)
        #expect(signUp.status == 200)
        let user = try #require(signUp.jsonObject)
        #expect(user["access_token"] == nil && user["id"] is String && user["confirmation_sent_at"] is String)
        #expect(user["email_confirmed_at"] is NSNull)
        let early = try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"Secret-pass-1"}"#)
        #expect(early.status == 400 && early.jsonObject?["code"] as? String == "email_not_confirmed")
        let wrong = try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"Wrong-pass-1"}"#)
        #expect(wrong.status == 400 && wrong.jsonObject?["code"] as? String == "invalid_credentials")

        let mail = try sink.waitForMail(to: email)
        #expect(mail.headers["subject"] == "Confirm your email address")
        #expect(mail.headers["from"] == #""Onboard \"Team\"" <noreply@onboard.test>"#)
        #expect(mail.headers["content-type"] == "text/html; charset=utf-8")
        let path = try #require(mail.verifyPath)
        #expect(path.contains("type=signup") && mail.code?.count == 6)
        #expect(try #require(mail.linkToken).count == 56)

        let opened = try server.client().request("GET", path)  // no apikey: links are opened from mail clients
        #expect(opened.status == 303)
        let location = try #require(opened.header("Location"))
        #expect(location.hasPrefix(Self.site + "#access_token="))
        let fields = Self.fragment(location)
        #expect(fields["type"] == "signup" && fields["token_type"] == "bearer" && fields["refresh_token"] != nil)
        let me = try server.get("/auth/v1/user", token: fields["access_token"])
        #expect(me.status == 200 && me.jsonObject?["email_confirmed_at"] is String)
        #expect(try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"Secret-pass-1"}"#).status == 200)

        // Single use: the same link again is GoTrue's error redirect.
        let again = try server.client().request("GET", path)
        #expect(again.status == 303)
        let error = Self.fragment(again.header("Location") ?? "")
        #expect(error["error"] == "access_denied" && error["error_code"] == "otp_expired")
        #expect(error["error_description"] == "Email link is invalid or has expired")

        // Signing up again with a confirmed address: a made-up user, no mail.
        let count = sink.messages().count
        let repeated = try server.post("/auth/v1/signup", #"{"email":"\#(email)","password":"Other-pass-1"}"#)
        #expect(repeated.status == 200 && repeated.jsonObject?["id"] as? String != user["id"] as? String)
        #expect((repeated.jsonObject?["identities"] as? [Any])?.isEmpty == true)
        #expect(sink.messages().count == count)
    }

    /// Someone signs up the victim's address with a password of their own; the victim later
    /// proves the address by a magic link or a recovery code, and the earlier password no longer
    /// opens the account. The sign-up's own confirmation (and its resend) keeps the password.
    @Test func aPasswordSetBeforeTheAddressWasProvenDiesWithAPasswordlessProof() throws {
        let attackerPassword = #""password":"Attacker-pass-1""#
        func signInWithAttackersPassword(_ email: String) throws -> TestResponse {
            try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)",\#(attackerPassword)}"#)
        }
        // By the magic link of /otp.
        let victim = TestServer.email("m")
        #expect(try server.post("/auth/v1/signup", #"{"email":"\#(victim)",\#(attackerPassword)}"#).status == 200)
        _ = try sink.waitForMail(to: victim)
        try forgetSentTimes(victim)
        #expect(try server.post("/auth/v1/otp", #"{"email":"\#(victim)"}"#).status == 200)
        let link = try #require(try sink.waitForMail(to: victim, count: 2).verifyPath)
        let opened = try server.client().request("GET", link)
        let session = Self.fragment(opened.header("Location") ?? "")
        #expect(opened.status == 303 && session["access_token"] != nil)
        let refused = try signInWithAttackersPassword(victim)
        #expect(refused.status == 400 && refused.jsonObject?["code"] as? String == "invalid_credentials")
        #expect(try server.get("/auth/v1/user", token: session["access_token"]).status == 200, "the proving session stays")

        // By a recovery code; the holder then chooses a password.
        let other = TestServer.email("m")
        #expect(try server.post("/auth/v1/signup", #"{"email":"\#(other)",\#(attackerPassword)}"#).status == 200)
        _ = try sink.waitForMail(to: other)
        try forgetSentTimes(other)
        #expect(try server.post("/auth/v1/recover", #"{"email":"\#(other)"}"#).status == 200)
        let code = try #require(try sink.waitForMail(to: other, count: 2).code)
        let recovered = try server.post("/auth/v1/verify", #"{"type":"recovery","email":"\#(other)","token":"\#(code)"}"#)
        let token = try #require(recovered.jsonObject?["access_token"] as? String)
        #expect(try signInWithAttackersPassword(other).status == 400)
        #expect(try server.request("PUT", "/auth/v1/user", token: token, body: #"{"password":"Holder-pass-1"}"#).status == 200)
        #expect(try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(other)","password":"Holder-pass-1"}"#).status == 200)

        // The sign-up's resent confirmation keeps the sign-up's password.
        let owner = TestServer.email("m")
        #expect(try server.post("/auth/v1/signup", #"{"email":"\#(owner)",\#(attackerPassword)}"#).status == 200)
        _ = try sink.waitForMail(to: owner)
        try forgetSentTimes(owner)
        #expect(try server.post("/auth/v1/resend", #"{"type":"signup","email":"\#(owner)"}"#).status == 200)
        let confirm = try #require(try sink.waitForMail(to: owner, count: 2).verifyPath)
        #expect(try server.client().request("GET", confirm).status == 303)
        #expect(try signInWithAttackersPassword(owner).status == 200)
    }

    @Test func pkceSignUpRedirectsWithACodeExchangedOnce() throws {
        let email = TestServer.email("m")
        let verifier = Base64URL.encode(Crypto.randomBytes(48))
        let challenge = Base64URL.encode(Crypto.sha256(Array(verifier.utf8)))
        let signUp = try server.post(
            "/auth/v1/signup?redirect_to=myapp%3A%2F%2Fcallback",
            #"{"email":"\#(email)","password":"Secret-pass-1","code_challenge":"\#(challenge)","code_challenge_method":"S256"}"#)
        #expect(signUp.status == 200)
        let mail = try sink.waitForMail(to: email)
        #expect(mail.linkToken?.hasPrefix("pkce_") == true)
        let path = try #require(mail.verifyPath)
        #expect(path.contains("redirect_to=myapp%3A%2F%2Fcallback"))
        let opened = try server.client().request("GET", path)
        let location = try #require(opened.header("Location"))
        #expect(opened.status == 303 && location.hasPrefix("myapp://callback?code="))
        let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)

        let bad = try server.post("/auth/v1/token?grant_type=pkce", #"{"auth_code":"\#(code)","code_verifier":"\#(String(repeating: "x", count: 50))"}"#)
        #expect(bad.status == 400 && bad.jsonObject?["code"] as? String == "bad_code_verifier")
        let exchanged = try server.post("/auth/v1/token?grant_type=pkce", #"{"auth_code":"\#(code)","code_verifier":"\#(verifier)"}"#)
        #expect(exchanged.status == 200 && exchanged.jsonObject?["access_token"] is String)
        let token = try claimsOf(exchanged)
        #expect((token["amr"] as? [[String: Any]])?.first?["method"] as? String == "email/signup")
        let reused = try server.post("/auth/v1/token?grant_type=pkce", #"{"auth_code":"\#(code)","code_verifier":"\#(verifier)"}"#)
        #expect(reused.status == 404 && reused.jsonObject?["code"] as? String == "flow_state_not_found")
        let empty = try server.post("/auth/v1/token?grant_type=pkce", #"{"auth_code":"","code_verifier":""}"#)
        #expect(empty.status == 400 && empty.jsonObject?["code"] as? String == "validation_failed")
        let half = try server.post("/auth/v1/signup", #"{"email":"\#(TestServer.email("m"))","password":"Secret-pass-1","code_challenge":"\#(challenge)"}"#)
        #expect(half.status == 400)
    }

    func claimsOf(_ response: TestResponse) throws -> [String: Any] {
        try JWT.verifyHS256(try #require(response.jsonObject?["access_token"] as? String), secret: Array(TestServer.secret.utf8)).claims
    }

    @Test func expiredPKCECodeIsFlowStateExpired() throws {
        let email = TestServer.email("m")
        let verifier = Base64URL.encode(Crypto.randomBytes(48))
        let challenge = Base64URL.encode(Crypto.sha256(Array(verifier.utf8)))
        _ = try server.post(
            "/auth/v1/signup", #"{"email":"\#(email)","password":"Secret-pass-1","code_challenge":"\#(challenge)","code_challenge_method":"s256"}"#)
        let path = try #require(try sink.waitForMail(to: email).verifyPath)
        let location = try #require(try server.client().request("GET", path).header("Location"))
        let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
        _ = try sql(
            "UPDATE auth.flow_state SET auth_code_issued_at = now() - interval '10 minutes' WHERE auth_code IS NOT NULL AND user_id = (SELECT id FROM auth.users WHERE email = \(email))"
        )
        let late = try server.post("/auth/v1/token?grant_type=pkce", #"{"auth_code":"\#(code)","code_verifier":"\#(verifier)"}"#)
        #expect(late.status == 422 && late.jsonObject?["code"] as? String == "flow_state_expired")
    }

    @Test func recoveryByCodeChangesThePassword() throws {
        let email = TestServer.email("m")
        _ = try confirmedUser(email)
        let unknown = try server.post("/auth/v1/recover", #"{"email":"nobody-\#(UUID().uuidString.prefix(6))@example.com"}"#)
        #expect(unknown.status == 200 && unknown.text == "{}")
        let recover = try server.post("/auth/v1/recover", #"{"email":"\#(email)"}"#)
        #expect(recover.status == 200 && recover.text == "{}")
        let soon = try server.post("/auth/v1/recover", #"{"email":"\#(email)"}"#)
        #expect(soon.status == 429 && soon.jsonObject?["code"] as? String == "over_email_send_rate_limit")
        #expect((soon.jsonObject?["message"] as? String)?.hasPrefix("For security purposes, you can only request this after") == true)
        // Retry-After says the seconds the message says.
        let retry = try #require(soon.header("Retry-After"))
        #expect((soon.jsonObject?["message"] as? String)?.hasSuffix("after \(retry) seconds.") == true && Int(retry).map { $0 >= 1 } == true)

        let mail = try sink.waitForMail(to: email)
        #expect(mail.headers["subject"] == "Reset your password")
        let code = try #require(mail.code)
        let wrongCode = code == "000000" ? "000001" : "000000"
        let wrong = try server.post("/auth/v1/verify", #"{"type":"recovery","email":"\#(email)","token":"\#(wrongCode)"}"#)
        #expect(wrong.status == 403 && wrong.text == #"{"code":"otp_expired","message":"Token has expired or is invalid"}"#)
        let verified = try server.post("/auth/v1/verify", #"{"type":"recovery","email":"\#(email)","token":"\#(code)"}"#)
        #expect(verified.status == 200)
        let token = try #require(verified.jsonObject?["access_token"] as? String)
        let reused = try server.post("/auth/v1/verify", #"{"type":"recovery","email":"\#(email)","token":"\#(code)"}"#)
        #expect(reused.status == 403 && reused.jsonObject?["code"] as? String == "otp_expired")

        let changed = try server.request("PUT", "/auth/v1/user", token: token, body: #"{"password":"New-pass-2"}"#)
        #expect(changed.status == 200)
        #expect(try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"New-pass-2"}"#).status == 200)
        #expect(try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"Secret-pass-1"}"#).status == 400)
    }

    @Test func aNewerMailVoidsTheOlderAndTokensExpire() throws {
        let email = TestServer.email("m")
        _ = try confirmedUser(email)
        #expect(try server.post("/auth/v1/recover", #"{"email":"\#(email)"}"#).status == 200)
        let first = try sink.waitForMail(to: email)
        try forgetSentTimes(email)
        #expect(try server.post("/auth/v1/otp", #"{"email":"\#(email)","create_user":false}"#).status == 200)
        let second = try sink.waitForMail(to: email, count: 2)
        #expect(second.headers["subject"] == "Your sign-in link" && second.verifyPath?.contains("type=magiclink") == true)
        // Recovery and magic link share one slot: the recovery mail no longer works.
        let old = try server.client().request("GET", try #require(first.verifyPath))
        #expect(Self.fragment(old.header("Location") ?? "")["error_code"] == "otp_expired")
        // An hour later the magic link has expired.
        _ = try sql("UPDATE auth.one_time_tokens SET created_at = now() - interval '2 hours' WHERE relates_to = \(email)")
        let late = try server.post("/auth/v1/verify", #"{"type":"magiclink","email":"\#(email)","token":"\#(try #require(second.code))"}"#)
        #expect(late.status == 403 && late.jsonObject?["code"] as? String == "otp_expired")
        // token_hash verification of a link token.
        try forgetSentTimes(email)
        #expect(try server.post("/auth/v1/otp", #"{"email":"\#(email)"}"#).status == 200)
        let third = try sink.waitForMail(to: email, count: 3)
        let byHash = try server.post("/auth/v1/verify", #"{"type":"email","token_hash":"\#(try #require(third.linkToken))"}"#)
        #expect(byHash.status == 200 && byHash.jsonObject?["access_token"] is String)
    }

    @Test func otpSignsUpNewAddressesUnlessTold() throws {
        let refused = try server.post("/auth/v1/otp", #"{"email":"\#(TestServer.email("m"))","create_user":false}"#)
        #expect(refused.status == 422 && refused.jsonObject?["code"] as? String == "otp_disabled")
        let email = TestServer.email("m")
        let created = try server.post("/auth/v1/otp", #"{"email":"\#(email)","data":{"full_name":"Otto"}}"#)
        #expect(created.status == 200 && created.text == "{}")
        // A new address gets the confirmation mail (autoconfirm is off here).
        let mail = try sink.waitForMail(to: email)
        #expect(mail.headers["subject"] == "Confirm your email address")
        let session = try server.post("/auth/v1/verify", #"{"type":"email","email":"\#(email)","token":"\#(try #require(mail.code))"}"#)
        #expect(session.status == 200)
        let user = try #require(session.jsonObject?["user"] as? [String: Any])
        #expect((user["user_metadata"] as? [String: Any])?["full_name"] as? String == "Otto" && user["email_confirmed_at"] is String)
        let phone = try server.post("/auth/v1/otp", #"{"phone":"+15555550100"}"#)
        #expect(phone.status == 400)
        let both = try server.post("/auth/v1/otp", #"{"email":"\#(email)","phone":"+15555550100"}"#)
        #expect(both.status == 400 && both.jsonObject?["code"] as? String == "validation_failed")
    }

    @Test func resendSendsTheConfirmationAgainOnlyWhilePending() throws {
        let email = TestServer.email("m")
        _ = try server.post("/auth/v1/signup", #"{"email":"\#(email)","password":"Secret-pass-1"}"#)
        let first = try sink.waitForMail(to: email)
        let soon = try server.post("/auth/v1/resend", #"{"type":"signup","email":"\#(email)"}"#)
        #expect(soon.status == 429)
        try forgetSentTimes(email)
        #expect(try server.post("/auth/v1/resend", #"{"type":"signup","email":"\#(email)"}"#).status == 200)
        let second = try sink.waitForMail(to: email, count: 2)
        #expect(first.code != nil && second.linkToken != first.linkToken)
        let bad = try server.post("/auth/v1/resend", #"{"type":"invite","email":"\#(email)"}"#)
        #expect(bad.status == 400)
        let unknown = try server.post("/auth/v1/resend", #"{"type":"signup","email":"nobody@example.com"}"#)
        #expect(unknown.status == 200 && unknown.text == "{}")
    }

    @Test func secureEmailChangeNeedsBothAddresses() throws {
        let old = TestServer.email("m")
        let new = TestServer.email("m")
        let user = try confirmedUser(old)
        let update = try server.request("PUT", "/auth/v1/user", token: user.token, body: #"{"email":"\#(new)"}"#)
        #expect(update.status == 200)
        #expect(update.jsonObject?["email"] as? String == old && update.jsonObject?["new_email"] as? String == new)
        #expect(update.jsonObject?["email_change_sent_at"] is String)
        let toNew = try sink.waitForMail(to: new)
        let toOld = try sink.waitForMail(to: old)
        #expect(toNew.headers["subject"] == "Confirm your new email address" && toNew.body.contains(new))
        #expect(toNew.code != toOld.code)
        // A code is valid only with the address it was sent to.
        let crossed = try server.post("/auth/v1/verify", #"{"type":"email_change","email":"\#(new)","token":"\#(try #require(toOld.code))"}"#)
        #expect(crossed.status == 403)
        let halfway = try server.post("/auth/v1/verify", #"{"type":"email_change","email":"\#(old)","token":"\#(try #require(toOld.code))"}"#)
        #expect(halfway.status == 200)
        #expect(halfway.text == #"{"msg":"Confirmation link accepted. Please proceed to confirm link sent to the other email","code":"200"}"#)
        let done = try server.client().request("GET", try #require(toNew.verifyPath))
        #expect(done.status == 303)
        let fields = Self.fragment(done.header("Location") ?? "")
        #expect(fields["type"] == "email_change" && fields["access_token"] != nil)
        let me = try server.get("/auth/v1/user", token: fields["access_token"])
        #expect(me.jsonObject?["email"] as? String == new && me.jsonObject?["new_email"] == nil)
        #expect(try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(new)","password":"Secret-pass-1"}"#).status == 200)
    }

    @Test func passwordChangeInAnOldSessionNeedsTheReauthenticationCode() throws {
        let email = TestServer.email("m")
        let user = try confirmedUser(email)
        // A fresh session changes the password freely.
        let fresh = try server.request("PUT", "/auth/v1/user", token: user.token, body: #"{"password":"Fresh-pass-2"}"#)
        #expect(fresh.status == 200)
        _ = try sql("UPDATE auth.sessions SET created_at = now() - interval '25 hours' WHERE user_id = \(user.id)::uuid")
        let needed = try server.request("PUT", "/auth/v1/user", token: user.token, body: #"{"password":"Other-pass-3"}"#)
        #expect(needed.status == 400 && needed.jsonObject?["code"] as? String == "reauthentication_needed")
        let asked = try server.get("/auth/v1/reauthenticate", token: user.token)
        #expect(asked.status == 200 && asked.text == "{}")
        let mail = try sink.waitForMail(to: email)
        #expect(mail.verifyPath == nil)
        let code = try #require(mail.code)
        #expect(mail.headers["subject"] == "\(code) is your verification code")
        let wrong = try server.request(
            "PUT", "/auth/v1/user", token: user.token, body: #"{"password":"Other-pass-3","nonce":"\#(code == "000000" ? "000001" : "000000")"}"#)
        #expect(wrong.status == 422 && wrong.jsonObject?["code"] as? String == "reauthentication_not_valid")
        let right = try server.request("PUT", "/auth/v1/user", token: user.token, body: #"{"password":"Other-pass-3","nonce":"\#(code)"}"#)
        #expect(right.status == 200)
        #expect(try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"Other-pass-3"}"#).status == 200)
    }

}
