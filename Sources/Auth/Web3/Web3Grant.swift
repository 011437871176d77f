import Foundation
import HTTP
import Identity
import Postgres

/// `POST /token?grant_type=web3` (GoTrue's `Web3Grant`): a Sign-In with Ethereum or Solana
/// message and its signature; the wallet's user found by its `web3` identity
/// (`web3:<chain>:<address>`) or created, and a session whose `amr` is `web3`.
extension AuthService {
    func signInWithWeb3(_ grant: AuthRequest.Web3Grant, request: HTTPRequest) throws -> HTTPResponse {
        let chain: Web3Chain
        switch grant.chain {
        case "solana": chain = .solana
        case "ethereum": chain = .ethereum
        default: throw AuthError.web3UnsupportedChain
        }
        guard config.web3.enabled(chain) else { throw AuthError.web3ProviderDisabled("\(chain.displayName) Web3 provider is disabled") }
        let verifier = Web3SignIn(
            redirects: RedirectPolicy(siteURL: config.siteURL, allowList: config.mail.allowList), maximumValidity: config.web3.maximumValidity(chain))
        let message = try verifier.verify(chain: chain, message: grant.message, signature: grant.signature, now: Date().timeIntervalSince1970)
        let subject = "web3:\(chain.rawValue):\(message.address)"
        let identityJSON = JWT.serialize([
            "sub": subject, "email_verified": false, "phone_verified": false,
            "custom_claims": [
                "address": message.address, "chain": chain.rawValue, "network": message.chainID, "domain": message.domain,
                // GoTrue's SIWE statement is a pointer (null when absent), its SIWS one a string.
                "statement": message.statement ?? (chain == .ethereum ? NSNull() : "") as Any
            ] as [String: Any]
        ])
        let digest = Crypto.sha256(Array(message.raw.utf8))
        let usableUntil = verifier.lastValidMoment(message)
        do {
            return .json(.ok, try web3Session(chain: chain, subject: subject, identityJSON: identityJSON, digest: digest, usableUntil: usableUntil))
        } catch let error as PostgresError where error.sqlState == "23505" {
            // A first sign-in of the same wallet committed its identity meanwhile: this one now finds it.
            return .json(.ok, try web3Session(chain: chain, subject: subject, identityJSON: identityJSON, digest: digest, usableUntil: usableUntil))
        }
    }

    /// One transaction: the message marked used (a message signs in once), the identity's user
    /// found (its data and metadata refreshed) or created, and the session.
    private func web3Session(chain: Web3Chain, subject: String, identityJSON: String, digest: [UInt8], usableUntil: Double) throws -> String {
        try pool.withTransaction { connection in
            guard try Web3Messages.markUsed(connection, digest: digest, until: usableUntil) else {
                throw AuthError.oauth("invalid_grant", description: "Signed \(chain.displayName) message has already been used")
            }
            let provider = "web3"
            var userID = try Identities.touch(connection, provider: provider, subject: subject, identityJSON: identityJSON)
            if let found = userID {
                try Users.mergeMetadata(connection, id: found, metadataJSON: identityJSON)
                try Users.updateProviders(connection, id: found)
            } else {
                guard !config.disableSignup else { throw AuthError.signupDisabled }
                let newID = UUID().uuidString.lowercased()
                let appMetadata = JWT.serialize(["provider": provider, "providers": [provider]])
                try Users.createExternal(connection, id: newID, email: nil, verified: false, appMetadataJSON: appMetadata, metadataJSON: identityJSON)
                try Identities.insert(connection, provider: provider, subject: subject, userID: newID, identityJSON: identityJSON)
                try userCreated(connection, userID: newID)
                userID = newID
            }
            guard let userID else { throw AuthError.unexpected("no user") }
            if try Users.isBanned(connection, id: userID) { throw AuthError.userBanned("User is banned", status: .forbidden) }
            return try startSession(connection, userID: userID, method: "web3")
        }
    }
}

/// `auth.web3_used_messages`: the signed messages that started a session, by their SHA-256.
enum Web3Messages {
    /// Marks the message used until `until` (seconds since 1970); false when it was used already
    /// and is still within its window. Clears up to 100 rows whose window has passed, skipping
    /// rows another transaction holds.
    static func markUsed(_ connection: Connection, digest: [UInt8], until: Double) throws -> Bool {
        _ = try connection.query(
            """
            DELETE FROM auth.web3_used_messages WHERE digest IN (
                SELECT digest FROM auth.web3_used_messages WHERE expires_at < now() LIMIT 100 FOR UPDATE SKIP LOCKED)
            """)
        return try !connection.query(
            """
            INSERT INTO auth.web3_used_messages (digest, expires_at)
            VALUES (decode(\(Crypto.hex(digest)), 'hex'), to_timestamp(\(until)::double precision))
            ON CONFLICT (digest) DO UPDATE SET expires_at = excluded.expires_at WHERE web3_used_messages.expires_at < now()
            RETURNING 1
            """
        ).isEmpty
    }
}
