import Foundation
import Glibc

/// A blocking WebSocket client over a real TCP socket, for tests: the handshake as given, raw
/// frames (masked or not, fragmented or not) out, server frames in.
public final class TestWebSocket: @unchecked Sendable {  // used from one test at a time
    public struct Frame: Sendable, Equatable {
        public let fin: Bool
        public let opcode: UInt8
        public let payload: [UInt8]
        public var text: String { String(decoding: payload, as: UTF8.self) }
        /// The code of a Close frame.
        public var closeCode: UInt16? {
            opcode == 0x8 && payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
        }
    }

    public let socket: Int32
    /// The handshake's status line code and headers.
    public private(set) var status = 0
    public private(set) var headers: [(name: String, value: String)] = []
    /// The body of a refused handshake.
    public private(set) var body = ""
    private var buffer: [UInt8] = []

    /// Connects and sends the upgrade for `target`; `headers` replace the standard ones of the
    /// same name (pass `("Sec-WebSocket-Key", "")` to leave one out).
    public init(port: Int, target: String, headers extra: [(String, String)] = []) throws {
        socket = try connectLoopback(port: port)
        var fields: [(String, String)] = [
            ("Host", "127.0.0.1:\(port)"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13")
        ]
        for (name, value) in extra {
            fields.removeAll { $0.0.lowercased() == name.lowercased() }
            if !value.isEmpty { fields.append((name, value)) }
        }
        var head = "GET \(target) HTTP/1.1\r\n"
        for (name, value) in fields { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try sendRaw(Array(head.utf8))
        try readHandshake()
    }

    deinit { close(socket) }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    private func readHandshake() throws {
        while true {
            if let end = findHeaderEnd() {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
                headers = lines.compactMap { line in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
                if status != 101, let length = header("Content-Length").flatMap(Int.init) {
                    while buffer.count < length { try fill(timeout: 30) }
                    body = String(decoding: buffer[..<length], as: UTF8.self)
                    buffer.removeFirst(length)
                }
                return
            }
            try fill(timeout: 30)
        }
    }

    private func findHeaderEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    // MARK: sending

    public func sendRaw(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw TestHTTPError.io("send") }
            offset += sent
        }
    }

    /// One frame as a client sends it (masked unless told otherwise).
    public static func frame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true, rsv: UInt8 = 0) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            out.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF)) }
        }
        guard masked else { return out + payload }
        let mask: [UInt8] = [0x37, 0xfa, 0x21, 0x3d]
        out += mask
        out += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return out
    }

    public func send(opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true) throws {
        try sendRaw(Self.frame(opcode: opcode, payload, fin: fin, masked: masked))
    }

    public func sendText(_ text: String) throws { try send(opcode: 0x1, Array(text.utf8)) }

    public func sendClose(code: UInt16) throws { try send(opcode: 0x8, [UInt8(code >> 8), UInt8(code & 0xFF)]) }

    // MARK: receiving

    /// The next frame, or nil when the server closed the connection (or nothing came in time).
    public func readFrame(timeout: Double = 30) throws -> Frame? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let frame = takeFrame() { return frame }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            do { try fill(timeout: left) } catch TestHTTPError.io { return nil }
        }
    }

    /// The next text message, skipping control frames.
    public func readText(timeout: Double = 30) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while let frame = try readFrame(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            if frame.opcode == 0x1 { return frame.text }
            if frame.opcode == 0x8 { return nil }
        }
        return nil
    }

    /// True when the server has closed the TCP connection (EOF) within `timeout`.
    public func waitForEOF(timeout: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            do {
                try fill(timeout: deadline.timeIntervalSinceNow)
            } catch TestHTTPError.io(let why) where why == "connection closed" {
                return true
            } catch {
                return false
            }
            buffer.removeAll()
        }
        return false
    }

    private func takeFrame() -> Frame? {
        guard buffer.count >= 2 else { return nil }
        var length = Int(buffer[1] & 0x7F)
        var header = 2
        if length == 126 {
            guard buffer.count >= 4 else { return nil }
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            header = 4
        } else if length == 127 {
            guard buffer.count >= 10 else { return nil }
            length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
            header = 10
        }
        guard buffer.count >= header + length else { return nil }
        let frame = Frame(fin: buffer[0] & 0x80 != 0, opcode: buffer[0] & 0x0F, payload: Array(buffer[header..<(header + length)]))
        buffer.removeFirst(header + length)
        return frame
    }

    private func fill(timeout: Double) throws {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(max(1, timeout * 1000))) > 0 else { throw TestHTTPError.io("timeout") }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = recv(socket, &chunk, chunk.count, 0)
        guard count > 0 else { throw TestHTTPError.io("connection closed") }
        buffer += chunk[0..<count]
    }
}
