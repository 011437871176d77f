import Foundation

/// An absolute URL read the way a browser's URL parser (WHATWG's) reads it, for deciding where a
/// redirect really leads. For the special schemes (`http`, `https`, `ws`, `wss`, `ftp`): tabs and
/// newlines are removed anywhere, `\` is a path separator like `/`, any run of slashes after the
/// scheme is skipped (`https:evil`, `http:/\evil`), the authority ends at the first `/`, `\`, `?` or
/// `#`, user info (up to its last `@`) is dropped, the host is percent-decoded, mapped to
/// lower-case ASCII (IDNA: compatibility mapping, then Punycode), checked for forbidden code
/// points, and read as IPv4 when it ends in a number (`0x7f.1`, `2130706433`). Other schemes
/// (`myapp://…`) keep their text: a browser hands them to an app, which reads them itself.
public struct BrowserURL: Equatable, Sendable {
    /// Lower-case scheme without the colon.
    public let scheme: String
    /// For special schemes: the ASCII host (`[…]` for IPv6); nil for other schemes.
    public let host: String?
    /// For special schemes: the port, nil when absent or the scheme's default.
    public let port: Int?
    /// Everything after the authority (path with `/` for `\`, query, fragment), percent-encoded
    /// where a browser would encode; for other schemes, everything after `scheme:` as given.
    public let rest: String

    static let defaultPorts = ["http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21]

    public var isSpecial: Bool { host != nil }

    /// `scheme://host[:port]` for special schemes.
    public var origin: String? {
        guard let host else { return nil }
        return "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }

    /// The URL as it will be sent: for special schemes without user info and with the normalised
    /// host, so what a browser reads from it is exactly what was checked.
    public var serialized: String {
        guard let origin else { return "\(scheme):\(rest)" }
        return origin + rest
    }

    /// Nil for anything a browser would not parse as an absolute URL, and for `file:`.
    public init?(_ input: String) {
        var scalars = Array(input.unicodeScalars)
        // Leading and trailing C0 controls and spaces are trimmed; tabs and newlines anywhere removed.
        while let first = scalars.first, first.value <= 0x20 { scalars.removeFirst() }
        while let last = scalars.last, last.value <= 0x20 { scalars.removeLast() }
        scalars.removeAll { $0 == "\t" || $0 == "\n" || $0 == "\r" }

        guard let colon = scalars.firstIndex(of: ":"), colon > 0, Self.isASCIIAlpha(scalars[0]),
            scalars[1..<colon].allSatisfy({ Self.isASCIIAlpha($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) })
        else { return nil }
        let scheme = String(String.UnicodeScalarView(scalars[..<colon])).lowercased()
        let afterScheme = Array(scalars[(colon + 1)...])
        if scheme == "file" { return nil }
        guard let defaultPort = Self.defaultPorts[scheme] else {
            // Not special: no control character or space may remain (the text goes into a header).
            guard afterScheme.allSatisfy({ $0.value > 0x20 && $0.value != 0x7f }) else { return nil }
            self.scheme = scheme
            host = nil
            port = nil
            rest = String(String.UnicodeScalarView(afterScheme))
            return
        }

        var index = afterScheme.startIndex
        while index < afterScheme.endIndex, afterScheme[index] == "/" || afterScheme[index] == "\\" { index += 1 }
        let authorityEnd = afterScheme[index...].firstIndex { "/\\?#".unicodeScalars.contains($0) } ?? afterScheme.endIndex
        var authority = afterScheme[index..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            authority = authority[(at + 1)...]
            guard !authority.isEmpty else { return nil }
        }
        guard let (host, port) = Self.hostAndPort(authority) else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = port == defaultPort ? nil : port
        rest = Self.encodedRest(afterScheme[authorityEnd...])
    }

    static func isASCIIAlpha(_ scalar: Unicode.Scalar) -> Bool { ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) }

    /// The host and port of an authority without user info.
    static func hostAndPort(_ authority: ArraySlice<Unicode.Scalar>) -> (String, Int?)? {
        var hostPart = authority
        var portText: ArraySlice<Unicode.Scalar> = []
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            hostPart = authority[...close]
            let after = authority[(close + 1)...]
            if let first = after.first {
                guard first == ":" else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            hostPart = authority[..<colon]
            portText = authority[(colon + 1)...]
        }
        var port: Int?
        if !portText.isEmpty {
            let significant = portText.drop { $0 == "0" }
            guard portText.allSatisfy({ ("0"..."9").contains($0) }), significant.count <= 5 else { return nil }
            let value = significant.isEmpty ? 0 : Int(String(String.UnicodeScalarView(significant))) ?? Int.max
            guard value <= 65535 else { return nil }
            port = value
        }
        guard let host = parseHost(String(String.UnicodeScalarView(hostPart))) else { return nil }
        return (host, port)
    }

    /// A special URL's host, as its ASCII serialisation; nil where a browser fails.
    static func parseHost(_ text: String) -> String? {
        guard !text.isEmpty else { return nil }
        if text.hasPrefix("[") {
            let inner = text.dropFirst().dropLast()
            guard text.hasSuffix("]"), !inner.isEmpty, inner.unicodeScalars.allSatisfy({ $0.properties.isASCIIHexDigit || $0 == ":" || $0 == "." })
            else { return nil }
            return "[" + inner.lowercased() + "]"
        }
        guard let decoded = percentDecoded(text) else { return nil }
        guard let ascii = domainToASCII(decoded) else { return nil }
        let forbidden = " #%/:<>?@[\\]^|".unicodeScalars
        guard !ascii.isEmpty, !ascii.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7f || forbidden.contains($0) }) else {
            return nil
        }
        if endsInANumber(ascii) { return ipv4(ascii) }
        return ascii
    }

    /// Percent-decoding into UTF-8 text; nil for bytes that are not UTF-8.
    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var i = 0
        while i < utf8.count {
            if utf8[i] == UInt8(ascii: "%"), i + 2 < utf8.count, let value = UInt8(String(decoding: utf8[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                bytes.append(value)
                i += 3
            } else {
                bytes.append(utf8[i])
                i += 1
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// IDNA's mapping for lookup: compatibility forms and case folded (full-width letters, the
    /// ideographic full stop), then each label that is not ASCII as `xn--` Punycode.
    static func domainToASCII(_ text: String) -> String? {
        if text.unicodeScalars.allSatisfy(\.isASCII) { return text.lowercased() }
        let mapped = text.precomposedStringWithCompatibilityMapping.lowercased()
            .replacingOccurrences(of: "\u{3002}", with: ".").replacingOccurrences(of: "\u{FF61}", with: ".")
        var labels: [String] = []
        for label in mapped.split(separator: ".", omittingEmptySubsequences: false) {
            if label.unicodeScalars.allSatisfy(\.isASCII) {
                labels.append(String(label))
            } else {
                guard let encoded = Punycode.encode(Array(label.unicodeScalars)) else { return nil }
                labels.append("xn--" + encoded)
            }
        }
        return labels.joined(separator: ".")
    }

    /// WHATWG's "ends in a number": the last label (ignoring one trailing empty label) is all
    /// digits or a `0x` hexadecimal number.
    static func endsInANumber(_ host: String) -> Bool {
        var labels = host.split(separator: ".", omittingEmptySubsequences: false)
        if labels.last == "", labels.count > 1 { labels.removeLast() }
        guard let last = labels.last, !last.isEmpty else { return false }
        if last.allSatisfy(\.isASCIIDigitCharacter) { return true }
        let lower = last.lowercased()
        return lower.hasPrefix("0x") && lower.dropFirst(2).allSatisfy(\.isHexDigit)
    }

    /// WHATWG's IPv4 parser (decimal, `0x` hexadecimal and `0` octal parts, the last part filling
    /// the remaining bytes); dotted decimal, or nil where a browser fails.
    static func ipv4(_ host: String) -> String? {
        var parts = host.split(separator: ".", omittingEmptySubsequences: false)
        if parts.last == "", parts.count > 1 { parts.removeLast() }
        guard parts.count <= 4 else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            guard !part.isEmpty else { return nil }
            var digits = Substring(part)
            var radix = 10
            if digits.count >= 2, digits.lowercased().hasPrefix("0x") {
                digits = digits.dropFirst(2)
                radix = 16
            } else if digits.count >= 2, digits.hasPrefix("0") {
                digits = digits.dropFirst()
                radix = 8
            }
            if digits.isEmpty {
                numbers.append(0)
                continue
            }
            guard digits.count <= 20, let value = UInt64(digits, radix: radix) else { return nil }
            numbers.append(value)
        }
        guard numbers.dropLast().allSatisfy({ $0 <= 255 }) else { return nil }
        let last = numbers[numbers.count - 1]
        guard last < (UInt64(1) << (8 * UInt64(5 - numbers.count))) else { return nil }
        var address = last
        for (index, number) in numbers.dropLast().enumerated() { address += number << (8 * UInt64(3 - index)) }
        return [24, 16, 8, 0].map { String((address >> UInt64($0)) & 0xff) }.joined(separator: ".")
    }

    /// Path (with `\` as `/`), query and fragment, percent-encoding what a browser encodes
    /// (controls, space, non-ASCII, `"`, `<`, `>`, `` ` ``) so the text is a clean header value.
    static func encodedRest(_ rest: ArraySlice<Unicode.Scalar>) -> String {
        var out = ""
        var inPath = true
        for scalar in rest {
            if scalar == "?" || scalar == "#" { inPath = false }
            let character: Unicode.Scalar = inPath && scalar == "\\" ? "/" : scalar
            if character.value <= 0x20 || character.value >= 0x7f || "\"<>`".unicodeScalars.contains(character) {
                for byte in String(character).utf8 { out += String(format: "%%%02X", byte) }
            } else {
                out.unicodeScalars.append(character)
            }
        }
        return out
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}

/// RFC 3492's Punycode encoder (IDNA's parameters).
enum Punycode {
    static let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700, initialBias = 72, initialN = 128

    static func digit(_ value: Int) -> Character {
        Character(Unicode.Scalar(UInt8(value < 26 ? 97 + value : 22 + value)))
    }

    static func adapt(_ delta: Int, _ count: Int, _ first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / count
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }

    static func encode(_ input: [Unicode.Scalar]) -> String? {
        var output = String(String.UnicodeScalarView(input.filter(\.isASCII)))
        let basicCount = output.count
        var handled = basicCount
        if basicCount > 0 { output.append("-") }
        var n = initialN
        var delta = 0
        var bias = initialBias
        let codes = input.map { Int($0.value) }
        while handled < codes.count {
            guard let m = codes.filter({ $0 >= n }).min() else { return nil }
            let (product, overflow) = (m - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow else { return nil }
            delta += product
            n = m
            for code in codes {
                if code < n { delta += 1 }
                if code == n {
                    var q = delta
                    var k = base
                    while true {
                        let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                        if q < t { break }
                        output.append(digit(t + (q - t) % (base - t)))
                        q = (q - t) / (base - t)
                        k += base
                    }
                    output.append(digit(q))
                    bias = adapt(delta, handled + 1, handled == basicCount)
                    delta = 0
                    handled += 1
                }
            }
            delta += 1
            n += 1
        }
        return output
    }
}
