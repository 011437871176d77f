import Auth
import Foundation

/// The phone provider's settings from the environment, with GoTrue's names (without its
/// `GOTRUE_` prefix); docs/configuration.md's configuration table lists them.
extension SMSConfig {
    mutating func apply(environment: [String: String]) throws {
        let env = EnvironmentReader(environment)
        if let on = try env.boolean("EXTERNAL_PHONE_ENABLED") { enabled = on }
        if let on = try env.boolean("SMS_AUTOCONFIRM") { autoconfirm = on }
        if let value = try env.seconds("SMS_OTP_EXP") { otpExpiry = value }
        if let value = try env.integer("SMS_OTP_LENGTH") { otpLength = (6...10).contains(value) ? value : 6 }
        if let value = try env.seconds("SMS_MAX_FREQUENCY") { maxFrequency = value }
        if let value = try env.integer("RATE_LIMIT_SMS_SENT") { sentLimit = RateLimit(hits: value, window: 3600) }
        if let text = env.value("SMS_TEMPLATE") { template = text }
        for pair in env.list("SMS_TEST_OTP") {
            let parts = pair.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[1].isEmpty, let phone = try? PhoneNumber.normalize(parts[0]) else {
                throw ConfigurationError("SMS_TEST_OTP must be number:code pairs separated by commas, not \"\(pair)\"")
            }
            testOTPs[phone] = parts[1]
        }
        if let text = env.value("SMS_TEST_OTP_VALID_UNTIL") {
            guard let date = ISO8601DateFormatter().date(from: text) else {
                throw ConfigurationError("SMS_TEST_OTP_VALID_UNTIL must be an RFC 3339 time, not \"\(text)\"")
            }
            testOTPValidUntil = date
        }
        try applyProvider(env)
    }

    /// `SMS_PROVIDER` and its credentials: `twilio` needs all three; unset, messages go to the log.
    private mutating func applyProvider(_ env: EnvironmentReader) throws {
        guard let provider = env.value("SMS_PROVIDER") else { return }
        guard provider == "twilio" else { throw ConfigurationError("SMS_PROVIDER must be twilio (or unset: SMS written to the log), not \"\(provider)\"") }
        let names = ["SMS_TWILIO_ACCOUNT_SID", "SMS_TWILIO_AUTH_TOKEN", "SMS_TWILIO_MESSAGE_SERVICE_SID"]
        let values = names.map { env.value($0) ?? "" }
        if let missing = zip(names, values).first(where: { $0.1.isEmpty }) {
            throw ConfigurationError("SMS_PROVIDER is twilio but \(missing.0) is unset")
        }
        var twilio = TwilioConfig(accountSID: values[0], authToken: values[1], messageServiceSID: values[2])
        if let url = env.value("SMS_TWILIO_API_URL") {
            guard let components = URLComponents(string: url), ["http", "https"].contains(components.scheme ?? ""), components.host != nil else {
                throw ConfigurationError("SMS_TWILIO_API_URL must be an http(s) URL, not \"\(url)\"")
            }
            twilio.apiURL = url
        }
        self.twilio = twilio
    }

    /// The `--print-config` rows (the auth token masked).
    func summaryRows() -> [(String, String)] {
        [
            ("EXTERNAL_PHONE_ENABLED", "\(enabled)"), ("SMS_AUTOCONFIRM", "\(autoconfirm)"), ("SMS_OTP_EXP", "\(Int(otpExpiry)) s"),
            ("SMS_OTP_LENGTH", "\(otpLength)"), ("SMS_MAX_FREQUENCY", "\(Int(maxFrequency)) s"), ("RATE_LIMIT_SMS_SENT", "\(sentLimit.hits) per hour"),
            ("SMS_PROVIDER", twilio == nil ? "(unset: SMS are written to the log)" : "twilio"),
            ("SMS_TWILIO_ACCOUNT_SID", twilio?.accountSID ?? "(unset)"), ("SMS_TWILIO_AUTH_TOKEN", twilio == nil ? "(unset)" : "****"),
            ("SMS_TWILIO_MESSAGE_SERVICE_SID", twilio?.messageServiceSID ?? "(unset)"), ("SMS_TWILIO_API_URL", twilio?.apiURL ?? "(unset)"),
            ("SMS_TEMPLATE", template), ("SMS_TEST_OTP", testOTPs.keys.sorted().joined(separator: ",")),
            ("SMS_TEST_OTP_VALID_UNTIL", testOTPValidUntil.map { ISO8601DateFormatter().string(from: $0) } ?? "(unset)")
        ]
    }
}
