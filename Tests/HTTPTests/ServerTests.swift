import Foundation
import Glibc
import TestSupport
import Testing

@testable import HTTP

/// A raw TCP client: write bytes, read bytes.
final class RawClient {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 30, tv_usec: 0)  // a bound on a failing read, not an expectation
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw TestHTTPError.io("connect") }
    }

    deinit { close(fd) }

    func write(_ text: String) { write(Array(text.utf8)) }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Reads until `predicate` holds for everything read so far, EOF, or the timeout.
    func read(until predicate: (String) -> Bool = { _ in false }) -> (text: String, closed: Bool) {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { return (String(decoding: data, as: UTF8.self), count == 0) }
            data += chunk[0..<count]
            if predicate(String(decoding: data, as: UTF8.self)) { return (String(decoding: data, as: UTF8.self), false) }
        }
    }
}

func occurrences(of needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

@Suite("HTTP server over real sockets", .serialized)
final class ServerTests {
    let server: HTTPServer

    let slowGate = DispatchSemaphore(value: 0)

    init() throws {
        var limits = ServerLimits()
        limits.requestTimeout = 0.6
        limits.idleTimeout = 1.5
        limits.maxBodyBytes = 1000
        limits.workerThreads = 4
        limits.maxConnections = 50
        var router = Router()
        router.add(.get, "/hello", { _ in .json(.ok, #"{"hello":"world"}"#) })
        router.add(.post, "/echo", { request in HTTPResponse(status: .ok, headers: ["Content-Type": "text/plain"], body: request.body) })
        // Held until the test opens the gate (a handler that is still running, whatever the clock).
        let gate = slowGate
        router.add(
            .get, "/slow",
            { _ in
                gate.wait()
                return .json(.ok, "{}")
            })
        server = HTTPServer(
            host: "127.0.0.1", port: 0, limits: limits,
            cors: CORSConfig(allowedOrigins: ["https://app.example"], exposedHeaders: "Content-Range, X-Request-Id"),
            responder: { [router] in router.respond(to: $0) })
        try server.start()
    }

    deinit { server.shutdown() }

    @Test func keepAliveGetWithDateServerAndRequestID() throws {
        let client = TestHTTPClient(port: server.port)
        let first = try client.request("GET", "/hello", headers: [("X-Request-Id", "abc-123")])
        #expect(first.status == 200)
        #expect(first.text == #"{"hello":"world"}"#)
        #expect(first.header("X-Request-Id") == "abc-123")
        #expect(first.header("Date")?.hasSuffix("GMT") == true)
        #expect(first.header("Server") == "onboard")
        let second = try client.request("GET", "/hello")
        #expect(second.header("X-Request-Id")?.count == 16)
        // Made up when the client sends none: 16 hex digits, a new one every time.
        let made = (0..<1000).map { _ in HTTPServer.requestID(from: nil) }
        #expect(Set(made).count == 1000 && made.allSatisfy { $0.count == 16 && UInt64($0, radix: 16) != nil })
        #expect(HTTPServer.requestID(from: "") != HTTPServer.requestID(from: ""))
    }

    @Test func notFoundAndMethodNotAllowedAreJSON() throws {
        let client = TestHTTPClient(port: server.port)
        let missing = try client.request("GET", "/nope")
        #expect(missing.status == 404 && missing.jsonObject?["message"] as? String == "Not Found")
        let wrong = try client.request("DELETE", "/hello")
        #expect(wrong.status == 405)
    }

    @Test func headHasLengthButNoBody() throws {
        let raw = try RawClient(port: server.port)
        raw.write("HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        let text = raw.read { occurrences(of: "HTTP/1.1 200", in: $0) == 2 && $0.hasSuffix("}") }.text
        #expect(text.contains("Content-Length: 17\r\n"))
        #expect(occurrences(of: #"{"hello":"world"}"#, in: text) == 1)
    }

    @Test func hundredPipelinedRequestsInOneWriteAnsweredInOrder() throws {
        let raw = try RawClient(port: server.port)
        let requests = (0..<100).map { "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(String($0).utf8.count + 1)\r\n\r\n#\($0)" }.joined()
        raw.write(requests)
        let text = raw.read { occurrences(of: "HTTP/1.1 200", in: $0) == 100 && $0.hasSuffix("#99") }.text
        let bodies = text.components(separatedBy: "\r\n\r\n").dropFirst().map { $0.prefix { $0 != "H" } }
        #expect(bodies.map(String.init) == (0..<100).map { "#\($0)" })
    }

    @Test func chunkedRequestBody() throws {
        let raw = try RawClient(port: server.port)
        raw.write("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nT: 1\r\n\r\n")
        #expect(raw.read { $0.hasSuffix("hello world") }.text.hasSuffix("hello world"))
    }

    @Test func expectContinue() throws {
        let raw = try RawClient(port: server.port)
        raw.write("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        #expect(raw.read { $0.contains("\r\n\r\n") }.text.hasPrefix("HTTP/1.1 100 Continue"))
        raw.write("ping")
        #expect(raw.read { $0.hasSuffix("ping") }.text.hasSuffix("ping"))
    }

    @Test func connectionCloseAndHTTP10() throws {
        let raw = try RawClient(port: server.port)
        raw.write("GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let closed = raw.read()
        #expect(closed.closed && closed.text.contains("Connection: close"))
        let old = try RawClient(port: server.port)
        old.write("GET /hello HTTP/1.0\r\n\r\n")
        let reply = old.read()
        #expect(reply.closed && reply.text.hasPrefix("HTTP/1.1 200"))
        let oldKeep = try RawClient(port: server.port)
        oldKeep.write("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(oldKeep.read { $0.hasSuffix("}") }.text.contains("Connection: keep-alive"))
    }

    @Test(arguments: [
        ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc", "400"),
        ("GET /hello HTTP/1.1\r\nHost: x\r\nA: b\r\n c\r\n\r\n", "400"),
        ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n", "413"),
        ("BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n", "501"),
        ("GET /" + String(repeating: "x", count: 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n", "414")
    ])
    func badRequestsGetJSONAndClose(_ text: String, status: String) throws {
        let raw = try RawClient(port: server.port)
        raw.write(text)
        let reply = raw.read()
        #expect(reply.text.hasPrefix("HTTP/1.1 \(status)"))
        #expect(reply.text.contains(#""message":"#))
        #expect(reply.closed)
    }

    @Test func slowHeadersGet408AndIdleConnectionsClose() throws {
        let slow = try RawClient(port: server.port)
        slow.write("GET /hello HTTP/1.1\r\nHost: x\r\n")
        let reply = slow.read()
        #expect(reply.text.hasPrefix("HTTP/1.1 408"))
        #expect(reply.closed)
        let idle = try RawClient(port: server.port)
        idle.write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = idle.read { $0.hasSuffix("}") }
        // Closed by the idle timeout (a server that never closed would leave the read to time out
        // open, and `closed` false).
        let after = idle.read()
        #expect(after.closed && after.text.isEmpty)
    }

    @Test func corsPreflightAndHeaders() throws {
        let client = TestHTTPClient(port: server.port)
        let preflight = try client.request(
            "OPTIONS", "/hello",
            headers: [("Origin", "https://app.example"), ("Access-Control-Request-Method", "PATCH"), ("Access-Control-Request-Headers", "apikey, prefer")])
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example")
        #expect(preflight.header("Access-Control-Allow-Headers") == "apikey, prefer")
        #expect(preflight.header("Access-Control-Allow-Methods")?.contains("PATCH") == true)
        let simple = try client.request("GET", "/hello", headers: [("Origin", "https://app.example")])
        #expect(simple.header("Access-Control-Expose-Headers")?.contains("Content-Range") == true)
        let foreign = try client.request("GET", "/hello", headers: [("Origin", "https://evil.example")])
        #expect(foreign.header("Access-Control-Allow-Origin") == nil)
    }

    @Test func tenThousandKeepAliveRequestsOnOneConnection() throws {
        let client = TestHTTPClient(port: server.port)
        for index in 0..<10_000 {
            let response = try client.request("GET", "/hello")
            if response.status != 200 {
                Issue.record("request \(index): \(response.status)")
                return
            }
        }
    }

    @Test func slowHandlersDoNotBlockOtherConnections() throws {
        let slow = try RawClient(port: server.port)
        slow.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        // The slow handler holds its worker until the gate opens: the fast request is answered
        // while it is still running.
        let fast = try TestHTTPClient(port: server.port).request("GET", "/hello")
        #expect(fast.status == 200)
        slowGate.signal()
        _ = slow.read { $0.hasSuffix("{}") }
    }

    @Test func aHandlerRunningPastTheConnectionsTimeoutsStillAnswersOnIt() throws {
        let slow = try RawClient(port: server.port)
        slow.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        // A connection accepted after the slow one is closed for idling by an expiry scan made
        // after every deadline the slow connection was given: once it is, that scan has seen it.
        let idle = try RawClient(port: server.port)
        #expect(idle.read().closed)
        slowGate.signal()
        // The connection belongs to the handler while it runs: its answer arrives, on it.
        let reply = slow.read { $0.hasSuffix("{}") }
        #expect(reply.text.hasPrefix("HTTP/1.1 200") && reply.text.hasSuffix("{}"))
    }

    @Test func connectionsBeyondTheLimitGet503() throws {
        var clients: [RawClient] = []
        for _ in 0..<50 { clients.append(try RawClient(port: server.port)) }
        #expect(eventually { server.connectionCount == 50 })
        let extra = try RawClient(port: server.port)
        let reply = extra.read()
        #expect(reply.text.hasPrefix("HTTP/1.1 503"))
        #expect(reply.closed)
        clients.removeAll()
    }
}
