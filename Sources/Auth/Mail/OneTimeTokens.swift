import Foundation
import HTTP
import Identity
import Postgres

/// The kinds of mailed or texted token, one outstanding per user and kind (`auth.one_time_tokens`).
enum TokenType: String, Sendable {
    case confirmation = "confirmation_token"
    case recovery = "recovery_token"
    case emailChangeNew = "email_change_token_new"
    case emailChangeCurrent = "email_change_token_current"
    case reauthentication = "reauthentication_token"
    case phoneChange = "phone_change_token"

    /// The tokens a verification `type` may consume.
    static func consumable(by type: AuthRequest.VerifyType) -> [TokenType] {
        switch type {
        case .signup, .invite: return [.confirmation]
        case .recovery, .magiclink: return [.recovery]
        case .emailChange: return [.emailChangeNew, .emailChangeCurrent]
        case .email: return [.confirmation, .recovery]
        case .sms: return [.confirmation]
        case .phoneChange: return [.phoneChange]
        }
    }
}

extension AuthService {
    /// Issues a new token of `type` for `user` (replacing the previous one, so only the latest
    /// mail works) and renders its mail to `address`, written to the outbox in the same transaction. A PKCE flow's link token starts with
    /// `pkce_` (clients and `GET /verify` tell the flows apart by it). `passwordless`: the mail
    /// answers a passwordless sign-in or a recovery (see `consumeToken`).
    /// `deliver` false: the token alone, nothing mailed (the admin's `generate_link` answers the
    /// link instead).
    func issueMail(
        _ connection: Connection, kind: MailKind, type: TokenType, user: MailUser, to address: String,
        flowStateID: String?, redirectTo: String, newEmail: String = "", passwordless: Bool = false, deliver: Bool = true
    ) throws -> OutgoingMail {
        let code = Self.newOTP(length: config.mail.otpLength)
        let linkToken = kind.linkType.map { _ in (flowStateID != nil ? "pkce_" : "") + Crypto.hex(Crypto.randomBytes(28)) }
        try OneTimeTokens.issue(
            connection, userID: user.id, type: type, tokenDigest: linkToken.map(Self.digest),
            otpHash: otpHash(code, type: type, userID: user.id, address: address), relatesTo: address, flowStateID: flowStateID,
            passwordless: passwordless)
        var values = MailTemplate.Values()
        let link = linkToken.flatMap { token in kind.linkType.map { verifyLink(token: token, type: $0, redirectTo: redirectTo) } }
        values.confirmationURL = link ?? ""
        values.token = code
        values.tokenHash = linkToken ?? ""
        values.siteURL = config.siteURL
        values.redirectTo = redirectTo
        values.email = user.email
        values.newEmail = newEmail
        values.sendingTo = address
        values.dataJSON = user.metadataJSON
        let (subject, html) = config.mail.template(kind).render(values)
        var mail = OutgoingMail(kind: kind, to: address, subject: subject, html: html, link: link, code: code)
        mail.tokenHash = linkToken ?? ""
        if config.hooks.sendEmail != nil && deliver {
            mail.hookInput = try sendEmailEvent(
                connection, kind: kind, userID: user.id, tokens: HookTokens(token: code, tokenHash: mail.tokenHash), redirectTo: redirectTo)
        }
        // Into the outbox in the token's own transaction: the mail exists exactly when its token does.
        if deliver { try mailer.enqueue(connection, mail) }
        return mail
    }

    /// `<API_EXTERNAL_URL>/auth/v1/verify?token=…&type=…&redirect_to=…`.
    func verifyLink(token: String, type: String, redirectTo: String) -> String {
        let base = apiExternalURL()
        return "\(base)/auth/v1/verify?token=\(Self.queryEscape(token))&type=\(type)&redirect_to=\(Self.queryEscape(redirectTo))"
    }

    /// The stored form of a mailed code: an HMAC keyed by the server's secret, bound to the token's
    /// kind, user and address (a database read alone cannot recover or test codes).
    func otpHash(_ code: String, type: TokenType, userID: String, address: String) -> String {
        let key = Crypto.hmacSHA256(key: Array(config.keys.jwtSecret), data: Array("onboard one-time code".utf8))
        return Crypto.hex(Crypto.hmacSHA256(key: key, data: Array("\(type.rawValue)\n\(userID)\n\(address)\n\(code)".utf8)))
    }

    /// `length` uniformly random decimal digits.
    static func newOTP(length: Int) -> String {
        let digits = min(10, max(6, length))
        var modulus: UInt64 = 1
        for _ in 0..<digits { modulus *= 10 }
        let limit = UInt64.max - UInt64.max % modulus
        while true {
            let value = Crypto.randomBytes(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard value < limit else { continue }
            let text = String(value % modulus)
            return String(repeating: "0", count: digits - text.count) + text
        }
    }

    /// 429 `over_email_send_rate_limit` while the last mail of this kind is younger than
    /// `SMTP_MAX_FREQUENCY` (`secondsAgo` nil: none was sent).
    func checkFrequency(secondsAgo: Double?) throws {
        guard let left = Self.secondsToWait(secondsAgo: secondsAgo, interval: config.mail.maxFrequency) else { return }
        throw AuthError.overEmailSendRateLimit("For security purposes, you can only request this after \(left) seconds.", retryAfter: left)
    }

    /// One hit on the mail budget (`RATE_LIMIT_EMAIL_SENT`), inside the caller's transaction.
    func countMailBudget(_ connection: Connection) throws {
        guard let left = try Self.spendSendingBudget(connection, key: "email_sent:all", limit: config.mail.emailSentLimit) else { return }
        throw AuthError.overEmailSendRateLimit("Email rate limit exceeded", retryAfter: left)
    }

    /// The seconds (at least 1) until `interval` has passed since the last message of a kind
    /// (`secondsAgo`; nil: none was sent); nil when it has.
    static func secondsToWait(secondsAgo: Double?, interval: Double) -> Int? {
        guard let secondsAgo, interval > 0, secondsAgo < interval else { return nil }
        return max(1, Int(interval - secondsAgo))
    }

    /// One hit on a budget of messages sent (`key` against `limit`) inside the caller's
    /// transaction; nil while within it, else the seconds until its window ends.
    static func spendSendingBudget(_ connection: Connection, key: String, limit: RateLimit) throws -> Int? {
        guard try !RateLimitCounters.hit(connection, keys: [key], limit: limit) else { return nil }
        return try RateLimitCounters.secondsLeft(connection, keys: [key], limit: limit)
    }

    /// A new PKCE flow for `userID`; returns its id.
    func createFlowState(_ connection: Connection, userID: String, pkce: AuthRequest.PKCEChallenge, providerType: String, method: String) throws -> String {
        let id = UUID().uuidString.lowercased()
        try FlowStates.create(connection, id: id, userID: userID, challenge: pkce, providerType: providerType, method: method)
        return id
    }

    /// Wakes the senders once the transaction that wrote `mails` (and their tokens) to the outbox
    /// has committed.
    func send(_ mails: [OutgoingMail]) {
        if !mails.isEmpty { mailer.wake() }
    }

    // MARK: redirects

    /// The redirect a mail flow leads to: the request's `redirect_to` header, else its query
    /// parameter (`given`), else its `Referer`, when allowed; `SITE_URL` otherwise.
    func redirectTarget(_ request: HTTPRequest, given: String?) -> String {
        let candidate = [request.headers["redirect_to"], given, request.headers["Referer"]].compactMap { $0 }.first { !$0.isEmpty }
        return allowedRedirect(candidate)
    }

    /// `candidate` as a browser reads it when that is allowed (`RedirectPolicy`); `SITE_URL` otherwise.
    func allowedRedirect(_ candidate: String?) -> String {
        RedirectPolicy(siteURL: config.siteURL, allowList: config.mail.allowList).target(candidate)
    }

    static func queryEscape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))
            ?? ""
    }
}
