import Auth
import Foundation
import HTTP
import Identity
import Postgres
import Synchronization
import TestSupport
import Testing

/// GoTrue's send-email hook through the outbox: the hook gets each mail's event (the user and
/// `email_data` with GoTrue's fields) instead of the mail server, its tokens verify, and a
/// failing hook is tried again until it takes the mail, once.
@Suite("Auth: send-email hook", .serialized)
struct SendEmailHookTests {
    static func events(_ connection: Connection, to address: String) throws -> [[String: Any]] {
        try connection.query("SELECT event::text FROM public.sent_emails WHERE event -> 'user' ->> 'email' = \(address) ORDER BY id").rows.compactMap {
            ($0["event"] ?? nil).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
    }

    static func outbox(_ connection: Connection, to address: String) throws -> [[String: String?]] {
        try connection.query(
            "SELECT status, attempts::text, last_error, hook_input IS NULL AS erased, route FROM auth.mail_outbox WHERE recipient = \(address) ORDER BY id"
        ).rows
    }

    /// A server whose mails go to `public.capture_email`, which stores each event and fails
    /// while `public.hook_switch.fail` is true.
    static func functionHookServer() throws -> (TestServer, Connection) {
        let server = try TestServer { config in
            config.auth.mail.autoconfirm = false
            config.auth.siteURL = "https://app.example.org"
            config.auth.mail.retryDelays = [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]
            config.auth.mail.verifyLimit = RateLimit(hits: 1000, window: 300)
            config.auth.hooks.sendEmail = try? AuthHook(uri: "pg-functions://postgres/public/capture_email")
        }
        let connection = try Connection(conninfo: server.databaseURL)
        for statement: SQL in [
            "CREATE TABLE public.sent_emails (id bigint GENERATED ALWAYS AS IDENTITY, event jsonb)",
            "CREATE TABLE public.hook_switch (fail boolean)",
            "INSERT INTO public.hook_switch VALUES (false)",
            """
            CREATE FUNCTION public.capture_email(event jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO public.sent_emails (event) VALUES (event);
                IF (SELECT fail FROM public.hook_switch) THEN RAISE EXCEPTION 'mail provider down'; END IF;
                RETURN '{}'::jsonb;
            END $$
            """
        ] {
            _ = try connection.query(statement)
        }
        return (server, connection)
    }

    @Test func aSignUpsMailGoesToTheHookAndItsTokenConfirms() throws {
        let (server, connection) = try Self.functionHookServer()
        let email = TestServer.email("hook")
        let signUp = try server.post("/auth/v1/signup", #"{"email":"\#(email)","password":"Secret-pass-1"}"#)
        #expect(signUp.status == 200, "\(signUp.text)")
        #expect(try eventually { try Self.events(connection, to: email).count == 1 })
        let event = try #require(try Self.events(connection, to: email).first)
        let data = try #require(event["email_data"] as? [String: Any])
        #expect(data["email_action_type"] as? String == "signup")
        #expect((data["token"] as? String)?.count == 6 && (data["token_hash"] as? String)?.isEmpty == false)
        #expect(data["redirect_to"] as? String == "https://app.example.org")
        #expect((data["site_url"] as? String)?.hasPrefix("http://127.0.0.1:") == true)
        #expect(data["token_new"] as? String == "" && data["token_hash_new"] as? String == "")
        #expect((event["user"] as? [String: Any])?["email"] as? String == email)
        #expect((event["metadata"] as? [String: Any])?["name"] as? String == "send-email")
        #expect(try eventually { try Self.outbox(connection, to: email).first?["status"] == "sent" })
        let row = try #require(try Self.outbox(connection, to: email).first)
        #expect(row["erased"] == "t" && row["route"] == "hook:pg-functions://postgres/public/capture_email")
        // The hook's token_hash is the link's token: it confirms the address, once.
        let tokenHash = try #require(data["token_hash"] as? String)
        let verified = try server.post("/auth/v1/verify", #"{"type":"signup","token_hash":"\#(tokenHash)"}"#)
        #expect(verified.status == 200 && verified.jsonObject?["access_token"] is String, "\(verified.text)")
        #expect(try server.post("/auth/v1/verify", #"{"type":"signup","token_hash":"\#(tokenHash)"}"#).status == 403)
        let metrics = try server.client().request("GET", "/metrics").text
        #expect(metrics.contains(#"onboard_auth_hook_calls_total{hook="send-email",result="ok"}"#), "\(metrics)")
    }

    @Test func aFailingHookIsTriedAgainAndTakesTheMailOnce() throws {
        let (server, connection) = try Self.functionHookServer()
        _ = try connection.query("UPDATE public.hook_switch SET fail = true")
        defer { _ = try? connection.query("UPDATE public.hook_switch SET fail = false") }
        let email = TestServer.email("hookdown")
        #expect(try server.post("/auth/v1/signup", #"{"email":"\#(email)","password":"Secret-pass-1"}"#).status == 200)
        // Refused (the function raised): pending, its error kept, nothing the function wrote kept.
        #expect(
            try eventually {
                let row = try Self.outbox(connection, to: email).first
                return Int((row?["attempts"] ?? nil) ?? "") ?? 0 >= 2 && row?["status"] == "pending"
            })
        let pending = try #require(try Self.outbox(connection, to: email).first)
        #expect(((pending["last_error"] ?? nil) ?? "").contains("mail provider down"), "\(pending)")
        #expect(pending["erased"] == "f")
        #expect(try Self.events(connection, to: email).isEmpty)
        _ = try connection.query("UPDATE public.hook_switch SET fail = false")
        #expect(try eventually { try Self.outbox(connection, to: email).first?["status"] == "sent" })
        #expect(try Self.events(connection, to: email).count == 1)
    }

    @Test func anEmailChangeIsOneCallWithBothAddressesTokens() throws {
        let (server, connection) = try Self.functionHookServer()
        let old = TestServer.email("hookold")
        let new = TestServer.email("hooknew")
        let created = try server.service.post("/auth/v1/admin/users", #"{"email":"\#(old)","password":"Secret-pass-1","email_confirm":true}"#)
        #expect(created.status == 200)
        let session = try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(old)","password":"Secret-pass-1"}"#)
        let token = try #require(session.jsonObject?["access_token"] as? String)
        #expect(try server.request("PUT", "/auth/v1/user", token: token, body: #"{"email":"\#(new)"}"#).status == 200)
        #expect(try eventually { try Self.events(connection, to: old).count == 1 })
        let event = try #require(try Self.events(connection, to: old).first)
        let data = try #require(event["email_data"] as? [String: Any])
        #expect(data["email_action_type"] as? String == "email_change")
        #expect((event["user"] as? [String: Any])?["new_email"] as? String == new)
        let codeForCurrent = try #require(data["token"] as? String)
        let codeForNew = try #require(data["token_new"] as? String)
        #expect(codeForCurrent.count == 6 && codeForNew.count == 6 && codeForCurrent != codeForNew)
        // GoTrue's layout: `token` with the current address, `token_new` with the new one.
        let crossed = try server.post("/auth/v1/verify", #"{"type":"email_change","email":"\#(new)","token":"\#(codeForCurrent)"}"#)
        #expect(crossed.status == 403)
        let current = try server.post("/auth/v1/verify", #"{"type":"email_change","email":"\#(old)","token":"\#(codeForCurrent)"}"#)
        #expect(current.status == 200, "\(current.text)")
        let tokenHashNew = try #require(data["token_hash"] as? String)
        let done = try server.post("/auth/v1/verify", #"{"type":"email_change","token_hash":"\#(tokenHashNew)"}"#)
        #expect(done.status == 200 && done.jsonObject?["access_token"] is String, "\(done.text)")
        let me = try server.get("/auth/v1/user", token: done.jsonObject?["access_token"] as? String)
        #expect(me.jsonObject?["email"] as? String == new)
        #expect((try Self.outbox(connection, to: new)).count == 1, "one outbox row for the change")
    }

    final class Endpoint: Sendable {
        /// (webhook-id, webhook-timestamp, webhook-signature, body) of each request.
        let received = Mutex<[(String, String, String, [UInt8])]>([])
        /// The answers still to fail with 500 before the endpoint accepts.
        let failures = Mutex(0)

        func respond(_ request: HTTPRequest) -> HTTPResponse {
            received.withLock {
                $0.append(
                    (
                        request.headers["webhook-id"] ?? "", request.headers["webhook-timestamp"] ?? "", request.headers["webhook-signature"] ?? "",
                        request.body
                    ))
            }
            let failing = failures.withLock { count -> Bool in
                defer { count = max(0, count - 1) }
                return count > 0
            }
            return failing ? .json(.internalServerError, #"{"error":"busy"}"#) : HTTPResponse(status: .noContent)
        }
    }

    @Test func anHTTPHookIsSignedAndARetryKeepsItsWebhookID() throws {
        let endpoint = Endpoint()
        endpoint.failures.withLock { $0 = 1 }
        let hookServer = HTTPServer(port: 0, responder: { endpoint.respond($0) })
        try hookServer.start()
        defer { hookServer.shutdown() }
        let key = [UInt8](repeating: 9, count: 32)
        let server = try TestServer { config in
            config.auth.mail.retryDelays = [0.2, 0.2, 0.2]
            config.auth.hooks.sendEmail = try? AuthHook(
                uri: "http://127.0.0.1:\(hookServer.port)/hooks/email", secrets: "v1,whsec_" + Data(key).base64EncodedString())
            config.auth.hooks.httpTimeout = 2
            config.auth.hooks.httpAttempts = 1
        }
        let email = TestServer.email("hookhttp")
        let created = try server.service.post("/auth/v1/admin/users", #"{"email":"\#(email)","password":"Secret-pass-1","email_confirm":true}"#)
        #expect(created.status == 200)
        #expect(try server.post("/auth/v1/recover", #"{"email":"\#(email)"}"#).status == 200)
        #expect(try eventually { endpoint.received.withLock { $0.count } == 2 })
        let attempts = endpoint.received.withLock { $0 }
        #expect(attempts[0].0 == attempts[1].0 && !attempts[0].0.isEmpty, "both attempts carry one webhook-id")
        for (id, timestamp, signature, body) in attempts {
            #expect(signature == HTTPHookSignature.expected(key: key, id: id, timestamp: timestamp, body: body))
        }
        let event = try #require(try JSONSerialization.jsonObject(with: Data(attempts[1].3)) as? [String: Any])
        #expect((event["email_data"] as? [String: Any])?["email_action_type"] as? String == "recovery")
        #expect((event["metadata"] as? [String: Any])?["uuid"] as? String == attempts[1].0)
        let connection = try Connection(conninfo: server.databaseURL)
        #expect(try eventually { try Self.outbox(connection, to: email).first?["status"] == "sent" })
    }
}

/// Standard Webhooks' signature, computed here independently of the server's code.
enum HTTPHookSignature {
    static func expected(key: [UInt8], id: String, timestamp: String, body: [UInt8]) -> String {
        "v1," + Data(Crypto.hmacSHA256(key: key, data: Array("\(id).\(timestamp).".utf8) + body)).base64EncodedString()
    }
}
