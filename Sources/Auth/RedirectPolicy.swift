import Foundation

/// Where a mail link or a verification may send the browser, with the session it carries:
/// `SITE_URL`'s origin (any port on a loopback host) or a `URI_ALLOW_LIST` glob. Both are compared
/// with the candidate as a browser reads it (`BrowserURL`), never with its raw text, and the
/// answer is that reading's serialisation (user info dropped, host normalised), so the URL that
/// is sent is the one that was checked. Anything that does not parse or is not allowed is
/// `SITE_URL`, as in GoTrue.
public struct RedirectPolicy: Sendable {
    public let siteURL: String
    public let allowList: [String]

    /// Schemes that run or embed content rather than navigate: never a redirect, allow list or not.
    static let refusedSchemes: Set = ["javascript", "data", "vbscript", "blob", "filesystem", "about"]

    public init(siteURL: String, allowList: [String]) {
        self.siteURL = siteURL
        self.allowList = allowList
    }

    /// The redirect to use for `candidate`.
    public func target(_ candidate: String?) -> String {
        guard let candidate, let url = BrowserURL(candidate), !Self.refusedSchemes.contains(url.scheme) else { return siteURL }
        if isSiteOrigin(url) { return url.serialized }
        let texts = url.isSpecial && url.rest.isEmpty ? [url.serialized, url.serialized + "/"] : [url.serialized]
        for pattern in allowList where texts.contains(where: { Self.globMatches(pattern, $0) }) {
            return url.serialized
        }
        return siteURL
    }

    /// Whether `candidate` is allowed as GoTrue's `IsRedirectURLValid` allows it: on SITE_URL's
    /// origin, a loopback IP address, or matching an allow-list glob.
    public func allows(_ candidate: String) -> Bool {
        guard let url = BrowserURL(candidate), !Self.refusedSchemes.contains(url.scheme) else { return false }
        if isSiteOrigin(url) { return true }
        if let host = url.host, host.hasPrefix("127.") && host.allSatisfy({ $0.isNumber || $0 == "." }) || host == "[::1]" { return true }
        let texts = url.isSpecial && url.rest.isEmpty ? [url.serialized, url.serialized + "/"] : [url.serialized]
        return allowList.contains { pattern in texts.contains { Self.globMatches(pattern, $0) } }
    }

    /// On SITE_URL's scheme and host, and its port unless the host is a loopback one.
    func isSiteOrigin(_ url: BrowserURL) -> Bool {
        guard let site = BrowserURL(siteURL), let host = url.host, url.scheme == site.scheme, host == site.host else { return false }
        let loopback = host == "localhost" || host == "127.0.0.1" || host == "[::1]"
        return loopback || url.port == site.port
    }

    /// GoTrue's allow-list globs: `**` any text, `*` any text without `.` or `/`, `?` one
    /// character other than those; anything else literally.
    static func globMatches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.unicodeScalars)
        let t = Array(text.unicodeScalars)
        var memo = [Int: Bool]()
        func match(_ i: Int, _ j: Int) -> Bool {
            if let known = memo[i * (t.count + 1) + j] { return known }
            let result: Bool
            if i == p.count {
                result = j == t.count
            } else if p[i] == "*" {
                let deep = i + 1 < p.count && p[i + 1] == "*"
                let next = deep ? i + 2 : i + 1
                var k = j
                var found = match(next, k)
                while !found && k < t.count && (deep || (t[k] != "." && t[k] != "/")) {
                    k += 1
                    found = match(next, k)
                }
                result = found
            } else if j < t.count && (p[i] == t[j] || (p[i] == "?" && t[j] != "." && t[j] != "/")) {
                result = match(i + 1, j + 1)
            } else {
                result = false
            }
            memo[i * (t.count + 1) + j] = result
            return result
        }
        return match(0, 0)
    }
}
