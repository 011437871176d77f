import Auth
import Foundation
import HTTP
import Identity
import Postgres
import Synchronization
import TestSupport
import Testing

/// GoTrue's hooks over HTTP, against a real HTTP server on loopback: the event signed as
/// Standard Webhooks, the answer's claims in the token, and each way the endpoint can fail
/// answered with GoTrue's status, code and message, with no user left behind.
@Suite("Auth: hooks over HTTP", .serialized)
struct AuthHTTPHookTests {
    /// What the hook endpoint answers (in order; the last one repeats), and what it received.
    final class Recorder: Sendable {
        let answers = Mutex<[@Sendable (HTTPRequest) -> HTTPResponse]>([])
        let received = Mutex<[HTTPRequest]>([])

        func respond(_ request: HTTPRequest) -> HTTPResponse {
            received.withLock { $0.append(request) }
            let answer = answers.withLock { $0.count > 1 ? $0.removeFirst() : $0.first }
            return answer?(request) ?? .json(.ok, "{}")
        }

        func answer(_ responders: [@Sendable (HTTPRequest) -> HTTPResponse]) {
            answers.withLock { $0 = responders }
            received.withLock { $0.removeAll() }
        }
    }

    static let key = Array(repeating: UInt8(42), count: 32)
    let endpoint = Recorder()
    let hookServer: HTTPServer
    let server: TestServer

    init() throws {
        let endpoint = endpoint
        hookServer = HTTPServer(port: 0, responder: { endpoint.respond($0) })
        try hookServer.start()
        let uri = "http://127.0.0.1:\(hookServer.port)/hooks/claims"
        let secrets = "v1,whsec_" + Data(Self.key).base64EncodedString()
        server = try TestServer {
            $0.auth.hooks.customAccessToken = try? AuthHook(uri: uri, secrets: secrets)
            $0.auth.hooks.beforeUserCreated = try? AuthHook(uri: uri.replacingOccurrences(of: "claims", with: "users"), secrets: secrets)
            $0.auth.hooks.httpTimeout = 1
            $0.auth.hooks.httpBackoff = 0.05
        }
    }

    static func json(_ status: HTTPStatus, _ body: String, type: String = "application/json", headers extra: [(String, String)] = []) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", type)
        for (name, value) in extra { headers.add(name, value) }
        return HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
    }

    /// Adds `via: http` to the claims of a custom access token event; a 204 for user creation.
    static let claimsAnswer: @Sendable (HTTPRequest) -> HTTPResponse = { request in
        guard request.path == "/hooks/claims" else { return HTTPResponse(status: .noContent) }
        let event = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
        var claims = event?["claims"] as? [String: Any] ?? [:]
        claims["via"] = "http"
        return json(.ok, JWT.serialize(["claims": claims]))
    }

    func signUp() throws -> (email: String, response: TestResponse) {
        let email = TestServer.email("http-hook")
        return (email, try server.post("/auth/v1/signup", #"{"email":"\#(email)","password":"Secret-pass-1"}"#))
    }

    @Test func theEventIsSignedAndTheAnswersClaimsAreInTheToken() throws {
        endpoint.answer([Self.claimsAnswer])
        let (_, response) = try signUp()
        #expect(response.status == 200, "\(response.text)")
        #expect(TestServer.claimsOf(response)?["via"] as? String == "http")
        let requests = endpoint.received.withLock { $0 }
        #expect(requests.map(\.path) == ["/hooks/users", "/hooks/claims"], "user creation first, then the token")
        for request in requests {
            let id = try #require(request.headers["webhook-id"])
            let timestamp = try #require(request.headers["webhook-timestamp"])
            #expect(abs((Double(timestamp) ?? 0) - Date().timeIntervalSince1970) < 60)
            let signed = Array("\(id).\(timestamp).".utf8) + request.body
            #expect(request.headers["webhook-signature"] == "v1," + Data(Crypto.hmacSHA256(key: Self.key, data: signed)).base64EncodedString())
            #expect(request.headers["Content-Type"] == "application/json")
        }
    }

    @Test func aRetryAfterIsFollowedAndOtherStatusesFailAsGoTrueSays() throws {
        endpoint.answer([{ _ in Self.json(.serviceUnavailable, "{}", headers: [("Retry-After", "1")]) }, Self.claimsAnswer])
        #expect(try signUp().response.status == 200)
        #expect(endpoint.received.withLock { $0.filter { $0.path == "/hooks/users" }.count } == 2)

        let cases: [(@Sendable (HTTPRequest) -> HTTPResponse, Int, String, String)] = [
            (
                { _ in Self.json(.ok, "{}", type: "text/plain") }, 400, "hook_payload_invalid_content_type",
                "Invalid JSON response. Received content-type: text/plain"
            ),
            ({ _ in Self.json(.unauthorized, "{}") }, 500, "unexpected_failure", "Hook requires authorization token"),
            ({ _ in Self.json(.badRequest, "{}") }, 500, "unexpected_failure", "Invalid payload sent to hook"),
            ({ _ in Self.json(.serviceUnavailable, "{}") }, 500, "unexpected_failure", "Service currently unavailable due to hook"),
            (
                { _ in Self.json(.tooManyRequests, "{}", headers: [("Retry-After", "1")]) }, 500, "unexpected_failure",
                "Service currently unavailable due to hook"
            ),
            ({ _ in Self.json(.notFound, "{}") }, 500, "unexpected_failure", "Unexpected status code returned from hook: 404"),
            ({ _ in Self.json(.ok, #"{"error":{"http_code":422,"message":"Not from here"}}"#) }, 422, "unknown", "Not from here"),
            (
                { _ in Self.json(.ok, String(repeating: " ", count: 205_000) + "{}") }, 422, "hook_payload_over_size_limit",
                "Payload size exceeded size limit of 204800 bytes"
            ),
            (
                { _ in
                    Thread.sleep(forTimeInterval: 3)
                    return HTTPResponse(status: .noContent)
                }, 422, "hook_timeout", "Failed to reach hook within maximum time of 1.000000 seconds"
            )
        ]
        for (answer, status, code, message) in cases {
            endpoint.answer([answer])
            let (email, response) = try signUp()
            #expect(response.status == status, "\(message): \(response.text)")
            #expect(response.jsonObject?["code"] as? String == code, "\(message)")
            #expect(response.jsonObject?["message"] as? String == message)
            let database = try Connection(conninfo: server.databaseURL)
            #expect(try database.query("SELECT count(*) FROM auth.users WHERE email = \(email)").scalar == "0", "\(message)")
        }
    }

    @Test func anEndpointNobodyAnswersIsTriedThreeTimes() throws {
        let closed = try TestSMTPServer.freePort()
        let unreachable = try TestServer {
            $0.auth.hooks.beforeUserCreated = try? AuthHook(uri: "http://127.0.0.1:\(closed)/hooks/users")
            $0.auth.hooks.httpBackoff = 0.05
        }
        let response = try unreachable.post("/auth/v1/signup", "{}")
        #expect(response.status == 422)
        #expect(response.text == #"{"code":"hook_timeout_after_retry","message":"Failed to reach hook after maximum retries"}"#)
    }
}
