import Auth
import Foundation
import HTTP
import Postgres
import Synchronization
import TestSupport
import Testing

/// GoTrue's phone sign-in over HTTP, with the codes sent through a fake Twilio on loopback that
/// speaks Twilio's Messages API: sign-up, `/otp`, `/verify`, `/resend`, phone changes, and what
/// an attacker can try (a wrong, reused, expired or another number's code; the budgets).
@Suite("Auth: phone sign-in", .serialized)
struct PhoneAuthTests {
    /// The fake Twilio: records each message and answers as Twilio does (or as told).
    final class FakeTwilio: Sendable {
        let received = Mutex<[HTTPRequest]>([])
        let failing = Mutex(false)

        func respond(_ request: HTTPRequest) -> HTTPResponse {
            received.withLock { $0.append(request) }
            if failing.withLock({ $0 }) {
                return .json(.badRequest, #"{"code":21211,"message":"The 'To' number is not a valid phone number.","status":400}"#)
            }
            return .json(.created, #"{"sid":"SM\#(received.withLock { $0.count })","status":"queued"}"#)
        }

        /// The form fields of the last message to `phone` (`+` and digits).
        func lastMessage(to phone: String) -> [String: String]? {
            received.withLock { requests in
                requests.map { PhoneAuthTests.form(String(decoding: $0.body, as: UTF8.self)) }.last { $0["To"] == phone }
            }
        }

        /// The code in the last message to `phone`.
        func code(to phone: String) throws -> String {
            let body = try #require(lastMessage(to: phone)?["Body"])
            return String(body.split(separator: " ").last ?? "")
        }

        var count: Int { received.withLock { $0.count } }
    }

    let twilio = FakeTwilio()
    let twilioServer: HTTPServer
    let server: TestServer

    init() throws {
        let twilio = twilio
        twilioServer = HTTPServer(port: 0, responder: { twilio.respond($0) })
        try twilioServer.start()
        let url = "http://127.0.0.1:\(twilioServer.port)"
        server = try TestServer { config in
            config.auth.sms.enabled = true
            config.auth.sms.otpExpiry = 600
            config.auth.sms.testOTPs = ["15550000000": "123456"]
            config.auth.sms.sentLimit = RateLimit(hits: 1000, window: 3600)
            config.auth.mail.verifyLimit = RateLimit(hits: 1000, window: 300)
            config.auth.mail.otpRequestLimit = RateLimit(hits: 1000, window: 300)
            var provider = TwilioConfig(accountSID: "AC123", authToken: "twilio-secret", messageServiceSID: "MG456")
            provider.apiURL = url
            config.auth.sms.twilio = provider
        }
    }

    static func form(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }

    /// A random number nobody has: (as sent, `+` and digits; as stored, digits).
    static func number() -> (given: String, digits: String) {
        let digits = "1555" + String(Int.random(in: 1_000_000...9_999_999))
        return ("+" + digits, digits)
    }

    func verify(_ phone: String, _ code: String, type: String = "sms") throws -> TestResponse {
        try server.post("/auth/v1/verify", #"{"type":"\#(type)","phone":"\#(phone)","token":"\#(code)"}"#)
    }

    func expectError(_ response: TestResponse, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.jsonObject?["code"] as? String == code, "\(response.text)", sourceLocation: sourceLocation)
    }

    @Test func signUpWaitsForTheCodeSentThroughTwilio() throws {
        let (given, digits) = Self.number()
        let signUp = try server.post("/auth/v1/signup", #"{"phone":"\#(given)","password":"Secret-pass-1"}"#)
        #expect(signUp.status == 200)
        let user = try #require(signUp.jsonObject)
        #expect(user["access_token"] == nil && user["phone"] as? String == digits && user["confirmation_sent_at"] is String)
        let request = try #require(twilio.received.withLock { $0.last })
        #expect(request.method == .post && request.path == "/2010-04-01/Accounts/AC123/Messages.json")
        #expect(request.headers["Authorization"] == "Basic " + Data("AC123:twilio-secret".utf8).base64EncodedString())
        let message = try #require(twilio.lastMessage(to: given))
        #expect(message["From"] == "MG456" && message["Channel"] == "sms")
        let code = try twilio.code(to: given)
        #expect(code.count == 6 && message["Body"] == "Your code is \(code)")

        let early = try server.post("/auth/v1/token?grant_type=password", #"{"phone":"\#(given)","password":"Secret-pass-1"}"#)
        expectError(early, 400, "phone_not_confirmed")
        let wrongCode = code == "000000" ? "000001" : "000000"
        expectError(try verify(given, wrongCode), 403, "otp_expired")

        let verified = try verify(given, code)
        #expect(verified.status == 200)
        let session = try #require(verified.jsonObject)
        let confirmed = try #require(session["user"] as? [String: Any])
        #expect(session["access_token"] is String && confirmed["phone_confirmed_at"] is String)
        let identities = try #require(confirmed["identities"] as? [[String: Any]])
        #expect(identities.map { $0["provider"] as? String } == ["phone"])
        #expect((confirmed["app_metadata"] as? [String: Any])?["provider"] as? String == "phone")

        // Single use: the code is gone once spent.
        expectError(try verify(given, code), 403, "otp_expired")
        let signIn = try server.post("/auth/v1/token?grant_type=password", #"{"phone":"\#(digits)","password":"Secret-pass-1"}"#)
        #expect(signIn.status == 200 && signIn.jsonObject?["access_token"] is String)
        let again = try server.post("/auth/v1/signup", #"{"phone":"\#(given)","password":"Secret-pass-2"}"#)
        expectError(again, 422, "user_already_exists")
    }

    @Test func anotherNumbersCodeAndAnExpiredCodeAreRefused() throws {
        let first = Self.number()
        let second = Self.number()
        for number in [first, second] {
            let otp = try server.post("/auth/v1/otp", #"{"phone":"\#(number.given)"}"#)
            #expect(otp.status == 200 && (otp.jsonObject?["message_id"] as? String)?.hasPrefix("SM") == true)
        }
        let secondCode = try twilio.code(to: second.given)
        let firstCode = try twilio.code(to: first.given)
        if secondCode != firstCode { expectError(try verify(first.given, secondCode), 403, "otp_expired") }

        _ = try Connection(conninfo: server.databaseURL).query(
            "UPDATE auth.one_time_tokens SET created_at = now() - interval '601 seconds' WHERE relates_to = \(second.digits)")
        expectError(try verify(second.given, secondCode), 403, "otp_expired")

        let verified = try verify(first.digits, firstCode)
        #expect(verified.status == 200 && verified.jsonObject?["refresh_token"] is String)
        let unknown = try server.post("/auth/v1/otp", #"{"phone":"\#(Self.number().given)","create_user":false}"#)
        expectError(unknown, 422, "otp_disabled")
        expectError(try server.post("/auth/v1/otp", #"{"phone":"+0123"}"#), 400, "validation_failed")
        expectError(try verify("\(first.given)-invalid", firstCode), 400, "validation_failed")
    }

    @Test func resendWaitsForTheIntervalAndReplacesTheCode() throws {
        let unknown = try server.post("/auth/v1/resend", #"{"type":"sms","phone":"\#(Self.number().given)"}"#)
        #expect(unknown.status == 200 && unknown.text == "{}")
        let number = Self.number()
        _ = try server.post("/auth/v1/otp", #"{"phone":"\#(number.given)"}"#)
        let oldCode = try twilio.code(to: number.given)
        let early = try server.post("/auth/v1/resend", #"{"type":"sms","phone":"\#(number.given)"}"#)
        expectError(early, 429, "over_sms_send_rate_limit")
        #expect(early.header("Retry-After") != nil)

        _ = try Connection(conninfo: server.databaseURL).query("UPDATE auth.users SET confirmation_sent_at = NULL WHERE phone = \(number.digits)")
        let resent = try server.post("/auth/v1/resend", #"{"type":"sms","phone":"\#(number.given)"}"#)
        #expect(resent.status == 200 && resent.jsonObject?["message_id"] is String)
        let newCode = try twilio.code(to: number.given)
        if newCode != oldCode { expectError(try verify(number.given, oldCode), 403, "otp_expired") }
        #expect(try verify(number.given, newCode).status == 200)
        let confirmed = try server.post("/auth/v1/resend", #"{"type":"sms","phone":"\#(number.given)"}"#)
        #expect(confirmed.status == 200 && confirmed.text == "{}")
    }

    @Test func phoneChangeConfirmsTheNewNumber() throws {
        let (_, token, _) = try server.signUp()
        let number = Self.number()
        let update = try server.request("PUT", "/auth/v1/user", token: token, body: #"{"phone":"\#(number.given)"}"#)
        #expect(update.status == 200 && update.jsonObject?["new_phone"] as? String == number.digits)
        let code = try twilio.code(to: number.given)
        // The change's code is not a confirmation code, and the other way round.
        expectError(try verify(number.given, code, type: "sms"), 403, "otp_expired")
        let resent = try server.post("/auth/v1/resend", #"{"type":"phone_change","phone":"\#(number.given)"}"#)
        #expect(resent.status == 200 && resent.text == "{}")
        let changed = try verify(number.given, code, type: "phone_change")
        #expect(changed.status == 200)
        let user = try #require(changed.jsonObject?["user"] as? [String: Any])
        #expect(user["phone"] as? String == number.digits && user["phone_confirmed_at"] is String && user["new_phone"] == nil)
        let providers = (user["app_metadata"] as? [String: Any])?["providers"] as? [String]
        #expect(providers == ["email", "phone"])

        let (_, other, _) = try server.signUp()
        let taken = try server.request("PUT", "/auth/v1/user", token: other, body: #"{"phone":"\#(number.given)"}"#)
        expectError(taken, 422, "phone_exists")
    }

    @Test func aFailedSendLeavesNoUserAndTestNumbersSendNothing() throws {
        twilio.failing.withLock { $0 = true }
        defer { twilio.failing.withLock { $0 = false } }
        let number = Self.number()
        let failed = try server.post("/auth/v1/otp", #"{"phone":"\#(number.given)"}"#)
        expectError(failed, 422, "sms_send_failed")
        #expect((failed.jsonObject?["message"] as? String)?.hasPrefix("Error sending confirmation OTP to provider: The 'To' number") == true)
        let left = try Connection(conninfo: server.databaseURL).query("SELECT count(*) FROM auth.users WHERE phone = \(number.digits)")
        #expect(left.scalar == "0")

        let before = twilio.count
        let test = try server.post("/auth/v1/otp", #"{"phone":"+1 555 000 0000"}"#)
        #expect(test.status == 200 && test.jsonObject?["message_id"] as? String == "test-otp" && twilio.count == before)
        #expect(try verify("15550000000", "123456").status == 200)
    }

    @Test func wrongCodesForANumberRunOutItsAttempts() throws {
        let number = Self.number()
        _ = try server.post("/auth/v1/otp", #"{"phone":"\#(number.given)"}"#)
        let code = try twilio.code(to: number.given)
        let wrong = code == "999999" ? "999998" : "999999"
        for _ in 0..<5 { expectError(try verify(number.given, wrong), 403, "otp_expired") }
        expectError(try verify(number.given, code), 429, "over_request_rate_limit")
    }
}

/// The phone provider switched off, and the SMS budget spent.
@Suite("Auth: phone provider settings", .serialized)
struct PhoneProviderSettingsTests {
    @Test func aDisabledProviderRefusesEveryPhoneEndpoint() throws {
        let server = try TestServer()
        let otp = try server.post("/auth/v1/otp", #"{"phone":"+15551234567"}"#)
        #expect(otp.status == 400 && otp.jsonObject?["code"] as? String == "phone_provider_disabled")
        let signUp = try server.post("/auth/v1/signup", #"{"phone":"+15551234567","password":"Secret-pass-1"}"#)
        #expect(signUp.status == 400 && signUp.jsonObject?["message"] as? String == "Phone signups are disabled")
        let resend = try server.post("/auth/v1/resend", #"{"type":"sms","phone":"+15551234567"}"#)
        #expect(resend.status == 400 && resend.jsonObject?["message"] as? String == "Phone logins are disabled")
        let signIn = try server.post("/auth/v1/token?grant_type=password", #"{"phone":"+15551234567","password":"Secret-pass-1"}"#)
        #expect(signIn.status == 422 && signIn.jsonObject?["code"] as? String == "phone_provider_disabled")
        let settings = try server.get("/auth/v1/settings")
        #expect((settings.jsonObject?["external"] as? [String: Any])?["phone"] as? Bool == false)
    }

    @Test func theSMSBudgetIsSharedByEveryNumber() throws {
        let server = try TestServer { config in
            config.auth.sms.enabled = true
            config.auth.sms.autoconfirm = true
            config.auth.sms.sentLimit = RateLimit(hits: 2, window: 3600)
        }
        for number in ["+15552000001", "+15552000002"] {
            #expect(try server.post("/auth/v1/otp", #"{"phone":"\#(number)"}"#).status == 200)
        }
        let over = try server.post("/auth/v1/otp", #"{"phone":"+15552000003"}"#)
        #expect(over.status == 429 && over.jsonObject?["code"] as? String == "over_sms_send_rate_limit")
        let settings = try server.get("/auth/v1/settings")
        #expect(settings.jsonObject?["phone_autoconfirm"] as? Bool == true)
        // Autoconfirm: a sign-up is answered with a session at once.
        let signUp = try server.post("/auth/v1/signup", #"{"phone":"+15552000004","password":"Secret-pass-1"}"#)
        #expect(signUp.status == 200 && signUp.jsonObject?["access_token"] is String)
    }
}
