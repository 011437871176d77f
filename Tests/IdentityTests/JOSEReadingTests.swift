import Foundation
import Identity
import Testing

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
