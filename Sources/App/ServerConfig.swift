import Analytics
import Auth
import Foundation
import HTTP
import Identity
import REST
import Realtime
import Storage

/// Everything `serve` needs, resolved once from flags, environment and defaults.
public struct ServerConfig: Sendable {
    public var host = "127.0.0.1"
    public var port = 54321
    public var database: DatabaseLocation = .embedded(folder: ".onboard/postgres")
    /// Where the direct connections go (Realtime's change feed: a replication connection, or a
    /// LISTEN one for the trigger feed; the schema-cache reload's LISTEN) when `database` is a
    /// transaction pooler, which can do neither; nil → the same database.
    public var listenDatabaseURL: String?
    /// The role REST's requests log in as (`DB_REQUEST_ROLE`, PostgREST's `authenticator`), with
    /// the database's URL otherwise (the database's own user name: that login, with all of its
    /// rights, and a warning at start when it is a superuser).
    public var requestRole = "authenticator"
    /// `DB_REQUEST_PASSWORD`: that role's password, set on it at start (as Supabase's images give
    /// it the database's password) and used to log in; nil: libpq's `PGPASSWORD` or password file.
    public var requestPassword: String?
    /// Realtime's change feed: the WAL when the database can stream it, else the triggers.
    public var realtimeFeed = RealtimeFeedChoice.auto
    /// Hot standbys for REST reads (`DATABASE_READ_URLS`, `DB_READ_MAX_LAG`); none by default.
    public var readReplicas = ReadReplicaConfig()
    public var migrationsDirectory: URL = URL(fileURLWithPath: "migrations")
    /// The JWT secret and the two API keys (kept in `auth`, which signs with them).
    public var keys: KeyConfig {
        get { auth.keys }
        set { auth.keys = newValue }
    }
    public var poolSize = 10
    /// Connections in libpq's pipeline mode that the I/O thread's REST requests use without a
    /// worker (0: every request goes through a worker and `poolSize`'s pool). Few suffice, as
    /// each carries many requests at once: more backends cost PostgreSQL more context switches
    /// than they save, fewer leave commits (each waits for its WAL flush, one after the other on
    /// a connection) too few to share a flush. Off by default behind PgBouncer
    /// (`preparedStatements` false), which pipelining through it has not been shown to survive.
    public var pipelineConnections: Int? = nil
    public var effectivePipelineConnections: Int { pipelineConnections ?? (preparedStatements ? 8 : 0) }
    /// `DB_PIPELINE_READ_CONNECTIONS`: the primary's pipelined connections for reads alone (and
    /// each standby's); nil: one per core of this machine, 2 to 8 (none without the pipelined
    /// connections at all). `0`: reads share the connections above.
    public var pipelineReadConnections: Int? = nil
    public var effectivePipelineReadConnections: Int {
        guard effectivePipelineConnections > 0 else { return 0 }
        return pipelineReadConnections ?? min(max(ProcessInfo.processInfo.activeProcessorCount, 2), 8)
    }
    public var limits = ServerLimits()
    public var cors = Gateway.cors()
    /// Which rows belong to whom (the product's tables, `Onboarding.ownership`).
    public var ownership = Onboarding.ownership
    /// The ownership middleware (tests switch it off to show RLS alone holds).
    public var enforceOwnership = true
    /// Named prepared statements; off behind PgBouncer in transaction mode.
    public var preparedStatements = true
    /// Apply pending migrations at start (off when a one-shot `onboard migrate up` owns that and
    /// the server logs in as a role that may not read the migrations table).
    public var migrateOnStart = true
    /// GoTrue's settings: token lifetime, bcrypt, rate limits, id_token providers.
    public var auth: AuthConfig
    /// How long a Realtime join waits for the change feed to listen before it is refused.
    public var realtimeFeedWait: Double = 15
    /// Broadcast and presence messages per second per Realtime socket
    /// (`REALTIME_MAX_EVENTS_PER_SECOND`), and the largest broadcast payload in bytes
    /// (`REALTIME_MAX_PAYLOAD_BYTES`).
    public var realtimeMaxEventsPerSecond = 100
    public var realtimeMaxPayloadBytes = 3_000_000
    /// `REALTIME_PRIVATE_ONLY`: only private channels may be joined (Supabase's "allow public
    /// access" off).
    public var realtimePrivateOnly = false
    /// Who may read `GET /rest/v1/` (`OPENAPI_ACCESS`).
    public var openAPIAccess = OpenAPIAccess.serviceRole
    /// PostgREST's `db-aggregates-enabled` (`PGRST_DB_AGGREGATES_ENABLED`): aggregates in `select`.
    public var aggregatesEnabled = false
    /// PostgREST's settings from the environment (`PGRST_DB_MAX_ROWS`, …); the database's
    /// `pgrst.*` settings are laid over them at start and on `NOTIFY pgrst, 'reload config'`.
    public var postgrest = PostgRESTSettings()
    /// Storage: where the objects' bytes go (`STORAGE_DIR`; by default `storage` beside the
    /// embedded cluster's folder, or `.onboard/storage`) and the largest upload (`STORAGE_MAX_FILE_SIZE`).
    public var storage = StorageConfig(directory: URL(fileURLWithPath: ".onboard/storage"))
    /// The operators' dashboard at `/dashboard/` (off unless a way to sign in is configured).
    public var dashboard = DashboardConfig()

    /// Product analytics (PostHog's protocols): the project and secret keys, the limits.
    public var analytics: AnalyticsConfig

    public init(keys: KeyConfig) {
        auth = AuthConfig(keys: keys)
        let derived = AnalyticsConfig.derivedKeys(jwtSecret: keys.jwtSecret)
        analytics = AnalyticsConfig(projectKey: derived.projectKey, secretKey: derived.secretKey)
    }
}
