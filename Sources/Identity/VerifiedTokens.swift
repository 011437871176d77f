import Synchronization

/// Tokens already verified, by their text: an app sends the same access token with every request
/// until it refreshes it, and checking its signature and parsing its claims each time costs more
/// than the rest of a plain REST request. An entry answers only while what verified it (the
/// secret, or a `JWT_KEYS` public key) is still configured, and only until the token's `exp` (plus
/// `JWT.leeway`), exactly as a fresh verification would; tokens not yet valid (`nbf`/`iat` ahead)
/// are never kept.
final class VerifiedTokens: Sendable {
    struct Entry {
        /// The secret, or the DER public key, that verified the token.
        let verifier: [UInt8]
        let caller: Caller
        /// Seconds since 1970 after which the token is refused (nil: no `exp`).
        let expiresAt: Double?
    }

    /// The entries, and the order they came in: a full table gives up its oldest entry for a
    /// new one (one at a time, so the live tokens stay), found at `next` of the ring of keys.
    struct Table {
        var entries: [String: Entry] = [:]
        var ring: [String] = []
        var next = 0

        mutating func insert(_ token: String, _ entry: Entry, capacity: Int) {
            if entries.updateValue(entry, forKey: token) != nil { return }
            guard ring.count >= capacity else {
                ring.append(token)
                return
            }
            // A ring slot whose token expired (and was removed) is reused without an eviction.
            let oldest = ring[next]
            if oldest != token { entries[oldest] = nil }
            ring[next] = token
            next = (next + 1) % capacity
        }
    }

    static let shared = VerifiedTokens(capacity: 16_384)

    let capacity: Int
    private let table = Mutex(Table())

    init(capacity: Int) {
        self.capacity = capacity
    }

    func caller(for token: String, keys: KeyConfig, now: Double) -> Caller? {
        let entry = table.withLock { table -> Entry? in
            guard let entry = table.entries[token] else { return nil }
            if let expiresAt = entry.expiresAt, now > expiresAt {
                table.entries[token] = nil
                return nil
            }
            return entry
        }
        guard let entry else { return nil }
        let stillTrusted =
            entry.verifier == keys.jwtSecret || keys.hmacKeys.contains { $0.secret == entry.verifier }
            || keys.verificationKeys.keys.contains { $0.key.spki == entry.verifier }
        return stillTrusted ? entry.caller : nil
    }

    func remember(_ token: String, verifier: [UInt8], caller: Caller, claims: [String: Any], now: Double) {
        if let nbf = JWT.number(claims["nbf"]), nbf > now { return }
        if let iat = JWT.number(claims["iat"]), iat > now { return }
        let expiresAt = JWT.number(claims["exp"]).map { $0 + JWT.leeway }
        let entry = Entry(verifier: verifier, caller: caller, expiresAt: expiresAt)
        table.withLock { $0.insert(token, entry, capacity: capacity) }
    }

    var count: Int { table.withLock { $0.entries.count } }

    /// The text a token is remembered by: the token itself, but for a P-256 signature (`r ‖ s`,
    /// 64 bytes: 86 characters) with a high `s`, whose low-`s` twin (`n - s`) verifies the same
    /// claims with the same key: that twin, so one token has one entry. Either form verifies
    /// (tokens of other issuers may carry a high `s`).
    static func key(for token: String) -> String {
        guard let dot = token.utf8.lastIndex(of: UInt8(ascii: ".")) else { return token }
        let encoded = token[token.index(after: dot)...]
        guard encoded.utf8.count == 86, var signature = Base64URL.decode(encoded), signature.count == 64 else { return token }
        guard P256.isHigh(signature[32...]) else { return token }
        P256.negate(&signature[32...])
        return String(token[...dot]) + Base64URL.encode(signature)
    }
}

/// The order `n` of P-256's group, for the low-`s` form of its signatures.
enum P256 {
    static let order: [UInt8] = [
        0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xbc, 0xe6, 0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51
    ]
    /// `n / 2`, rounded down: an `s` above it is high.
    static let halfOrder: [UInt8] = [
        0x7f, 0xff, 0xff, 0xff, 0x80, 0x00, 0x00, 0x00, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xde, 0x73, 0x7d, 0x56, 0xd3, 0x8b, 0xcf, 0x42, 0x79, 0xdc, 0xe5, 0x61, 0x7e, 0x31, 0x92, 0xa8
    ]

    /// Whether the 32-byte big-endian `s` is above `n / 2`.
    static func isHigh(_ s: ArraySlice<UInt8>) -> Bool {
        for (byte, half) in zip(s, halfOrder) where byte != half { return byte > half }
        return false
    }

    /// `s` ← `n - s` (32 bytes, big-endian; `s` < `n`).
    static func negate(_ s: inout ArraySlice<UInt8>) {
        var borrow = 0
        for offset in (0..<32).reversed() {
            let index = s.startIndex + offset
            let difference = Int(order[offset]) - Int(s[index]) - borrow
            s[index] = UInt8((difference + 256) & 0xff)
            borrow = difference < 0 ? 1 : 0
        }
    }
}
