import Foundation
import Identity
import TestSupport
import Testing

@testable import Auth

/// The CBOR reader and the authenticator-data parser on their own (no server): what WebAuthn
/// sends is read, and every malformed or oversized encoding is refused rather than read in part.
@Suite("WebAuthn: CBOR and authenticator data")
struct WebAuthnParsingTests {
    @Test func readsTheKindsWebAuthnUses() throws {
        let encoded = TestCBOR.map([
            (TestCBOR.text("fmt"), TestCBOR.text("none")), (TestCBOR.int(-3), TestCBOR.bytes([1, 2, 3])),
            (TestCBOR.int(1), TestCBOR.array([TestCBOR.int(65_536), TestCBOR.int(-257), [0xf5], [0xf4], [0xf6]]))
        ])
        let item = try CBORReader.decode(encoded)
        #expect(item["fmt"] == .text("none"))
        #expect(item[-3] == .bytes([1, 2, 3]))
        #expect(item[1] == .array([.unsigned(65_536), .negative(256), .bool(true), .bool(false), .null]))
        #expect(item[-257] == nil)
    }

    @Test(
        arguments: [
            ("indefinite-length array", [0x9f, 0x01, 0xff]),
            ("indefinite-length bytes", [0x5f, 0x41, 0x00, 0xff]),
            ("a tag", [0xc1, 0x01]),
            ("a float", [0xfa, 0x3f, 0x80, 0x00, 0x00]),
            ("undefined", [0xf7]),
            ("a reserved length", [0x1c]),
            ("bytes past the end", [0x5a, 0xff, 0xff, 0xff, 0xff, 0x00]),
            ("an array count past the end", [0x9b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            ("a map count past the end", [0xb9, 0x00, 0x30, 0x01]),
            ("a duplicate key", [0xa2, 0x01, 0x02, 0x01, 0x03]),
            ("text that is not UTF-8", [0x62, 0xc3, 0x28]),
            ("bytes after the item", [0x01, 0x02]),
            ("nothing", []),
            ("nesting 17 deep", [UInt8](repeating: 0x81, count: 17) + [0x01])
        ] as [(String, [UInt8])])
    func refuses(_ name: String, _ bytes: [UInt8]) {
        #expect(throws: CBORError.self, "\(name)") { try CBORReader.decode(bytes) }
    }

    @Test func refusesMapsAndArraysBeyondTheirBounds() {
        let wide = TestCBOR.map((0..<65).map { (TestCBOR.int($0), TestCBOR.int(0)) })
        #expect(throws: CBORError.self) { try CBORReader.decode(wide) }
        let long = TestCBOR.array([[UInt8]](repeating: TestCBOR.int(0), count: 257))
        #expect(throws: CBORError.self) { try CBORReader.decode(long) }
        let deepest = [UInt8](repeating: 0x81, count: 15) + [0x01]
        #expect(throws: Never.self) { try CBORReader.decode(deepest) }
    }

    @Test func parsesAnAttestedCredentialAndRefusesATruncatedOne() throws {
        let authenticator = TestPasskeyAuthenticator()
        let data = authenticator.authenticatorData(rpID: "example.com", flags: 0x05, count: 7, attested: true)
        let parsed = try WebAuthn.parseAuthenticatorData(data)
        #expect(parsed.rpIDHash == Crypto.sha256(Array("example.com".utf8)) && parsed.signCount == 7 && parsed.userPresent && parsed.userVerified)
        #expect(parsed.credential?.id == authenticator.credentialID && parsed.credential?.publicKeyCOSE == authenticator.coseKey)
        for cut in [1, 10, authenticator.coseKey.count] {
            #expect(throws: WebAuthn.Refusal.self) { try WebAuthn.parseAuthenticatorData(Array(data.dropLast(cut))) }
        }
        #expect(throws: WebAuthn.Refusal.self) { try WebAuthn.parseAuthenticatorData(data + [0x00]) }
        #expect(throws: WebAuthn.Refusal.self) { try WebAuthn.parseAuthenticatorData(Array(data.prefix(36))) }
    }

    @Test func refusesKeysOtherThanES256AndRS256AndPointsOffTheCurve() throws {
        let x = [UInt8](repeating: 1, count: 32)
        let offCurve = TestCBOR.map([
            (TestCBOR.int(1), TestCBOR.int(2)), (TestCBOR.int(3), TestCBOR.int(-7)), (TestCBOR.int(-1), TestCBOR.int(1)),
            (TestCBOR.int(-2), TestCBOR.bytes(x)), (TestCBOR.int(-3), TestCBOR.bytes(x))
        ])
        #expect(throws: WebAuthn.Refusal.self) { try WebAuthn.CredentialKey(cose: try CBORReader.decode(offCurve)) }
        let ed25519 = TestCBOR.map([
            (TestCBOR.int(1), TestCBOR.int(1)), (TestCBOR.int(3), TestCBOR.int(-8)), (TestCBOR.int(-1), TestCBOR.int(6)), (TestCBOR.int(-2), TestCBOR.bytes(x))
        ])
        #expect(throws: WebAuthn.Refusal.self) { try WebAuthn.CredentialKey(cose: try CBORReader.decode(ed25519)) }
        let authenticator = TestPasskeyAuthenticator()
        let key = try WebAuthn.CredentialKey(cose: try CBORReader.decode(authenticator.coseKey))
        let message = Array("signed".utf8)
        let signature = authenticator.sign(message)
        #expect(key.verify(signature: signature, data: message))
        #expect(!key.verify(signature: signature + [0x00], data: message))
        #expect(!key.verify(signature: signature, data: message + [0x00]))
    }
}
