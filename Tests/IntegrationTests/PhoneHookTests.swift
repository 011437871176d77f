import Auth
import Foundation
import HTTP
import Postgres
import Synchronization
import TestSupport
import Testing

/// GoTrue's send-SMS hook over HTTP on loopback: it gets the user and the code instead of the SMS
/// provider, and its refusal refuses the request and leaves no user behind.
@Suite("Auth: send-SMS hook", .serialized)
struct PhoneHookTests {
    final class Endpoint: Sendable {
        /// The bodies received (parsed when read: Foundation's JSON objects are not Sendable).
        let bodies = Mutex<[[UInt8]]>([])
        let refusing = Mutex(false)

        func respond(_ request: HTTPRequest) -> HTTPResponse {
            bodies.withLock { $0.append(request.body) }
            if refusing.withLock({ $0 }) {
                return .json(.ok, #"{"error":{"http_code":400,"message":"number blocked"}}"#)
            }
            return .json(.ok, "{}")
        }

        /// The last event.
        var lastEvent: [String: Any] {
            let body = bodies.withLock { $0.last } ?? []
            return (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        }
    }

    let endpoint = Endpoint()
    let hookServer: HTTPServer
    let server: TestServer

    init() throws {
        let endpoint = endpoint
        hookServer = HTTPServer(port: 0, responder: { endpoint.respond($0) })
        try hookServer.start()
        let uri = "http://127.0.0.1:\(hookServer.port)/hooks/sms"
        let secrets = "v1,whsec_" + Data(repeating: 7, count: 32).base64EncodedString()
        server = try TestServer { config in
            config.auth.sms.enabled = true
            config.auth.hooks.sendSMS = try? AuthHook(uri: uri, secrets: secrets)
            config.auth.hooks.httpTimeout = 1
        }
    }

    @Test func theHookSendsTheCodeInsteadOfTheProvider() throws {
        let number = "1555" + String(Int.random(in: 1_000_000...9_999_999))
        let otp = try server.post("/auth/v1/otp", #"{"phone":"+\#(number)"}"#)
        #expect(otp.status == 200 && otp.text == "{}")
        let event = endpoint.lastEvent
        let sms = event["sms"] as? [String: String] ?? [:]
        #expect(sms["phone"] == number && sms["sms_type"] == "confirmation" && sms["otp"]?.count == 6)
        #expect((event["user"] as? [String: Any])?["phone"] as? String == number)
        #expect((event["metadata"] as? [String: Any])?["name"] as? String == "send-sms")
        let verified = try server.post("/auth/v1/verify", #"{"type":"sms","phone":"\#(number)","token":"\#(sms["otp"] ?? "")"}"#)
        #expect(verified.status == 200 && verified.jsonObject?["access_token"] is String)
    }

    @Test func aRefusalLeavesNoUser() throws {
        endpoint.refusing.withLock { $0 = true }
        defer { endpoint.refusing.withLock { $0 = false } }
        let number = "1555" + String(Int.random(in: 1_000_000...9_999_999))
        let refused = try server.post("/auth/v1/otp", #"{"phone":"+\#(number)"}"#)
        #expect(refused.status == 400 && refused.jsonObject?["message"] as? String == "number blocked")
        let left = try Connection(conninfo: server.databaseURL).query("SELECT count(*) FROM auth.users WHERE phone = \(number)")
        #expect(left.scalar == "0")
        let whatsApp = try server.post("/auth/v1/otp", #"{"phone":"+\#(number)","channel":"whatsapp"}"#)
        #expect(whatsApp.status == 400 && whatsApp.jsonObject?["code"] as? String == "validation_failed")
    }
}
