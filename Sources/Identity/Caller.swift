import Foundation

/// The configured secret and API keys (Supabase's self-hosting names them JWT_SECRET, ANON_KEY,
/// SERVICE_ROLE_KEY).
public struct KeyConfig: Sendable {
    public var jwtSecret: [UInt8]
    public var anonKey: String
    public var serviceRoleKey: String

    public init(jwtSecret: String, anonKey: String, serviceRoleKey: String) {
        self.jwtSecret = Array(jwtSecret.utf8)
        self.anonKey = anonKey
        self.serviceRoleKey = serviceRoleKey
    }
}

/// Who is calling: the database role a request runs as, and the claims it carries.
public struct Caller: Sendable, Equatable {
    public var role: String
    /// The claims as JSON text, handed to PostgreSQL as `request.jwt.claims`.
    public var claimsJSON: String
    /// `sub` as a UUID, for a user's token.
    public var userID: UUID?
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
        userID = (claims["sub"] as? String).flatMap(UUID.init(uuidString:))
        sessionID = (claims["session_id"] as? String).flatMap(UUID.init(uuidString:))
        isAnonymousUser = (claims["is_anonymous"] as? Bool) ?? false
    }

    public init(role: String, claimsJSON: String, userID: UUID?, sessionID: UUID?, isAnonymousUser: Bool) {
        self.role = role
        self.claimsJSON = claimsJSON
        self.userID = userID
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
    /// The apikey must be the anon or service-role key. The bearer may be either key itself (the
    /// clients send the anon key as bearer until sign-in) or an HS256 JWT signed with the secret,
    /// whose `role` claim names the database role. Without a bearer the apikey decides.
    public static func resolve(apikey: String?, bearer: String?, keys: KeyConfig, now: Date = Date()) throws(CredentialError) -> Caller {
        guard let apikey, !apikey.isEmpty else { throw .noAPIKey }
        let keyCaller: Caller
        if Crypto.constantTimeEquals(Array(apikey.utf8), Array(keys.anonKey.utf8)) {
            keyCaller = .anon
        } else if Crypto.constantTimeEquals(Array(apikey.utf8), Array(keys.serviceRoleKey.utf8)) {
            keyCaller = .serviceRole
        } else {
            throw .invalidAPIKey
        }
        guard let bearer, !bearer.isEmpty else { return keyCaller }
        if Crypto.constantTimeEquals(Array(bearer.utf8), Array(keys.anonKey.utf8)) { return .anon }
        if Crypto.constantTimeEquals(Array(bearer.utf8), Array(keys.serviceRoleKey.utf8)) { return .serviceRole }
        let seconds = now.timeIntervalSince1970
        if let cached = VerifiedTokens.shared.caller(for: bearer, secret: keys.jwtSecret, now: seconds) { return cached }
        do {
            let verified = try JWT.verifyHS256(bearer, secret: keys.jwtSecret, now: now)
            let caller = Caller(claimsJSON: verified.json, claims: verified.claims)
            VerifiedTokens.shared.remember(bearer, secret: keys.jwtSecret, caller: caller, claims: verified.claims, now: seconds)
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
