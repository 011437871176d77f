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

    static let shared = VerifiedTokens(capacity: 16_384)

    let capacity: Int
    private let entries = Mutex<[String: Entry]>([:])

    init(capacity: Int) {
        self.capacity = capacity
    }

    func caller(for token: String, keys: KeyConfig, now: Double) -> Caller? {
        let entry = entries.withLock { entries -> Entry? in
            guard let entry = entries[token] else { return nil }
            if let expiresAt = entry.expiresAt, now > expiresAt {
                entries[token] = nil
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
        entries.withLock { entries in
            // A full table is emptied rather than scanned: the live tokens come back at once.
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[token] = Entry(verifier: verifier, caller: caller, expiresAt: expiresAt)
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
