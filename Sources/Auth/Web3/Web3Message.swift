import Foundation

/// The chains of `grant_type=web3`, with what their messages differ in.
public enum Web3Chain: String, Sendable, Equatable {
    case ethereum
    case solana

    /// GoTrue's name in its messages (`Signed Ethereum message is expired`).
    var displayName: String {
        switch self {
        case .ethereum: return "Ethereum"
        case .solana: return "Solana"
        }
    }

    /// The prefix of the parser's errors (`siwe:`, `siws:`).
    var prefix: String {
        switch self {
        case .ethereum: return "siwe"
        case .solana: return "siws"
        }
    }
}

/// A Sign-In with Ethereum (EIP-4361) or Sign-In with Solana message, read line by line as
/// GoTrue's `siwe.ParseMessage` and `siws.ParseMessage` read it: the header line with the
/// domain, the address, an empty line, an optional statement followed by an empty line, then
/// `Key: value` lines in any order (unknown keys ignored) and `Resources:` with `- ` items.
public struct Web3Message: Sendable, Equatable {
    public var raw: String
    public var chain: Web3Chain
    public var domain: String
    public var address: String
    /// Nil when the message has none.
    public var statement: String?
    public var uri: Web3URI
    public var version: String
    /// `Chain ID`: an EIP-155 number for Ethereum, `solana:mainnet` (…) for Solana; empty when absent.
    public var chainID: String
    public var nonce: String
    /// Seconds since 1970.
    public var issuedAt: Double
    public var expirationTime: Double?
    public var notBefore: Double?
    public var requestID: String?
    public var resources: [String]

    /// GoTrue's `domainPattern`: `localhost` or a dotted host name, with an optional port.
    static let domainPattern = #"(localhost|(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,})(?::\d{1,5})?"#

    /// The message, or the parser's error in GoTrue's words (answered as `validation_failed`).
    public static func parse(_ raw: String, chain: Web3Chain) throws(AuthError) -> Web3Message {
        func fail(_ text: String) -> AuthError { .validationFailed("\(chain.prefix): \(text)") }
        // Split on the byte, as Go does: "\r\n" is one Character in Swift but leaves a "\r" in Go.
        let lines = raw.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { String(String.UnicodeScalarView($0)) }
        guard lines.count >= 6 else { throw fail("message needs at least 6 lines") }
        let suffix = " wants you to sign in with your \(chain.displayName) account:"
        guard lines[0].hasSuffix(suffix) else { throw fail("message first line does not end in \"\(suffix)\"") }
        let domain = trimmed(String(lines[0].dropLast(suffix.count)))
        guard fullMatch(domainPattern, domain) else { throw fail("domain in first line of message is not valid") }
        let address = trimmed(lines[1])
        switch chain {
        case .ethereum: guard fullMatch("0x[a-fA-F0-9]{40}", address) else { throw fail("wallet address is not a valid Ethereum address") }
        case .solana: guard fullMatch("[a-zA-Z0-9]{32,44}", address) else { throw fail("wallet address is not in base58 format") }
        }
        guard lines[2].isEmpty else { throw fail("third line must be empty") }
        var message = Web3Message(
            raw: raw, chain: chain, domain: domain, address: address, statement: nil, uri: Web3URI(), version: "", chainID: "", nonce: "",
            issuedAt: 0, expirationTime: nil, notBefore: nil, requestID: nil, resources: [])
        var start = 3
        if !lines[3].isEmpty && lines[4].isEmpty {
            message.statement = lines[3]
            start = 5
        }
        var uri: Web3URI?
        var issuedAt: Double?
        var inResources = false
        for index in start..<lines.count {
            let line = trimmed(lines[index])
            if inResources {
                if line.hasPrefix("- ") {
                    let resource = trimmed(String(line.dropFirst(2)))
                    guard Web3URI(resource) != nil else { throw fail("Resource at position \(message.resources.count) has invalid URI") }
                    message.resources.append(resource)
                    continue
                }
                inResources = false
            }
            if line == "Resources:" {
                inResources = true
                continue
            }
            if line.isEmpty { continue }
            // Go's strings.Cut at the first ":" byte (a combining mark after it would hide it from
            // Swift's Characters).
            let scalars = line.unicodeScalars
            guard let colon = scalars.firstIndex(of: ":") else { throw fail("encountered unparsable line at index \(index)") }
            let key = String(String.UnicodeScalarView(scalars[..<colon]))
            let value = trimmed(String(String.UnicodeScalarView(scalars[scalars.index(after: colon)...])))
            switch key {
            case "URI":
                guard let parsed = Web3URI(value) else { throw fail("URI is not valid") }
                uri = parsed
            case "Version":
                message.version = value
            case "Chain ID":
                switch chain {
                case .ethereum: guard isEthereumChainID(value) else { throw fail("Chain ID is not valid") }
                case .solana: guard value.isEmpty || fullMatch("solana:(main|dev|test|local)net", value) else { throw fail("Chain ID is not valid") }
                }
                message.chainID = value
            case "Nonce":
                message.nonce = value
            case "Issued At":
                guard let time = RFC3339.seconds(value) else { throw fail("Issued At is not a valid ISO8601 timestamp") }
                issuedAt = time
            case "Expiration Time":
                guard let time = RFC3339.seconds(value) else { throw fail("Expiration Time is not a valid ISO8601 timestamp") }
                message.expirationTime = time
            case "Not Before":
                guard let time = RFC3339.seconds(value) else { throw fail("Not Before is not a valid ISO8601 timestamp") }
                message.notBefore = time
            case "Request ID":
                message.requestID = value
            default:
                // GoTrue ignores keys it does not know.
                continue
            }
        }
        guard message.version == "1" else { throw fail("Version value is not supported, expected 1 got \(goQuoted(message.version))") }
        // The year 1's first instant is Go's zero time, which GoTrue reads as no time at all.
        guard let issuedAt, issuedAt != RFC3339.goZeroTime else { throw fail("Issued At is not specified") }
        message.issuedAt = issuedAt
        guard let uri else { throw fail("URI is not specified") }
        message.uri = uri
        if let expiration = message.expirationTime, issuedAt > expiration { throw fail("Issued At is after Expiration Time") }
        if let notBefore = message.notBefore, let expiration = message.expirationTime, notBefore > expiration {
            throw fail("Not Before is after Expiration Time")
        }
        return message
    }

    /// Go's `strconv.Atoi` of the value is a number above zero (a sign is allowed; it must fit in 64 bits).
    static func isEthereumChainID(_ value: String) -> Bool {
        Int64(value).map { $0 > 0 } ?? false
    }

    /// Go's `strings.TrimSpace`.
    static func trimmed(_ text: String) -> String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// Whether the whole of `text` matches `pattern` (as Go's `^…$`, which never matches before a
    /// final line break).
    static func fullMatch(_ pattern: String, _ text: String) -> Bool {
        guard let range = text.range(of: "^(?:\(pattern))$", options: .regularExpression) else { return false }
        return range == text.startIndex..<text.endIndex
    }

    /// Go's `%q` of a short printable value.
    static func goQuoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

/// RFC 3339 times as Go's `time.Parse(time.RFC3339, …)` reads them: `T` between date and time,
/// optional fractional seconds, `Z` or a `±hh:mm` offset.
enum RFC3339 {
    /// Go's zero `time.Time` (0001-01-01T00:00:00Z) in seconds since 1970.
    static let goZeroTime: Double = -62_135_596_800

    static func seconds(_ text: String) -> Double? {
        let pattern = #"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$"#
        guard let regex = try? NSRegularExpression(pattern: pattern),
            let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
            match.range == NSRange(text.startIndex..., in: text)
        else { return nil }
        func group(_ index: Int) -> String? {
            Range(match.range(at: index), in: text).map { String(text[$0]) }
        }
        guard let year = group(1).flatMap(Int.init), let month = group(2).flatMap(Int.init), let day = group(3).flatMap(Int.init),
            let hour = group(4).flatMap(Int.init), let minute = group(5).flatMap(Int.init), let second = group(6).flatMap(Int.init),
            let zone = group(8)
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...monthDays[month - 1]).contains(day), hour < 24, minute < 60, second < 60 else { return nil }
        var offset = 0
        if zone != "Z" {
            let sign = zone.hasPrefix("-") ? -1 : 1
            let parts = zone.dropFirst().split(separator: ":").compactMap { Int($0) }
            guard parts.count == 2, parts[0] < 24, parts[1] < 60 else { return nil }
            offset = sign * (parts[0] * 3600 + parts[1] * 60)
        }
        let fraction = group(7).flatMap { Double("0" + $0) } ?? 0
        let days = daysFromCivil(year: year, month: month, day: day)
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
