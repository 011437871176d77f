import COpenSSL
import Foundation

/// A private signing key (RSA or P-256) held as an OpenSSL `EVP_PKEY`: the server's asymmetric
/// access-token key (`JWT_KEYS`), or in the tests an identity provider's key.
public final class SigningKey: @unchecked Sendable {
    public let kind: PublicKey.Kind
    public let keyID: String
    let key: OpaquePointer

    /// A new key (RSA 2048 bits or P-256).
    public init(kind: PublicKey.Kind, keyID: String) {
        self.kind = kind
        self.keyID = keyID
        let context: OpaquePointer
        switch kind {
        case .rsa:
            context = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nil)!
            precondition(EVP_PKEY_keygen_init(context) == 1 && EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) == 1)
        case .p256:
            context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil)!
            precondition(EVP_PKEY_keygen_init(context) == 1 && EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1)
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        precondition(EVP_PKEY_keygen(context, &key) == 1 && key != nil, "key generation failed")
        self.key = key!
    }

    /// A P-256 key from PKCS #8 PEM text (`-----BEGIN PRIVATE KEY-----`, as Apple's `.p8` key
    /// files hold); nil when the text is not such a key.
    public init?(pkcs8PEM pem: String, keyID: String) {
        let body = pem.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("-----") }.joined()
        guard let der = Data(base64Encoded: body).map(Array.init), !der.isEmpty else { return nil }
        let key = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
        }
        guard let key else { return nil }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else {
            EVP_PKEY_free(key)
            return nil
        }
        self.key = key
        self.kind = .p256
        self.keyID = keyID
    }

    /// A key from a private JWK (RFC 7518 section 6: EC P-256 with `d`, `x`, `y`; RSA with `n`,
    /// `e`, `d`, `p`, `q`, `dp`, `dq`, `qi`); nil when a member is missing or OpenSSL refuses it.
    public init?(privateJWK jwk: [String: Any]) {
        func member(_ name: String) -> [UInt8]? { (jwk[name] as? String).flatMap { Base64URL.decode(Substring($0)) } }
        let der: [UInt8]
        let type: Int32
        switch jwk["kty"] as? String {
        case "EC":
            guard jwk["crv"] as? String == "P-256", let d = member("d"), let x = member("x"), let y = member("y"), d.count <= 32, x.count == 32,
                y.count == 32
            else { return nil }
            // SEC1 ECPrivateKey: version 1, the private scalar, the curve, the public point.
            der = DER.sequence([
                DER.integer([1]), DER.element(0x04, [UInt8](repeating: 0, count: 32 - d.count) + d),
                DER.element(0xa0, DER.oid([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07])), DER.element(0xa1, DER.bitString([0x04] + x + y))
            ])
            kind = .p256
            type = EVP_PKEY_EC
        case "RSA":
            let names = ["n", "e", "d", "p", "q", "dp", "dq", "qi"]
            let values = names.compactMap(member)
            guard values.count == names.count, values[0].count >= 256 else { return nil }
            // PKCS #1 RSAPrivateKey: version 0 and the eight numbers.
            der = DER.sequence([DER.integer([0])] + values.map(DER.integer))
            kind = .rsa
            type = EVP_PKEY_RSA
        default:
            return nil
        }
        let key = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PrivateKey(type, nil, &cursor, buffer.count)
        }
        guard let key else { return nil }
        self.key = key
        keyID = jwk["kid"] as? String ?? ""
        // The public half given must be the private key's own: what it signs, that key verifies.
        let probe = Array("onboard signing key check".utf8)
        guard let given = PublicKey.from(jwk: jwk), given.verify(signature: signature(over: probe), data: probe) else { return nil }
    }

    deinit { EVP_PKEY_free(key) }

    /// The public half, for verifying what this key signed.
    public var publicKey: PublicKey {
        PublicKey(kind: kind, subjectPublicKeyInfo: spki)!
    }

    /// The JWS algorithm of this key.
    public var algorithm: String { kind == .rsa ? "RS256" : "ES256" }

    /// The DER SubjectPublicKeyInfo of the public half.
    var spki: [UInt8] {
        let length = i2d_PUBKEY(key, nil)
        var der = [UInt8](repeating: 0, count: Int(max(length, 0)))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_PUBKEY(key, &cursor)
        }
        return der
    }

    /// The whole key as a private JWK with `key_ops` (what `JWT_KEYS` holds).
    public var privateJWK: [String: Any] {
        let length = i2d_PrivateKey(key, nil)
        var der = [UInt8](repeating: 0, count: Int(max(length, 0)))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_PrivateKey(key, &cursor)
        }
        var object = jwk
        object["key_ops"] = ["sign", "verify"]
        var reader = DER.Reader(der)
        guard var sequence = reader.read(tag: 0x30) else { return object }
        switch kind {
        case .p256:
            _ = sequence.read(tag: 0x02)
            let d = sequence.read(tag: 0x04)?.bytes ?? []
            object["d"] = Base64URL.encode([UInt8](repeating: 0, count: max(0, 32 - d.count)) + d)
        case .rsa:
            _ = sequence.read(tag: 0x02)
            for name in ["n", "e", "d", "p", "q", "dp", "dq", "qi"] {
                object[name] = Base64URL.encode(DER.unsigned(sequence.read(tag: 0x02)?.bytes ?? []))
            }
        }
        return object
    }

    /// The public half as a JWK object.
    public var jwk: [String: Any] {
        var object = publicKey.publicJWK
        object["kid"] = keyID
        object["alg"] = algorithm
        object["use"] = "sig"
        return object
    }

    /// A compact JWS of `claims` with this key (`alg` and `kid` in the header may be overridden).
    public func sign(claims: [String: Any], alg: String? = nil, kid: String? = nil) -> String {
        let header: [String: Any] = ["alg": alg ?? algorithm, "kid": kid ?? keyID, "typ": "JWT"]
        let signingInput = Base64URL.encode(Array(JWT.serialize(header).utf8)) + "." + Base64URL.encode(Array(JWT.serialize(claims).utf8))
        return signingInput + "." + Base64URL.encode(signature(over: Array(signingInput.utf8)))
    }

    /// The JWS signature of `data` with SHA-256: PKCS #1 v1.5 for RSA, r ‖ s (64 bytes) for P-256.
    /// Signing with a loaded key fails only when memory does.
    func signature(over data: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1)
        var length = 0
        precondition(EVP_DigestSign(context, nil, &length, data, data.count) == 1)
        var signature = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(context, &signature, &length, data, data.count) == 1)
        signature = Array(signature[0..<length])
        guard kind == .p256 else { return signature }
        // DER ECDSA-Sig-Value → JWS r ‖ s.
        var reader = DER.Reader(signature)
        var sequence = reader.read(tag: 0x30)!
        let r = DER.unsigned(sequence.read(tag: 0x02)!.bytes)
        let s = DER.unsigned(sequence.read(tag: 0x02)!.bytes)
        return [UInt8](repeating: 0, count: 32 - r.count) + r + [UInt8](repeating: 0, count: 32 - s.count) + s
    }
}
