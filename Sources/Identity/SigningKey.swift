import COpenSSL
import Identity

/// A private signing key (RSA 2048 or P-256) generated with OpenSSL: what an identity provider
/// holds. The tests use it to publish a JWKS and mint id_tokens; the server only verifies.
public final class SigningKey: @unchecked Sendable {
    public let kind: PublicKey.Kind
    public let keyID: String
    let key: OpaquePointer

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

    deinit { EVP_PKEY_free(key) }

    /// The public half as a JWK object.
    public var jwk: [String: Any] {
        let length = i2d_PUBKEY(key, nil)
        var der = [UInt8](repeating: 0, count: Int(length))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_PUBKEY(key, &cursor)
        }
        // SubjectPublicKeyInfo: SEQUENCE { algorithm, BIT STRING { key } }.
        var reader = DER.Reader(der)
        var spki = reader.read(tag: 0x30)!
        _ = spki.read(tag: 0x30)
        let bits = Array(spki.read(tag: 0x03)!.bytes.dropFirst())
        switch kind {
        case .rsa:
            var sequence = DER.Reader(bits)
            var rsa = sequence.read(tag: 0x30)!
            let n = DER.unsigned(rsa.read(tag: 0x02)!.bytes)
            let e = DER.unsigned(rsa.read(tag: 0x02)!.bytes)
            return ["kty": "RSA", "kid": keyID, "alg": "RS256", "use": "sig", "n": Base64URL.encode(n), "e": Base64URL.encode(e)]
        case .p256:
            return [
                "kty": "EC", "kid": keyID, "alg": "ES256", "use": "sig", "crv": "P-256",
                "x": Base64URL.encode(Array(bits[1..<33])), "y": Base64URL.encode(Array(bits[33..<65]))
            ]
        }
    }

    /// A compact JWS of `claims` with this key (`alg` and `kid` in the header may be overridden).
    public func sign(claims: [String: Any], alg: String? = nil, kid: String? = nil) -> String {
        let header: [String: Any] = ["alg": alg ?? (kind == .rsa ? "RS256" : "ES256"), "kid": kid ?? keyID, "typ": "JWT"]
        let signingInput = Base64URL.encode(Array(JWT.serialize(header).utf8)) + "." + Base64URL.encode(Array(JWT.serialize(claims).utf8))
        let data = Array(signingInput.utf8)
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1)
        var length = 0
        precondition(EVP_DigestSign(context, nil, &length, data, data.count) == 1)
        var signature = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(context, &signature, &length, data, data.count) == 1)
        signature = Array(signature[0..<length])
        if kind == .p256 {
            // DER ECDSA-Sig-Value → JWS r ‖ s.
            var reader = DER.Reader(signature)
            var sequence = reader.read(tag: 0x30)!
            let r = DER.unsigned(sequence.read(tag: 0x02)!.bytes)
            let s = DER.unsigned(sequence.read(tag: 0x02)!.bytes)
            signature = [UInt8](repeating: 0, count: 32 - r.count) + r + [UInt8](repeating: 0, count: 32 - s.count) + s
        }
        return signingInput + "." + Base64URL.encode(signature)
    }
}
