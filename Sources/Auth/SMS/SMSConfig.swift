import Foundation

/// The phone provider's settings (GoTrue's `EXTERNAL_PHONE_ENABLED` and `SMS_*` names, in
/// docs/configuration.md).
public struct SMSConfig: Sendable {
    /// `EXTERNAL_PHONE_ENABLED`: phone sign-up, password sign-in by number, `/otp` and `/resend`
    /// with a number, phone changes.
    public var enabled = false
    /// `SMS_AUTOCONFIRM`: phone sign-ups are confirmed at once and answered with a session.
    public var autoconfirm = false
    /// `SMS_OTP_EXP`: seconds a sent code stays valid.
    public var otpExpiry: Double = 60
    /// `SMS_OTP_LENGTH`: digits of a sent code (6 to 10).
    public var otpLength = 6
    /// `SMS_MAX_FREQUENCY`: seconds between two codes of one kind to one user.
    public var maxFrequency: Double = 60
    /// `RATE_LIMIT_SMS_SENT`: SMS per hour, all numbers together (counted in PostgreSQL).
    public var sentLimit = RateLimit(hits: 30, window: 3600)
    /// `SMS_TEMPLATE`: the message, `{{ .Code }}` replaced by the code.
    public var template = "Your code is {{ .Code }}"
    /// `SMS_TEST_OTP`: numbers that get a fixed code and no message (`number:code,…`).
    public var testOTPs: [String: String] = [:]
    /// `SMS_TEST_OTP_VALID_UNTIL`: the test codes are ignored after this time; nil: always valid.
    public var testOTPValidUntil: Date?
    /// `SMS_PROVIDER`: nil, the test sender, which writes each message to the log.
    public var twilio: TwilioConfig?

    public init() {}

    /// The fixed code of a test number, while test codes are valid.
    func testOTP(for phone: String, now: Date = Date()) -> String? {
        if let until = testOTPValidUntil, now > until { return nil }
        return testOTPs[phone]
    }

    /// The message carrying `code`.
    func message(code: String) -> String {
        var text = template
        for placeholder in ["{{ .Code }}", "{{.Code}}"] { text = text.replacingOccurrences(of: placeholder, with: code) }
        return text
    }

    /// `SMS_PROVIDER` as `/settings` names it.
    var providerName: String { twilio == nil ? "" : "twilio" }
}

/// `SMS_PROVIDER=twilio`: Twilio's Messages API.
public struct TwilioConfig: Sendable, Equatable {
    /// `SMS_TWILIO_ACCOUNT_SID`.
    public var accountSID: String
    /// `SMS_TWILIO_AUTH_TOKEN`.
    public var authToken: String
    /// `SMS_TWILIO_MESSAGE_SERVICE_SID`: the sender (a Messaging Service SID, or a number).
    public var messageServiceSID: String
    /// `SMS_TWILIO_API_URL`: where the API is (a test points it at a loopback fake).
    public var apiURL = "https://api.twilio.com"

    public init(accountSID: String, authToken: String, messageServiceSID: String) {
        self.accountSID = accountSID
        self.authToken = authToken
        self.messageServiceSID = messageServiceSID
    }
}

/// GoTrue's phone numbers: `+` and spaces removed, then E.164 digits (`^[1-9][0-9]{1,14}$`).
public enum PhoneNumber {
    /// The channel a code is sent by: `sms`, or `whatsapp` through Twilio only.
    static func checkChannel(_ channel: String, twilio: Bool) throws(AuthError) {
        guard channel == "sms" || (channel == "whatsapp" && twilio) else {
            throw .validationFailed(
                "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported for Twilio and Twilio Verify providers.")
        }
    }

    public static func normalize(_ text: String) throws(AuthError) -> String {
        let digits = (text.hasPrefix("+") ? String(text.dropFirst()) : text).replacingOccurrences(of: " ", with: "")
        let bytes = Array(digits.utf8)
        guard (2...15).contains(bytes.count), let first = bytes.first, (0x31...0x39).contains(first), bytes.allSatisfy({ (0x30...0x39).contains($0) })
        else {
            throw .validationFailed("Invalid phone number format (E.164 required)")
        }
        return digits
    }
}
