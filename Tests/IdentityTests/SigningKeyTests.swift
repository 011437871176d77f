import Foundation
import Identity
import Testing

/// The asymmetric access-token keys: their JWKs in and out, and what verification accepts.
@Suite("Identity: signing keys")
struct SigningKeyTests {
    @Test(arguments: [PublicKey.Kind.p256, .rsa])
    func aPrivateJWKRoundTrips(_ kind: PublicKey.Kind) throws {
        let key = SigningKey(kind: kind, keyID: "kid-1")
        let copy = try #require(SigningKey(privateJWK: key.privateJWK))
        let claims: [String: Any] = ["sub": "x", "role": "authenticated", "exp": Int(Date().timeIntervalSince1970) + 60]
        let set = JWKSet(keys: [JWK(keyID: "kid-1", algorithm: key.algorithm, key: key.publicKey)])
        #expect(try JWT.verify(copy.sign(claims: claims), secret: [], publicKeys: set).claims["sub"] as? String == "x")
        // A private part that does not belong to the public one is refused.
        var mixed = key.privateJWK
        for (name, value) in SigningKey(kind: kind, keyID: "other").jwk where ["x", "y", "n"].contains(name) { mixed[name] = value }
        #expect(SigningKey(privateJWK: mixed) == nil)
    }

    @Test func jwtKeysNameWhatIsWrong() throws {
        let key = SigningKey(kind: .p256, keyID: "a")
        #expect(throws: KeyError.self) { try KeyConfig.jwtKeys("{}") }
        var noKid = key.privateJWK
        noKid["kid"] = nil
        #expect(throws: KeyError.self) { try KeyConfig.jwtKeys(JWT.serialize([noKid])) }
        var publicOnly = key.jwk
        publicOnly["key_ops"] = ["sign", "verify"]
        #expect(throws: KeyError.self) { try KeyConfig.jwtKeys(JWT.serialize([publicOnly])) }
        let parsed = try KeyConfig.jwtKeys(JWT.serialize(["keys": [key.privateJWK]]))
        #expect(parsed.signing?.keyID == "a" && parsed.verification.keys.count == 1)
        #expect(throws: KeyError.self) { try KeyConfig.jwtKeys(#"[{"kty":"oct","kid":"h","k":"c2hvcnQ"}]"#) }
    }

    @Test func verificationRefusesWhatNoConfiguredKeySigned() throws {
        let key = SigningKey(kind: .p256, keyID: "a")
        let set = JWKSet(keys: [JWK(keyID: "a", algorithm: "ES256", key: key.publicKey)])
        let claims: [String: Any] = ["role": "authenticated", "exp": Int(Date().timeIntervalSince1970) + 60]
        #expect(throws: JWTError.unsupportedAlgorithm("ES256")) { try JWT.verify(key.sign(claims: claims), secret: [1], publicKeys: JWKSet(keys: [])) }
        #expect(throws: JWTError.badSignature) { try JWT.verify(key.sign(claims: claims, kid: "b"), secret: [1], publicKeys: set) }
        #expect(throws: JWTError.badSignature) { try JWT.verify(key.sign(claims: claims, alg: "RS256"), secret: [1], publicKeys: set) }
        let hs = JWT.signHS256(claimsJSON: JWT.serialize(claims), secret: [1], keyID: "hs")
        #expect(try JWT.verify(hs, secret: [1], publicKeys: set).verifier == [1])
    }
}
