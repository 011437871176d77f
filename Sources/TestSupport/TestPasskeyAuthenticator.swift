import COpenSSL
import Foundation
import Identity

/// A software WebAuthn authenticator for tests: a fresh P-256 key (OpenSSL's) behind one
/// discoverable credential, answering registration options with an attestation object in real
/// CBOR (format `none`, or `packed` self-attestation) and authentication options with an
/// ES256 assertion (ASN.1 DER over authData ‖ SHA-256(clientDataJSON)). Every field can be
/// bent, for the attacks.
public final class TestPasskeyAuthenticator: @unchecked Sendable {
    // @unchecked: the key is only read after init, and `signCount` is set by one test at a time.
    let key: OpaquePointer
    public let credentialID = Crypto.randomBytes(32)
    public let aaguid: [UInt8]
    /// The counter the next assertion carries (after adding one, unless it is held at 0).
    public var signCount: UInt32 = 0
    /// The user handle given at registration.
    public private(set) var userHandle: [UInt8] = []
    public let x: [UInt8]
    public let y: [UInt8]

    public init(aaguid: [UInt8] = [UInt8](repeating: 0, count: 16)) {
        self.aaguid = aaguid
        let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_keygen_init(context) == 1 && EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1)
        var made: OpaquePointer?
        precondition(EVP_PKEY_keygen(context, &made) == 1 && made != nil, "P-256 key generation failed")
        key = made!
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        precondition(EVP_PKEY_get_octet_string_param(key, "pub", &point, point.count, &length) == 1 && length == 65)
        x = Array(point[1..<33])
        y = Array(point[33..<65])
    }

    deinit { EVP_PKEY_free(key) }

    /// ECDSA P-256 with SHA-256, DER-encoded as WebAuthn carries it.
    public func sign(_ data: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1)
        var length = 0
        precondition(EVP_DigestSign(context, nil, &length, data, data.count) == 1)
        var signature = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(context, &signature, &length, data, data.count) == 1)
        return Array(signature[0..<length])
    }

    /// The COSE_Key of the credential: EC2, ES256, P-256.
    public var coseKey: [UInt8] {
        TestCBOR.map([
            (TestCBOR.int(1), TestCBOR.int(2)), (TestCBOR.int(3), TestCBOR.int(-7)), (TestCBOR.int(-1), TestCBOR.int(1)),
            (TestCBOR.int(-2), TestCBOR.bytes(x)), (TestCBOR.int(-3), TestCBOR.bytes(y))
        ])
    }

    /// The bits of an answer a test may bend.
    public struct Bend {
        public var type: String? = nil
        public var challenge: String? = nil
        public var rpID: String? = nil
        /// UP (0x01) and UV (0x04) by default.
        public var flags: UInt8 = 0x05
        public var format = "none"
        public var signCount: UInt32? = nil
        public var corruptSignature = false
        public init() {}
    }

    public static func clientData(type: String, challenge: String, origin: String) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(challenge)","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }

    public func authenticatorData(rpID: String, flags: UInt8, count: UInt32, attested: Bool) -> [UInt8] {
        var data = Crypto.sha256(Array(rpID.utf8)) + [attested ? flags | 0x40 : flags]
        data += [UInt8(count >> 24 & 0xff), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff)]
        if attested { data += aaguid + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xff)] + credentialID + coseKey }
        return data
    }

    /// `navigator.credentials.create()`'s answer to GoTrue's registration `options`, as JSON.
    public func create(options: [String: Any], origin: String, bend: Bend = Bend()) -> String {
        let rp = options["rp"] as? [String: Any] ?? [:]
        let user = options["user"] as? [String: Any] ?? [:]
        userHandle = Base64URL.decode(Substring(user["id"] as? String ?? "")) ?? []
        let clientData = Self.clientData(
            type: bend.type ?? "webauthn.create", challenge: bend.challenge ?? options["challenge"] as? String ?? "", origin: origin)
        let authData = authenticatorData(rpID: bend.rpID ?? rp["id"] as? String ?? "", flags: bend.flags, count: bend.signCount ?? signCount, attested: true)
        var statement: [UInt8] = TestCBOR.map([])
        if bend.format == "packed" {
            statement = TestCBOR.map([
                (TestCBOR.text("alg"), TestCBOR.int(-7)), (TestCBOR.text("sig"), TestCBOR.bytes(sign(authData + Crypto.sha256(clientData))))
            ])
        }
        let attestation = TestCBOR.map([
            (TestCBOR.text("fmt"), TestCBOR.text(bend.format)), (TestCBOR.text("attStmt"), statement), (TestCBOR.text("authData"), TestCBOR.bytes(authData))
        ])
        return Self.credentialJSON(
            id: credentialID,
            response: [
                "clientDataJSON": Base64URL.encode(clientData), "attestationObject": Base64URL.encode(attestation), "transports": ["internal"]
            ])
    }

    /// `navigator.credentials.get()`'s answer to GoTrue's authentication `options`, as JSON;
    /// the counter goes up by one first (unless it is 0, an authenticator without counter).
    public func get(options: [String: Any], origin: String, bend: Bend = Bend()) -> String {
        if signCount > 0 { signCount += 1 }
        let clientData = Self.clientData(type: bend.type ?? "webauthn.get", challenge: bend.challenge ?? options["challenge"] as? String ?? "", origin: origin)
        let authData = authenticatorData(
            rpID: bend.rpID ?? options["rpId"] as? String ?? "", flags: bend.flags, count: bend.signCount ?? signCount, attested: false)
        var signature = sign(authData + Crypto.sha256(clientData))
        if bend.corruptSignature { signature[signature.count - 1] ^= 0x01 }
        return Self.credentialJSON(
            id: credentialID,
            response: [
                "clientDataJSON": Base64URL.encode(clientData), "authenticatorData": Base64URL.encode(authData), "signature": Base64URL.encode(signature),
                "userHandle": Base64URL.encode(userHandle)
            ])
    }

    static func credentialJSON(id: [UInt8], response: [String: Any]) -> String {
        let object: [String: Any] = [
            "id": Base64URL.encode(id), "rawId": Base64URL.encode(id), "type": "public-key", "response": response,
            "clientExtensionResults": [:] as [String: Any],
            "authenticatorAttachment": "platform"
        ]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}

/// CBOR encodings (RFC 8949, definite lengths) for the test authenticator.
public enum TestCBOR {
    public static func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
        switch value {
        case 0..<24: return [major << 5 | UInt8(value)]
        case 24..<0x100: return [major << 5 | 24, UInt8(value)]
        case 0x100..<0x10000: return [major << 5 | 25, UInt8(value >> 8), UInt8(value & 0xff)]
        case 0x10000..<0x1_0000_0000: return [major << 5 | 26] + (0..<4).reversed().map { UInt8(value >> (8 * UInt64($0)) & 0xff) }
        default: return [major << 5 | 27] + (0..<8).reversed().map { UInt8(value >> (8 * UInt64($0)) & 0xff) }
        }
    }

    public static func int(_ value: Int) -> [UInt8] { value >= 0 ? head(0, UInt64(value)) : head(1, UInt64(-1 - value)) }
    public static func bytes(_ value: [UInt8]) -> [UInt8] { head(2, UInt64(value.count)) + value }
    public static func text(_ value: String) -> [UInt8] { head(3, UInt64(value.utf8.count)) + Array(value.utf8) }
    public static func array(_ items: [[UInt8]]) -> [UInt8] { head(4, UInt64(items.count)) + items.flatMap { $0 } }
    public static func map(_ entries: [([UInt8], [UInt8])]) -> [UInt8] { head(5, UInt64(entries.count)) + entries.flatMap { $0.0 + $0.1 } }
}
