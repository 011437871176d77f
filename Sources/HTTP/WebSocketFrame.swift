/// RFC 6455 framing: an incremental decoder for client frames (masked, limited, fragmented
/// messages reassembled, control frames interleaved) and an encoder for server frames (unmasked,
/// never fragmented).

/// WebSocket close codes we send (RFC 6455 §7.4.1); 4000–4999 are the application's.
public struct WebSocketCloseCode: RawRepresentable, Sendable, Equatable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let normal = WebSocketCloseCode(rawValue: 1000)
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// Only reported to the delegate (no code in the peer's Close).
    public static let noStatus = WebSocketCloseCode(rawValue: 1005)
    /// Only reported to the delegate (the connection ended without a Close).
    public static let abnormal = WebSocketCloseCode(rawValue: 1006)
    public static let invalidPayload = WebSocketCloseCode(rawValue: 1007)
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    public static let internalError = WebSocketCloseCode(rawValue: 1011)
}

/// A whole message from the client.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}

enum WebSocketOpcode: UInt8 {
    case continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA
}

/// What the decoder made of the bytes so far.
enum WebSocketEvent: Equatable {
    case message(WebSocketMessage)
    case ping([UInt8])
    case pong
    /// The peer's Close: its code (nil when it sent none) and reason.
    case close(code: UInt16?, reason: String)
    /// The peer broke the protocol: close with this code (and stop reading).
    case fail(WebSocketCloseCode, String)
}

struct WebSocketDecoder {
    let maxFrameBytes: Int
    let maxMessageBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var fragments: [UInt8] = []
    private var fragmentOpcode: WebSocketOpcode?
    private var failed = false

    init(maxFrameBytes: Int, maxMessageBytes: Int) {
        self.maxFrameBytes = maxFrameBytes
        self.maxMessageBytes = maxMessageBytes
    }

    /// Bytes received but not yet decoded (bounded by one frame header + `maxFrameBytes`).
    var bufferedBytes: Int { buffer.count - start + fragments.count }

    /// Adds received bytes and returns every complete event; after a `.fail` nothing more.
    mutating func feed(_ bytes: some Collection<UInt8>) -> [WebSocketEvent] {
        guard !failed else { return [] }
        buffer.append(contentsOf: bytes)
        var events: [WebSocketEvent] = []
        while let event = nextEvent() {
            events.append(event)
            if case .fail = event {
                failed = true
                buffer = []
                start = 0
                fragments = []
                break
            }
            // Nothing after a Close is read (RFC 6455 §5.5.1): drop what came with it.
            if case .close = event {
                failed = true
                buffer = []
                start = 0
                fragments = []
                break
            }
        }
        if start == buffer.count {
            // Everything decoded: let the storage go (an idle socket keeps no buffer).
            buffer = []
            start = 0
        } else if start > 65536 {
            buffer.removeFirst(start)
            start = 0
        }
        return events
    }

    /// One frame out of the buffer, or nil when it is incomplete (a frame without an event to
    /// report, e.g. a non-final fragment, loops on).
    private mutating func nextEvent() -> WebSocketEvent? {
        while true {
            let available = buffer.count - start
            guard available >= 2 else { return nil }
            let byte0 = buffer[start]
            let byte1 = buffer[start + 1]
            let fin = byte0 & 0x80 != 0
            guard byte0 & 0x70 == 0 else { return .fail(.protocolError, "reserved bits set without an extension") }
            guard let opcode = WebSocketOpcode(rawValue: byte0 & 0x0F) else { return .fail(.protocolError, "unknown opcode \(byte0 & 0x0F)") }
            guard byte1 & 0x80 != 0 else { return .fail(.protocolError, "client frames must be masked") }
            var length = UInt64(byte1 & 0x7F)
            var headerLength = 2
            if length == 126 {
                guard available >= 4 else { return nil }
                length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
                headerLength = 4
            } else if length == 127 {
                guard available >= 10 else { return nil }
                length = 0
                for index in 0..<8 { length = length << 8 | UInt64(buffer[start + 2 + index]) }
                guard length >> 63 == 0 else { return .fail(.protocolError, "frame length has its top bit set") }
                headerLength = 10
            }
            let isControl = opcode.rawValue & 0x8 != 0
            if isControl {
                guard fin else { return .fail(.protocolError, "control frames must not be fragmented") }
                guard length <= 125 else { return .fail(.protocolError, "control frame payload over 125 bytes") }
            }
            guard length <= UInt64(maxFrameBytes) else { return .fail(.messageTooBig, "frame of \(length) bytes exceeds \(maxFrameBytes)") }
            let total = headerLength + 4 + Int(length)
            guard available >= total else { return nil }
            let maskAt = start + headerLength
            let mask = (buffer[maskAt], buffer[maskAt + 1], buffer[maskAt + 2], buffer[maskAt + 3])
            var payload = Array(buffer[(maskAt + 4)..<(start + total)])
            payload.withUnsafeMutableBufferPointer { bytes in
                for index in bytes.indices {
                    switch index & 3 {
                    case 0: bytes[index] ^= mask.0
                    case 1: bytes[index] ^= mask.1
                    case 2: bytes[index] ^= mask.2
                    default: bytes[index] ^= mask.3
                    }
                }
            }
            start += total

            switch opcode {
            case .ping:
                return .ping(payload)
            case .pong:
                return .pong
            case .close:
                if payload.isEmpty { return .close(code: nil, reason: "") }
                guard payload.count >= 2 else { return .fail(.protocolError, "close payload of one byte") }
                let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
                guard Self.isValidReceivedCloseCode(code) else { return .fail(.protocolError, "invalid close code \(code)") }
                guard let reason = String(validating: payload[2...], as: UTF8.self) else {
                    return .fail(.invalidPayload, "close reason is not UTF-8")
                }
                return .close(code: code, reason: reason)
            case .text, .binary:
                guard fragmentOpcode == nil else { return .fail(.protocolError, "new message before the fragmented one ended") }
                if fin { return Self.message(opcode, payload) }
                guard payload.count <= maxMessageBytes else { return .fail(.messageTooBig, "message exceeds \(maxMessageBytes) bytes") }
                fragmentOpcode = opcode
                fragments = payload
            case .continuation:
                guard let first = fragmentOpcode else { return .fail(.protocolError, "continuation frame without a message") }
                guard fragments.count + payload.count <= maxMessageBytes else { return .fail(.messageTooBig, "message exceeds \(maxMessageBytes) bytes") }
                fragments.append(contentsOf: payload)
                if fin {
                    let whole = fragments
                    fragments = []
                    fragmentOpcode = nil
                    return Self.message(first, whole)
                }
            }
        }
    }

    private static func message(_ opcode: WebSocketOpcode, _ payload: [UInt8]) -> WebSocketEvent {
        if opcode == .binary { return .message(.binary(payload)) }
        guard let text = String(validating: payload, as: UTF8.self) else { return .fail(.invalidPayload, "text message is not UTF-8") }
        return .message(.text(text))
    }

    /// RFC 6455 §7.4: codes a peer may send (1005, 1006, 1015 and unassigned ones below 3000 may not).
    static func isValidReceivedCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011: return true
        case 3000...4999: return true
        default: return false
        }
    }
}

enum WebSocketEncoder {
    /// One unmasked, final frame.
    static func frame(_ opcode: WebSocketOpcode, _ payload: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 10)
        out.append(0x80 | opcode.rawValue)
        if payload.count < 126 {
            out.append(UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out.append(126)
            out.append(UInt8(payload.count >> 8))
            out.append(UInt8(payload.count & 0xFF))
        } else {
            out.append(127)
            let length = UInt64(payload.count)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((length >> UInt64(shift)) & 0xFF)) }
        }
        out.append(contentsOf: payload)
        return out
    }

    static func close(_ code: WebSocketCloseCode, reason: String) -> [UInt8] {
        var payload = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        payload.append(contentsOf: reason.utf8.prefix(123))
        return frame(.close, payload)
    }
}
