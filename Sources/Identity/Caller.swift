import Foundation

/// The configured secret and API keys (Supabase's self-hosting names them JWT_SECRET, ANON_KEY,
/// SERVICE_ROLE_KEY), the asymmetric token keys (`JWT_KEYS`) and the opaque API keys.
public struct KeyConfig: Sendable {
    public var jwtSecret: [UInt8]
    public var anonKey: String
    public var serviceRoleKey: String
    /// The `JWT_KEYS` key whose `key_ops` include `sign`: it signs access tokens (nil: HS256 with
    /// the secret).
    public var signingKey: SigningKey?
    /// Every public key of `JWT_KEYS`: tokens signed by any of them are accepted, so a rotation
    /// keeps tokens of the previous key valid until they expire. Published at `/.well-known/jwks.json`.
    public var verificationKeys = JWKSet(keys: [])
    /// `JWT_KEYS`' `oct` keys: HS256 secrets accepted beside `jwtSecret` (never published).
    public var hmacKeys: [HMACKey] = []
    /// The `JWT_KEYS` `oct` key that signs (HS256, its `kid` in the header), when the signing key is one.
    public var signingSecret: HMACKey?
    /// `JWT_KEY_ID`: the `kid` of HS256 tokens' header (none when nil).
    public var secretKeyID: String?
    /// `PUBLISHABLE_KEYS`: opaque `sb_publishable_…` keys, accepted like the anon key.
    public var publishableKeys: [String] = []
    /// `SECRET_KEYS`: opaque `sb_secret_…` keys, accepted like the service-role key.
    public var secretKeys: [String] = []

    public init(jwtSecret: String, anonKey: String, serviceRoleKey: String) {
        self.jwtSecret = Array(jwtSecret.utf8)
        self.anonKey = anonKey
        self.serviceRoleKey = serviceRoleKey
    }

    /// The role an API key (or a bearer that is one) stands for: `anon` for the anon key and
    /// publishable keys, `service_role` for the service-role key and secret keys.
    /// Every request asks this once or twice, so the key is compared in place (no copies).
    public func role(ofKey key: String) -> Caller? {
        if Crypto.constantTimeEquals(key, anonKey) || publishableKeys.contains(where: { Crypto.constantTimeEquals(key, $0) }) { return .anon }
        if Crypto.constantTimeEquals(key, serviceRoleKey) || secretKeys.contains(where: { Crypto.constantTimeEquals(key, $0) }) { return .serviceRole }
        return nil
    }

    /// Reads `JWT_KEYS` (GoTrue's `GOTRUE_JWT_KEYS`): a JSON array of JWKs (or a JWKS object), EC
    /// P-256, RSA or `oct` (an HS256 secret), each with a `kid`. The first with `sign` in its
    /// `key_ops` (and its private part) signs; every one verifies. Throws a message naming what
    /// is wrong.
    public static func jwtKeys(_ json: String) throws(KeyError) -> JWTKeys {
        let parsed = try? JSONSerialization.jsonObject(with: Data(json.utf8))
        guard let list = (parsed as? [[String: Any]]) ?? ((parsed as? [String: Any])?["keys"] as? [[String: Any]]) else {
            throw KeyError("JWT_KEYS must be a JSON array of JWKs")
        }
        var keys = JWTKeys()
        var signs = false
        var published: [JWK] = []
        for (index, jwk) in list.enumerated() {
            guard let kid = jwk["kid"] as? String, !kid.isEmpty else { throw KeyError("JWT_KEYS[\(index)] has no kid") }
            let operations = jwk["key_ops"] as? [String] ?? []
            let signer = !signs && operations.contains("sign")
            if jwk["kty"] as? String == "oct" {
                guard let secret = (jwk["k"] as? String).flatMap({ Base64URL.decode(Substring($0)) }), secret.count >= 16 else {
                    throw KeyError("JWT_KEYS[\(index)] (\(kid)) is an oct key without a k of 16 bytes or more")
                }
                let key = HMACKey(keyID: kid, secret: secret)
                keys.hmac.append(key)
                if signer { keys.signingSecret = key }
                signs = signs || signer
                continue
            }
            guard let publicKey = PublicKey.from(jwk: jwk) else {
                throw KeyError("JWT_KEYS[\(index)] (\(kid)) is not an EC P-256, RSA (2048 bits or more) or oct key")
            }
            published.append(JWK(keyID: kid, algorithm: publicKey.kind == .rsa ? "RS256" : "ES256", key: publicKey))
            if signer {
                guard let key = SigningKey(privateJWK: jwk) else {
                    throw KeyError("JWT_KEYS[\(index)] (\(kid)) signs but its private part is missing or wrong")
                }
                keys.signing = key
                signs = true
            }
        }
        keys.verification = JWKSet(keys: published)
        return keys
    }

    /// Takes `JWT_KEYS`' keys.
    public mutating func use(_ keys: JWTKeys) {
        signingKey = keys.signing
        signingSecret = keys.signingSecret
        verificationKeys = keys.verification
        hmacKeys = keys.hmac
    }
}

/// An HS256 secret with its `kid` (a `JWT_KEYS` `oct` key).
public struct HMACKey: Sendable, Equatable {
    public var keyID: String
    public var secret: [UInt8]

    public init(keyID: String, secret: [UInt8]) {
        self.keyID = keyID
        self.secret = secret
    }
}

/// What `JWT_KEYS` holds, sorted for use.
public struct JWTKeys: Sendable {
    /// The asymmetric key that signs, if the signing key is one.
    public var signing: SigningKey?
    /// The HS256 key that signs, if the signing key is one.
    public var signingSecret: HMACKey?
    /// The public keys, published and accepted.
    public var verification = JWKSet(keys: [])
    /// The HS256 keys, accepted (never published).
    public var hmac: [HMACKey] = []

    public init() {}
}

/// A configured key that cannot be used.
public struct KeyError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Who is calling: the database role a request runs as, and the claims it carries.
public struct Caller: Sendable, Equatable {
    public var role: String
    /// The claims as JSON text, handed to PostgreSQL as `request.jwt.claims`.
    public var claimsJSON: String
    /// `sub` as a UUID, for a user's token.
    public var userID: UUID?
    /// `sub` as the token says it (nil without one).
    public var subject: String?
    public var sessionID: UUID?
    public var isAnonymousUser: Bool

    public static let anon = Caller(role: "anon", claimsJSON: #"{"role":"anon"}"#, userID: nil, sessionID: nil, isAnonymousUser: false)
    public static let serviceRole = Caller(role: "service_role", claimsJSON: #"{"role":"service_role"}"#, userID: nil, sessionID: nil, isAnonymousUser: false)

    public var isServiceRole: Bool { role == "service_role" }
    public var isAuthenticatedUser: Bool { role == "authenticated" && userID != nil }

    /// A caller from verified token claims.
    public init(claimsJSON: String, claims: [String: Any], defaultRole: String = "anon") {
        role = (claims["role"] as? String) ?? defaultRole
        self.claimsJSON = claimsJSON
        subject = claims["sub"] as? String
        userID = subject.flatMap(UUID.init(uuidString:))
        sessionID = (claims["session_id"] as? String).flatMap(UUID.init(uuidString:))
        isAnonymousUser = (claims["is_anonymous"] as? Bool) ?? false
    }

    public init(role: String, claimsJSON: String, userID: UUID?, sessionID: UUID?, isAnonymousUser: Bool) {
        self.role = role
        self.claimsJSON = claimsJSON
        self.userID = userID
        self.subject = userID.map { $0.uuidString.lowercased() }
        self.sessionID = sessionID
        self.isAnonymousUser = isAnonymousUser
    }
}

public enum CredentialError: Error, Equatable, Sendable {
    /// No `apikey` header or query parameter.
    case noAPIKey
    /// An `apikey` that is neither configured key.
    case invalidAPIKey
    /// A bearer token that failed verification.
    case token(JWTError)
}

public enum Credentials {
    /// Resolves the caller from the `apikey` and the `Authorization: Bearer` token.
    ///
    /// The apikey must be the anon or service-role key (or a publishable or secret key). The bearer
    /// may be such a key itself (the clients send the anon key as bearer until sign-in) or a JWT
    /// signed with the secret or a `JWT_KEYS` key, whose `role` claim names the database role.
    /// Without a bearer the apikey decides.
    /// `audience` (PostgREST's `jwt-aud`): a token with an `aud` must name it.
    public static func resolve(
        apikey: String?, bearer: String?, keys: KeyConfig, now: Date = Date(), audience: String? = nil
    ) throws(CredentialError) -> Caller {
        guard let apikey, !apikey.isEmpty else { throw .noAPIKey }
        guard let keyCaller = keys.role(ofKey: apikey) else { throw .invalidAPIKey }
        guard let bearer, !bearer.isEmpty else { return keyCaller }
        if let bearerKey = keys.role(ofKey: bearer) { return bearerKey }
        return try verifiedCaller(bearer, keys: keys, now: now, audience: audience)
    }

    /// The caller of a token signed with the secret or a `JWT_KEYS` key (remembered until it
    /// expires: see `VerifiedTokens`; with an `audience` to check, verified every time).
    public static func verifiedCaller(_ token: String, keys: KeyConfig, now: Date = Date(), audience: String? = nil) throws(CredentialError) -> Caller {
        let seconds = now.timeIntervalSince1970
        let remembered = VerifiedTokens.key(for: token)
        if audience == nil, let cached = VerifiedTokens.shared.caller(for: remembered, keys: keys, now: seconds) { return cached }
        do {
            let verified = try JWT.verify(token, keys: keys, now: now, audience: audience)
            let caller = Caller(claimsJSON: verified.json, claims: verified.claims)
            VerifiedTokens.shared.remember(remembered, verifier: verified.verifier, caller: caller, claims: verified.claims, now: seconds)
            return caller
        } catch {
            throw .token(error)
        }
    }

    /// The token of an `Authorization: Bearer …` header value (scheme in any case, spaces and
    /// tabs around it ignored).
    public static func bearerToken(_ header: String?) -> String? {
        guard let header else { return nil }
        let bytes = header.utf8
        let isBlank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else { return nil }
        let trimmed = bytes[first...last]
        guard trimmed.count > 7 else { return nil }
        let scheme = trimmed.prefix(7)
        guard zip(scheme, "bearer ".utf8).allSatisfy({ ($0 | 0x20) == $1 }) else { return nil }
        let rest = trimmed.dropFirst(7)
        guard let start = rest.firstIndex(where: { !isBlank($0) }) else { return nil }
        return String(Substring(header.utf8[start...last]))
    }
}
