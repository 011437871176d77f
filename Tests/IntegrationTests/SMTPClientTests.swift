import Auth
import Foundation
import Identity
import Logging
import Postgres
import Synchronization
import TestSupport
import Testing

/// The SMTP client against a real SMTP server (aiosmtpd) over TCP: plain, STARTTLS with AUTH,
/// implicit TLS, and the failures (untrusted certificate, no STARTTLS, nobody listening).
@Suite("SMTP client", .serialized)
struct SMTPClientTests {
    static func message(_ to: String) -> [UInt8] {
        Array("From: <noreply@onboard.test>\r\nTo: <\(to)>\r\nSubject: hello\r\n\r\n.leading dot\r\nbody\r\n".utf8)
    }

    @Test func plainDelivery() throws {
        let sink = try TestSMTPServer()
        var config = SMTPConfig(host: "127.0.0.1")
        config.port = sink.port
        try SMTPClient(config).send(from: "noreply@onboard.test", to: ["a@example.com"], message: Self.message("a@example.com"))
        let mail = try sink.waitForMail(to: "a@example.com")
        #expect(mail.from == "noreply@onboard.test" && !mail.tls && mail.user == nil)
        #expect(mail.raw.contains("\r\n.leading dot\r\n"), "dot-stuffing undone by the server")
    }

    @Test func startTLSWithAuthAgainstTheTrustedCertificate() throws {
        let sink = try TestSMTPServer(mode: .starttls, auth: ("mailer", "s3cret"))
        var config = SMTPConfig(host: "localhost")
        config.port = sink.port
        config.user = "mailer"
        config.password = "s3cret"
        config.caFile = sink.certificate?.path
        config.security = .starttls
        try SMTPClient(config).send(from: "noreply@onboard.test", to: ["b@example.com"], message: Self.message("b@example.com"))
        let mail = try sink.waitForMail(to: "b@example.com")
        #expect(mail.tls && mail.user == "mailer")

        // Without the test's CA the self-signed certificate does not verify.
        config.caFile = nil
        #expect { try SMTPClient(config).send(from: "noreply@onboard.test", to: ["b@example.com"], message: Self.message("b@example.com")) } throws: { error in
            let failure = error as? MailDeliveryError
            return failure?.transient == false && failure?.description.contains("does not verify") == true
        }
    }

    @Test func implicitTLSChecksTheHostName() throws {
        let sink = try TestSMTPServer(mode: .tls)
        var config = SMTPConfig(host: "127.0.0.1")
        config.port = sink.port
        config.security = .tls
        config.caFile = sink.certificate?.path
        try SMTPClient(config).send(from: "noreply@onboard.test", to: ["c@example.com"], message: Self.message("c@example.com"))
        #expect(try sink.waitForMail(to: "c@example.com").tls)
        // The certificate names localhost and 127.0.0.1, not 127.0.0.2.
        config.host = "127.0.0.2"
        #expect(throws: MailDeliveryError.self) {
            try SMTPClient(config).send(from: "noreply@onboard.test", to: ["c@example.com"], message: Self.message("c@example.com"))
        }
    }

    @Test func refusalsAndAServerThatIsDown() throws {
        let plain = try TestSMTPServer()
        var config = SMTPConfig(host: "127.0.0.1")
        config.port = plain.port
        config.security = .starttls
        #expect { try SMTPClient(config).send(from: "n@onboard.test", to: ["d@example.com"], message: Self.message("d@example.com")) } throws: {
            ($0 as? MailDeliveryError)?.description.contains("STARTTLS") == true
        }
        config.security = .off
        plain.stop()
        #expect { try SMTPClient(config).send(from: "n@onboard.test", to: ["d@example.com"], message: Self.message("d@example.com")) } throws: {
            ($0 as? MailDeliveryError)?.transient == true
        }
    }
}
