import Glibc
import Synchronization

/// The bytes of a response on the wire: status line, headers, body.
extension HTTPServer {
    /// The client's X-Request-Id when it is short printable ASCII, else a new random one.
    static func requestID(from header: String?) -> String {
        if let header, !header.isEmpty, header.utf8.count <= 128, header.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) {
            return header
        }
        let hex = String(RequestIDs.next(), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Status line, headers and body in one array (one write), built in place: no intermediate
    /// string for the head.
    func serialize(_ response: HTTPResponse, head: Bool, keepAlive: Bool, requestID: String?) -> [UInt8] {
        let bodiless = response.status.isBodiless
        let withBody = !head && !bodiless
        var headBytes = 96
        for field in response.headers { headBytes += field.name.utf8.count + field.value.utf8.count + 4 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headBytes + 64 + (withBody ? response.body.count : 0))
        bytes.append(contentsOf: "HTTP/1.1 ".utf8)
        bytes.append(contentsOf: String(response.status.code).utf8)  // a small string: no allocation
        bytes.append(0x20)
        bytes.append(contentsOf: response.status.reasonPhrase.utf8)
        bytes.append(contentsOf: "\r\n".utf8)
        for field in response.headers where !field.name.equalsIgnoringASCIICase("Content-Length") && !field.name.equalsIgnoringASCIICase("Connection") {
            bytes.append(contentsOf: field.name.utf8)
            bytes.append(contentsOf: ": ".utf8)
            bytes.append(contentsOf: field.value.utf8)
            bytes.append(contentsOf: "\r\n".utf8)
        }
        if !bodiless {
            bytes.append(contentsOf: "Content-Length: ".utf8)
            bytes.append(contentsOf: String(response.body.count).utf8)
            bytes.append(contentsOf: "\r\n".utf8)
        }
        bytes.append(contentsOf: "Date: ".utf8)
        bytes.append(contentsOf: HTTPDate.now().utf8)
        bytes.append(contentsOf: "\r\nServer: onboard\r\n".utf8)
        if response.status == .switchingProtocols {
            bytes.append(contentsOf: "Connection: Upgrade\r\n\r\n".utf8)
        } else {
            bytes.append(contentsOf: (keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n").utf8)
        }
        if withBody { bytes.append(contentsOf: response.body) }
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

/// New request ids: a counter from a random start, mixed by SplitMix64 (a bijection), so ids
/// are unique within the process and do not read as a sequence, without a system call per
/// request (`SystemRandomNumberGenerator` makes one). They label log lines and answers;
/// nothing secret rides on them.
enum RequestIDs {
    private static let start = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(0)

    static func next() -> UInt64 {
        var z = start &+ counter.add(1, ordering: .relaxed).newValue &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
