import Glibc
import Synchronization

/// The bytes of a response on the wire: status line, headers, body.
extension HTTPServer {
    /// The client's X-Request-Id when it is short printable ASCII, else a new random one.
    static func requestID(from header: String?) -> String {
        if let header, !header.isEmpty, header.utf8.count <= 128, header.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) {
            return header
        }
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    func serialize(_ response: HTTPResponse, head: Bool, keepAlive: Bool, requestID: String?) -> [UInt8] {
        var out = "HTTP/1.1 \(response.status.code) \(response.status.reasonPhrase)\r\n"
        for field in response.headers where !field.name.equalsIgnoringASCIICase("Content-Length") && !field.name.equalsIgnoringASCIICase("Connection") {
            out += field.name
            out += ": "
            out += field.value
            out += "\r\n"
        }
        let bodiless = response.status.isBodiless
        if !bodiless { out += "Content-Length: \(response.body.count)\r\n" }
        out += "Date: \(HTTPDate.now())\r\nServer: onboard\r\n"
        if response.status == .switchingProtocols {
            out += "Connection: Upgrade\r\n\r\n"
        } else {
            out += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
        }
        var bytes = Array(out.utf8)
        if !head && !bodiless { bytes.append(contentsOf: response.body) }
        return bytes
    }
}

/// The IMF-fixdate for the Date header, formatted once per second.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: String)>((-1, ""))

    static func now() -> String {
        var seconds = time(nil)
        return cache.withLock { cache in
            if cache.second == seconds { return cache.text }
            var parts = tm()
            gmtime_r(&seconds, &parts)
            var buffer = [CChar](repeating: 0, count: 64)
            strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
            cache = (seconds, cText(buffer))
            return cache.text
        }
    }
}
