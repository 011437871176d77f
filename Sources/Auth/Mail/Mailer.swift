import EventLoop
import Foundation
import Identity
import Logging
import Postgres
import Synchronization

/// One mail ready to go: its rendered subject and body, and (for the log when nothing is sent)
/// the link and the code it carries.
public struct OutgoingMail: Sendable {
    public var kind: MailKind
    public var to: String
    public var subject: String
    public var html: String
    public var link: String?
    public var code: String
    /// The token in the link (`token_hash` for `POST /verify`); empty when the mail has no link.
    public var tokenHash = ""
    /// With the send-email hook: the event the hook is called with (JSON), instead of a message.
    public var hookInput: String?

    public init(kind: MailKind, to: String, subject: String, html: String, link: String?, code: String) {
        self.kind = kind
        self.to = to
        self.subject = subject
        self.html = html
        self.link = link
        self.code = code
    }
}

/// The sender of every mail (`SMTP_ADMIN_EMAIL`, `SMTP_SENDER_NAME`).
public struct MailSender: Sendable, Equatable {
    public var address: String
    public var name: String

    public init(address: String, name: String = "") {
        self.address = address
        self.name = name
    }
}

/// Where mails go: a mail server, the send-email hook, or the log.
public enum MailTransport: Sendable {
    case smtp(SMTPConfig, MailSender)
    /// `HOOK_SEND_EMAIL_*`: each mail's event goes to the hook (with the hooks' timeouts).
    case hook(AuthHook, AuthHooks)
    /// No `SMTP_HOST`: each mail (link and code included) is written to the log, nothing is sent.
    case log

    /// The outbox rows a server delivers are those written by servers with the same mail server
    /// (`smtp://user@host:port`, or `log`): replicas share one configuration and so their rows;
    /// a server set up with another mail server never sends them through its own.
    public var route: String {
        switch self {
        case .log: return "log"
        case .smtp(let config, _): return "smtp://\(config.user ?? "")@\(config.host):\(config.port)"
        case .hook(let hook, _): return "hook:\(hook.uri)"
        }
    }

    /// Where mails go, in a few words (the `--dev` banner's `Mail` line).
    public var summary: String {
        switch self {
        case .log: return "not sent: written to the log (set SMTP_HOST to send)"
        case .smtp: return "sent over SMTP"
        case .hook(let hook, _): return "handed to the send-email hook \(hook.uri)"
        }
    }
}

/// Delivers the mails of the outbox (`auth.mail_outbox`) off the request path. A flow writes its
/// mail with `Mailer.enqueue(_:_:)` in the transaction that issues the token it carries, and
/// calls `wake()` after the commit. A few threads of each server, each on a connection of its
/// own, claim due rows with `FOR UPDATE SKIP LOCKED` (any server's row: the servers share the
/// work), keep the row locked while the mail server answers, and record the outcome in the same
/// transaction. A server that dies mid-delivery releases its row, which is tried again: every
/// mail is sent at least once, and twice only if a server dies between the mail server's
/// acceptance and the commit. Transient failures are tried again after `retryDelays`; a mail
/// that cannot be sent is logged and kept as `failed`. Finished rows (their secrets erased) are
/// kept `retention` seconds, then deleted.
public final class Mailer: Sendable {
    /// This process's deliveries since it started (the outbox itself is shared by every server).
    public struct Stats: Sendable, Equatable {
        public var sent = 0
        public var logged = 0
        public var failed = 0
        public var retried = 0
    }

    /// Rows of the outbox by status.
    public struct Depth: Sendable, Equatable {
        public var pending = 0
        public var sent = 0
        public var logged = 0
        public var failed = 0
    }

    private enum Outcome {
        case sent, logged, failed, retried
    }

    public let transport: MailTransport
    /// The send-email hook's calls (shared with the other hooks' counts, for `/metrics`).
    public let hookCalls = AuthHookCalls()
    let conninfo: String
    let logger: Logger
    /// Seconds before the second, third, … attempt after a transient failure.
    let retryDelays: [Double]
    /// Seconds between two looks at the outbox without a `wake()` (rows of other servers, retries).
    let pollInterval: Double
    /// Seconds a finished row is kept.
    let retention: Double
    private let counters = Mutex(Stats())
    private let ready = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    private let workers: Int

    public init(
        transport: MailTransport, conninfo: String, logger: Logger, workers: Int = 2, retryDelays: [Double] = [2, 10, 60, 300],
        pollInterval: Double = 1, retention: Double = 7 * 86400
    ) {
        self.transport = transport
        self.conninfo = conninfo
        self.logger = logger
        self.retryDelays = retryDelays
        self.pollInterval = pollInterval
        self.retention = retention
        self.workers = workers
        for index in 0..<workers {
            startThread(name: "mail-sender-\(index)") { [self] in work(purges: index == 0) }
        }
    }

    public var stats: Stats { counters.withLock { $0 } }

    /// Writes `mail` into the outbox on `connection`, inside the caller's transaction, for the
    /// servers with this server's mail server (`MailTransport.route`).
    public func enqueue(_ connection: Connection, _ mail: OutgoingMail) throws {
        try Self.enqueue(connection, mail, route: transport.route)
    }

    /// Writes `mail` into the outbox for the servers whose mail server is `route`.
    public static func enqueue(_ connection: Connection, _ mail: OutgoingMail, route: String) throws {
        _ = try connection.query(
            """
            INSERT INTO auth.mail_outbox (route, kind, recipient, subject, html, link, code, hook_input)
            VALUES (
                \(route), \(mail.kind.rawValue), \(mail.to), \(mail.subject), \(mail.html), \(mail.link), \(mail.code),
                \(mail.hookInput)::jsonb)
            """)
    }

    /// The outbox's rows by status (every server's).
    public static func depth(_ connection: Connection) throws -> Depth {
        let result = try connection.query("SELECT status, count(*)::int FROM auth.mail_outbox GROUP BY status")
        var depth = Depth()
        for row in 0..<result.count {
            let count = result[row].int(1) ?? 0
            switch result[row, 0] {
            case "pending": depth.pending = count
            case "sent": depth.sent = count
            case "logged": depth.logged = count
            case "failed": depth.failed = count
            default: break
            }
        }
        return depth
    }

    /// Tells the senders that a committed transaction wrote mails.
    public func wake() {
        ready.signal()
    }

    /// Stops the senders: a delivery under way finishes (up to 5 seconds are waited for); mails
    /// still pending stay in the outbox for the next start or another server.
    public func shutdown() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for _ in 0..<workers { ready.signal() }
        for _ in 0..<workers { _ = ended.wait(timeout: .now() + 5) }
    }

    private func work(purges: Bool) {
        defer { ended.signal() }
        var connection: Connection?
        var lastPurge = Date.distantPast
        var unavailableSince: Date?
        while !stopped.load(ordering: .acquiring) {
            do {
                if connection == nil { connection = try Connection(conninfo: conninfo, allowsPreparedStatements: false) }
                while !stopped.load(ordering: .acquiring), let outcome = try deliverNext(connection!) {
                    count(outcome)
                }
                if purges && Date().timeIntervalSince(lastPurge) > 600 {
                    _ = try connection!.query(
                        """
                        DELETE FROM auth.mail_outbox
                         WHERE status <> 'pending' AND finished_at < now() - make_interval(secs => \(retention))
                        """)
                    lastPurge = Date()
                }
                unavailableSince = nil
            } catch {
                connection = nil
                if unavailableSince == nil {
                    unavailableSince = Date()
                    logger.warning("the mail outbox is unavailable; trying again", metadata: ["error": "\(logText(error))"])
                }
            }
            if stopped.load(ordering: .acquiring) { break }
            _ = ready.wait(timeout: .now() + pollInterval)
        }
    }

    private func count(_ outcome: Outcome) {
        counters.withLock { stats in
            switch outcome {
            case .sent: stats.sent += 1
            case .logged: stats.logged += 1
            case .failed: stats.failed += 1
            case .retried: stats.retried += 1
            }
        }
    }

    /// Claims the oldest due mail, tries it, and records the outcome; nil when none is due.
    private func deliverNext(_ connection: Connection) throws -> Outcome? {
        try connection.withTransaction { connection -> Outcome? in
            let rows = try connection.query(
                """
                SELECT id, kind, recipient, subject, html, link, code, attempts, hook_input::text FROM auth.mail_outbox
                 WHERE status = 'pending' AND route = \(transport.route) AND next_attempt_at <= now()
                 ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
                """)
            guard !rows.isEmpty, let id = rows[0, 0] else { return nil }
            var mail = OutgoingMail(
                kind: MailKind(rawValue: rows[0, 1] ?? "") ?? .confirmation, to: rows[0, 2] ?? "", subject: rows[0, 3] ?? "",
                html: rows[0, 4] ?? "", link: rows[0, 5], code: rows[0, 6] ?? "")
            mail.hookInput = rows[0, 8]
            let attempt = (rows[0].int(7) ?? 0) + 1
            let failure: MailDeliveryError?
            switch transport {
            case .log:
                logger.warning(
                    "mail not sent (SMTP_HOST is unset): its link and code follow",
                    metadata: [
                        "mail.type": "\(mail.kind.rawValue)", "mail.to": "\(mail.to)", "mail.subject": "\(mail.subject)",
                        "mail.link": "\(mail.link ?? "(none)")", "mail.code": "\(mail.code)"
                    ])
                try finish(connection, id: id, "logged", attempt: attempt)
                return .logged
            case .smtp(let config, let sender):
                do throws(MailDeliveryError) {
                    try SMTPClient(config).send(from: sender.address, to: [mail.to], message: Self.format(mail, from: sender))
                    failure = nil
                } catch {
                    failure = error
                }
            case .hook(let hook, let settings):
                failure = callSendEmailHook(hook, settings, input: mail.hookInput, on: connection)
            }
            guard let error = failure else {
                try finish(connection, id: id, "sent", attempt: attempt)
                logger.info("mail sent", metadata: ["mail.type": "\(mail.kind.rawValue)", "mail.to": "\(mail.to)", "attempt": "\(attempt)"])
                return .sent
            }
            if error.transient && attempt <= retryDelays.count {
                let delay = retryDelays[attempt - 1]
                _ = try connection.query(
                    """
                    UPDATE auth.mail_outbox
                       SET attempts = \(attempt), last_error = \(error.description),
                           next_attempt_at = now() + make_interval(secs => \(delay))
                     WHERE id = \(id)::bigint
                    """)
                logger.warning(
                    "mail delivery failed; trying again",
                    metadata: [
                        "mail.type": "\(mail.kind.rawValue)", "mail.to": "\(mail.to)", "error": "\(logText(error))", "retry_in_seconds": "\(delay)"
                    ])
                return .retried
            }
            let reason = "\(error) (after \(attempt) attempt\(attempt == 1 ? "" : "s"))"
            try finish(connection, id: id, "failed", attempt: attempt, error: reason)
            logger.error(
                "mail could not be sent",
                metadata: ["mail.type": "\(mail.kind.rawValue)", "mail.to": "\(mail.to)", "mail.subject": "\(mail.subject)", "error": "\(reason)"])
            return .failed
        }
    }

    /// Records a mail's outcome and erases its secrets.
    private func finish(_ connection: Connection, id: String, _ status: String, attempt: Int, error: String? = nil) throws {
        _ = try connection.query(
            """
            UPDATE auth.mail_outbox
               SET status = \(status), attempts = \(attempt), finished_at = now(), last_error = \(error),
                   subject = NULL, html = NULL, link = NULL, code = NULL, hook_input = NULL
             WHERE id = \(id)::bigint
            """)
    }

    // MARK: the message

    /// The message as sent: RFC 5322 headers and a base64 `text/html` UTF-8 body, CRLF lines.
    static func format(_ mail: OutgoingMail, from sender: MailSender, date: Date = Date()) -> [UInt8] {
        let domain = sender.address.split(separator: "@").last.map(String.init) ?? "localhost"
        let from = sender.name.isEmpty ? "<\(sender.address)>" : "\(encodedPhrase(sender.name)) <\(sender.address)>"
        var head = [
            "From: \(from)",
            "To: <\(mail.to)>",
            "Subject: \(encodedText(mail.subject))",
            "Date: \(rfc5322Date(date))",
            "Message-ID: <\(Crypto.hex(Crypto.randomBytes(16)))@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/html; charset=utf-8",
            "Content-Transfer-Encoding: base64"
        ].joined(separator: "\r\n")
        head += "\r\n\r\n"
        let encoded = Data(mail.html.utf8).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        return Array((head + encoded + "\r\n").utf8)
    }

    /// A header text: as is when printable ASCII, else an RFC 2047 encoded word.
    static func encodedText(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) && text.utf8.count <= 900 { return text }
        return "=?UTF-8?B?\(Data(text.utf8).base64EncodedString())?="
    }

    /// A display name: quoted when printable ASCII, else an encoded word.
    static func encodedPhrase(_ name: String) -> String {
        if name.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) {
            return "\"" + name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return "=?UTF-8?B?\(Data(name.utf8).base64EncodedString())?="
    }

    static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
