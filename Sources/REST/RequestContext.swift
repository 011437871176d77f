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
        var headers: [(String, String)] = []
        var cookies: [(String, String)] = []
        for field in request.headers {
            let name = field.name.lowercased()
            if name == "cookie" {
                // `a=1; b=2` (Web.Cookie's parseCookies: split at `;`, then at the first `=`).
                for item in field.value.split(separator: ";") {
                    let pair = item.drop { $0 == " " }
                    guard !pair.isEmpty else { continue }
                    let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    cookies.append((String(parts[0]), parts.count > 1 ? String(parts[1]) : ""))
                }
            } else {
                headers.append((name, field.value))
            }
        }
        self.init(
            method: request.method.rawValue, path: resource.isEmpty ? "/" : resource,
            headersJSON: Self.object(headers), cookiesJSON: Self.object(cookies))
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
        if text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out += jsonString(text)
        } else {
            out += "\""
            out += text
            out += "\""
        }
    }
}
