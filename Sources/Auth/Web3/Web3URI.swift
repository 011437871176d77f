/// A message's `URI`, read as Go's `url.ParseRequestURI` reads it (an absolute URI or an absolute
/// path; no control characters; a host's port all digits), keeping what GoTrue's checks use: the
/// scheme (lower-cased, as Go does), the authority's host with its port, and its host name.
public struct Web3URI: Sendable, Equatable {
    /// The value as the message gives it.
    public var text = ""
    public var scheme = ""
    /// Go's `URL.Host`: the host and port (`localhost:5173`), empty for an opaque URI or a path.
    public var host = ""

    init() {}

    /// Nil when Go's `url.ParseRequestURI` refuses `value`.
    init?(_ value: String) {
        let bytes = Array(value.utf8)
        guard !bytes.isEmpty, !bytes.contains(where: { $0 < 0x20 || $0 == 0x7f }) else { return nil }
        text = value
        if value == "*" { return }
        var rest = Substring(value)
        // Go's getScheme: a letter, then letters, digits, `+`, `-` or `.`, up to a `:`.
        for (offset, character) in value.enumerated() {
            if character.isASCII && character.isLetter { continue }
            if character.isASCII && (character.isNumber || "+-.".contains(character)) {
                if offset == 0 { break }
                continue
            }
            if character == ":" {
                guard offset > 0 else { return nil }
                let colon = value.index(value.startIndex, offsetBy: offset)
                scheme = value[..<colon].lowercased()
                rest = value[value.index(after: colon)...]
            }
            break
        }
        if let question = rest.firstIndex(of: "?") { rest = rest[..<question] }
        guard rest.hasPrefix("/") else {
            // Opaque (`mailto:x`) with a scheme; without one, not a request URI.
            guard !scheme.isEmpty else { return nil }
            return
        }
        if !scheme.isEmpty, rest.hasPrefix("//") {
            let authority = rest.dropFirst(2).prefix { $0 != "/" }
            let hostPart = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
            guard Self.validHost(hostPart) else { return nil }
            host = String(hostPart)
        }
    }

    /// Go's `URL.Hostname()`: the host without its port and without IPv6 brackets.
    public var hostname: String {
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") { return String(host[host.index(after: host.startIndex)..<close]) }
        guard let colon = host.lastIndex(of: ":") else { return host }
        return String(host[..<colon])
    }

    /// Go's `parseHost`: a bracketed IPv6 literal, or a name whose port (after the last colon) is
    /// digits and whose characters are those a host may hold.
    static func validHost(_ host: Substring) -> Bool {
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let port = host[host.index(after: close)...]
            return port.isEmpty || (port.hasPrefix(":") && port.dropFirst().allSatisfy(\.isASCII) && port.dropFirst().allSatisfy(\.isNumber))
        }
        var name = host
        if let colon = host.lastIndex(of: ":") {
            let port = host[host.index(after: colon)...]
            guard port.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
            name = host[..<colon]
        }
        let allowed = Set("-._~!$&'()*+,;=:[]<>\"%")
        return name.allSatisfy { !$0.isASCII || $0.isLetter || $0.isNumber || allowed.contains($0) }
    }
}
