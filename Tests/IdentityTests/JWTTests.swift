import Foundation
import Identity
import Testing

let secret = Array("test-secret-with-at-least-32-characters!!".utf8)
/// Minted by Python's hmac/hashlib (an independent implementation) with `secret`.
let pythonToken =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMTExMTExMS0xMTExLTQxMTEtODExMS0xMTExMTExMTExMTEiLCJyb2xlIjoiYXV0aGVudGljYXRlZCIsImV4cCI6NDEwMjQ0NDgwMCwiYXVkIjoiYXV0aGVudGljYXRlZCJ9.65Iv6izPUESSEcB6SQKomQn6mApWfAWXcBvRZmU6BEo"

func token(header: String, payload: String, key: [UInt8] = secret) -> String {
    let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
    return input + "." + Base64URL.encode(Crypto.hmacSHA256(key: key, data: Array(input.utf8)))
}

@Suite("JWT and crypto primitives")
struct JWTTests {
    @Test func verifiesATokenMintedElsewhere() throws {
        let verified = try JWT.verifyHS256(pythonToken, secret: secret, audience: "authenticated")
        #expect(verified.claims["sub"] as? String == "11111111-1111-4111-8111-111111111111")
        #expect(verified.claims["role"] as? String == "authenticated")
    }

    @Test func signThenVerifyRoundTrips() throws {
        let signed = JWT.signHS256(claims: ["sub": "abc", "role": "authenticated", "exp": Int(Date().timeIntervalSince1970) + 60], secret: secret)
        let verified = try JWT.verifyHS256(signed, secret: secret)
        #expect(verified.claims["sub"] as? String == "abc")
        #expect(verified.json.contains("\"role\":\"authenticated\""))
    }

    @Test(arguments: [
        ("a.b", JWTError.malformed("Expected 3 parts in JWT; got 2")),
        ("a.b.c.d", JWTError.malformed("Expected 3 parts in JWT; got 4")),
        (token(header: #"{"alg":"none"}"#, payload: #"{"role":"service_role"}"#), JWTError.unsupportedAlgorithm("none")),
        (token(header: #"{"alg":"HS512"}"#, payload: #"{"role":"authenticated"}"#), JWTError.unsupportedAlgorithm("HS512")),
        (
            token(header: #"{"alg":"HS256"}"#, payload: #"{"role":"service_role"}"#, key: Array("another-secret-of-enough-length-0000000".utf8)),
            JWTError.badSignature
        ),
        (String(pythonToken.dropLast(2)) + "AA", JWTError.badSignature),
        (token(header: #"{"alg":"HS256"}"#, payload: #"{"exp":1000}"#), JWTError.expired),
        (token(header: #"{"alg":"HS256"}"#, payload: #"{"nbf":4102444800}"#), JWTError.notYetValid),
        (token(header: #"{"alg":"HS256"}"#, payload: #"{"iat":4102444800}"#), JWTError.issuedInFuture),
        (token(header: #"{"alg":"HS256"}"#, payload: #"[1,2]"#), JWTError.claims("Parsing claims failed")),
        (token(header: #"{"alg":"HS256"}"#, payload: #"{"exp":"soon"}"#), JWTError.claims("The JWT 'exp' claim must be a number")),
        (token(header: #"{"alg":"HS256"}"#, payload: #"{"nbf":"x"}"#), JWTError.claims("The JWT 'nbf' claim must be a number")),
        (token(header: #"{"alg":"HS256"}"#, payload: #"{"iat":[]}"#), JWTError.claims("The JWT 'iat' claim must be a number")),
        (token(header: #"{"alg":"HS256"}"#, payload: #"{"aud":{"a":1}}"#), JWTError.claims("The JWT 'aud' claim must be a string or an array of strings")),
        (token(header: #"{"alg":"HS256"}"#, payload: #"{"aud":["a",1]}"#), JWTError.claims("The JWT 'aud' claim must be a string or an array of strings"))
    ])
    func refusesBadTokens(_ bad: String, expected: JWTError) {
        #expect(throws: expected) { try JWT.verifyHS256(bad, secret: secret) }
    }

    @Test func leewayToleratesSmallSkew() throws {
        let now = Date(timeIntervalSince1970: 1_000_020)
        _ = try JWT.verifyHS256(token(header: #"{"alg":"HS256"}"#, payload: #"{"exp":1000000}"#), secret: secret, now: now)
        #expect(throws: JWTError.expired) {
            try JWT.verifyHS256(token(header: #"{"alg":"HS256"}"#, payload: #"{"exp":1000000}"#), secret: secret, now: Date(timeIntervalSince1970: 1_000_031))
        }
    }

    @Test func wrongAudienceIsRefused() {
        #expect(throws: JWTError.wrongAudience) { try JWT.verifyHS256(pythonToken, secret: secret, audience: "other") }
    }

    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    ])
    func sha256Vectors(input: String, digest: String) {
        #expect(Crypto.hex(Crypto.sha256(Array(input.utf8))) == digest)
    }

    @Test func hmacRFC4231Case2() {
        let mac = Crypto.hmacSHA256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
        #expect(Crypto.hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func base64URL() {
        #expect(Base64URL.encode([0xfb, 0xff, 0xfe]) == "-__-")
        #expect(Base64URL.decode("-__-") == [0xfb, 0xff, 0xfe])
        #expect(Base64URL.decode("ab=c") == nil)
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("") == [])
        #expect(Base64URL.decode("a+b/") == nil)
        // Every length and byte value agrees with Foundation's decoder.
        var generator = SystemRandomNumberGenerator()
        for length in 0..<64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            #expect(Base64URL.decode(Substring(encoded)) == bytes)
            #expect(Data(base64Encoded: Data(bytes).base64EncodedString()).map { Array($0) } == bytes)
        }
    }

    @Test func bcryptMatchesTheClassicVectorAndRoundTrips() throws {
        // crypt_blowfish's test vector ("U*U").
        #expect(Password.verify("U*U", hash: "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"))
        #expect(!Password.verify("U*V", hash: "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"))
        let hash = try Password.hash("Secret-pass-1", cost: 4)
        #expect(hash.hasPrefix("$2b$04$") && hash.count == 60)
        #expect(Password.verify("Secret-pass-1", hash: hash))
        #expect(!Password.verify("secret-pass-1", hash: hash))
        for malformed in ["", "$2b$", "plain", "$1$abc$def", String(repeating: "x", count: 60)] {
            #expect(!Password.verify("x", hash: malformed))
        }
        // libxcrypt refuses 512 bytes and more: no hash rather than an empty one.
        #expect(throws: Password.HashError.self) { try Password.hash(String(repeating: "y", count: 600), cost: 4) }
        // A NUL would end the C string: never hashed, never matched.
        #expect(throws: Password.HashError.self) { try Password.hash("\u{0}abcdefgh", cost: 4) }
        let short = try Password.hash("abc", cost: 4)
        #expect(!Password.verify("abc\u{0}def", hash: short))
    }
}
