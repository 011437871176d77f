import Foundation
import Glibc

/// A response as the test client read it off the socket.
public struct TestResponse: Sendable {
    public let status: Int
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as JSON (Foundation objects), or nil.
    public var json: Any? { try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) }

    public var jsonObject: [String: Any]? { json as? [String: Any] }
    public var jsonArray: [[String: Any]]? { json as? [[String: Any]] }
}

/// A small blocking HTTP/1.1 client over a real TCP socket, one keep-alive connection, for tests.
public final class TestHTTPClient: @unchecked Sendable {  // used from one test at a time
    public let port: Int
    private var socket: Int32 = -1
    private var buffer: [UInt8] = []

    public init(port: Int) {
        self.port = port
    }

    deinit {
        if socket >= 0 { close(socket) }
    }

    /// Sends one request and reads its response. `headers` are sent as given (plus Host and
    /// Content-Length); a JSON body can be passed as a string.
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: String? = nil) throws -> TestResponse {
        try request(method, target, headers: headers, bodyBytes: body.map { Array($0.utf8) })
    }

    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], bodyBytes: [UInt8]?) throws -> TestResponse {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let bodyBytes { head += "Content-Length: \(bodyBytes.count)\r\n" }
        head += "\r\n"
        var bytes = Array(head.utf8)
        if let bodyBytes { bytes += bodyBytes }
        do {
            try ensureConnected()
            try sendAll(bytes)
            return try readResponse(method: method)
        } catch {
            // The server may have closed an idle keep-alive connection: retry once on a new one.
            reset()
            try ensureConnected()
            try sendAll(bytes)
            return try readResponse(method: method)
        }
    }

    private func reset() {
        if socket >= 0 { close(socket) }
        socket = -1
        buffer = []
    }

    private func ensureConnected() throws {
        guard socket < 0 else { return }
        let fd = try connectLoopback(port: port)
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        socket = fd
    }

    private func sendAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw TestHTTPError.io("send") }
            offset += sent
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = recv(socket, &chunk, chunk.count, 0)
        guard count > 0 else { throw TestHTTPError.io("connection closed") }
        buffer += chunk[0..<count]
    }

    private func readLine() throws -> String {
        while true {
            if let index = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(buffer[..<index])
                buffer.removeFirst(index + 1)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            try fill()
        }
    }

    private func readBytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { try fill() }
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return bytes
    }

    private func readResponse(method: String) throws -> TestResponse {
        var status = 0
        var headers: [(name: String, value: String)] = []
        repeat {  // skip 1xx interim responses
            let statusLine = try readLine()
            let parts = statusLine.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, let code = Int(parts[1]) else { throw TestHTTPError.protocolError(statusLine) }
            status = code
            headers = []
            while true {
                let line = try readLine()
                if line.isEmpty { break }
                guard let colon = line.firstIndex(of: ":") else { throw TestHTTPError.protocolError(line) }
                headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
        } while status < 200
        func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name }?.value }
        var body: [UInt8] = []
        if method != "HEAD" && status != 204 && status != 304 {
            if header("transfer-encoding")?.lowercased() == "chunked" {
                while true {
                    let sizeLine = try readLine()
                    guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else { throw TestHTTPError.protocolError(sizeLine) }
                    if size == 0 {
                        while try !readLine().isEmpty {}
                        break
                    }
                    body += try readBytes(size)
                    _ = try readLine()
                }
            } else if let length = header("content-length").flatMap({ Int($0) }) {
                body = try readBytes(length)
            }
        }
        if header("connection")?.lowercased() == "close" { reset() }
        return TestResponse(status: status, headers: headers, body: body)
    }
}

/// A blocking TCP connection to 127.0.0.1:`port`.
func connectLoopback(port: Int) throws -> Int32 {
    let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestHTTPError.io("socket") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard result == 0 else {
        close(fd)
        throw TestHTTPError.io("connect")
    }
    return fd
}

public enum TestHTTPError: Error {
    case io(String)
    case protocolError(String)
}
