import Auth
import Foundation
import Identity
import Logging
import Postgres
import Synchronization
import TestSupport
import Testing

/// The mail budget, a mail server that is down, and the log instead of a mail server.
@Suite("Mail delivery limits and failures", .serialized)
struct MailDeliveryTests {
    @Test func theMailBudgetIsSharedByEveryAddress() throws {
        let sink = try TestSMTPServer()
        let server = try TestServer { config in
            var smtp = SMTPConfig(host: "127.0.0.1")
            smtp.port = sink.port
            config.auth.mail.smtp = smtp
            config.auth.mail.emailSentLimit = RateLimit(hits: 2, window: 3600)
        }
        var statuses: [Int] = []
        for _ in 0..<3 {
            let email = "b-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            _ = try server.signUp(email: email)
            let response = try server.post("/auth/v1/recover", #"{"email":"\#(email)"}"#)
            statuses.append(response.status)
            if response.status == 429 { #expect(response.jsonObject?["code"] as? String == "over_email_send_rate_limit") }
        }
        #expect(statuses == [200, 200, 429])
    }

    @Test func aMailServerThatIsDownNeverHoldsTheRequest() throws {
        // A port nobody listens on: a sink started and stopped.
        let gone = try TestSMTPServer()
        gone.stop()
        let server = try TestServer { config in
            var smtp = SMTPConfig(host: "127.0.0.1")
            smtp.port = gone.port
            config.auth.mail.smtp = smtp
            config.auth.mail.retryDelays = [0.05, 0.05]
        }
        let email = "down-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        _ = try server.signUp(email: email)
        let response = try server.post("/auth/v1/recover", #"{"email":"\#(email)"}"#)
        #expect(response.status == 200 && response.text == "{}")
        #expect(eventually { server.application.mailer.stats.failed == 1 })
        #expect(server.application.mailer.stats.retried == 2)
        let metrics = try server.client().request("GET", "/metrics").text
        #expect(metrics.contains(#"onboard_mail_total{result="failed"} 1"#))
        #expect(metrics.contains("onboard_mail_retries_total 2"))
    }

    @Test func withoutAMailServerMailsGoToTheLog() throws {
        let server = try TestServer()
        let email = "log-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        _ = try server.signUp(email: email)
        #expect(try server.post("/auth/v1/recover", #"{"email":"\#(email)"}"#).status == 200)
        #expect(eventually { server.application.mailer.stats.logged == 1 })
    }
}
