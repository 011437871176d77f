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

/// How a token's header and a JWKS document are read: not JSON or not an object refuses them
/// whole, a member of another JSON type reads as absent, a repeated member counts with its last
/// value.
@Suite("JWT headers and JWKS documents")
struct JOSEReadingTests {
    static let claims = #"{"role":"authenticated"}"#

    @Test(arguments: [
        (token(header: "not json", payload: claims), JWTError.malformed("Error in $: Failed reading: not a valid json value at JWT header")),
        (token(header: #"[{"alg":"HS256"}]"#, payload: claims), JWTError.malformed("Error in $: Failed reading: not a valid json value at JWT header")),
        (token(header: #""HS256""#, payload: claims), JWTError.malformed("Error in $: Failed reading: not a valid json value at JWT header")),
        (token(header: #"{"typ":"JWT"}"#, payload: claims), JWTError.malformed("JWT header has no alg")),
        (token(header: #"{"alg":null}"#, payload: claims), JWTError.malformed("JWT header has no alg")),
        (token(header: #"{"alg":256}"#, payload: claims), JWTError.malformed("JWT header has no alg")),
        (token(header: #"{"alg":["HS256"]}"#, payload: claims), JWTError.malformed("JWT header has no alg")),
        (token(header: #"{"alg":"HS256","alg":"none"}"#, payload: claims), JWTError.unsupportedAlgorithm("none"))
    ])
    func headersRefused(_ bad: String, expected: JWTError) {
        #expect(throws: expected) { try JWT.verifyHS256(bad, secret: secret) }
    }

    @Test func headerMembersOfOtherTypesAreIgnored() throws {
        let signed = token(header: #"{"alg":"none","alg":"HS256","typ":7,"kid":{"a":1}}"#, payload: Self.claims)
        #expect(try JWT.verifyHS256(signed, secret: secret).claims["role"] as? String == "authenticated")
    }

    /// A 2048-bit RSA modulus (OpenSSL reads any such number as a public key) with e = 65537.
    static let rsa = #""kty":"RSA","n":"\#(Base64URL.encode([0xC1] + [UInt8](repeating: 0x5A, count: 255)))","e":"AQAB""#

    @Test(arguments: [
        "", "[]", #"{"keys":{}}"#, #"{"keys":null}"#, #"{"key":[]}"#, #"{"keys":[1]}"#, #"{"keys":[{\#(rsa)},null]}"#
    ])
    func documentsRefused(_ json: String) {
        #expect(throws: JWTError.malformed("A JWKS must be a JSON object with a \"keys\" array")) { try JWKSet(json: Array(json.utf8)) }
    }

    @Test func keysOfOtherTypesOrUsesAreSkipped() throws {
        #expect(try JWKSet(json: Array(#"{"keys":[]}"#.utf8)).keys.isEmpty)
        let set = try JWKSet(
            json: Array(
                #"""
                {"keys":[
                  {\#(Self.rsa),"kid":"a"},
                  {\#(Self.rsa),"kid":5,"use":7},
                  {\#(Self.rsa),"kid":"enc","use":"enc"},
                  {"kty":"RSA","n":5,"e":"AQAB","kid":"n-not-text"},
                  {\#(Self.rsa),"kty":"OKP","kid":"okp"},
                  {"kty":"EC","crv":"P-384","x":"AA","y":"AA","kid":"p384"},
                  {\#(Self.rsa),"kid":"c","kid":"last"}
                ]}
                """#.utf8))
        #expect(set.keys.map(\.keyID) == ["a", nil, "last"])
        #expect(set.keys.map(\.algorithm) == ["RS256", "RS256", "RS256"])
    }
}

@Suite("Credentials: apikey and bearer")
struct CredentialTests {
    let keys = KeyConfig(jwtSecret: "test-secret-with-at-least-32-characters!!", anonKey: "anon-key", serviceRoleKey: "service-key")

    @Test func anonKeyAsApikeyAndBearer() throws {
        #expect(try Credentials.resolve(apikey: "anon-key", bearer: "anon-key", keys: keys) == .anon)
        #expect(try Credentials.resolve(apikey: "anon-key", bearer: nil, keys: keys) == .anon)
        #expect(try Credentials.resolve(apikey: "service-key", bearer: "service-key", keys: keys) == .serviceRole)
    }

    @Test func userTokenGivesItsRoleAndSubject() throws {
        let caller = try Credentials.resolve(apikey: "anon-key", bearer: pythonToken, keys: keys)
        #expect(caller.role == "authenticated")
        #expect(caller.userID == UUID(uuidString: "11111111-1111-4111-8111-111111111111"))
        #expect(caller.isAuthenticatedUser)
    }

    @Test func missingOrWrongKeysAndBadTokens() {
        #expect(throws: CredentialError.noAPIKey) { try Credentials.resolve(apikey: nil, bearer: "anon-key", keys: keys) }
        #expect(throws: CredentialError.invalidAPIKey) { try Credentials.resolve(apikey: "nope", bearer: nil, keys: keys) }
        #expect(throws: CredentialError.token(.malformed("Expected 3 parts in JWT; got 1"))) {
            try Credentials.resolve(apikey: "anon-key", bearer: "garbage", keys: keys)
        }
    }

    @Test func bearerHeaderParsing() {
        #expect(Credentials.bearerToken("Bearer abc") == "abc")
        #expect(Credentials.bearerToken("bearer  abc ") == "abc")
        #expect(Credentials.bearerToken("Basic abc") == nil)
        #expect(Credentials.bearerToken(nil) == nil)
        #expect(Credentials.bearerToken("\tBEARER\tabc.def \t") == nil)
        #expect(Credentials.bearerToken(" BEARER abc.def \t") == "abc.def")
        #expect(Credentials.bearerToken("Bearer ") == nil)
        #expect(Credentials.bearerToken("Bearer     ") == nil)
    }

    /// A verified token is remembered, but only for its own secret and its own lifetime: the
    /// answer with the cache is the answer without it.
    @Test func rememberedTokensAnswerOnlyForTheirSecretAndLifetime() throws {
        let now = Date()
        let exp = Int(now.timeIntervalSince1970) + 600
        let claims = #"{"role":"authenticated","sub":"22222222-2222-4222-8222-222222222222","exp":\#(exp),"n":"\#(UUID())"}"#
        let signed = JWT.signHS256(claimsJSON: claims, secret: keys.jwtSecret)
        let first = try Credentials.resolve(apikey: "anon-key", bearer: signed, keys: keys, now: now)
        #expect(first.userID == UUID(uuidString: "22222222-2222-4222-8222-222222222222"))
        #expect(try Credentials.resolve(apikey: "anon-key", bearer: signed, keys: keys, now: now) == first)
        let otherSecret = KeyConfig(jwtSecret: "another-secret-with-at-least-32-characters", anonKey: "anon-key", serviceRoleKey: "service-key")
        #expect(throws: CredentialError.token(.badSignature)) {
            try Credentials.resolve(apikey: "anon-key", bearer: signed, keys: otherSecret, now: now)
        }
        let later = now.addingTimeInterval(600 + JWT.leeway + 5)
        #expect(throws: CredentialError.token(.expired)) {
            try Credentials.resolve(apikey: "anon-key", bearer: signed, keys: keys, now: later)
        }
        // Not yet valid: refused now, and not remembered as valid for later either.
        let future = Int(now.timeIntervalSince1970) + 300
        let early = JWT.signHS256(claimsJSON: #"{"role":"authenticated","nbf":\#(future),"n":"\#(UUID())"}"#, secret: keys.jwtSecret)
        #expect(throws: CredentialError.token(.notYetValid)) {
            try Credentials.resolve(apikey: "anon-key", bearer: early, keys: keys, now: now)
        }
    }
}

@Suite("JSONTree: Decodable over JSONSerialization's values")
struct JSONTreeTests {
    struct Sample: Decodable, Equatable {
        var text: String?
        var flag: Bool?
        var count: Int?
        var list: [String]?
        var nested: Inner?
        struct Inner: Decodable, Equatable { var name: String }
    }

    func decode(_ json: String) -> Sample? { JSONTree.decode(Sample.self, json: Array(json.utf8)) }

    @Test func readsAsTheDictionariesDid() throws {
        #expect(
            decode(#"{"text":"a","flag":true,"count":3,"list":["x","y"],"nested":{"name":"n"}}"#)
                == Sample(text: "a", flag: true, count: 3, list: ["x", "y"], nested: .init(name: "n")))
        // A repeated key counts with its last value; 0 and 1 read as booleans (NSNumber).
        #expect(decode(#"{"text":5,"text":"last"}"#)?.text == "last")
        #expect(decode(#"{"flag":0}"#)?.flag == false)
        #expect(decode(#"{"flag":1}"#)?.flag == true)
        #expect(decode(#"{"text":null,"unknown":[1,{"a":null}]}"#) == Sample())
    }

    @Test func refusesOtherTypesAndTexts() {
        #expect(decode(#"{"flag":2}"#) == nil)
        #expect(decode(#"{"text":5}"#) == nil)
        #expect(decode(#"{"list":["x",1]}"#) == nil)
        #expect(decode(#"{"nested":{}}"#) == nil)
        #expect(decode(#"[]"#) == nil)
        #expect(decode(#"{"count":1e999}"#) == nil)
        #expect(decode(#"{"#) == nil)
    }

    @Test func jsonValueKeepsWhatWasParsed() throws {
        struct Holder: Decodable { var any: JSONValue }
        let holder = try #require(JSONTree.decode(Holder.self, json: Array(#"{"any":{"b":[1,"x",null],"a":1.5}}"#.utf8)))
        #expect(JWT.serialize(holder.any.value) == #"{"a":1.5,"b":[1,"x",null]}"#)
        #expect(holder.any.object?["a"] as? Double == 1.5)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Holder.self, from: Data(#"{"any":1}"#.utf8)) }
    }
}

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
