import Foundation
import Testing

@testable import Identity

/// The verified-token cache gives up one entry at a time, oldest first, when it is full: a
/// burst of new tokens never empties it of the live ones.
@Suite struct VerifiedTokensTests {
    let keys = KeyConfig(jwtSecret: "verified-tokens-test-secret-of-32-chars", anonKey: "anon", serviceRoleKey: "service")
    let now = Date().timeIntervalSince1970

    func remember(_ cache: VerifiedTokens, _ token: String, expiresIn: Double = 3600) {
        cache.remember(token, verifier: keys.jwtSecret, caller: .anon, claims: ["exp": now + expiresIn], now: now)
    }

    func kept(_ cache: VerifiedTokens, _ tokens: [String]) -> [String] {
        tokens.filter { cache.caller(for: $0, keys: keys, now: now) != nil }
    }

    @Test func aFullCacheGivesUpItsOldestEntryOnly() {
        let cache = VerifiedTokens(capacity: 3)
        for token in ["t1", "t2", "t3"] { remember(cache, token) }
        #expect(kept(cache, ["t1", "t2", "t3"]) == ["t1", "t2", "t3"])
        remember(cache, "t4")
        #expect(kept(cache, ["t1", "t2", "t3", "t4"]) == ["t2", "t3", "t4"] && cache.count == 3)
        // Remembering a token again keeps its place: no entry is given up for it.
        remember(cache, "t3")
        #expect(cache.count == 3)
        remember(cache, "t5")
        remember(cache, "t6")
        #expect(kept(cache, ["t2", "t3", "t4", "t5", "t6"]) == ["t4", "t5", "t6"] && cache.count == 3)
    }

    @Test func anExpiredEntryLeavesAndItsPlaceIsTakenWithoutAnEviction() {
        let cache = VerifiedTokens(capacity: 2)
        remember(cache, "short", expiresIn: -3600)
        remember(cache, "long")
        #expect(kept(cache, ["short", "long"]) == ["long"] && cache.count == 1)
        remember(cache, "next")
        #expect(kept(cache, ["long", "next"]) == ["long", "next"] && cache.count == 2)
    }
}
