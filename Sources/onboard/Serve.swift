import App
import Auth
import ArgumentParser
import Dispatch
import Foundation
import Glibc
import HTTP
import JWT
import Logging
import REST

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the HTTP server (Auth, REST, health).")
    @OptionGroup var database: DatabaseOptions
    @Option(help: "Address to bind (env ONBOARD_HOST).") var host: String?
    @Option(help: "Port to listen on (env ONBOARD_PORT).") var port: Int?
    @Flag(help: "Allow a weak or generated JWT secret (local development only).") var dev = false
    @Flag(name: .customLong("print-config"), help: "Print the effective configuration (secrets masked) and exit.") var printConfig = false

    func run() throws {
        let logger = makeLogger("onboard")
        let config: ServerConfig
        do {
            config = try ServeConfiguration.resolve(database: database, host: host, port: port, dev: dev, logger: logger)
        } catch {
            throw fail(error)
        }
        if printConfig {
            print(ServeConfiguration.describe(config))
            return
        }
        // Handle SIGINT/SIGTERM on a queue, not as async signals.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        let application: Application
        do {
            application = try Application.start(config, logger: logger)
        } catch {
            throw fail(error)
        }
        logger.notice("onboard is serving", metadata: ["url": "http://\(config.host):\(application.port)"])
        let done = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "onboard.signals")
        let sources = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { done.signal() }
            source.resume()
            return source
        }
        // The sources must outlive the wait: a release build would otherwise free them early and
        // SIGTERM (ignored above) would never reach us.
        withExtendedLifetime(sources) { done.wait() }
        logger.notice("shutting down")
        application.shutdown()
    }
}

/// Flags over environment over defaults, resolved once.
enum ServeConfiguration {
    static func resolve(database: DatabaseOptions, host: String?, port: Int?, dev: Bool, logger: Logger) throws -> ServerConfig {
        let environment = ProcessInfo.processInfo.environment
        let location = database.location
        var secret = environment["JWT_SECRET"] ?? ""
        var anonKey = environment["ANON_KEY"] ?? ""
        var serviceKey = environment["SERVICE_ROLE_KEY"] ?? ""
        let embedded: Bool
        if case .embedded = location { embedded = true } else { embedded = false }
        if secret.isEmpty {
            guard embedded || dev else {
                throw ValidationError("JWT_SECRET is not set (generate one with `onboard keys`); only the embedded default or --dev may run without one")
            }
            // Local use: generate once, keep beside the embedded cluster, and say where.
            let folder = URL(fileURLWithPath: database.dataDirectory ?? environment["ONBOARD_DATA_DIR"] ?? ".onboard/postgres").deletingLastPathComponent()
            let keys = try LocalKeys.loadOrCreate(in: folder)
            secret = keys.secret
            if anonKey.isEmpty { anonKey = keys.anonKey }
            if serviceKey.isEmpty { serviceKey = keys.serviceRoleKey }
            logger.notice("using development keys from \(folder.appendingPathComponent("keys.env").path)", metadata: ["ANON_KEY": "\(anonKey)"])
        }
        if secret.utf8.count < 32 && !dev {
            throw ValidationError("JWT_SECRET must be at least 32 characters (use --dev to allow a weak secret locally)")
        }
        let keySecret = Array(secret.utf8)
        if anonKey.isEmpty { anonKey = Keys.apiKey(role: "anon", secret: keySecret) }
        if serviceKey.isEmpty { serviceKey = Keys.apiKey(role: "service_role", secret: keySecret) }
        var config = ServerConfig(keys: KeyConfig(jwtSecret: secret, anonKey: anonKey, serviceRoleKey: serviceKey))
        config.host = host ?? environment["ONBOARD_HOST"] ?? "127.0.0.1"
        config.port = port ?? environment["ONBOARD_PORT"].flatMap { Int($0) } ?? 54321
        config.database = location
        config.migrationsDirectory = database.migrations
        if let value = environment["JWT_EXP"].flatMap({ Int($0) }) { config.jwtExpiry = value }
        if let value = environment["DB_POOL_SIZE"].flatMap({ Int($0) }) { config.poolSize = max(1, value) }
        if let value = environment["MAX_BODY_BYTES"].flatMap({ Int($0) }) { config.limits.maxBodyBytes = value }
        if let value = environment["WORKER_THREADS"].flatMap({ Int($0) }) { config.limits.workerThreads = max(1, value) }
        if let value = environment["MAX_CONNECTIONS"].flatMap({ Int($0) }) { config.limits.maxConnections = max(1, value) }
        if let value = environment["CORS_ALLOWED_ORIGINS"] {
            config.cors = CORSConfig(allowedOrigins: value.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) })
        }
        if let value = environment["DATABASE_LISTEN_URL"], !value.isEmpty { config.listenDatabaseURL = value }
        if let value = environment["DB_PREPARED_STATEMENTS"] { config.preparedStatements = value != "false" && value != "0" }
        if let value = environment["DB_MIGRATE_ON_START"] { config.migrateOnStart = value != "false" && value != "0" }
        if let value = environment["SITE_URL"] { config.auth.siteURL = value }
        if let value = environment["BCRYPT_COST"].flatMap({ Int($0) }) { config.auth.bcryptCost = value }
        // GoTrue's names: per 5 minutes. RATE_LIMIT_AUTH_PER_MINUTE (this server's older name)
        // still sets the sign-in budget per minute.
        if let value = environment["RATE_LIMIT_SIGN_IN_SIGN_UPS"].flatMap({ Int($0) }) { config.auth.signInLimit = RateLimit(hits: value, window: 300) }
        if let value = environment["RATE_LIMIT_AUTH_PER_MINUTE"].flatMap({ Int($0) }) { config.auth.signInLimit = RateLimit(hits: value, window: 60) }
        if let value = environment["RATE_LIMIT_TOKEN_REFRESH"].flatMap({ Int($0) }) { config.auth.refreshLimit = RateLimit(hits: value, window: 300) }
        if let value = environment["RATE_LIMIT_HEADER"], !value.isEmpty { config.auth.rateLimitHeader = value }
        if let value = environment["PGRST_DB_TX_END"], !value.isEmpty {
            guard let end = TransactionEnd(rawValue: value) else {
                throw ValidationError("PGRST_DB_TX_END must be one of \(TransactionEnd.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            config.transactionEnd = end
        }
        if let value = environment["OPENAPI_ACCESS"], !value.isEmpty {
            guard let access = OpenAPIAccess(rawValue: value) else {
                throw ValidationError("OPENAPI_ACCESS must be one of \(OpenAPIAccess.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            config.openAPIAccess = access
        }
        config.auth.googleClientIDs = (environment["GOOGLE_CLIENT_IDS"] ?? "").split(separator: ",").map(String.init)
        config.auth.googleJWKS = environment["GOOGLE_JWKS"]
        config.auth.appleClientIDs = (environment["APPLE_CLIENT_IDS"] ?? "").split(separator: ",").map(String.init)
        config.auth.appleJWKS = environment["APPLE_JWKS"]
        config.limits.workerThreads = max(config.limits.workerThreads, config.poolSize + 4)
        return config
    }

    static func describe(_ config: ServerConfig) -> String {
        func mask(_ secret: String) -> String { secret.isEmpty ? "(unset)" : String(secret.prefix(4)) + "…(\(secret.count) chars)" }
        let database: String
        switch config.database {
        case .url(let url): database = url.replacingOccurrences(of: #":[^:@/]+@"#, with: ":****@", options: .regularExpression)
        case .embedded(let folder): database = "embedded cluster in \(folder)"
        }
        return """
            host                  \(config.host)
            port                  \(config.port)
            database              \(database)
            migrations            \(config.migrationsDirectory.path)
            JWT_SECRET            \(mask(String(decoding: config.keys.jwtSecret, as: UTF8.self)))
            ANON_KEY              \(mask(config.keys.anonKey))
            SERVICE_ROLE_KEY      \(mask(config.keys.serviceRoleKey))
            JWT_EXP               \(config.jwtExpiry)
            DB_POOL_SIZE          \(config.poolSize)
            DATABASE_LISTEN_URL   \(config.listenDatabaseURL.map { $0.replacingOccurrences(of: #":[^:@/]+@"#, with: ":****@", options: .regularExpression) } ?? "(the database)")
            DB_PREPARED_STATEMENTS \(config.preparedStatements)
            DB_MIGRATE_ON_START   \(config.migrateOnStart)
            WORKER_THREADS        \(config.limits.workerThreads)
            MAX_CONNECTIONS       \(config.limits.maxConnections)
            MAX_BODY_BYTES        \(config.limits.maxBodyBytes)
            CORS_ALLOWED_ORIGINS  \(config.cors.allowedOrigins.joined(separator: ","))
            PGRST_DB_TX_END       \(config.transactionEnd.rawValue)
            OPENAPI_ACCESS        \(config.openAPIAccess.rawValue)
            BCRYPT_COST           \(config.auth.bcryptCost)
            RATE_LIMIT_SIGN_IN_SIGN_UPS \(config.auth.signInLimit.hits) per \(Int(config.auth.signInLimit.window)) s
            RATE_LIMIT_TOKEN_REFRESH \(config.auth.refreshLimit.hits) per \(Int(config.auth.refreshLimit.window)) s
            RATE_LIMIT_HEADER     \(config.auth.rateLimitHeader ?? "(unset: the TCP peer)")
            GOOGLE_CLIENT_IDS     \(config.auth.googleClientIDs.joined(separator: ","))
            GOOGLE_JWKS           \(config.auth.googleJWKS ?? "(unset: Google sign-in disabled)")
            APPLE_CLIENT_IDS      \(config.auth.appleClientIDs.joined(separator: ","))
            APPLE_JWKS            \(config.auth.appleJWKS ?? "(unset: Apple sign-in disabled)")
            """
    }
}

/// `onboard keys`: a JWT secret and the two API keys signed with it, as env lines.
struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Generate JWT_SECRET, ANON_KEY and SERVICE_ROLE_KEY (print as env lines).")

    func run() throws {
        let keys = LocalKeys.generate()
        print("JWT_SECRET=\(keys.secret)")
        print("ANON_KEY=\(keys.anonKey)")
        print("SERVICE_ROLE_KEY=\(keys.serviceRoleKey)")
    }

    /// An API key as Supabase makes them: an HS256 JWT with the role, issued by "supabase".
    static func apiKey(role: String, secret: [UInt8]) -> String {
        let now = Int(Date().timeIntervalSince1970)
        return JWT.signHS256(claims: ["role": role, "iss": "supabase", "iat": now, "exp": now + 10 * 365 * 24 * 3600], secret: secret)
    }
}

struct LocalKeys {
    let secret: String
    let anonKey: String
    let serviceRoleKey: String

    static func generate() -> LocalKeys {
        let secret = Base64URL.encode(Crypto.randomBytes(32))
        return LocalKeys(secret: secret, anonKey: Keys.apiKey(role: "anon", secret: Array(secret.utf8)),
                         serviceRoleKey: Keys.apiKey(role: "service_role", secret: Array(secret.utf8)))
    }

    /// The development keys kept in `<folder>/keys.env` (created on first use, mode 0600).
    static func loadOrCreate(in folder: URL) throws -> LocalKeys {
        let file = folder.appendingPathComponent("keys.env")
        if let text = try? String(contentsOf: file, encoding: .utf8) {
            var values: [String: String] = [:]
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
            }
            if let secret = values["JWT_SECRET"], let anon = values["ANON_KEY"], let service = values["SERVICE_ROLE_KEY"] {
                return LocalKeys(secret: secret, anonKey: anon, serviceRoleKey: service)
            }
        }
        let keys = generate()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try "JWT_SECRET=\(keys.secret)\nANON_KEY=\(keys.anonKey)\nSERVICE_ROLE_KEY=\(keys.serviceRoleKey)\n".write(to: file, atomically: true, encoding: .utf8)
        chmod(file.path, 0o600)
        return keys
    }
}
