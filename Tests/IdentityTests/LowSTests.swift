import Foundation
import Testing

@testable import Identity

/// ECDSA's malleability: `(r, s)` and `(r, n - s)` both verify. Both forms of a token are
/// accepted (other issuers' tokens may carry a high `s`), and they share one cache entry.
@Suite("Identity: one token, one cache entry")
struct LowSTests {
    @Test func aHighSTwinVerifiesAndIsRememberedAsItsLowForm() throws {
        let key = SigningKey(kind: .p256, keyID: "low-s")
        var keys = KeyConfig(jwtSecret: String(repeating: "x", count: 32), anonKey: "anon", serviceRoleKey: "service")
        keys.verificationKeys = JWKSet(keys: [JWK(keyID: "low-s", algorithm: "ES256", key: key.publicKey)])
        let subject = UUID().uuidString.lowercased()
        let token = key.sign(claims: ["sub": subject, "role": "authenticated", "exp": Int(Date().timeIntervalSince1970) + 600])
        let parts = token.split(separator: ".")
        let signature = try #require(Base64URL.decode(parts[2]))
        var twinSignature = signature
        P256.negate(&twinSignature[32...])
        let twin = parts[0] + "." + parts[1] + "." + Base64URL.encode(twinSignature)
        #expect(twin != token)
        // n - (n - s) = s, and exactly one of the two is high.
        var back = twinSignature
        P256.negate(&back[32...])
        #expect(back == signature)
        #expect(P256.isHigh(signature[32...]) != P256.isHigh(twinSignature[32...]))
        let (low, high) = P256.isHigh(signature[32...]) ? (twin, token) : (token, twin)

        #expect(VerifiedTokens.key(for: high) == low && VerifiedTokens.key(for: low) == low)
        for form in [high, low] {
            #expect(try JWT.verify(form, keys: keys).claims["sub"] as? String == subject)
            #expect(try Credentials.verifiedCaller(form, keys: keys).role == "authenticated")
        }
        let now = Date().timeIntervalSince1970
        #expect(VerifiedTokens.shared.caller(for: low, keys: keys, now: now) != nil)
        #expect(VerifiedTokens.shared.caller(for: high, keys: keys, now: now) == nil, "the high form has an entry of its own")
        // Other tokens are their own key.
        let hs256 = JWT.signHS256(claims: ["role": "anon"], secret: keys.jwtSecret)
        #expect(VerifiedTokens.key(for: hs256) == hs256 && VerifiedTokens.key(for: "no dots") == "no dots")
    }
}
