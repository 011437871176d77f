import Foundation
import Identity
import Logging
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

/// Where mails go: a mail server, or the log.
public enum MailTransport: Sendable {
    case smtp(SMTPConfig, MailSender)
    /// No `SMTP_HOST`: each mail (link and code included) is written to the log, nothing is sent.
    case log
}

/// Delivers mails off the request path: handlers enqueue and return; a few threads of its own
/// deliver, retry transient failures later (without holding a thread meanwhile), and log every
/// mail that could not be sent. Nothing is dropped without a log line and a count.
public final class Mailer: Sendable {
    public struct Stats: Sendable, Equatable {
        public var sent = 0
        public var logged = 0
        public var failed = 0
        public var retried = 0
        public var dropped = 0
        public var queued = 0
    }

    private struct Job: Sendable {
        var mail: OutgoingMail
        var attempt: Int
    }

    public let transport: MailTransport
    let logger: Logger
    /// Seconds before the second, third, … attempt after a transient failure.
    let retryDelays: [Double]
    let capacity: Int
    private let queue = Mutex<[Job]>([])
    private let counters = Mutex(Stats())
    private let ready = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    private let workers: Int

    public init(transport: MailTransport, logger: Logger, workers: Int = 2, retryDelays: [Double] = [2, 10], capacity: Int = 10_000) {
        self.transport = transport
        self.logger = logger
        self.retryDelays = retryDelays
        self.capacity = capacity
        self.workers = workers
        for _ in 0..<workers {
            Thread.detachNewThread { [self] in work() }
        }
    }

    public var stats: Stats {
        var stats = counters.withLock { $0 }
        stats.queued = queue.withLock { $0.count }
        return stats
    }

    /// Takes `mail` for delivery and returns at once.
    public func enqueue(_ mail: OutgoingMail) {
        add(Job(mail: mail, attempt: 0))
    }

    private func add(_ job: Job) {
        guard !stopped.load(ordering: .acquiring) else {
            giveUp(job.mail, reason: "the server is stopping", count: \.dropped)
            return
        }
        let accepted = queue.withLock { jobs -> Bool in
            guard jobs.count < capacity else { return false }
            jobs.append(job)
            return true
        }
        if accepted { ready.signal() } else { giveUp(job.mail, reason: "the mail queue is full (\(capacity))", count: \.dropped) }
    }

    /// Stops the threads; mails still queued are logged as not sent.
    public func shutdown() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for _ in 0..<workers { ready.signal() }
        let left = queue.withLock { jobs -> [Job] in
            defer { jobs = [] }
            return jobs
        }
        for job in left { giveUp(job.mail, reason: "the server is stopping", count: \.dropped) }
    }

    private func work() {
        while true {
            ready.wait()
            if stopped.load(ordering: .acquiring) { return }
            guard let job = queue.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            deliver(job)
        }
    }

    private func deliver(_ job: Job) {
        let mail = job.mail
        switch transport {
        case .log:
            logger.warning(
                "mail not sent (SMTP_HOST is unset): its link and code follow",
                metadata: [
                    "mail.type": "\(mail.kind.rawValue)", "mail.to": "\(mail.to)", "mail.subject": "\(mail.subject)",
                    "mail.link": "\(mail.link ?? "(none)")", "mail.code": "\(mail.code)"
                ])
            counters.withLock { $0.logged += 1 }
        case .smtp(let config, let sender):
            do {
                let message = Self.format(mail, from: sender)
                try SMTPClient(config).send(from: sender.address, to: [mail.to], message: message)
                counters.withLock { $0.sent += 1 }
                logger.info("mail sent", metadata: ["mail.type": "\(mail.kind.rawValue)", "mail.to": "\(mail.to)", "attempt": "\(job.attempt + 1)"])
            } catch {
                if error.transient && job.attempt < retryDelays.count && !stopped.load(ordering: .acquiring) {
                    counters.withLock { $0.retried += 1 }
                    let delay = retryDelays[job.attempt]
                    logger.warning(
                        "mail delivery failed; trying again",
                        metadata: [
                            "mail.type": "\(mail.kind.rawValue)", "mail.to": "\(mail.to)", "error": "\(error)", "retry_in_seconds": "\(delay)"
                        ])
                    let next = Job(mail: mail, attempt: job.attempt + 1)
                    DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [self] in add(next) }
                } else {
                    giveUp(mail, reason: "\(error) (after \(job.attempt + 1) attempt\(job.attempt == 0 ? "" : "s"))", count: \.failed)
                }
            }
        }
    }

    private func giveUp(_ mail: OutgoingMail, reason: String, count: WritableKeyPath<Stats, Int>) {
        counters.withLock { $0[keyPath: count] += 1 }
        logger.error(
            "mail could not be sent",
            metadata: [
                "mail.type": "\(mail.kind.rawValue)", "mail.to": "\(mail.to)", "mail.subject": "\(mail.subject)", "error": "\(reason)"
            ])
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
