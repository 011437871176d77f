import Auth
import Foundation
import Identity
import Logging
import Postgres
import Synchronization
import TestSupport
import Testing

/// The guards around GoTrue's e-mail flows, on `MailFlowTests`'s server and SMTP sink: wrong-code
/// limits, redirect targets and malformed verify requests.
@Suite("Mail flows over HTTP: limits and redirects", .serialized)
struct MailFlowGuardTests {
    let base: MailFlowTests
    var sink: TestSMTPServer { base.sink }
    var server: TestServer { base.server }

    init() throws { base = try MailFlowTests() }

    func confirmedUser(_ email: String, password: String = "Secret-pass-1") throws -> (id: String, token: String) {
        try base.confirmedUser(email, password: password)
    }

    func forgetSentTimes(_ email: String) throws { try base.forgetSentTimes(email) }

    @Test func wrongCodesLockCodeEntryForTheAddress() throws {
        let email = TestServer.email("m")
        _ = try confirmedUser(email)
        #expect(try server.post("/auth/v1/otp", #"{"email":"\#(email)"}"#).status == 200)
        let code = try #require(try sink.waitForMail(to: email).code)
        let wrongCode = code == "111111" ? "222222" : "111111"
        for _ in 0..<5 {
            #expect(try server.post("/auth/v1/verify", #"{"type":"email","email":"\#(email)","token":"\#(wrongCode)"}"#).status == 403)
        }
        let locked = try server.post("/auth/v1/verify", #"{"type":"email","email":"\#(email)","token":"\#(code)"}"#)
        #expect(locked.status == 429 && locked.jsonObject?["code"] as? String == "over_request_rate_limit")
    }

    /// Forty wrong codes at once for one address: no more than the limit (5) are checked, however
    /// the requests interleave; a right code afterwards is refused too, and a right code within
    /// the limit gives its attempt back.
    @Test func aBurstOfWrongCodesGetsNoMoreChecksThanTheLimit() throws {
        let email = TestServer.email("m")
        _ = try confirmedUser(email)
        #expect(try server.post("/auth/v1/otp", #"{"email":"\#(email)"}"#).status == 200)
        let code = try #require(try sink.waitForMail(to: email).code)
        let wrongCode = code == "111111" ? "222222" : "111111"
        final class Statuses: Sendable { let list = Mutex<[Int]>([]) }
        let statuses = Statuses()
        let group = DispatchGroup()
        for _ in 0..<40 {
            group.enter()
            Thread.detachNewThread { [server] in
                let status =
                    (try? server.post("/auth/v1/verify", #"{"type":"email","email":"\#(email)","token":"\#(wrongCode)"}"#).status) ?? 0
                statuses.list.withLock { $0.append(status) }
                group.leave()
            }
        }
        group.wait()
        let answered = statuses.list.withLock { $0 }
        #expect(answered.filter { $0 == 403 }.count == 5, "codes checked: \(answered.sorted())")
        #expect(answered.filter { $0 == 429 }.count == 35)
        #expect(try server.post("/auth/v1/verify", #"{"type":"email","email":"\#(email)","token":"\#(code)"}"#).status == 429)

        let other = TestServer.email("m")
        _ = try confirmedUser(other)
        for round in 1...6 {
            try forgetSentTimes(other)
            #expect(try server.post("/auth/v1/otp", #"{"email":"\#(other)"}"#).status == 200)
            let fresh = try #require(try sink.waitForMail(to: other, count: round).code)
            #expect(try server.post("/auth/v1/verify", #"{"type":"email","email":"\#(other)","token":"\#(fresh)"}"#).status == 200, "right code \(round)")
        }
    }

    @Test func redirectsOnlyToTheSiteOrTheAllowList() throws {
        let email = TestServer.email("m")
        _ = try confirmedUser(email)
        #expect(try server.post("/auth/v1/recover?redirect_to=https%3A%2F%2Fevil.example.com%2Fsteal", #"{"email":"\#(email)"}"#).status == 200)
        let mail = try sink.waitForMail(to: email)
        let location = try server.client().request("GET", try #require(mail.verifyPath)).header("Location") ?? ""
        #expect(location.hasPrefix(MailFlowTests.site + "#access_token="))
    }

    /// A magic link, a recovery and a sign-up requested with a `redirect_to` that a browser reads
    /// as another site (in the query, the header and the link itself) lead to SITE_URL.
    @Test func hostileRedirectsNeverCarryTheSessionAway() throws {
        let hostile = [
            #"http://evil.example\@127.0.0.1:3000/"#, "http://evil.example%5C@evil.example/", "https:evil.example", "http://ev\til.example\\@127.0.0.1:3000"
        ]
        func escaped(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "" }
        func landing(_ mail: ReceivedMail, override: String? = nil) throws -> String {
            var path = try #require(mail.verifyPath)
            if let override { path = path.replacing(#/redirect_to=[^&]*/#, with: "redirect_to=" + escaped(override)) }
            return try server.client().request("GET", path).header("Location") ?? ""
        }
        for redirect in hostile {
            let email = TestServer.email("m")
            _ = try confirmedUser(email)
            #expect(try server.post("/auth/v1/otp?redirect_to=\(escaped(redirect))", #"{"email":"\#(email)"}"#).status == 200)
            #expect(try landing(sink.waitForMail(to: email)).hasPrefix(MailFlowTests.site + "#access_token="), "magic link, query: \(redirect)")
            try forgetSentTimes(email)
            let recover = try server.post("/auth/v1/recover", #"{"email":"\#(email)"}"#, headers: [("redirect_to", redirect)])
            #expect(recover.status == 200)
            #expect(try landing(sink.waitForMail(to: email, count: 2)).hasPrefix(MailFlowTests.site + "#access_token="), "recovery, header: \(redirect)")
            let newcomer = TestServer.email("m")
            #expect(try server.post("/auth/v1/signup?redirect_to=\(escaped(redirect))", #"{"email":"\#(newcomer)","password":"Secret-pass-1"}"#).status == 200)
            #expect(
                try landing(sink.waitForMail(to: newcomer), override: redirect).hasPrefix(MailFlowTests.site + "#access_token="), "sign-up link: \(redirect)")
        }
    }

    @Test func verifyRefusesMalformedRequests() throws {
        #expect(
            try server.post("/auth/v1/verify", #"{"token":"123456","email":"a@example.com"}"#).jsonObject?["message"] as? String
                == "Verify requires a verification type")
        #expect(try server.post("/auth/v1/verify", #"{"type":"signup"}"#).jsonObject?["message"] as? String == "Verify requires either a token or a token hash")
        #expect(
            try server.post("/auth/v1/verify", #"{"type":"signup","token_hash":"abc","email":"a@example.com"}"#).jsonObject?["message"] as? String
                == "Only the token_hash and type should be provided")
        // SMS verification: GoTrue's answer where no user has a phone (the code is wrong).
        let sms = try server.post("/auth/v1/verify", #"{"type":"sms","token":"123456","phone":"+1555"}"#)
        #expect(sms.status == 403 && sms.header("x-sb-error-code") == "otp_expired")
        let link = try server.client().request("GET", "/auth/v1/verify?type=signup")
        #expect(link.status == 400)
        let unknownHash = try server.post("/auth/v1/verify", #"{"type":"signup","token_hash":"pkce_0000"}"#)
        #expect(unknownHash.status == 403 && unknownHash.jsonObject?["message"] as? String == "Email link is invalid or has expired")
        let pkceLink = try server.client().request(
            "GET", "/auth/v1/verify?type=signup&token=pkce_0000&redirect_to=http%3A%2F%2F127.0.0.1%3A3000%2Fdone%3Fx%3D1")
        let location = try #require(pkceLink.header("Location"))
        #expect(location.hasPrefix("http://127.0.0.1:3000/done?x=1&error=access_denied&error_code=otp_expired"))
        #expect(location.hasSuffix("#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb="))
        #expect(try server.get("/auth/v1/settings").jsonObject?["mailer_autoconfirm"] as? Bool == false)
    }
}
