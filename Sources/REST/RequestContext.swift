import HTTP

/// What PostgREST tells SQL about the HTTP request (its `request.*` settings): the method, the
/// path under `/rest/v1`, the headers (names lower-cased, the last of a repeated one, without
/// `Cookie`) and the cookies, each header and cookie as a JSON object member.
public struct RequestContext: Sendable, Equatable {
    public let method: String
    public let path: String
    public let headersJSON: String
    public let cookiesJSON: String

    public init(method: String, path: String, headersJSON: String, cookiesJSON: String) {
        self.method = method
        self.path = path
        self.headersJSON = headersJSON
        self.cookiesJSON = cookiesJSON
    }

    init(_ request: HTTPRequest, resource: String) {
        var cookies: [(String, String)] = []
        for field in request.headers where field.name.equalsIgnoringASCIICase("cookie") {
            // `a=1; b=2` (Web.Cookie's parseCookies: split at `;`, then at the first `=`).
            for item in field.value.split(separator: ";") {
                let pair = item.drop { $0 == " " }
                guard !pair.isEmpty else { continue }
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                cookies.append((String(parts[0]), parts.count > 1 ? String(parts[1]) : ""))
            }
        }
        self.init(
            method: request.method.rawValue, path: resource.isEmpty ? "/" : resource,
            headersJSON: Self.headersObject(request.headers.fields), cookiesJSON: cookies.isEmpty ? "{}" : Self.object(cookies))
    }

    /// `object` of the header fields but `Cookie`, names lower-cased: written straight into one
    /// byte array (names lower-cased in place), as this runs for every request.
    static func headersObject(_ fields: [(name: String, value: String)]) -> String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(fields.reduce(2) { $0 + $1.name.utf8.count + $1.value.utf8.count + 6 })
        for index in fields.indices.reversed() {
            let name = fields[index].name
            // The last of a repeated name is the one kept (it comes first here).
            guard !name.equalsIgnoringASCIICase("cookie"), !fields[(index + 1)...].contains(where: { $0.name.equalsIgnoringASCIICase(name) })
            else { continue }
            if out.count > 1 { out.append(UInt8(ascii: ",")) }
            if needsEscaping(name) {
                out += jsonString(name.lowercased()).utf8
            } else {
                out.append(UInt8(ascii: "\""))
                let start = out.count
                out += name.utf8
                for position in start..<out.count where out[position] &- 0x41 < 26 { out[position] |= 0x20 }
                out.append(UInt8(ascii: "\""))
            }
            out.append(UInt8(ascii: ":"))
            let value = fields[index].value
            if needsEscaping(value) {
                out += jsonString(value).utf8
            } else {
                out.append(UInt8(ascii: "\""))
                out += value.utf8
                out.append(UInt8(ascii: "\""))
            }
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    static func needsEscaping(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") } }
    }

    /// A JSON object of string members; a repeated name keeps its last value (PostgREST builds a map).
    static func object(_ members: [(String, String)]) -> String {
        var out = "{"
        var seen = Set<String>()
        var first = true
        for (name, value) in members.reversed() where seen.insert(name).inserted {
            if !first { out += "," }
            first = false
            appendJSONString(name, to: &out)
            out += ":"
            appendJSONString(value, to: &out)
        }
        return out + "}"
    }

    /// A header value seldom needs escaping: copied whole when it doesn't (this runs for every
    /// request, on every header).
    static func appendJSONString(_ text: String, to out: inout String) {
        if needsEscaping(text) {
            out += jsonString(text)
        } else {
            out += "\""
            out += text
            out += "\""
        }
    }
}
