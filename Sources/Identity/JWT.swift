import Foundation

/// Why a token was refused. The texts are PostgREST's, which clients show.
public enum JWTError: Error, Equatable, Sendable {
    case malformed(String)
    case badSignature
    case unsupportedAlgorithm(String)
    case expired
    case notYetValid
    case issuedInFuture
    case wrongAudience
    /// A claim of the wrong type, or claims that are not an object (PostgREST's JwtClaimsErr
    /// messages: "Parsing claims failed", "The JWT 'exp' claim must be a number", …).
    case claims(String)

    public var message: String {
        switch self {
        case .malformed(let why): return why
        case .badSignature: return "JWT cryptographic operation failed"
        case .unsupportedAlgorithm(let alg): return "Wrong or unsupported encoding algorithm: \(alg)"
        case .expired: return "JWT expired"
        case .notYetValid: return "JWT not yet valid"
        case .issuedInFuture: return "JWT issued at future"
        case .wrongAudience: return "JWT not in audience"
        case .claims(let message): return message
        }
    }
}

/// The fields of a token's header (RFC 7515 section 4.1) this server reads. A field of another
/// JSON type reads as absent (an `alg` that is not a string: "JWT header has no alg"); other
/// fields are ignored.
struct JOSEHeader: Decodable {
    var alg: String?
    /// Not checked (neither GoTrue nor PostgREST checks it).
    var typ: String?
    var kid: String?

    enum CodingKeys: String, CodingKey { case alg, typ, kid }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        alg = container.lenient(String.self, forKey: .alg)
        typ = container.lenient(String.self, forKey: .typ)
        kid = container.lenient(String.self, forKey: .kid)
    }
}

/// JSON Web Tokens (RFC 7519): HS256 with the configured secret, RS256/ES256 with `JWT_KEYS`.
public enum JWT {
    /// Clock skew tolerated on exp/nbf/iat, in seconds.
    public static let leeway: Double = 30

    /// Signs a claims object (its JSON text) with HS256 (`kid` in the header when given).
    public static func signHS256(claimsJSON: String, secret: [UInt8], keyID: String? = nil) -> String {
        let header = Base64URL.encode(Array((keyID.map { #"{"alg":"HS256","kid":\#(serialize($0)),"typ":"JWT"}"# } ?? #"{"alg":"HS256","typ":"JWT"}"#).utf8))
        let payload = Base64URL.encode(Array(claimsJSON.utf8))
        let signingInput = header + "." + payload
        return signingInput + "." + Base64URL.encode(Crypto.hmacSHA256(key: secret, data: Array(signingInput.utf8)))
    }

    /// Signs claims given as a dictionary (serialised with sorted keys).
    public static func signHS256(claims: [String: Any], secret: [UInt8]) -> String {
        signHS256(claimsJSON: serialize(claims), secret: secret)
    }

    /// Verifies an HS256 token and its time claims; returns the claims' JSON text and object.
    /// `alg` must be exactly HS256: `none` and every other algorithm are refused.
    public static func verifyHS256(
        _ token: String, secret: [UInt8], now: Date = Date(), audience: String? = nil
    ) throws(JWTError) -> (json: String, claims: [String: Any]) {
        let verified = try verify(token, secret: secret, publicKeys: JWKSet(keys: []), otherSecrets: [], now: now, audience: audience)
        return (verified.json, verified.claims)
    }

    /// Verifies an access token signed with the secret or one of `otherSecrets` (HS256; the one
    /// the header's `kid` names first) or with one of `publicKeys` (RS256/ES256, by `kid` when the
    /// header names one), then its time claims as PostgREST does. `none` and every other algorithm
    /// are refused. Returns the claims' JSON text and object, and what verified them: the secret's
    /// bytes, or the public key's DER.
    public static func verify(
        _ token: String, secret: [UInt8], publicKeys: JWKSet, otherSecrets: [HMACKey] = [], now: Date = Date(), audience: String? = nil
    ) throws(JWTError) -> (json: String, claims: [String: Any], verifier: [UInt8]) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("Expected 3 parts in JWT; got \(parts.count)") }
        guard let headerBytes = Base64URL.decode(parts[0]), let header = JSONTree.decode(JOSEHeader.self, json: headerBytes) else {
            throw .malformed("Error in $: Failed reading: not a valid json value at JWT header")
        }
        guard let alg = header.alg else { throw .malformed("JWT header has no alg") }
        guard let signature = Base64URL.decode(parts[2]) else { throw .badSignature }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        var verifier: [UInt8]
        switch alg {
        case "HS256":
            let named = otherSecrets.filter { $0.keyID == header.kid }.map(\.secret)
            let candidates = named + [secret] + otherSecrets.filter { $0.keyID != header.kid }.map(\.secret)
            guard let match = candidates.first(where: { Crypto.constantTimeEquals(signature, Crypto.hmacSHA256(key: $0, data: signingInput)) }) else {
                throw .badSignature
            }
            verifier = match
        case "RS256", "ES256":
            guard !publicKeys.keys.isEmpty else { throw .unsupportedAlgorithm(alg) }
            let candidates = publicKeys.keys.filter { $0.algorithm == alg && (header.kid == nil || $0.keyID == header.kid) }
            guard let key = candidates.first(where: { $0.key.verify(signature: signature, data: signingInput) }) else { throw .badSignature }
            verifier = key.key.spki
        default:
            throw .unsupportedAlgorithm(alg)
        }
        guard let payloadBytes = Base64URL.decode(parts[1]),
            let claims = (try? JSONSerialization.jsonObject(with: Data(payloadBytes))) as? [String: Any]
        else {
            throw .claims("Parsing claims failed")
        }
        // PostgREST's checks, in its order: each time claim a number when present (null is
        // absent), then `aud` a string or an array of strings.
        let time = now.timeIntervalSince1970
        func timeClaim(_ key: String) throws(JWTError) -> Double? {
            guard let value = claims[key], !(value is NSNull) else { return nil }
            guard let number = number(value) else { throw .claims("The JWT '\(key)' claim must be a number") }
            return number
        }
        if let exp = try timeClaim("exp"), time > exp + leeway { throw .expired }
        if let nbf = try timeClaim("nbf"), time + leeway < nbf { throw .notYetValid }
        if let iat = try timeClaim("iat"), time + leeway < iat { throw .issuedInFuture }
        if let aud = claims["aud"], !(aud is NSNull), !(aud is String), !((aud as? [Any])?.allSatisfy { $0 is String } ?? false) {
            throw .claims("The JWT 'aud' claim must be a string or an array of strings")
        }
        if let audience {
            let aud = claims["aud"]
            let ok = (aud as? String) == audience || ((aud as? [Any])?.contains { ($0 as? String) == audience } ?? false) || aud == nil
            guard ok else { throw .wrongAudience }
        }
        return (String(decoding: payloadBytes, as: UTF8.self), claims, verifier)
    }

    /// Signs claims as an access token: with the configured signing key of `JWT_KEYS` (its `kid`
    /// in the header; HS256 for an `oct` key), else HS256 with the secret.
    public static func sign(claims: [String: Any], keys: KeyConfig) -> String {
        if let key = keys.signingKey { return key.sign(claims: claims) }
        if let key = keys.signingSecret { return signHS256(claimsJSON: serialize(claims), secret: key.secret, keyID: key.keyID) }
        return signHS256(claimsJSON: serialize(claims), secret: keys.jwtSecret, keyID: keys.secretKeyID)
    }

    /// Verifies an access token with every key `keys` holds (see `verify(_:secret:publicKeys:…)`).
    public static func verify(
        _ token: String, keys: KeyConfig, now: Date = Date(), audience: String? = nil
    ) throws(JWTError) -> (
        json: String, claims: [String: Any], verifier: [UInt8]
    ) {
        try verify(token, secret: keys.jwtSecret, publicKeys: keys.verificationKeys, otherSecrets: keys.hmacKeys, now: now, audience: audience)
    }

    static func number(_ value: Any?) -> Double? {
        if let value = value as? Double { return value }
        if let value = value as? Int { return Double(value) }
        return nil
    }

    /// JSON text of an object, keys sorted (deterministic tokens).
    public static func serialize(_ object: Any) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
