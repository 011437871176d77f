import Auth
import Foundation
import HTTP
import JWT
import REST

/// Everything `serve` needs, resolved once from flags, environment and defaults.
public struct ServerConfig: Sendable {
    public var host = "127.0.0.1"
    public var port = 54321
    public var database: DatabaseLocation = .embedded(folder: ".onboard/postgres")
    /// Where the two LISTEN connections (Realtime's change feed, the schema-cache reload) go
    /// when `database` is a transaction pooler, which cannot LISTEN; nil → the same database.
    public var listenDatabaseURL: String?
    public var migrationsDirectory: URL = URL(fileURLWithPath: "migrations")
    public var keys: KeyConfig
    /// Access-token lifetime in seconds (GoTrue's JWT_EXP).
    public var jwtExpiry = 3600
    public var poolSize = 10
    public var limits = ServerLimits()
    public var cors = CORSConfig()
    /// Which rows belong to whom (the product's tables, `Onboarding.ownership`).
    public var ownership = Onboarding.ownership
    /// The ownership middleware (tests switch it off to show RLS alone holds).
    public var enforceOwnership = true
    /// Named prepared statements; off behind PgBouncer in transaction mode.
    public var preparedStatements = true
    /// Apply pending migrations at start (off when a one-shot `onboard migrate up` owns that and
    /// the server logs in as a role that may not read the migrations table).
    public var migrateOnStart = true
    public var auth = AuthSettings()
    /// PostgREST's `db-tx-end` (`PGRST_DB_TX_END`): `Prefer: tx` is ignored unless it allows an override.
    public var transactionEnd = TransactionEnd.commit
    /// Who may read `GET /rest/v1/` (`OPENAPI_ACCESS`).
    public var openAPIAccess = OpenAPIAccess.serviceRole

    public init(keys: KeyConfig) {
        self.keys = keys
    }
}

/// Auth-specific settings (GoTrue's names in the README).
public struct AuthSettings: Sendable {
    public var siteURL = "http://127.0.0.1:3000"
    public var bcryptCost = Password.defaultCost
    public var minimumPasswordLength = 6
    /// Sign-ins and sign-ups per window, per client and per e-mail (GoTrue's default: 30 per 5 minutes).
    public var signInLimit = RateLimit(hits: 30, window: 300)
    /// Refresh-token grants per window per client (GoTrue's default: 150 per 5 minutes).
    public var refreshLimit = RateLimit(hits: 150, window: 300)
    /// The header naming the client behind a trusted proxy (GoTrue's RATE_LIMIT_HEADER).
    public var rateLimitHeader: String?
    /// Seconds a rotated refresh token may still be used (GoTrue's reuse interval).
    public var refreshReuseInterval: Double = 10
    public var googleClientIDs: [String] = []
    public var googleJWKS: String?
    public var appleClientIDs: [String] = []
    public var appleJWKS: String?
    public init() {}
}
