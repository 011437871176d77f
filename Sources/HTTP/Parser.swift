/// A framing or syntax error, with the status the client gets before the connection closes.
public struct HTTPParseError: Error, Equatable, Sendable {
    public let status: HTTPStatus
    public let message: String
}

/// The HTTP/1.1 request parser: bytes in, a request out. It never touches a socket, so it is
/// table-tested and fuzzed from literals. It parses from the start of the buffer each time it is
/// called (requests are small and bounded by `ServerLimits`), which makes the result independent
/// of how the bytes were split across reads.
public struct HTTPParser: Sendable {
    public enum Outcome: Sendable {
        /// More bytes are needed. `headersComplete` tells whether the head has arrived (for
        /// `Expect: 100-continue`), `expectsContinue` whether the client asked for it.
        case needMore(headersComplete: Bool, expectsContinue: Bool)
        /// A whole request, and how many bytes of the buffer it used.
        case request(HTTPRequest, consumed: Int)
        case failed(HTTPParseError)
    }

    public let limits: ServerLimits

    public init(limits: ServerLimits = ServerLimits()) {
        self.limits = limits
    }

    static let knownMethods: Set<HTTPMethod> = [
        .get, .head, .post, .put, .patch, .delete, .options, HTTPMethod(rawValue: "TRACE"), HTTPMethod(rawValue: "CONNECT")
    ]

    public func parse(_ buffer: [UInt8]) -> Outcome {
        buffer.withUnsafeBufferPointer { parse($0) }
    }

    public func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Outcome {
        var start = 0
        // RFC 9112 §2.2: ignore at least one empty line before a request-line.
        while start + 1 < bytes.count, bytes[start] == 0x0d, bytes[start + 1] == 0x0a { start += 2 }
        // Request line (the limit counts it with its CRLF, whole or in pieces alike).
        guard let lineEnd = findCRLF(bytes, from: start, limit: limits.maxRequestLine) else {
            if bytes.count - start > limits.maxRequestLine { return .failed(HTTPParseError(status: .uriTooLong, message: "URI Too Long")) }
            if let bare = bytes[start...].firstIndex(of: 0x0a), bare - start <= limits.maxRequestLine {
                return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: line not terminated by CRLF"))
            }
            return .needMore(headersComplete: false, expectsContinue: false)
        }
        guard lineEnd + 2 - start <= limits.maxRequestLine else { return .failed(HTTPParseError(status: .uriTooLong, message: "URI Too Long")) }
        let line = bytes[start..<lineEnd]
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: malformed request line"))
        }
        guard parts[0].allSatisfy(isTokenChar) else { return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: malformed method")) }
        let method = HTTPMethod(rawValue: String(decoding: parts[0], as: UTF8.self))
        let versionText = String(decoding: parts[2], as: UTF8.self)
        let versionMinor: Int
        switch versionText {
        case "HTTP/1.1": versionMinor = 1
        case "HTTP/1.0": versionMinor = 0
        default:
            if versionText.hasPrefix("HTTP/") && versionText.count == 8 {
                return .failed(HTTPParseError(status: .httpVersionNotSupported, message: "HTTP Version Not Supported"))
            }
            return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: malformed HTTP version"))
        }
        guard parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: malformed request target"))
        }
        let target = String(decoding: parts[1], as: UTF8.self)
        guard target.hasPrefix("/") || (method == .options && target == "*") else {
            return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: request target must be an absolute path"))
        }

        // Header fields.
        var headers = HTTPHeaders()
        var position = lineEnd + 2
        let headerStart = position
        while true {
            guard let end = findCRLF(bytes, from: position, limit: limits.maxHeaderBytes) else {
                if bytes.count - headerStart > limits.maxHeaderBytes {
                    return .failed(HTTPParseError(status: .requestHeaderFieldsTooLarge, message: "Request Header Fields Too Large"))
                }
                if bytes[position...].contains(0x0a) && !bytes[position...].contains(0x0d) {
                    return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: line not terminated by CRLF"))
                }
                return .needMore(headersComplete: false, expectsContinue: false)
            }
            if end + 2 - headerStart > limits.maxHeaderBytes {  // the section counted with its CRLFs, as while incomplete
                return .failed(HTTPParseError(status: .requestHeaderFieldsTooLarge, message: "Request Header Fields Too Large"))
            }
            if end == position {
                position += 2
                break
            }
            let field = bytes[position..<end]
            // RFC 9112 §5.2: obs-fold is rejected.
            if field.first == 0x20 || field.first == 0x09 {
                return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: obsolete line folding"))
            }
            guard let colon = field.firstIndex(of: 0x3a), colon > field.startIndex else {
                return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: malformed header field"))
            }
            // RFC 9112 §5.1: no whitespace between the name and the colon.
            guard bytes[field.startIndex..<colon].allSatisfy(isTokenChar) else {
                return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: malformed header name"))
            }
            var valueStart = colon + 1
            var valueEnd = field.endIndex
            while valueStart < valueEnd, bytes[valueStart] == 0x20 || bytes[valueStart] == 0x09 { valueStart += 1 }
            while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            guard bytes[valueStart..<valueEnd].allSatisfy({ $0 >= 0x20 || $0 == 0x09 }), !bytes[valueStart..<valueEnd].contains(0x7f) else {
                return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: invalid character in header value"))
            }
            headers.add(
                String(decoding: bytes[field.startIndex..<colon], as: UTF8.self),
                String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self))
            if headers.count > limits.maxHeaderCount {
                return .failed(HTTPParseError(status: .requestHeaderFieldsTooLarge, message: "Request Header Fields Too Large"))
            }
            position = end + 2
        }
        if versionMinor == 1 && !headers.contains("Host") {
            return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: missing Host header"))
        }
        // RFC 9112 §3.2: more than one Host field is a 400 (proxies may disagree on which wins).
        if headers.values("Host").count > 1 {
            return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: more than one Host header"))
        }
        guard Self.knownMethods.contains(method) else {
            return .failed(HTTPParseError(status: .notImplemented, message: "Not Implemented"))
        }

        // Body framing (RFC 9112 §6).
        let transferEncodings = headers.values("Transfer-Encoding")
        let contentLengths = headers.values("Content-Length")
        let expectsContinue = headers["Expect"].map { $0.lowercased() == "100-continue" } ?? false
        var request = HTTPRequest(method: method, target: target, versionMinor: versionMinor, headers: headers)
        if !transferEncodings.isEmpty {
            // RFC 9112 §6.1: a message with both is an attack (request smuggling).
            guard contentLengths.isEmpty else {
                return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: both Content-Length and Transfer-Encoding"))
            }
            let codings = transferEncodings.flatMap { $0.split(separator: ",") }.map { $0.trimmedOWS.lowercased() }
            guard codings == ["chunked"], versionMinor == 1 else {
                return .failed(
                    HTTPParseError(status: codings.last == "chunked" ? .notImplemented : .badRequest, message: "Bad Request: unsupported Transfer-Encoding"))
            }
            switch parseChunked(bytes, from: position, maxBody: limits.maxBodyBytes(forPath: request.path)) {
            case .needMore:
                return .needMore(headersComplete: true, expectsContinue: expectsContinue)
            case .failed(let error):
                return .failed(error)
            case .done(let body, let end):
                request.body = body
                return .request(request, consumed: end)
            }
        }
        var length = 0
        if !contentLengths.isEmpty {
            let values = Set(contentLengths.flatMap { $0.split(separator: ",") }.map { $0.trimmedOWS })
            guard values.count == 1, let text = values.first, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                text.utf8.count <= 18, let value = Int(text)
            else {
                return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: invalid Content-Length"))
            }
            length = value
        }
        guard length <= limits.maxBodyBytes(forPath: request.path) else {
            return .failed(HTTPParseError(status: .contentTooLarge, message: "Payload Too Large"))
        }
        guard bytes.count - position >= length else {
            return .needMore(headersComplete: true, expectsContinue: expectsContinue)
        }
        request.body = Array(bytes[position..<(position + length)])
        return .request(request, consumed: position + length)
    }

    private enum ChunkedOutcome {
        case needMore
        case failed(HTTPParseError)
        case done(body: [UInt8], end: Int)
    }

    /// RFC 9112 §7.1: chunk-size [; extensions] CRLF data CRLF … 0 CRLF trailers CRLF.
    private func parseChunked(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, maxBody: Int) -> ChunkedOutcome {
        var position = start
        var body: [UInt8] = []
        while true {
            guard let lineEnd = findCRLF(bytes, from: position, limit: 1024) else {
                return bytes.count - position > 1024 ? .failed(HTTPParseError(status: .badRequest, message: "Bad Request: invalid chunk size")) : .needMore
            }
            let line = bytes[position..<lineEnd]
            let sizeText = line.prefix { $0 != 0x3b && $0 != 0x20 && $0 != 0x09 }
            guard !sizeText.isEmpty, sizeText.count <= 8, sizeText.allSatisfy(isHexDigit),
                let size = Int(String(decoding: sizeText, as: UTF8.self), radix: 16)
            else {
                return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: invalid chunk size"))
            }
            position = lineEnd + 2
            if size == 0 {
                // Trailer fields until an empty line; they are read and dropped.
                var trailerBytes = 0
                while true {
                    guard let end = findCRLF(bytes, from: position, limit: limits.maxHeaderBytes) else {
                        return bytes.count - position > limits.maxHeaderBytes
                            ? .failed(HTTPParseError(status: .requestHeaderFieldsTooLarge, message: "Request Header Fields Too Large")) : .needMore
                    }
                    if end == position { return .done(body: body, end: end + 2) }
                    trailerBytes += end - position
                    if trailerBytes > limits.maxHeaderBytes {
                        return .failed(HTTPParseError(status: .requestHeaderFieldsTooLarge, message: "Request Header Fields Too Large"))
                    }
                    position = end + 2
                }
            }
            guard body.count + size <= maxBody else {
                return .failed(HTTPParseError(status: .contentTooLarge, message: "Payload Too Large"))
            }
            guard bytes.count - position >= size + 2 else { return .needMore }
            body.append(contentsOf: bytes[position..<(position + size)])
            position += size
            guard bytes[position] == 0x0d, bytes[position + 1] == 0x0a else {
                return .failed(HTTPParseError(status: .badRequest, message: "Bad Request: chunk data not followed by CRLF"))
            }
            position += 2
        }
    }
}

/// Index of the next CRLF at or after `from`, looking no further than `limit` bytes past it.
private func findCRLF(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, limit: Int) -> Int? {
    var index = from
    let end = min(bytes.count - 1, from + limit + 1)
    while index < end {
        if bytes[index] == 0x0d && bytes[index + 1] == 0x0a { return index }
        index += 1
    }
    return nil
}

/// RFC 9110 §5.6.2 tchar.
private func isTokenChar(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}

private func isHexDigit(_ byte: UInt8) -> Bool {
    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
}
