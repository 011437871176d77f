import Auth
import Foundation

/// The e-mail flows' settings from the environment, with GoTrue's names (without its `GOTRUE_`
/// prefix); the configuration table of docs/configuration.md lists them.
extension MailConfig {
    mutating func apply(environment: [String: String]) throws {
        let env = EnvironmentReader(environment)
        if let on = try env.boolean("MAILER_AUTOCONFIRM") { autoconfirm = on }
        if let on = try env.boolean("MAILER_SECURE_EMAIL_CHANGE_ENABLED") { secureEmailChange = on }
        if let on = try env.boolean("SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION") { requireReauthentication = on }
        if let value = try env.seconds("MAILER_OTP_EXP") { otpExpiry = value }
        if let value = try env.integer("MAILER_OTP_LENGTH") { otpLength = (6...10).contains(value) ? value : 6 }
        if let value = try env.integer("MAILER_OTP_MAX_FAILURES") { otpMaxFailures = max(1, value) }
        if let value = try env.seconds("SMTP_MAX_FREQUENCY") { maxFrequency = value }
        if let value = try env.seconds("EXTERNAL_FLOW_STATE_EXPIRY_DURATION") { flowStateExpiry = max(300, value) }
        if let value = try env.integer("RATE_LIMIT_EMAIL_SENT") { emailSentLimit = RateLimit(hits: value, window: 3600) }
        if let value = try env.integer("RATE_LIMIT_OTP") { otpRequestLimit = RateLimit(hits: value, window: 300) }
        if let value = try env.integer("RATE_LIMIT_VERIFY") { verifyLimit = RateLimit(hits: value, window: 300) }
        externalURL = env.value("API_EXTERNAL_URL")
        allowList = (env.value("URI_ALLOW_LIST") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for kind in MailKind.allCases {
            var template = MailTemplate.standard(kind)
            var changed = false
            if let path = env.value("MAILER_TEMPLATES_\(kind.settingName)") {
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw ConfigurationError("MAILER_TEMPLATES_\(kind.settingName): cannot read the file \(path)")
                }
                template.body = text
                changed = true
            }
            if let subject = env.value("MAILER_SUBJECTS_\(kind.settingName)") {
                template.subject = subject
                changed = true
            }
            if changed { templates[kind] = template }
        }
        // Every SMTP setting is checked, with or without SMTP_HOST.
        var server = SMTPConfig(host: env.value("SMTP_HOST") ?? "")
        if let port = try env.integer("SMTP_PORT") {
            guard (1...65535).contains(port) else { throw ConfigurationError("SMTP_PORT must be 1…65535, not \(port)") }
            server.port = port
        }
        server.user = env.value("SMTP_USER")
        server.password = environment["SMTP_PASS"]
        if let text = env.value("SMTP_TLS") {
            guard let security = SMTPSecurity(rawValue: text.lowercased()) else {
                throw ConfigurationError("SMTP_TLS must be one of \(SMTPSecurity.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(text)\"")
            }
            server.security = security
        }
        server.caFile = env.value("SMTP_CA_FILE")
        if let caFile = server.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ConfigurationError("SMTP_CA_FILE: cannot read \(caFile)")
        }
        let admin = env.value("SMTP_ADMIN_EMAIL") ?? sender.address
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
