import Foundation

/// The e-mail flows' settings (GoTrue's names in docs/configuration.md).
public struct MailConfig: Sendable {
    /// `MAILER_AUTOCONFIRM`: sign-ups are confirmed at once and answered with a session. Off: they
    /// get a confirmation mail, and password sign-in waits for the confirmation.
    public var autoconfirm = true
    /// `MAILER_SECURE_EMAIL_CHANGE_ENABLED`: an e-mail change is confirmed from both addresses.
    public var secureEmailChange = true
    /// `MAILER_OTP_EXP`: seconds a mailed link or code stays valid.
    public var otpExpiry: Double = 3600
    /// `MAILER_OTP_LENGTH`: digits of a mailed code (6 to 10).
    public var otpLength = 6
    /// `MAILER_OTP_MAX_FAILURES`: wrong codes for one address within `otpExpiry` before code
    /// entry for that address is refused (429) until the window ends. Links are not affected.
    public var otpMaxFailures = 5
    /// `SMTP_MAX_FREQUENCY`: seconds between two mails of one kind to one user.
    public var maxFrequency: Double = 60
    /// `RATE_LIMIT_EMAIL_SENT`: mails per hour, all addresses together (counted in PostgreSQL).
    public var emailSentLimit = RateLimit(hits: 30, window: 3600)
    /// `RATE_LIMIT_OTP`: mail-sending requests (`/otp`, `/recover`, `/resend`, e-mail changes)
    /// per 5 minutes per client.
    public var otpRequestLimit = RateLimit(hits: 30, window: 300)
    /// `RATE_LIMIT_VERIFY`: `GET`/`POST /verify` per 5 minutes per client.
    public var verifyLimit = RateLimit(hits: 30, window: 300)
    /// `FLOW_STATE_EXPIRY`: seconds a PKCE code may wait for its exchange after the link issued it.
    public var flowStateExpiry: Double = 300
    /// `SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION`: a password change in a session older
    /// than 24 hours needs the code of `/reauthenticate` as `nonce`.
    public var requireReauthentication = false
    /// `URI_ALLOW_LIST`: further allowed `redirect_to` targets (globs: `*` within a host label or
    /// path segment, `**` across them).
    public var allowList: [String] = []
    /// `API_EXTERNAL_URL`: this server as mail readers reach it; links are `<it>/auth/v1/verify?…`.
    /// Nil: the origin of the token issuer (`http://host:port`).
    public var externalURL: String?
    /// The mail server (`SMTP_*`); nil: mails are written to the log.
    public var smtp: SMTPConfig?
    /// `SMTP_ADMIN_EMAIL` and `SMTP_SENDER_NAME`.
    public var sender = MailSender(address: "noreply@localhost")
    /// Seconds before each retry of a mail whose delivery failed for a transient reason (then it is
    /// given up as `failed`).
    public var retryDelays: [Double] = [2, 10, 60, 300]
    /// Threads (each with a database connection of its own) delivering the outbox's mails.
    public var senders = 2
    /// Per kind, from `MAILER_TEMPLATES_*` files and `MAILER_SUBJECTS_*`; the defaults otherwise.
    public var templates: [MailKind: MailTemplate] = [:]

    public init() {}

    public func template(_ kind: MailKind) -> MailTemplate { templates[kind] ?? .standard(kind) }
}

/// GoTrue's duration settings: a Go duration (`60s`, `1m30s`, `1h`, `500ms`) or plain seconds.
public func parseDuration(_ text: String) -> Double? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    if let seconds = Double(trimmed) { return seconds >= 0 ? seconds : nil }
    var total = 0.0
    var rest = Substring(trimmed)
    let units: [(String, Double)] = [("ms", 0.001), ("h", 3600), ("m", 60), ("s", 1)]
    guard !rest.isEmpty else { return nil }
    while !rest.isEmpty {
        let number = rest.prefix { $0.isNumber || $0 == "." }
        guard let value = Double(number) else { return nil }
        rest = rest.dropFirst(number.count)
        guard let unit = units.first(where: { rest.hasPrefix($0.0) }) else { return nil }
        total += value * unit.1
        rest = rest.dropFirst(unit.0.count)
    }
    return total
}
