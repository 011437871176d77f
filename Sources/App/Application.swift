import Analytics
import Auth
import EventLoop
import Foundation
import HTTP
import Identity
import Logging
import Migrations
import Postgres
import REST
import Realtime
import Storage
import Synchronization

/// The one place that composes the layers: database, migrations, pool, schema cache, routes and
/// the HTTP server.
public final class Application: Sendable {
    public let config: ServerConfig
    public let server: HTTPServer
    /// REST's connections, logged in as the request role (`RequestLogin`).
    public let pool: Pool
    /// The database's own login, for what needs its rights: Auth's tables, Realtime's
    /// bookkeeping, the dashboard, the migrations' status.
    public let adminPool: Pool
    /// How requests log in (their URL and role).
    public let requestLogin: RequestLogin
    /// The pipelined connections the I/O thread answers plain REST requests on.
    public let pipeline: PipelineClient
    /// The primary's pipelined connections for reads, when they have their own
    /// (`DB_PIPELINE_READ_CONNECTIONS`; see `RESTService.routedSubmit`).
    public let readPipeline: PipelineClient?
    public let database: PreparedDatabase
    let schema: SchemaCacheStore
    public let rest: RESTService
    public let realtime: RealtimeService
    public let changeFeed: ChangeFeed
    /// Broadcast and presence of every server (the notifications on `realtime_messages`).
    public let messageFeed: MessageFeed
    /// The process's one LISTEN connection: Broadcast's and the trigger feed's notifications,
    /// and PostgREST's `pgrst` channel.
    public let listener: NotificationListener
    public let mailer: Mailer
    /// The hot standbys REST reads go to (nil without `DATABASE_READ_URLS`).
    public let readReplicas: ReadReplicas?
    let logger: Logger
    private let stopping = Atomic<Bool>(false)

    /// Prepares the database (embedded or URL), applies pending migrations, loads the schema
    /// cache and starts listening.
    public static func start(_ config: ServerConfig, logger: Logger) throws -> Application {
        let database = try DatabaseBootstrap.prepare(config.database, logger: logger)
        do {
            let admin = try Connection(conninfo: database.url)
            if config.migrateOnStart {
                let applied = try Migrator(directory: config.migrationsDirectory).up(admin) { logger.info("\($0)") }
                if !applied.isEmpty { logger.info("migrations applied", metadata: ["count": "\(applied.count)"]) }
            }
            // PostgREST's in-database configuration over the environment's (a value the server
            // cannot use stops the start, as a bad environment variable does); its `db-schemas`
            // are the schemas whose caches are loaded.
            // Read as PostgREST reads them: the settings of the role requests log in as.
            let login = try RequestLogin.prepare(admin: admin, databaseURL: database.url, config: config, logger: logger)
            let settings = try config.postgrest.overlaid(from: admin, role: login.role)
            let schema = SchemaCacheStore(try SchemaCaches.load(admin, schemas: settings.schemas))
            let pool = Pool(conninfo: login.url, size: config.poolSize, allowsPreparedStatements: config.preparedStatements)
            // Storage's folder is made here: a folder that cannot be made stops the start.
            let storage = try StorageService(pool: pool, keys: config.keys, config: config.storage, logger: logger)
            let application = Application(config: config, database: database, login: login, pool: pool, schema: schema, storage: storage, logger: logger)
            application.rest.settings.replace(settings)
            // The feed first: no socket can subscribe before changes can reach it.
            try application.changeFeed.start()
            application.listener.start()
            do {
                try application.server.start()
            } catch {
                application.changeFeed.stop()
                application.listener.stop()
                throw error
            }
            if case .log = config.auth.mailTransport {
                logger.warning(
                    "no mail server (SMTP_HOST unset): confirmation, recovery, magic-link, invitation and e-mail-change mails are written to this log, not sent"
                )
            }
            application.pipeline.start()
            application.readPipeline?.start()
            application.readReplicas?.start()
            return application
        } catch {
            try? database.stopCluster()
            throw error
        }
    }

    init(
        config: ServerConfig, database: PreparedDatabase, login: RequestLogin, pool: Pool, schema: SchemaCacheStore, storage: StorageService,
        logger: Logger
    ) {
        self.config = config
        self.database = database
        requestLogin = login
        let adminPool = Pool(conninfo: database.url, size: config.poolSize, allowsPreparedStatements: config.preparedStatements)
        self.pool = pool
        self.adminPool = adminPool
        self.schema = schema
        self.logger = logger
        var restConfig = RESTConfig(ownership: config.ownership)
        restConfig.enforceOwnership = config.enforceOwnership
        restConfig.openAPIAccess = config.openAPIAccess
        restConfig.aggregatesEnabled = config.aggregatesEnabled
        var authConfig = config.auth
        authConfig.issuer = "http://\(config.host):\(config.port)/auth/v1"
        let mailer = Mailer(
            transport: config.auth.mailTransport, conninfo: database.url, logger: logger,
            workers: config.auth.mail.senders, retryDelays: config.auth.mail.retryDelays)
        self.mailer = mailer
        let auth = AuthService(pool: adminPool, config: authConfig, logger: logger, mailer: mailer)
        var realtimeConfig = RealtimeConfig(keys: config.keys, policy: config.ownership)
        realtimeConfig.enforceOwnership = config.enforceOwnership
        realtimeConfig.feedWait = config.realtimeFeedWait
        realtimeConfig.maxEventsPerSecond = config.realtimeMaxEventsPerSecond
        realtimeConfig.maxPayloadBytes = config.realtimeMaxPayloadBytes
        realtimeConfig.privateOnly = config.realtimePrivateOnly
        let realtime = RealtimeService(config: realtimeConfig, pool: adminPool, schema: schema, logger: logger)
        let direct = config.listenDatabaseURL ?? database.url
        let listener = NotificationListener(conninfo: direct) { [logger] error, wasConnected in
            logger.error(
                wasConnected ? "the LISTEN connection was lost; connecting again" : "the LISTEN connection cannot reach the database; trying again",
                metadata: ["error": "\(logText(error))"])
        }
        self.listener = listener
        let changeFeed = ChangeFeed(service: realtime, conninfo: direct, listener: listener, choice: config.realtimeFeed)
        self.realtime = realtime
        self.changeFeed = changeFeed
        messageFeed = MessageFeed(service: realtime, listener: listener)
        let loop = EventLoop()
        let pipeline = PipelineClient(
            conninfo: login.url, size: config.effectivePipelineConnections,
            allowsPreparedStatements: config.preparedStatements, loop: loop)
        self.pipeline = pipeline
        let readPipeline =
            config.effectivePipelineReadConnections > 0
            ? PipelineClient(
                conninfo: login.url, size: config.effectivePipelineReadConnections, allowsPreparedStatements: config.preparedStatements,
                loop: loop)
            : nil
        self.readPipeline = readPipeline
        let readReplicas =
            config.readReplicas.urls.isEmpty
            ? nil
            : ReadReplicas(
                config: config.readReplicas.loggingIn(as: login.role, password: config.requestPassword), primaryURL: database.url, poolSize: config.poolSize,
                pipelineSize: config.effectivePipelineReadConnections > 0 ? config.effectivePipelineReadConnections : config.effectivePipelineConnections,
                preparedStatements: config.preparedStatements, loop: loop, logger: logger)
        self.readReplicas = readReplicas
        let metrics = Metrics(
            pool: pool, adminPool: adminPool, schema: schema, realtime: realtime, feed: changeFeed, bareTables: Set(config.ownership.ownedTables),
            mailer: mailer, pipeline: config.effectivePipelineConnections > 0 ? pipeline : nil, readPipeline: readPipeline,
            readReplicas: readReplicas, hookCalls: auth.hookCalls)
        // A REST answer ≥ 500 from the database: one log line and one count, never the bound values.
        restConfig.onServerError = { [logger] report in
            logger.error(
                "database error answered as 5xx",
                metadata: [
                    "request_id": "\(report.requestID)", "sqlstate": "\(report.sqlState ?? "-")", "kind": "\(report.kind)",
                    "statement": "\(report.statement)"
                ])
            metrics.recordDatabaseError(sqlState: report.sqlState ?? report.kind)
        }
        let rest = RESTService(pool: pool, schema: schema, config: restConfig, settings: SettingsStore(config.postgrest), reads: readReplicas)
        self.rest = rest
        let migrator = Migrator(directory: config.migrationsDirectory)
        let inline = config.effectivePipelineConnections > 0 ? Routes.inlineREST(config: config, rest: rest, pipeline: pipeline, reads: readPipeline) : nil
        let analytics = AnalyticsService(
            config: config.analytics, pool: pool, logger: logger, clientAddress: { AuthService.clientAddress($0, trustedHeader: config.auth.rateLimitHeader) }
        ) { Routes.isServiceRole($0, config: config) }
        analytics.followFlagChanges(listener)
        let router = Routes.make(
            config: config, pool: pool, adminPool: adminPool, rest: rest, auth: auth, realtime: realtime, storage: storage, analytics: analytics,
            metrics: metrics,
            migrator: migrator, readiness: { Readiness.check(pool: adminPool, migrator: migrator, feed: changeFeed, readReplicas: readReplicas) },
            logger: logger)
        server = HTTPServer(
            host: config.host, port: config.port, limits: config.limits, cors: config.cors, errorStyle: Gateway.errorStyle, logger: logger,
            loop: loop, middleware: Routes.stages(config: config, metrics: metrics, readReplicas: readReplicas), inline: inline,
            responder: { request in router.respond(to: request) })
        subscribeToSchemaReloads()
    }

    public var port: Int { server.port }

    /// Graceful stop: the HTTP server first (in-flight requests finish), then the pool, then
    /// the embedded PostgreSQL if this process started it.
    /// Stops serving, then closes every database connection (the pool's, the change feed's, the
    /// schema listener's) before an embedded cluster is stopped: PostgreSQL then has no session
    /// to terminate.
    public func shutdown() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        changeFeed.stop()
        server.shutdown()
        listener.stop()
        realtime.releasePresences()
        pipeline.close()
        readPipeline?.close()
        readReplicas?.stop()
        mailer.shutdown()
        do {
            try realtime.releaseLeases()
        } catch {
            logger.warning("could not release the realtime listener leases", metadata: ["error": "\(logText(error))"])
        }
        pool.close()
        adminPool.close()
        logger.info("database connections closed")
        do {
            if database.cluster != nil { logger.info("stopping the embedded PostgreSQL") }
            try database.stopCluster()
        } catch {
            logger.error("could not stop the embedded PostgreSQL", metadata: ["error": "\(logText(error))"])
        }
    }

    /// PostgREST's `NOTIFY pgrst, 'reload schema'` (or an empty payload) and `'reload config'`,
    /// heard through the LISTEN connection: the schema cache is swapped, or the in-database
    /// settings are read again (a value the server cannot use is logged, and the settings in
    /// force stay). After a lost connection the cache is reloaded, as notifications may have
    /// been missed meanwhile; a burst of equal notifications waiting their turn is one reload.
    private func subscribeToSchemaReloads() {
        listener.subscribe("pgrst", name: "schema-listener", coalescing: true) { [self] event in
            do {
                switch event {
                case .notified(payload: "reload config"):
                    try reloading { connection in
                        do {
                            let settings = try config.postgrest.overlaid(from: connection, role: requestLogin.role)
                            // The exposed schemas may have changed: their caches with them.
                            try schema.reload(using: connection, schemas: settings.schemas)
                            rest.settings.replace(settings)
                            logger.info("configuration reloaded")
                        } catch let error as SettingError {
                            logger.error("configuration not reloaded", metadata: ["error": "\(logText(error))"])
                        }
                    }
                case .notified(payload: ""), .notified(payload: "reload schema"), .connected(again: true):
                    try reloading { try schema.reload(using: $0, schemas: rest.settings.settings.schemas) }
                    logger.info("schema cache reloaded")
                case .notified, .connected(again: false), .lost, .idle:
                    break
                }
            } catch {
                logger.error("schema cache not reloaded", metadata: ["error": "\(logText(error))"])
            }
        }
    }

    /// A reload's reads, on a new connection to the LISTEN connection's database (a connection
    /// of the admin pool, reused from an earlier reload, was seen to read a schema created since
    /// without its tables; a new one reads the catalog as it is).
    private func reloading(_ body: (Connection) throws -> Void) throws {
        try body(try Connection(conninfo: config.listenDatabaseURL ?? database.url))
    }
}
