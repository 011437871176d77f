import Auth
import Foundation
import HTTP
import Identity
import REST
import Realtime
import Storage

/// What `onboard serve`'s command line gives beside the environment.
public struct ServeFlags: Sendable {
    public var host: String?
    public var port: Int?
    public var databaseURL: String?
    public var dataDirectory: String?
    public var migrationsDirectory: String?
    /// Allows a weak or generated JWT secret against any database (local development).
    public var dev = false

    public init(
        host: String? = nil, port: Int? = nil, databaseURL: String? = nil, dataDirectory: String? = nil,
        migrationsDirectory: String? = nil, dev: Bool = false
    ) {
        self.host = host
        self.port = port
        self.databaseURL = databaseURL
        self.dataDirectory = dataDirectory
        self.migrationsDirectory = migrationsDirectory
        self.dev = dev
    }
}

/// A setting that cannot be used, with what it should be.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The keys a development server uses when `JWT_SECRET` is unset: kept in a file beside the
/// embedded cluster (see `onboard serve`), made here by the caller.
public typealias DevelopmentKeys = (_ folder: URL) throws -> (secret: String, anonKey: String, serviceRoleKey: String)

extension ServerConfig {
    /// Flags over environment over defaults (docs/configuration.md's table, in one place).
    /// An unset or empty variable takes its default; a value that cannot be used is an error,
    /// never silently the default.
    public init(environment: [String: String], flags: ServeFlags, developmentKeys: DevelopmentKeys) throws {
        let env = EnvironmentReader(environment)
        let dataDirectory = flags.dataDirectory ?? env.value("ONBOARD_DATA_DIR") ?? ".onboard/postgres"
        let location = DatabaseLocation.resolve(url: flags.databaseURL ?? env.value("DATABASE_URL"), embeddedFolder: dataDirectory)
        self.init(keys: try Self.keys(env, flags: flags, location: location, dataDirectory: dataDirectory, developmentKeys: developmentKeys))
        // The groups are read in this order, so that of two unusable settings the same one is reported.
        try readServer(env, flags: flags)
        try readDatabase(env, flags: flags, location: location)
        if let seconds = try env.integer("JWT_EXP", minimum: 1) { auth.jwtExpiry = seconds }
        try readConnections(env)
        try readLimits(env)
        try readAuth(env, flags: flags)
        try readPostgREST(env, environment: environment)
        try readRealtime(env)
        try readDashboard(env, flags: flags)
        try readStorage(env, dataDirectory: dataDirectory)
        try readSignInMethods(env, environment: environment)
        try readAnalytics(env)
        limits.workerThreads = max(limits.workerThreads, poolSize + 4)
    }

    /// The JWT secret and the API keys: without a secret only the embedded cluster or --dev runs,
    /// on the development keys; keys not given are made from the secret.
    private static func keys(
        _ env: EnvironmentReader, flags: ServeFlags, location: DatabaseLocation, dataDirectory: String, developmentKeys: DevelopmentKeys
    ) throws -> KeyConfig {
        var secret = env.value("JWT_SECRET") ?? ""
        var anonKey = env.value("ANON_KEY") ?? ""
        var serviceKey = env.value("SERVICE_ROLE_KEY") ?? ""
        if secret.isEmpty {
            guard location.isEmbedded || flags.dev else {
                throw ConfigurationError("JWT_SECRET is not set (generate one with `onboard keys`); only the embedded default or --dev may run without one")
            }
            let keys = try developmentKeys(URL(fileURLWithPath: dataDirectory).deletingLastPathComponent())
            secret = keys.secret
            if anonKey.isEmpty { anonKey = keys.anonKey }
            if serviceKey.isEmpty { serviceKey = keys.serviceRoleKey }
        }
        if secret.utf8.count < 32 && !flags.dev {
            throw ConfigurationError("JWT_SECRET must be at least 32 characters (use --dev to allow a weak secret locally)")
        }
        if anonKey.isEmpty { anonKey = APIKey.make(role: "anon", secret: Array(secret.utf8)) }
        if serviceKey.isEmpty { serviceKey = APIKey.make(role: "service_role", secret: Array(secret.utf8)) }

        // The anon key ships inside every app: a key carrying another role would hand that role
        // to anyone who unpacks one. (An opaque key carries none: it stands for its role here.)
        for (name, key, role) in [("ANON_KEY", anonKey, "anon"), ("SERVICE_ROLE_KEY", serviceKey, "service_role")] {
            if let carried = APIKey.roleClaim(key), carried != role {
                throw ConfigurationError(
                    "\(name) carries the role \(carried), not \(role)"
                        + (name == "ANON_KEY" ? ": the anon key ships inside every app, and its role is what anyone holding the app gets" : "")
                        + " (`onboard keys` makes both from JWT_SECRET)")
            }
        }
        var keys = KeyConfig(jwtSecret: secret, anonKey: anonKey, serviceRoleKey: serviceKey)
        if let json = env.value("JWT_KEYS") {
            do {
                keys.use(try KeyConfig.jwtKeys(json))
            } catch {
                throw ConfigurationError(error.description)
            }
        }
        keys.secretKeyID = env.value("JWT_KEY_ID")
        keys.publishableKeys = env.list("PUBLISHABLE_KEYS")
        keys.secretKeys = env.list("SECRET_KEYS")
        guard keys.publishableKeys.allSatisfy({ $0.hasPrefix("sb_publishable_") }), keys.secretKeys.allSatisfy({ $0.hasPrefix("sb_secret_") }) else {
            throw ConfigurationError("PUBLISHABLE_KEYS must start with sb_publishable_ and SECRET_KEYS with sb_secret_")
        }
        return keys
    }

    /// Product analytics: the keys (made from the JWT secret when unset) and the limits.
    private mutating func readAnalytics(_ env: EnvironmentReader) throws {
        if let key = env.value("ANALYTICS_PROJECT_KEY") ?? env.value("POSTHOG_PROJECT_API_KEY") { analytics.projectKey = key }
        if let key = env.value("ANALYTICS_SECRET_KEY") ?? env.value("POSTHOG_PERSONAL_API_KEY") { analytics.secretKey = key }
        guard analytics.projectKey != analytics.secretKey, ![keys.anonKey, keys.serviceRoleKey].contains(analytics.projectKey) else {
            throw ConfigurationError("ANALYTICS_PROJECT_KEY must differ from ANALYTICS_SECRET_KEY and from the API keys")
        }
        if let bytes = try env.integer("ANALYTICS_MAX_EVENT_BYTES", minimum: 1) { analytics.maxEventBytes = bytes }
        if let count = try env.integer("ANALYTICS_MAX_BATCH_EVENTS", minimum: 1) { analytics.maxBatchEvents = count }
        if let drop = try env.boolean("ANALYTICS_DROP_IP") { analytics.dropIP = drop }
        if let days = try env.integer("ANALYTICS_RETENTION_DAYS", minimum: 1) { analytics.retentionDays = days }
        if let count = try env.integer("ANALYTICS_RATE_LIMIT_CLIENT_EVENTS", minimum: 1) { analytics.eventsPerMinutePerClient = count }
        if let count = try env.integer("ANALYTICS_RATE_LIMIT_EVENTS", minimum: 1) { analytics.eventsPerMinute = count }
    }

    /// Where the server listens.
    private mutating func readServer(_ env: EnvironmentReader, flags: ServeFlags) throws {
        host = flags.host ?? env.value("ONBOARD_HOST") ?? host
        if let port = try flags.port ?? env.integer("ONBOARD_PORT") {
            guard (0...65535).contains(port) else { throw ConfigurationError("the port must be 0…65535, not \(port)") }
            self.port = port
        }
    }

    /// The database, its migrations, the LISTEN connection and the read replicas.
    private mutating func readDatabase(_ env: EnvironmentReader, flags: ServeFlags, location: DatabaseLocation) throws {
        database = location
        migrationsDirectory = DatabaseBootstrap.migrationsDirectory(flags.migrationsDirectory ?? env.value("ONBOARD_MIGRATIONS_DIR"))
        listenDatabaseURL = env.value("DATABASE_LISTEN_URL")
        if let role = env.value("DB_REQUEST_ROLE") { requestRole = role.trimmingCharacters(in: .whitespaces) }
        requestPassword = env.value("DB_REQUEST_PASSWORD")
        readReplicas.urls = env.list("DATABASE_READ_URLS")
        if let lag = env.value("DB_READ_MAX_LAG") { try readReplicas.setMaxLag(lag) }
    }

    /// The connections to the database: the pool, prepared statements, the pipeline, migrating on start.
    private mutating func readConnections(_ env: EnvironmentReader) throws {
        if let size = try env.integer("DB_POOL_SIZE", minimum: 1) { poolSize = size }
        // PostgREST's name for the same switch is read too.
        if let prepared = try env.boolean("DB_PREPARED_STATEMENTS") ?? env.boolean("PGRST_DB_PREPARED_STATEMENTS") { preparedStatements = prepared }
        if let count = try env.integer("DB_PIPELINE_CONNECTIONS", minimum: 0) { pipelineConnections = count }
        if let count = try env.integer("DB_PIPELINE_READ_CONNECTIONS", minimum: 0) { pipelineReadConnections = count }
        if let migrate = try env.boolean("DB_MIGRATE_ON_START") { migrateOnStart = migrate }
    }

    /// Storage's folder (beside the embedded cluster's by default) and upload limit; the HTTP
    /// layer accepts bodies that large under `/storage/v1` only.
    private mutating func readStorage(_ env: EnvironmentReader, dataDirectory: String) throws {
        let folder = env.value("STORAGE_DIR") ?? URL(fileURLWithPath: dataDirectory).deletingLastPathComponent().appendingPathComponent("storage").path
        storage.directory = URL(fileURLWithPath: folder)
        if let bytes = try env.integer("STORAGE_MAX_FILE_SIZE", minimum: 1) { storage.maxFileSize = bytes }
        if let milliseconds = try env.integer("TUS_URL_EXPIRY_MS", minimum: 0) { storage.resumableExpirySeconds = Double(milliseconds) / 1000 }
        limits.bodyLimits = [BodyLimit(pathPrefix: StorageService.prefix + "/", maxBytes: max(storage.maxRequestBytes, limits.maxBodyBytes))]
    }

    /// The HTTP server's limits and threads, and CORS.
    private mutating func readLimits(_ env: EnvironmentReader) throws {
        if let bytes = try env.integer("MAX_BODY_BYTES", minimum: 1) { limits.maxBodyBytes = bytes }
        if let count = try env.integer("MAX_CONNECTIONS", minimum: 1) { limits.maxConnections = count }
        if let threads = try env.integer("WORKER_THREADS", minimum: 1) { limits.workerThreads = threads }
        if let nice = try env.integer("IO_THREAD_NICE", minimum: -20) {
            guard nice <= 19 else { throw ConfigurationError("IO_THREAD_NICE must be a nice value from -20 to 19, not \"\(nice)\"") }
            limits.ioThreadNice = Int32(nice)
        }
        if env.value("CORS_ALLOWED_ORIGINS") != nil { cors = Gateway.cors(allowedOrigins: env.list("CORS_ALLOWED_ORIGINS")) }
    }

    /// GoTrue's site URL, password hashing, request budgets and admin roles.
    private mutating func readAuth(_ env: EnvironmentReader, flags: ServeFlags) throws {
        if let url = env.value("SITE_URL") { auth.siteURL = url }
        if let cost = try env.integer("BCRYPT_COST", minimum: 4) {
            guard cost <= 31 else { throw ConfigurationError("BCRYPT_COST must be 4…31, not \(cost)") }
            auth.bcryptCost = cost
        }
        // --dev (`make run`): ten times GoTrue's request budgets (sign-in/sign-up, refresh, OTP
        // requests, verify, MFA challenges), so a developer re-running test scripts from one
        // address is not locked out; the RATE_LIMIT_* settings below still win when set. The
        // guess counters (wrong codes, dashboard sign-ins) keep their limits.
        if flags.dev { auth.relaxRequestLimitsForDevelopment() }
        // GoTrue's names count per 5 minutes; RATE_LIMIT_AUTH_PER_MINUTE (this server's older
        // name) sets the sign-in budget per minute and wins when set.
        if let hits = try env.integer("RATE_LIMIT_SIGN_IN_SIGN_UPS", minimum: 1) { auth.signInLimit = RateLimit(hits: hits, window: 300) }
        if let hits = try env.integer("RATE_LIMIT_AUTH_PER_MINUTE", minimum: 1) { auth.signInLimit = RateLimit(hits: hits, window: 60) }
        if let hits = try env.integer("RATE_LIMIT_TOKEN_REFRESH", minimum: 1) { auth.refreshLimit = RateLimit(hits: hits, window: 300) }
        auth.rateLimitHeader = env.value("RATE_LIMIT_HEADER")
        if env.value("JWT_ADMIN_ROLES") != nil { auth.adminRoles = Set(env.list("JWT_ADMIN_ROLES")) }
    }

    /// PostgREST's settings.
    private mutating func readPostgREST(_ env: EnvironmentReader, environment: [String: String]) throws {
        if let access = try env.choice("OPENAPI_ACCESS", OpenAPIAccess.self) { openAPIAccess = access }
        if let aggregates = try env.boolean("PGRST_DB_AGGREGATES_ENABLED") { aggregatesEnabled = aggregates }
        do {
            postgrest = try PostgRESTSettings.environment(environment.filter { !$0.value.isEmpty })
        } catch {
            throw ConfigurationError(error.description)
        }
    }

    /// Realtime's change feed and its limits.
    private mutating func readRealtime(_ env: EnvironmentReader) throws {
        if let feed = try env.choice("REALTIME_FEED", RealtimeFeedChoice.self) { realtimeFeed = feed }
        if let events = try env.integer("REALTIME_MAX_EVENTS_PER_SECOND", minimum: 1) { realtimeMaxEventsPerSecond = events }
        if let bytes = try env.integer("REALTIME_MAX_PAYLOAD_BYTES", minimum: 1) { realtimeMaxPayloadBytes = bytes }
        if let privateOnly = try env.boolean("REALTIME_PRIVATE_ONLY") { realtimePrivateOnly = privateOnly }
    }

    /// The dashboard's sign-in, sessions and step labels.
    private mutating func readDashboard(_ env: EnvironmentReader, flags: ServeFlags) throws {
        // The dashboard: a password, and/or the service-role key as the sign-in secret (on by
        // default with --dev, so `make run` has a dashboard without further settings).
        if let password = env.value("DASHBOARD_PASSWORD") {
            guard password.count >= 12 || flags.dev else {
                throw ConfigurationError("DASHBOARD_PASSWORD must be at least 12 characters (use --dev to allow a weak one locally)")
            }
            dashboard.password = password
        }
        dashboard.serviceKeySignIn = try env.boolean("DASHBOARD_SERVICE_KEY_SIGN_IN") ?? flags.dev
        if let hours = try env.integer("DASHBOARD_SESSION_HOURS", minimum: 1) {
            guard hours <= 24 * 30 else { throw ConfigurationError("DASHBOARD_SESSION_HOURS must be 1…720, not \(hours)") }
            dashboard.sessionSeconds = hours * 3600
        }
        for entry in env.list("DASHBOARD_STEP_LABELS") {
            let parts = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[1].isEmpty, parts[0].range(of: "^[A-Z][A-Z0-9_]*$", options: .regularExpression) != nil else {
                throw ConfigurationError("DASHBOARD_STEP_LABELS takes STATE=Label entries separated by commas, not \"\(entry)\"")
            }
            dashboard.stepLabels[parts[0]] = parts[1]
        }
    }

    /// The ways to sign in (ID-token providers, sign-up, anonymous, email, Web3), mail and MFA.
    private mutating func readSignInMethods(_ env: EnvironmentReader, environment: [String: String]) throws {
        // A provider is enabled by its key set; without client ids no audience can match.
        if let jwks = env.value("GOOGLE_JWKS") { auth.providers["google"] = .google(clientIDs: env.list("GOOGLE_CLIENT_IDS"), jwks: jwks) }
        if let jwks = env.value("APPLE_JWKS") { auth.providers["apple"] = .apple(clientIDs: env.list("APPLE_CLIENT_IDS"), jwks: jwks) }
        if let disabled = try env.boolean("DISABLE_SIGNUP") { auth.disableSignup = disabled }
        if let enabled = try env.boolean("EXTERNAL_ANONYMOUS_USERS_ENABLED") { auth.anonymousUsersEnabled = enabled }
        if let enabled = try env.boolean("EXTERNAL_EMAIL_ENABLED") { auth.emailEnabled = enabled }
        try auth.mail.apply(environment: environment)
        try auth.sms.apply(environment: environment)
        try auth.mfa.apply(environment: environment)
        try auth.hooks.apply(environment: environment)
        try auth.oauthServer.apply(environment: environment)
        try auth.web3.apply(environment: environment)
        auth.external = try ExternalEnvironment.providers(environment)
        try auth.passkey.apply(environment: environment)
    }

    /// The effective settings, secrets masked (`onboard serve --print-config`).
    public var summary: String {
        func mask(_ secret: String) -> String { secret.isEmpty ? "(unset)" : String(secret.prefix(4)) + "…(\(secret.count) chars)" }
        func hidePassword(_ url: String) -> String { url.replacingOccurrences(of: #":[^:@/]+@"#, with: ":****@", options: .regularExpression) }
        let databaseText: String
        switch database {
        case .url(let url): databaseText = hidePassword(url)
        case .embedded(let folder): databaseText = "embedded cluster in \(folder)"
        }
        func provider(_ name: String) -> (ids: String, jwks: String) {
            guard let configured = auth.providers[name] else { return ("", "(unset: \(name) sign-in disabled)") }
            return (configured.clientIDs.joined(separator: ","), configured.keys.location)
        }
        let google = provider("google")
        let apple = provider("apple")
        let rows: [(String, String)] =
            [
                ("host", host), ("port", "\(port)"), ("database", databaseText), ("migrations", migrationsDirectory.path),
                ("JWT_SECRET", mask(String(decoding: keys.jwtSecret, as: UTF8.self))), ("ANON_KEY", mask(keys.anonKey)),
                ("SERVICE_ROLE_KEY", mask(keys.serviceRoleKey)), ("JWT_EXP", "\(auth.jwtExpiry)"), ("DB_POOL_SIZE", "\(poolSize)"),
                ("DB_PIPELINE_CONNECTIONS", "\(effectivePipelineConnections)"),
                ("DB_PIPELINE_READ_CONNECTIONS", "\(effectivePipelineReadConnections)"),
                ("DATABASE_LISTEN_URL", listenDatabaseURL.map(hidePassword) ?? "(the database)"),
                ("DB_REQUEST_ROLE", requestRole),
                ("DB_REQUEST_PASSWORD", requestPassword.map(mask) ?? "(unset: PGPASSWORD or the password file)"),
                ("DB_PREPARED_STATEMENTS", "\(preparedStatements)"), ("DB_MIGRATE_ON_START", "\(migrateOnStart)"),
                ("WORKER_THREADS", "\(limits.workerThreads)"), ("IO_THREAD_NICE", "\(limits.ioThreadNice)"), ("MAX_CONNECTIONS", "\(limits.maxConnections)"),
                ("MAX_BODY_BYTES", "\(limits.maxBodyBytes)"), ("CORS_ALLOWED_ORIGINS", cors.allowedOrigins.joined(separator: ",")),
                ("SITE_URL", auth.siteURL), ("PGRST_DB_TX_END", postgrest.transactionEnd.rawValue), ("OPENAPI_ACCESS", openAPIAccess.rawValue),
                ("PGRST_DB_AGGREGATES_ENABLED", "\(aggregatesEnabled)"),
                ("PGRST_DB_MAX_ROWS", postgrest.maxRows.map(String.init) ?? "(unset: no cap)"),
                ("PGRST_DB_PRE_REQUEST", postgrest.preRequest.map { "\($0.schema).\($0.name)" } ?? "(unset)"),
                ("PGRST_DB_PRE_CONFIG", postgrest.preConfig.map { "\($0.schema).\($0.name)" } ?? "(unset)"),
                ("PGRST_DB_EXTRA_SEARCH_PATH", postgrest.extraSearchPath?.joined(separator: ",") ?? "(unset)"),
                ("PGRST_JWT_AUD", postgrest.jwtAudience ?? "(unset)"), ("PGRST_SERVER_TIMING_ENABLED", "\(postgrest.serverTimingEnabled)"),
                ("PGRST_CLIENT_ERROR_VERBOSITY", postgrest.minimalErrors ? "minimal" : "verbose"),
                ("PGRST_APP_SETTINGS_*", postgrest.appSettings.map(\.name).joined(separator: ",")),
                ("REALTIME_FEED", realtimeFeed.rawValue),
                ("BCRYPT_COST", "\(auth.bcryptCost)"),
                ("DASHBOARD_PASSWORD", dashboard.password.map(mask) ?? "(unset)"),
                ("DASHBOARD_SERVICE_KEY_SIGN_IN", "\(dashboard.serviceKeySignIn)"),
                ("DASHBOARD_SESSION_HOURS", "\(dashboard.sessionSeconds / 3600)"),
                (
                    "DASHBOARD_STEP_LABELS",
                    dashboard.stepLabels.isEmpty
                        ? "(unset)" : dashboard.stepLabels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
                ),
                ("RATE_LIMIT_SIGN_IN_SIGN_UPS", "\(auth.signInLimit.hits) per \(Int(auth.signInLimit.window)) s"),
                ("RATE_LIMIT_TOKEN_REFRESH", "\(auth.refreshLimit.hits) per \(Int(auth.refreshLimit.window)) s"),
                ("RATE_LIMIT_HEADER", auth.rateLimitHeader ?? "(unset: the TCP peer)"),
                (
                    "JWT_KEYS",
                    keys.verificationKeys.keys.isEmpty
                        ? "(unset: HS256 with JWT_SECRET)"
                        : "\(keys.verificationKeys.keys.count) keys; signing: \(keys.signingKey.map { "\($0.algorithm) \($0.keyID)" } ?? "HS256 with JWT_SECRET")"
                ),
                ("JWT_KEY_ID", keys.secretKeyID ?? "(unset)"), ("JWT_ADMIN_ROLES", auth.adminRoles.sorted().joined(separator: ",")),
                ("ANALYTICS_PROJECT_KEY", analytics.projectKey), ("ANALYTICS_SECRET_KEY", mask(analytics.secretKey)),
                ("ANALYTICS_MAX_EVENT_BYTES", "\(analytics.maxEventBytes)"), ("ANALYTICS_MAX_BATCH_EVENTS", "\(analytics.maxBatchEvents)"),
                ("ANALYTICS_DROP_IP", "\(analytics.dropIP)"), ("ANALYTICS_RETENTION_DAYS", analytics.retentionDays.map(String.init) ?? "(unset: kept)"),
                ("ANALYTICS_RATE_LIMIT_CLIENT_EVENTS", "\(analytics.eventsPerMinutePerClient)"),
                ("ANALYTICS_RATE_LIMIT_EVENTS", "\(analytics.eventsPerMinute)"),
                ("PUBLISHABLE_KEYS", keys.publishableKeys.map(mask).joined(separator: ",")), ("SECRET_KEYS", keys.secretKeys.map(mask).joined(separator: ",")),
                ("GOOGLE_CLIENT_IDS", google.ids), ("GOOGLE_JWKS", google.jwks), ("APPLE_CLIENT_IDS", apple.ids), ("APPLE_JWKS", apple.jwks),
                ("DISABLE_SIGNUP", "\(auth.disableSignup)"), ("EXTERNAL_ANONYMOUS_USERS_ENABLED", "\(auth.anonymousUsersEnabled)"),
                ("EXTERNAL_EMAIL_ENABLED", "\(auth.emailEnabled)")
            ] + auth.mail.summaryRows(defaultExternalURL: "http://\(host):\(port)") + auth.sms.summaryRows() + auth.mfa.summaryRows()
            + auth.hooks.summaryRows() + auth.oauthServer.summaryRows() + auth.web3.summaryRows() + auth.passkey.summaryRows()
            + ExternalEnvironment.summaryRows(auth.external)
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.1 }.joined(separator: "\n")
    }
}

/// API keys as Supabase makes them: HS256 JWTs with the role, issued by "supabase", valid ten years.
public enum APIKey {
    public static func make(role: String, secret: [UInt8], now: Date = Date()) -> String {
        let issued = Int(now.timeIntervalSince1970)
        return JWT.signHS256(claims: ["role": role, "iss": "supabase", "iat": issued, "exp": issued + 10 * 365 * 24 * 3600], secret: secret)
    }

    /// The `role` claim of a key that is a JWT, read without verifying it (nil: not a JWT, or
    /// no string role).
    public static func roleClaim(_ key: String) -> String? {
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            let claims = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any]
        else { return nil }
        return claims["role"] as? String
    }
}

extension DatabaseLocation {
    var isEmbedded: Bool {
        if case .embedded = self { return true }
        return false
    }
}
