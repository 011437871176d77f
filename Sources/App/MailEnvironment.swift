import Auth
import Foundation

/// The e-mail flows' settings from the environment, with GoTrue's names (without its `GOTRUE_`
/// prefix); the README's configuration table lists them.
extension MailConfig {
    mutating func apply(environment: [String: String]) throws {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        func flag(_ name: String) throws -> Bool? {
            guard let text = value(name)?.lowercased() else { return nil }
            switch text {
            case "true", "1", "yes", "on": return true
            case "false", "0", "no", "off": return false
            default: throw ConfigurationError("\(name) must be true or false, not \"\(text)\"")
            }
        }
        func number(_ name: String) throws -> Int? {
            guard let text = value(name) else { return nil }
            guard let number = Int(text.trimmingCharacters(in: .whitespaces)), number >= 0 else {
                throw ConfigurationError("\(name) must be a whole number ≥ 0, not \"\(text)\"")
            }
            return number
        }
        func seconds(_ name: String) throws -> Double? {
            guard let text = value(name) else { return nil }
            guard let seconds = parseDuration(text) else {
                throw ConfigurationError("\(name) must be seconds or a duration such as 60s, 5m, 1h; not \"\(text)\"")
            }
            return seconds
        }
        if let on = try flag("MAILER_AUTOCONFIRM") { autoconfirm = on }
        if let on = try flag("MAILER_SECURE_EMAIL_CHANGE_ENABLED") { secureEmailChange = on }
        if let on = try flag("SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION") { requireReauthentication = on }
        if let value = try seconds("MAILER_OTP_EXP") { otpExpiry = value }
        if let value = try number("MAILER_OTP_LENGTH") { otpLength = (6...10).contains(value) ? value : 6 }
        if let value = try number("MAILER_OTP_MAX_FAILURES") { otpMaxFailures = max(1, value) }
        if let value = try seconds("SMTP_MAX_FREQUENCY") { maxFrequency = value }
        if let value = try seconds("EXTERNAL_FLOW_STATE_EXPIRY_DURATION") { flowStateExpiry = max(300, value) }
        if let value = try number("RATE_LIMIT_EMAIL_SENT") { emailSentLimit = RateLimit(hits: value, window: 3600) }
        if let value = try number("RATE_LIMIT_OTP") { otpRequestLimit = RateLimit(hits: value, window: 300) }
        if let value = try number("RATE_LIMIT_VERIFY") { verifyLimit = RateLimit(hits: value, window: 300) }
        externalURL = value("API_EXTERNAL_URL")
        allowList = (value("URI_ALLOW_LIST") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for kind in MailKind.allCases {
            var template = MailTemplate.standard(kind)
            var changed = false
            if let path = value("MAILER_TEMPLATES_\(kind.settingName)") {
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw ConfigurationError("MAILER_TEMPLATES_\(kind.settingName): cannot read the file \(path)")
                }
                template.body = text
                changed = true
            }
            if let subject = value("MAILER_SUBJECTS_\(kind.settingName)") {
                template.subject = subject
                changed = true
            }
            if changed { templates[kind] = template }
        }
        // Every SMTP setting is checked, with or without SMTP_HOST.
        var server = SMTPConfig(host: value("SMTP_HOST") ?? "")
        if let port = try number("SMTP_PORT") {
            guard (1...65535).contains(port) else { throw ConfigurationError("SMTP_PORT must be 1…65535, not \(port)") }
            server.port = port
        }
        server.user = value("SMTP_USER")
        server.password = environment["SMTP_PASS"]
        if let text = value("SMTP_TLS") {
            guard let security = SMTPSecurity(rawValue: text.lowercased()) else {
                throw ConfigurationError("SMTP_TLS must be one of \(SMTPSecurity.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(text)\"")
            }
            server.security = security
        }
        server.caFile = value("SMTP_CA_FILE")
        if let caFile = server.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ConfigurationError("SMTP_CA_FILE: cannot read \(caFile)")
        }
        let admin = value("SMTP_ADMIN_EMAIL") ?? sender.address
        guard admin.contains("@"), !admin.contains(where: { $0.isWhitespace || $0 == "<" || $0 == ">" }) else {
            throw ConfigurationError("SMTP_ADMIN_EMAIL must be a bare address, not \"\(admin)\"")
        }
        sender = MailSender(address: admin, name: environment["SMTP_SENDER_NAME"] ?? "")
        if !server.host.isEmpty { smtp = server }
    }

    /// The `--print-config` rows (the password masked).
    func summaryRows(defaultExternalURL: String) -> [(String, String)] {
        [
            ("API_EXTERNAL_URL", externalURL ?? "(unset: \(defaultExternalURL))"), ("URI_ALLOW_LIST", allowList.joined(separator: ",")),
            ("MAILER_AUTOCONFIRM", "\(autoconfirm)"), ("MAILER_SECURE_EMAIL_CHANGE_ENABLED", "\(secureEmailChange)"),
            ("MAILER_OTP_EXP", "\(Int(otpExpiry)) s"), ("MAILER_OTP_LENGTH", "\(otpLength)"), ("MAILER_OTP_MAX_FAILURES", "\(otpMaxFailures)"),
            ("MAILER_TEMPLATES_*", templates.isEmpty ? "(defaults)" : templates.keys.map(\.rawValue).sorted().joined(separator: ",")),
            ("SMTP_HOST", smtp.map { "\($0.host):\($0.port) (SMTP_TLS \($0.security.rawValue))" } ?? "(unset: mails are written to the log)"),
            ("SMTP_USER", smtp?.user ?? "(unset)"), ("SMTP_PASS", (smtp?.password ?? "").isEmpty ? "(unset)" : "****"),
            ("SMTP_CA_FILE", smtp?.caFile ?? "(unset: the system's trust store)"),
            ("SMTP_ADMIN_EMAIL", sender.name.isEmpty ? sender.address : "\(sender.address) (\(sender.name))"),
            ("SMTP_MAX_FREQUENCY", "\(Int(maxFrequency)) s"), ("RATE_LIMIT_EMAIL_SENT", "\(emailSentLimit.hits) per hour"),
            ("RATE_LIMIT_OTP", "\(otpRequestLimit.hits) per 300 s"), ("RATE_LIMIT_VERIFY", "\(verifyLimit.hits) per 300 s"),
            ("EXTERNAL_FLOW_STATE_EXPIRY_DURATION", "\(Int(flowStateExpiry)) s"),
            ("SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION", "\(requireReauthentication)")
        ]
    }
}
