/// Header fields in arrival order, repeated names kept, looked up case-insensitively
/// (clients send `apiKey`, `Apikey` and `apikey`).
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ pairs: [(String, String)] = []) {
        fields = pairs.map { (name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value of `name`.
    public subscript(_ name: String) -> String? {
        fields.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Removes every field named `name`, then adds one.
    public mutating func replace(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}

extension String {
    /// Equal but for the case of ASCII letters (header names). Every request looks several
    /// names up, so the bytes are compared in place.
    public func equalsIgnoringASCIICase(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var a = self
        var b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in
                for index in 0..<x.count where x[index] != y[index] {
                    let lx = x[index] &- 0x41 < 26 ? x[index] | 0x20 : x[index]
                    let ly = y[index] &- 0x41 < 26 ? y[index] | 0x20 : y[index]
                    if lx != ly { return false }
                }
                return true
            }
        }
    }
}

/// One parsed request.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// The raw request-target, e.g. `/rest/v1/children?select=%2A`.
    public var target: String
    /// The percent-decoded path, without the query.
    public var path: String
    /// The raw query string without `?` ("" if none).
    public var rawQuery: String
    /// Form-decoded query pairs in order: `+` is a space, `%2B` a plus. Decoded from `rawQuery`
    /// when asked (a repeated read's plan is found by the raw query, without it).
    public var query: [(name: String, value: String)] { parseQuery(rawQuery) }
    /// 1 for HTTP/1.1, 0 for HTTP/1.0.
    public var versionMinor: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Filled by the router from `:name` segments.
    public var pathParameters: [String: String] = [:]
    /// `X-Request-Id`, echoed or generated.
    public var id: String = ""
    public var remoteAddress: String = ""

    public init(method: HTTPMethod, target: String, versionMinor: Int = 1, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.versionMinor = versionMinor
        self.headers = headers
        self.body = body
        let question = target.firstIndex(of: "?")
        let rawPath = question.map { String(target[..<$0]) } ?? target
        rawQuery = question.map { String(target[target.index(after: $0)...]) } ?? ""
        path = percentDecode(rawPath, plusIsSpace: false) ?? rawPath
    }

    public func queryValues(_ name: String) -> [String] {
        query.filter { $0.name == name }.map(\.value)
    }

    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// The body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// One response. `Content-Length`, `Date`, `Server` and `X-Request-Id` are added when it is written.
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// With status 101: the handler the connection is handed to once the response is written.
    public var webSocket: (any WebSocketDelegate)?

    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response (`Content-Type: application/json; charset=utf-8`).
    public static func json(_ status: HTTPStatus, _ json: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        if !headers.contains("Content-Type") { headers.add("Content-Type", "application/json; charset=utf-8") }
        return HTTPResponse(status: status, headers: headers, body: Array(json.utf8))
    }

    /// A JSON error in the plain `{"message": …}` shape (see `ErrorStyle` for the layer's own).
    public static func error(_ status: HTTPStatus, _ message: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        ErrorStyle.plain.response(status, message, headers: headers)
    }
}

/// How this layer words its own refusals (a malformed request, 404, 405, an unhandled error, a
/// refused WebSocket upgrade): the JSON body for a message. The application picks its dialect's
/// shape; HTTP itself knows no dialect.
public struct ErrorStyle: Sendable {
    public let body: @Sendable (_ message: String) -> String

    public init(body: @escaping @Sendable (_ message: String) -> String) {
        self.body = body
    }

    /// `{"message": …}`.
    public static let plain = ErrorStyle { #"{"message":\#(jsonString($0))}"# }

    public func response(_ status: HTTPStatus, _ message: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        .json(status, body(message), headers: headers)
    }
}

/// A JSON string literal for `text` (quotes, backslashes and control characters escaped).
public func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// Percent-decodes UTF-8 text; nil for a bad escape or invalid UTF-8.
func percentDecode(_ text: String, plusIsSpace: Bool) -> String? {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
        if byte == UInt8(ascii: "%") {
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        } else if plusIsSpace && byte == UInt8(ascii: "+") {
            bytes.append(UInt8(ascii: " "))
        } else {
            bytes.append(byte)
        }
    }
    let text = String(decoding: bytes, as: UTF8.self)
    return text.utf8.elementsEqual(bytes) ? text : nil
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
}

/// `application/x-www-form-urlencoded` decoding, as httpx encodes queries (and forms post bodies).
/// A pair whose name or value holds a bad escape keeps that part as it was sent.
public func parseQuery(_ raw: String) -> [(name: String, value: String)] {
    guard !raw.isEmpty else { return [] }
    var pairs: [(name: String, value: String)] = []
    let bytes = raw.utf8
    var start = bytes.startIndex
    while start < bytes.endIndex {
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
        if start < end {
            let pair = bytes[start..<end]
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let name = formDecoded(raw, pair.startIndex..<(equals ?? pair.endIndex))
            let value = equals.map { formDecoded(raw, bytes.index(after: $0)..<pair.endIndex) } ?? ""
            pairs.append((name, value))
        }
        start = end < bytes.endIndex ? bytes.index(after: end) : end
    }
    return pairs
}

/// `raw[range]` form-decoded, or as it is when it holds a bad escape (copied whole when it holds
/// no `%` or `+` at all, as most names and values).
private func formDecoded(_ raw: String, _ range: Range<String.Index>) -> String {
    let part = String(Substring(raw.utf8[range]))
    guard part.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else { return part }
    return percentDecode(part, plusIsSpace: true) ?? part
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    public var trimmedOWS: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}
