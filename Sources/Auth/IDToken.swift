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
        switch BlockingFetch.exchange(request) {
        case .success(let answer) where answer.status == 200:
            return answer.body
        case .success(let answer):
            throw AuthError.unexpected("JWKS fetch from \(location) failed: status \(answer.status)")
        case .failure(let error):
            throw AuthError.unexpected("JWKS fetch from \(location) failed: \(error)")
        }
    }
}

extension AuthService {
    /// `grant_type=id_token` (GoTrue's native Google/Apple sign-in): the token's signature against
    /// the provider's JWKS, its issuer, audience, expiry and nonce; then the user found by the
    /// identity, linked by a verified e-mail, or created. With `link_identity`, the identity is
    /// linked to the bearer's user instead (GoTrue's `linkIdentityToUser`).
    func signInWithIDToken(_ grant: AuthRequest.IDTokenGrant, request: HTTPRequest) throws -> HTTPResponse {
        guard let idToken = grant.idToken, !idToken.isEmpty else { throw AuthError.validationFailed("id_token required") }
        guard let name = grant.provider, !name.isEmpty else {
            throw AuthError.validationFailed("provider or client_id and issuer required")
        }
        var linkTo: String?
        if grant.linkIdentity {
            guard request.headers["Authorization"] != nil else {
                throw AuthError.idToken("Linking requires a valid user access token in Authorization")
            }
            linkTo = try signedIn(request).userID
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
        if let linkTo { return .json(.ok, try linkExternal(provider: name, subject: subject, claims: claims, to: linkTo)) }
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
    /// creates the user. One transaction, which `finish` ends (by default a new session, whose
    /// JSON is returned; the redirect flow's PKCE issues a code instead).
    func signInExternal(
        provider: String, subject: String, claims: [String: Any], finish: ((Connection, String) throws -> String)? = nil
    ) throws -> String {
        let (identityJSON, email, verified) = Self.identityData(subject: subject, claims: claims)
        return try pool.withTransaction { connection in
            var userID = try Identities.touch(connection, provider: provider, subject: subject, identityJSON: identityJSON)
            if userID == nil, let email, verified {
                // GoTrue links a verified e-mail to the account that already has it.
                userID = try Users.lockLinkable(connection, email: email)
                if let userID { try Users.linkProvider(connection, id: userID, provider: provider) }
            }
            if userID == nil {
                guard !config.disableSignup else { throw AuthError.signupDisabled }
                // A new user; an unverified e-mail that another account holds is not taken over.
                let newID = UUID().uuidString.lowercased()
                let appMetadata = JWT.serialize(["provider": provider, "providers": [provider]])
                try Users.createExternal(connection, id: newID, email: email, verified: verified, appMetadataJSON: appMetadata, metadataJSON: identityJSON)
                try userCreated(connection, userID: newID)
                userID = newID
            }
            guard let userID else { throw AuthError.unexpected("no user") }
            if try Users.isBanned(connection, id: userID) { throw AuthError.userBanned("User is banned", status: .forbidden) }
            try Identities.insertIfAbsent(connection, provider: provider, subject: subject, userID: userID, identityJSON: identityJSON)
            if let finish { return try finish(connection, userID) }
            return try startSession(connection, userID: userID, method: "oauth")
        }
    }

    /// The identity data GoTrue keeps from an id_token's claims, and its e-mail (lower-cased) and
    /// whether the provider verified it.
    static func identityData(subject: String, claims: [String: Any]) -> (json: String, email: String?, verified: Bool) {
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
        return (JWT.serialize(identity), email, verified)
    }

    /// Links (provider, subject) to `userID` and answers a new session of that user: same id,
    /// same data. A user without an e-mail takes the identity's (unless another user holds it:
    /// 400 `email_exists`); a verified one confirms the user and ends its anonymity, an
    /// unverified one is mailed a confirmation and answered 422 `email_not_confirmed` (the link
    /// stays, as in GoTrue). An identity linked already: 422 `identity_already_exists`.
    /// `finish` ends the transaction as in `signInExternal`.
    func linkExternal(
        provider: String, subject: String, claims: [String: Any], to userID: String, finish: ((Connection, String) throws -> String)? = nil
    ) throws -> String {
        let (identityJSON, email, verified) = Self.identityData(subject: subject, claims: claims)
        enum Outcome {
            case session(String)
            case unconfirmed(OutgoingMail)
        }
        let outcome: Outcome
        do {
            outcome = try pool.withTransaction { connection -> Outcome in
                guard let user = try Users.lockForUpdate(connection, id: userID) else { throw AuthError.userFromTokenNotFound }
                if let owner = try Identities.owner(connection, provider: provider, subject: subject) {
                    throw AuthError.identityAlreadyExists(owner == userID ? "Identity is already linked" : "Identity is already linked to another user")
                }
                try Identities.insert(connection, provider: provider, subject: subject, userID: userID, identityJSON: identityJSON)
                var mail: OutgoingMail?
                if (user.email ?? "").isEmpty {
                    if let email, !email.isEmpty {
                        guard try !Users.emailTaken(connection, email: email, byOtherThan: userID) else { throw AuthError.linkedEmailExists }
                        try Users.takeLinkedEmail(connection, id: userID, email: email, verified: verified)
                        if !verified, let row = try Users.lockForMail(connection, id: userID) {
                            mail = try confirmationMail(connection, row, pkce: nil, redirectTo: config.siteURL)
                        }
                    } else {
                        // No e-mail to take (GoTrue would fail to mail a confirmation): the
                        // identity is the user's way to sign in, so the user is no longer anonymous.
                        try Users.endAnonymity(connection, id: userID)
                    }
                }
                try Users.updateProviders(connection, id: userID)
                if let mail { return .unconfirmed(mail) }
                if let finish { return .session(try finish(connection, userID)) }
                return .session(try startSession(connection, userID: userID, method: "oauth"))
            }
        } catch let error as PostgresError where error.sqlState == "23505" {
            // A concurrent link of the same identity committed first.
            throw AuthError.identityAlreadyExists("Identity is already linked to another user")
        }
        switch outcome {
        case .session(let json):
            return json
        case .unconfirmed(let mail):
            send([mail])
            throw AuthError.linkedEmailNotConfirmed(provider: provider)
        }
    }

    /// `DELETE /user/identities/{identity_id}`: never the last identity; the user's e-mail
    /// follows its remaining identities as GoTrue's `UpdateUserEmailFromIdentities` does, and
    /// `app_metadata.providers` is recomputed.
    func unlinkIdentity(_ caller: SignedIn, identityID: String?) throws -> HTTPResponse {
        let userID = caller.userID
        guard let identityID else { throw AuthError.identityIDNotUUID }
        do {
            try pool.withTransaction { connection in
                guard let user = try Users.lockForUpdate(connection, id: userID) else { throw AuthError.userFromTokenNotFound }
                let identities = try Identities.list(connection, userID: userID)
                guard identities.count > 1 else { throw AuthError.singleIdentityNotDeletable }
                guard identities.contains(where: { $0.id == identityID }) else { throw AuthError.identityNotFound }
                try Identities.delete(connection, id: identityID)
                let remaining = identities.filter { $0.id != identityID }
                let current = (user.email ?? "").lowercased()
                if !remaining.contains(where: { $0.email == current }) {
                    // Verified e-mails first, then unverified ones, then none; oldest first.
                    let ranked = remaining.sorted { a, b in
                        let rank = { (i: Identities.Summary) in i.email.isEmpty ? 2 : (i.verified ? 0 : 1) }
                        return rank(a) != rank(b) ? rank(a) < rank(b) : a.order < b.order
                    }
                    var chosen: Identities.Summary?
                    for candidate in ranked where try candidate.email.isEmpty || !Users.emailTaken(connection, email: candidate.email, byOtherThan: userID) {
                        chosen = candidate
                        break
                    }
                    guard let chosen else { throw AuthError.emailConflictIdentityNotDeletable }
                    try Users.replaceEmail(
                        connection, id: userID, email: chosen.email.isEmpty ? nil : chosen.email,
                        confirmed: !chosen.email.isEmpty && (chosen.verified || config.mail.autoconfirm))
                }
                try Users.updateProviders(connection, id: userID)
            }
        } catch let error as PostgresError where error.sqlState == "23505" {
            throw AuthError.emailConflictIdentityNotDeletable
        }
        return .json(.ok, "{}")
    }
}
