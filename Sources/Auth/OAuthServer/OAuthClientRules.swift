/// GoTrue's checks of a client's registration (`oauthserver/service.go`), with its messages.
/// Redirect URIs follow RFC 6749 §3.1.2 (absolute, no fragment) and RFC 6819 §5.1.1: no
/// scheme that runs or embeds content, and plain `http` only to a loopback host.
enum OAuthClientRules {
    static let grantTypes: Set<String> = ["authorization_code", "refresh_token"]

    static func checkRedirectURIs(_ uris: [String], required: Bool) throws(AuthError) {
        if required && uris.isEmpty { throw .validationFailed("redirect_uris is required") }
        guard !uris.isEmpty else { throw .validationFailed("redirect_uris cannot be empty") }
        guard uris.count <= 10 else { throw .validationFailed("redirect_uris cannot exceed 10 items") }
        for uri in uris {
            if let problem = redirectURIProblem(uri) { throw .validationFailed("invalid redirect_uri '\(uri)': \(problem)") }
        }
    }

    /// Why `uri` may not be a redirect URI (GoTrue's `validateRedirectURI`); nil when it may.
    static func redirectURIProblem(_ uri: String) -> String? {
        guard !uri.isEmpty else { return "redirect URI cannot be empty" }
        guard let parsed = GoURL(uri) else { return "invalid URL format" }
        guard !parsed.scheme.isEmpty, !parsed.host.isEmpty else { return "must have scheme and host" }
        let dangerous = ["javascript", "data", "file", "vbscript", "about", "blob"]
        if dangerous.contains(parsed.scheme.lowercased()) { return "scheme '\(parsed.scheme)' is not allowed for security reasons" }
        if parsed.scheme == "http" && !["localhost", "127.0.0.1", "::1"].contains(parsed.hostname) {
            return "HTTP scheme only allowed for localhost"
        }
        if !parsed.fragment.isEmpty { return "fragment not allowed in redirect URI" }
        return nil
    }

    static func checkGrantTypes(_ grantTypes: [String]) throws(AuthError) {
        guard !grantTypes.isEmpty else { throw .validationFailed("grant_types cannot be empty") }
        guard grantTypes.allSatisfy(Self.grantTypes.contains) else {
            throw .validationFailed("grant_types must only contain 'authorization_code' and/or 'refresh_token'")
        }
    }

    static func checkName(_ name: String) throws(AuthError) {
        guard name.utf8.count <= 1024 else { throw .validationFailed("client_name cannot exceed 1024 characters") }
    }

    /// `client_uri` and `logo_uri`: empty, or a URL Go's `url.ParseRequestURI` accepts.
    static func checkURI(_ uri: String, field: String) throws(AuthError) {
        guard !uri.isEmpty else { return }
        guard uri.utf8.count <= 2048 else { throw .validationFailed("\(field) cannot exceed 2048 characters") }
        guard let parsed = GoURL(uri), !parsed.scheme.isEmpty || uri.hasPrefix("/") else { throw .validationFailed("\(field) must be a valid URL") }
    }
}

/// The parts of a URL as Go's `url.Parse` splits it: `scheme:`, `//host` (with its port), the
/// rest, `#fragment`. Nil where Go fails: a control character or space, a scheme that is not
/// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`, a `:` before any `/` with no scheme.
struct GoURL: Equatable {
    var scheme = ""
    var host = ""
    var fragment = ""

    init?(_ text: String) {
        guard !text.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) else { return nil }
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let colon = rest.firstIndex(of: ":"), !rest[..<colon].contains(where: { $0 == "/" || $0 == "?" }) {
            let candidate = rest[..<colon]
            guard let first = candidate.first, first.isASCII, first.isLetter,
                candidate.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") })
            else { return nil }
            scheme = candidate.lowercased()
            rest = rest[rest.index(after: colon)...]
        }
        if rest.hasPrefix("//") {
            let authority = rest.dropFirst(2).prefix { $0 != "/" && $0 != "?" }
            host = String(authority.split(separator: "@", omittingEmptySubsequences: false).last ?? "")
        }
    }

    /// The host without its port or IPv6 brackets (Go's `Hostname()`).
    var hostname: String {
        if host.hasPrefix("["), let end = host.firstIndex(of: "]") { return String(host[host.index(after: host.startIndex)..<end]) }
        if let colon = host.lastIndex(of: ":") { return String(host[..<colon]) }
        return host
    }
}
