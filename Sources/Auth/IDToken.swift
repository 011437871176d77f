import Foundation
import HTTP
import Identity
import Postgres
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A configured id_token provider (Google, Apple): who issues its tokens, for whom, and where
/// its signing keys are published.
public struct IDTokenProvider: Sendable {
    public var issuers: [String]
    public var clientIDs: [String]
    public var keys: JWKSSource

    public init(issuers: [String], clientIDs: [String], keys: JWKSSource) {
        self.issuers = issuers
        self.clientIDs = clientIDs
        self.keys = keys
    }

    /// The providers GoTrue's id_token grant accepts that this server implements.
    public static let builtIn = ["apple", "google"]

    public static func google(clientIDs: [String], jwks: String) -> IDTokenProvider {
        IDTokenProvider(issuers: ["https://accounts.google.com", "accounts.google.com"], clientIDs: clientIDs, keys: JWKSSource(jwks))
    }

    public static func apple(clientIDs: [String], jwks: String) -> IDTokenProvider {
        IDTokenProvider(issuers: ["https://appleid.apple.com"], clientIDs: clientIDs, keys: JWKSSource(jwks))
    }
}

/// A JWKS read from a file or fetched from an `http(s)` URL. A file is re-read when it changes; a
/// URL is cached for an hour and re-fetched early (at most once a minute) when a
/// token fails against the cached set (a key the provider rotated in), as providers rotate keys.
public final class JWKSSource: Sendable {
    public let location: String
    private let cache = Mutex<(keys: JWKSet?, loadedAt: Double, stamp: Double)>((nil, 0, 0))
    static let maxAge: Double = 3600
    static let minRefetchInterval: Double = 60

    public init(_ location: String) { self.location = location }

    var isURL: Bool { location.hasPrefix("https://") || location.hasPrefix("http://") }

    /// The current key set; `refresh` asks for a fresh copy of a URL's set (at most once a minute)
    /// when a token failed against the cached one.
    func keys(refresh: Bool = false) throws -> JWKSet {
        let now = Date().timeIntervalSince1970
        if isURL {
            let cached = cache.withLock { $0 }
            if let keys = cached.keys, now - cached.loadedAt < Self.maxAge, !(refresh && now - cached.loadedAt >= Self.minRefetchInterval) {
                return keys
            }
            let keys = try JWKSet(json: try Self.fetch(location))
            cache.withLock { $0 = (keys, now, 0) }
            return keys
        }
        let stamp = ((try? FileManager.default.attributesOfItem(atPath: location)[.modificationDate]) as? Date)?.timeIntervalSince1970 ?? 0
        if let keys = cache.withLock({ $0.stamp == stamp ? $0.keys : nil }) { return keys }
        guard let data = FileManager.default.contents(atPath: location) else { throw AuthError.unexpected("cannot read JWKS file \(location)") }
        let keys = try JWKSet(json: Array(data))
        cache.withLock { $0 = (keys, now, stamp) }
        return keys
    }

    static func fetch(_ location: String) throws -> [UInt8] {
        guard let url = URL(string: location) else { throw AuthError.unexpected("bad JWKS URL \(location)") }
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let result = Mutex<Result<[UInt8], AuthError>>(.failure(.unexpected("JWKS fetch did not finish")))
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            result.withLock {
                if let data, status == 200 {
                    $0 = .success(Array(data))
                } else {
                    $0 = .failure(.unexpected("JWKS fetch from \(location) failed: status \(status) \(error.map { "\($0)" } ?? "")"))
                }
            }
            done.signal()
        }.resume()
        done.wait()
        return try result.withLock { $0 }.get()
    }
}

extension AuthService {
    /// `grant_type=id_token` (GoTrue's native Google/Apple sign-in): the token's signature against
    /// the provider's JWKS, its issuer, audience, expiry and nonce; then the user found by the
    /// identity, linked by a verified e-mail, or created.
    func signInWithIDToken(_ grant: AuthRequest.IDTokenGrant) throws -> HTTPResponse {
        guard let idToken = grant.idToken, !idToken.isEmpty else { throw AuthError.validationFailed("id_token required") }
        guard let name = grant.provider, !name.isEmpty else {
            throw AuthError.validationFailed("provider or client_id and issuer required")
        }
        guard IDTokenProvider.builtIn.contains(name) else { throw AuthError.validationFailed("Custom OIDC provider \"\(name)\" not allowed") }
        guard let provider = config.providers[name] else { throw AuthError.providerDisabled(name) }

        let claims = try verifiedClaims(idToken, provider: provider)
        guard let subject = claims["sub"] as? String, !subject.isEmpty else { throw AuthError.idToken("Missing sub claim in id_token") }
        let audiences = (claims["aud"] as? String).map { [$0] } ?? (claims["aud"] as? [String]) ?? []
        guard audiences.contains(where: provider.clientIDs.contains) else { throw AuthError.idToken("Unacceptable audience in id_token") }
        let tokenNonce = claims["nonce"] as? String ?? ""
        let givenNonce = grant.nonce ?? ""
        if tokenNonce.isEmpty != givenNonce.isEmpty {
            throw AuthError.idToken("Passed nonce and nonce in id_token should either both exist or not.")
        }
        if !tokenNonce.isEmpty && Crypto.hex(Crypto.sha256(Array(givenNonce.utf8))) != tokenNonce {
            throw AuthError.idTokenNonce
        }
        return .json(.ok, try signInExternal(provider: name, subject: subject, claims: claims))
    }

    /// The claims of a token whose signature, issuer and times hold; everything else is "Bad ID token".
    func verifiedClaims(_ token: String, provider: IDTokenProvider) throws -> [String: Any] {
        let claims: [String: Any]
        let keys = try provider.keys.keys()
        do {
            do {
                claims = try JWT.verify(token, keys: keys)
            } catch .badSignature where provider.keys.isURL {
                // Perhaps a key the cached set does not have yet (rotation): one fresh look.
                claims = try JWT.verify(token, keys: (try? provider.keys.keys(refresh: true)) ?? keys)
            }
        } catch {
            logger.info("id_token refused", metadata: ["reason": "\(error.message)"])
            throw AuthError.badIDToken
        }
        guard let issuer = claims["iss"] as? String, provider.issuers.contains(issuer) else {
            logger.info("id_token refused", metadata: ["reason": "issuer \(claims["iss"] ?? "none")"])
            throw AuthError.badIDToken
        }
        return claims
    }

    /// Signs in the user of (provider, subject); links a verified e-mail's existing account, or
    /// creates the user. One transaction.
    func signInExternal(provider: String, subject: String, claims: [String: Any]) throws -> String {
        let email = (claims["email"] as? String)?.lowercased()
        let verified = (claims["email_verified"] as? Bool) ?? ((claims["email_verified"] as? String) == "true")
        var identity: [String: Any] = [
            "iss": claims["iss"] ?? "", "sub": subject, "provider_id": subject,
            "email_verified": verified, "phone_verified": false
        ]
        if let email { identity["email"] = email }
        for key in ["name", "picture", "given_name", "family_name"] { if let value = claims[key] { identity[key] = value } }
        if let name = claims["name"] { identity["full_name"] = name }
        if let picture = claims["picture"] { identity["avatar_url"] = picture }
        let identityJSON = JWT.serialize(identity)
        return try pool.withTransaction { connection in
            var userID = try Identities.touch(connection, provider: provider, subject: subject, identityJSON: identityJSON)
            if userID == nil, let email, verified {
                // GoTrue links a verified e-mail to the account that already has it.
                userID = try Users.lockLinkable(connection, email: email)
                if let userID { try Users.linkProvider(connection, id: userID, provider: provider) }
            }
            if userID == nil {
                // A new user; an unverified e-mail that another account holds is not taken over.
                let newID = UUID().uuidString.lowercased()
                let appMetadata = JWT.serialize(["provider": provider, "providers": [provider]])
                try Users.createExternal(connection, id: newID, email: email, verified: verified, appMetadataJSON: appMetadata, metadataJSON: identityJSON)
                userID = newID
            }
            guard let userID else { throw AuthError.unexpected("no user") }
            try Identities.insertIfAbsent(connection, provider: provider, subject: subject, userID: userID, identityJSON: identityJSON)
            let session = try startSession(connection, userID: userID, method: "oauth")
            return session
        }
    }
}
