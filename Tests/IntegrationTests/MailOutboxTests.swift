import Auth
import Foundation
import Glibc
import Identity
import Logging
import Postgres
import TestSupport
import Testing

/// The mail outbox in PostgreSQL: mails survive a killed server, every server's senders share
/// the work without sending a mail twice, and the outbox keeps each mail's outcome without its
/// secrets.
@Suite("Mail outbox", .serialized)
struct MailOutboxTests {
    static func outbox(_ url: String) throws -> [[String: String?]] {
        try Connection(conninfo: url).query(
            "SELECT recipient, status, attempts::text, html IS NULL AS erased, last_error FROM auth.mail_outbox ORDER BY id"
        ).rows
    }

    /// The real binary is killed (SIGKILL) while its mails wait for a mail server that does not
    /// accept yet; a new process on the same database delivers each of them exactly once.
    @Test func mailsQueuedWhenTheServerIsKilledAreDeliveredOnceAfterTheRestart() throws {
        let url = try TestPostgres.makeDatabase()
        let smtpPort = try TestSMTPServer.freePort()
        let now = Int(Date().timeIntervalSince1970)
        let anonKey = JWT.signHS256(claims: ["role": "anon", "iss": "supabase", "iat": now, "exp": now + 3600], secret: Array(TestServer.secret.utf8))
        let environment = [
            "DATABASE_URL": url, "JWT_SECRET": TestServer.secret, "ANON_KEY": anonKey, "ONBOARD_HOST": "127.0.0.1",
            "ONBOARD_MIGRATIONS_DIR": TestPostgres.migrationsDirectory.path, "BCRYPT_COST": "4", "MAILER_AUTOCONFIRM": "false",
            "SMTP_HOST": "127.0.0.1", "SMTP_PORT": "\(smtpPort)", "DB_POOL_SIZE": "4", "DB_PIPELINE_CONNECTIONS": "1"
        ]
        let first = try ServerProcess(environment: environment)
        let addresses = (0..<5).map { "killed-\($0)-\(UUID().uuidString.prefix(8).lowercased())@example.com" }
        let headers = [("apikey", anonKey), ("Authorization", "Bearer \(anonKey)"), ("Content-Type", "application/json")]
        for address in addresses {
            let response = try first.client().request(
                "POST", "/auth/v1/signup", headers: headers, body: #"{"email":"\#(address)","password":"Secret-pass-1"}"#)
            #expect(response.status == 200, "\(response.text)")
        }
        // Every mail was tried and failed (nobody listens on the SMTP port yet): queued for a retry.
        var rows: [[String: String?]] = []
        #expect(
            try eventually(timeout: 60) {
                rows = try Self.outbox(url)
                return rows.count == 5 && rows.allSatisfy { Int(($0["attempts"] ?? nil) ?? "") ?? 0 >= 1 }
            }, "\(rows)")
        #expect(first.kill(), "the server was killed by SIGKILL")
        #expect(try Self.outbox(url).allSatisfy { $0["status"] == "pending" && $0["erased"] == "f" })

        let sink = try TestSMTPServer(port: smtpPort)
        let second = try ServerProcess(environment: environment)
        #expect(
            try eventually(timeout: 60) { try Self.outbox(url).allSatisfy { $0["status"] == "sent" } },
            "\((try? Self.outbox(url)) ?? [])\n\(second.logText)")
        // Every row is sent, so nothing is left to deliver: the sink's count is final.
        let received = sink.messages().flatMap(\.to)
        #expect(received.sorted() == addresses.sorted(), "each address got exactly one mail: \(received)")
        for mail in sink.messages() {
            #expect(mail.verifyPath != nil && mail.code != nil, "the mail carries its link and code")
        }
        #expect(try Self.outbox(url).allSatisfy { $0["erased"] == "t" }, "the secrets leave the outbox with the delivery")
        let metrics = try second.client().request("GET", "/metrics").text
        #expect(metrics.contains("onboard_mail_queue 0") && metrics.contains(#"onboard_mail_outbox{status="sent"} 5"#), "\(metrics)")
        second.kill()
    }

    /// Two servers' senders (two threads each) claim the rows of one outbox: each mail is
    /// delivered once.
    @Test func sendersOfSeveralServersShareTheOutboxWithoutDuplicates() throws {
        let url = try TestPostgres.makeDatabase()
        let sink = try TestSMTPServer()
        let connection = try Connection(conninfo: url)
        let addresses = (0..<40).map { "shared-\($0)@example.com" }
        var smtp = SMTPConfig(host: "127.0.0.1")
        smtp.port = sink.port
        var logger = Logger(label: "onboard.test")
        logger.logLevel = .warning
        let transport = MailTransport.smtp(smtp, MailSender(address: "noreply@onboard.test"))
        try connection.withTransaction { connection in
            for address in addresses {
                try Mailer.enqueue(
                    connection, OutgoingMail(kind: .recovery, to: address, subject: "s", html: "<p>\(address)</p>", link: nil, code: "123456"),
                    route: transport.route)
            }
            // A server with another mail server wrote this one: these senders leave it.
            try Mailer.enqueue(
                connection, OutgoingMail(kind: .recovery, to: "elsewhere@example.com", subject: "s", html: "<p>x</p>", link: nil, code: "123456"),
                route: "smtp://@mail.elsewhere.example:25")
        }
        let senders = [
            Mailer(transport: transport, conninfo: url, logger: logger), Mailer(transport: transport, conninfo: url, logger: logger)
        ]
        defer { senders.forEach { $0.shutdown() } }
        senders.forEach { $0.wake() }
        #expect(try eventually(timeout: 60) { try Mailer.depth(connection).sent == 40 })
        #expect(try Mailer.depth(connection).pending == 1)
        #expect(sink.messages().flatMap(\.to).sorted() == addresses.sorted())
        // Each sender counts a mail after marking its row sent: the counters may trail the rows.
        #expect(eventually { senders.map(\.stats.sent).reduce(0, +) == 40 })
    }

    /// A mail written in a transaction that rolls back never leaves: the outbox row goes with
    /// the token's transaction.
    @Test func aRolledBackTransactionLeavesNoMail() throws {
        let server = try TestServer { config in
            config.auth.mail.autoconfirm = false
            config.auth.mail.emailSentLimit = RateLimit(hits: 1, window: 3600)
        }
        let email = "rollback-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let signUp = try server.client().request(
            "POST", "/auth/v1/signup", headers: server.headers(), body: #"{"email":"\#(email)","password":"Secret-pass-1"}"#)
        #expect(signUp.status == 200)
        // Over the mail budget: the request fails, and neither a token nor a mail is written.
        let again = try server.client().request("POST", "/auth/v1/recover", headers: server.headers(), body: #"{"email":"\#(email)"}"#)
        #expect(again.status == 429)
        #expect(try eventually { try Self.outbox(server.databaseURL).map { $0["status"] ?? nil } == ["logged"] })
        #expect(try Self.outbox(server.databaseURL).first?["recipient"] == email)
    }
}
