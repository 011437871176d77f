import COpenSSL
import Foundation

/// A public key from a JWK (RSA or P-256), held as an OpenSSL `EVP_PKEY`.
public final class PublicKey: @unchecked Sendable {
    public enum Kind: Sendable { case rsa, p256 }
    public let kind: Kind
    let key: OpaquePointer
    /// The DER SubjectPublicKeyInfo: the key's identity.
    public let spki: [UInt8]

    /// The key from its DER SubjectPublicKeyInfo, or nil if OpenSSL cannot read it.
    init?(kind: Kind, subjectPublicKeyInfo der: [UInt8]) {
        let key = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else { return nil }
        self.kind = kind
        self.key = key
        spki = der
    }

    /// The key as JWK members (`kty` and `n`/`e`, or `crv`/`x`/`y`).
    public var publicJWK: [String: Any] {
        var reader = DER.Reader(spki)
        guard var info = reader.read(tag: 0x30), info.read(tag: 0x30) != nil, let bits = info.read(tag: 0x03)?.bytes.dropFirst() else { return [:] }
        switch kind {
        case .rsa:
            var sequence = DER.Reader(Array(bits))
            guard var rsa = sequence.read(tag: 0x30), let n = rsa.read(tag: 0x02), let e = rsa.read(tag: 0x02) else { return [:] }
            return ["kty": "RSA", "n": Base64URL.encode(DER.unsigned(n.bytes)), "e": Base64URL.encode(DER.unsigned(e.bytes))]
        case .p256:
            let point = Array(bits)
            guard point.count == 65 else { return [:] }
            return ["kty": "EC", "crv": "P-256", "x": Base64URL.encode(Array(point[1..<33])), "y": Base64URL.encode(Array(point[33..<65]))]
        }
    }

    /// The public key of a JWK object (RSA ≥ 2048 bits, or EC P-256); nil for anything else.
    public static func from(jwk: [String: Any]) -> PublicKey? {
        func member(_ name: String) -> [UInt8]? { (jwk[name] as? String).flatMap { Base64URL.decode(Substring($0)) } }
        switch jwk["kty"] as? String {
        case "RSA":
            guard let n = member("n"), let e = member("e") else { return nil }
            return PublicKey(rsaModulus: DER.unsigned(n), exponent: e)
        case "EC":
            guard jwk["crv"] as? String == "P-256", let x = member("x"), let y = member("y") else { return nil }
            return PublicKey(p256X: x, y: y)
        default:
            return nil
        }
    }

    deinit { EVP_PKEY_free(key) }

    /// An RSA key from its modulus and public exponent (big-endian bytes).
    public convenience init?(rsaModulus n: [UInt8], exponent e: [UInt8]) {
        guard n.count >= 256 else { return nil }  // 2048 bits at least
        let rsaKey = DER.sequence([DER.integer(n), DER.integer(e)])
        let algorithm = DER.sequence([DER.oid([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]), [0x05, 0x00]])
        self.init(kind: .rsa, subjectPublicKeyInfo: DER.sequence([algorithm, DER.bitString(rsaKey)]))
    }

    /// A P-256 key from its affine coordinates (32 bytes each).
    public convenience init?(p256X x: [UInt8], y: [UInt8]) {
        guard x.count == 32, y.count == 32 else { return nil }
        let algorithm = DER.sequence([
            DER.oid([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]),  // id-ecPublicKey
            DER.oid([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07])  // prime256v1
        ])
        self.init(kind: .p256, subjectPublicKeyInfo: DER.sequence([algorithm, DER.bitString([0x04] + x + y)]))
    }

    /// Verifies a JWS signature over `data` with SHA-256: PKCS#1 v1.5 for RSA, and for P-256 the
    /// JWS form (r ‖ s, 64 bytes).
    public func verify(signature: [UInt8], data: [UInt8]) -> Bool {
        let der: [UInt8]
        switch kind {
        case .rsa: der = signature
        case .p256:
            guard signature.count == 64 else { return false }
            der = DER.sequence([DER.integer(Array(signature[0..<32])), DER.integer(Array(signature[32...]))])
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, der, der.count, data, data.count) == 1
    }
}

/// One key of a JSON Web Key Set.
public struct JWK: Sendable {
    public var keyID: String?
    /// `RS256` or `ES256`.
    public var algorithm: String
    public var key: PublicKey

    public init(keyID: String?, algorithm: String, key: PublicKey) {
        self.keyID = keyID
        self.algorithm = algorithm
        self.key = key
    }
}

/// A JSON Web Key Set (RFC 7517), as Google and Apple publish them. Keys other than RSA
/// (≥ 2048 bits) and P-256 signing keys are skipped.
public struct JWKSet: Sendable {
    public var keys: [JWK]

    public init(keys: [JWK]) { self.keys = keys }

    public init(json: [UInt8]) throws(JWTError) {
        guard let document = JSONTree.decode(Document.self, json: json) else {
            throw .malformed("A JWKS must be a JSON object with a \"keys\" array")
        }
        var keys: [JWK] = []
        for entry in document.keys {
            if let use = entry.use, use != "sig" { continue }
            switch entry.kty {
            case "RSA":
                guard let n = entry.n.flatMap({ Base64URL.decode(Substring($0)) }),
                    let e = entry.e.flatMap({ Base64URL.decode(Substring($0)) }),
                    let key = PublicKey(rsaModulus: n, exponent: e)
                else { continue }
                keys.append(JWK(keyID: entry.kid, algorithm: "RS256", key: key))
            case "EC":
                guard entry.crv == "P-256",
                    let x = entry.x.flatMap({ Base64URL.decode(Substring($0)) }),
                    let y = entry.y.flatMap({ Base64URL.decode(Substring($0)) }),
                    let key = PublicKey(p256X: x, y: y)
                else { continue }
                keys.append(JWK(keyID: entry.kid, algorithm: "ES256", key: key))
            default:
                continue
            }
        }
        self.keys = keys
    }

    /// The document: an object whose `keys` is an array of objects (anything else refuses the
    /// whole set).
    struct Document: Decodable {
        var keys: [Entry]
    }

    /// One key's members (RFC 7517 section 4, RFC 7518 section 6) this server reads; a member of
    /// another JSON type reads as absent (the key is then skipped, or matched by any `kid`).
    struct Entry: Decodable {
        var kty, use, kid: String?
        /// RSA: modulus and exponent.
        var n, e: String?
        /// EC: curve and coordinates.
        var crv, x, y: String?

        enum CodingKeys: String, CodingKey { case kty, use, kid, n, e, crv, x, y }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            func member(_ key: CodingKeys) -> String? { container.lenient(String.self, forKey: key) }
            kty = member(.kty)
            use = member(.use)
            kid = member(.kid)
            n = member(.n)
            e = member(.e)
            crv = member(.crv)
            x = member(.x)
            y = member(.y)
        }
    }
}

extension JWT {
    /// Verifies an RS256/ES256 token against a key set: the header's `alg` must be one of those
    /// two and match the key (`none`, HS256 and the rest are refused), the `kid` must name a key
    /// of the set when given, and `exp`/`nbf`/`iat` hold with the leeway. Returns the claims.
    public static func verify(_ token: String, keys: JWKSet, now: Date = Date()) throws(JWTError) -> [String: Any] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("Expected 3 parts in JWT; got \(parts.count)") }
        guard let headerBytes = Base64URL.decode(parts[0]), let header = JSONTree.decode(JOSEHeader.self, json: headerBytes) else {
            throw .malformed("The JWT header is not a JSON object")
        }
        guard let alg = header.alg else { throw .malformed("JWT header has no alg") }
        guard alg == "RS256" || alg == "ES256" else { throw .unsupportedAlgorithm(alg) }
        let keyID = header.kid
        let candidates = keys.keys.filter { $0.algorithm == alg && (keyID == nil || $0.keyID == keyID) }
        guard let signature = Base64URL.decode(parts[2]) else { throw .badSignature }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard candidates.contains(where: { $0.key.verify(signature: signature, data: signingInput) }) else { throw .badSignature }
        guard let payloadBytes = Base64URL.decode(parts[1]),
            let claims = (try? JSONSerialization.jsonObject(with: Data(payloadBytes))) as? [String: Any]
        else {
            throw .malformed("The JWT claims are not a JSON object")
        }
        let time = now.timeIntervalSince1970
        guard let exp = number(claims["exp"]) else { throw .malformed("The JWT has no exp claim") }
        if time > exp + leeway { throw .expired }
        if let nbf = number(claims["nbf"]), time + leeway < nbf { throw .notYetValid }
        if let iat = number(claims["iat"]), time + leeway < iat { throw .issuedInFuture }
        return claims
    }
}

/// The few DER (X.690) encodings a SubjectPublicKeyInfo and an ECDSA signature need.
public enum DER {
    public static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xff), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    public static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { [tag] + length(content.count) + content }
    public static func sequence(_ items: [[UInt8]]) -> [UInt8] { element(0x30, items.flatMap { $0 }) }
    public static func oid(_ encoded: [UInt8]) -> [UInt8] { element(0x06, encoded) }
    public static func bitString(_ content: [UInt8]) -> [UInt8] { element(0x03, [0x00] + content) }

    /// A non-negative INTEGER from big-endian magnitude bytes.
    public static func integer(_ magnitude: [UInt8]) -> [UInt8] {
        var bytes = Array(magnitude.drop { $0 == 0 })
        if bytes.isEmpty { bytes = [0] }
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return element(0x02, bytes)
    }

    /// An INTEGER's content without its sign-padding zeros.
    public static func unsigned(_ content: [UInt8]) -> [UInt8] {
        let trimmed = Array(content.drop { $0 == 0 })
        return trimmed.isEmpty ? [0] : trimmed
    }

    public struct Reader {
        public var bytes: [UInt8]
        var offset = 0

        public init(_ bytes: [UInt8]) { self.bytes = bytes }

        /// The next element if it has `tag`, as a reader over its content.
        public mutating func read(tag: UInt8) -> Reader? {
            guard offset + 2 <= bytes.count, bytes[offset] == tag else { return nil }
            var length = Int(bytes[offset + 1])
            var header = 2
            if length & 0x80 != 0 {
                let count = length & 0x7f
                guard count <= 4, offset + 2 + count <= bytes.count else { return nil }
                length = bytes[(offset + 2)..<(offset + 2 + count)].reduce(0) { $0 << 8 | Int($1) }
                header += count
            }
            guard offset + header + length <= bytes.count else { return nil }
            let content = Array(bytes[(offset + header)..<(offset + header + length)])
            offset += header + length
            return Reader(content)
        }
    }
}
