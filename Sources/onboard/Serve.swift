import Analytics
import App
import ArgumentParser
import Auth
import Dispatch
import Foundation
import Glibc
import HTTP
import Identity
import Logging
import REST

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the HTTP server (Auth, REST, Realtime, health).")
    @OptionGroup var database: DatabaseOptions
    @Option(help: "Address to bind (env ONBOARD_HOST).") var host: String?
    @Option(help: "Port to listen on (env ONBOARD_PORT).") var port: Int?
    @Flag(help: "Allow a weak or generated JWT secret (local development only).") var dev = false
    @Flag(name: .customLong("print-config"), help: "Print the effective configuration (secrets masked) and exit.") var printConfig = false

    func run() throws {
        let logger = makeLogger("onboard")
        let config: ServerConfig
        let keysFile: String?
        do {
            (config, keysFile) = try ServeConfiguration.resolve(database: database, host: host, port: port, dev: dev, logger: logger)
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
        if dev {
            // Written at once (print would sit in stdout's buffer when it is not a terminal).
            FileHandle.standardOutput.write(Data((Self.banner(config, application: application, keysFile: keysFile) + "\n").utf8))
        }
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

extension Serve {
    /// What `supabase start` prints when it is up: where everything is, and the keys an app needs
    /// (development only: `--dev`, which `make run` passes).
    static func banner(_ config: ServerConfig, application: Application, keysFile: String?) -> String {
        let api = "http://\(config.host == "0.0.0.0" ? "127.0.0.1" : config.host):\(application.port)"
        var database = application.database.url
        if case .url = config.database { database = database.replacingOccurrences(of: #":[^:@/]+@"#, with: ":****@", options: .regularExpression) }
        var dashboard = "off (set DASHBOARD_PASSWORD or DASHBOARD_SERVICE_KEY_SIGN_IN)"
        if config.dashboard.isEnabled {
            let with = [
                config.dashboard.password != nil ? "DASHBOARD_PASSWORD" : nil,
                config.dashboard.serviceKeySignIn ? "the service_role key" : nil
            ].compactMap { $0 }.joined(separator: " or ")
            dashboard = api + "/dashboard/  (sign in with " + with + ")"
        }
        let mail: String = config.auth.mailTransport.summary
        let rows = [
            ("API URL", api),
            ("REST URL", api + "/rest/v1"),
            ("Auth URL", api + "/auth/v1"),
            ("Realtime URL", api.replacingOccurrences(of: "http", with: "ws") + "/realtime/v1/websocket"),
            ("Dashboard URL", dashboard),
            ("DB URL", database + (application.database.cluster != nil ? "  (the embedded cluster; psql takes it as is)" : "")),
            ("JWT secret", String(decoding: config.keys.jwtSecret, as: UTF8.self)),
            ("anon key", config.keys.anonKey),
            ("service_role key", config.keys.serviceRoleKey),
            ("Mail", mail),
            ("PostHog project key", config.analytics.projectKey + "  (PostHog SDKs: api_key, host " + api + ")"),
            ("PostHog secret key", config.analytics.secretKey + "  (server SDKs' local flag evaluation)"),
            ("Keys file", keysFile.map { $0 + "  (the keys above as env lines: source it in a shell)" } ?? "(none: the keys come from the environment)"),
            (
                "Auth limits",
                "\(limit(config.auth.signInLimit)) sign-ins/sign-ups, \(limit(config.auth.refreshLimit)) refreshes per client"
                    + " (--dev: 10x GoTrue's; a 429 says Retry-After)"
            )
        ]
        func limit(_ limit: RateLimit) -> String {
            "\(limit.hits) per " + (limit.window.truncatingRemainder(dividingBy: 60) == 0 ? "\(Int(limit.window) / 60) min" : "\(Int(limit.window)) s")
        }
        let width = rows.map(\.0.count).max() ?? 0
        let lines = rows.map { String(repeating: " ", count: width - $0.0.count) + $0.0 + ": " + $0.1 }
        return "\nonboard is running (development keys: never use them in production).\n\n" + lines.joined(separator: "\n") + "\n"
    }
}

/// Flags over environment over defaults, resolved once by `ServerConfig(environment:flags:…)`.
enum ServeConfiguration {
    /// The configuration, and the development keys' file when the keys came from one.
    static func resolve(database: DatabaseOptions, host: String?, port: Int?, dev: Bool, logger: Logger) throws -> (ServerConfig, String?) {
        let flags = ServeFlags(
            host: host, port: port, databaseURL: database.databaseURL, dataDirectory: database.dataDirectory,
            migrationsDirectory: database.migrationsDirectory, dev: dev)
        var keysFile: String?
        do {
            let config = try ServerConfig(environment: ProcessInfo.processInfo.environment, flags: flags) { folder in
                // Local use: generated once, kept beside the embedded cluster, and said where.
                let keys = try LocalKeys.loadOrCreate(in: folder)
                keysFile = folder.appendingPathComponent("keys.env").path
                logger.notice("using development keys from \(keysFile!)")
                return (keys.secret, keys.anonKey, keys.serviceRoleKey)
            }
            return (config, keysFile)
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
    }

    static func describe(_ config: ServerConfig) -> String { config.summary }
}

/// `onboard keys`: a JWT secret and the two API keys signed with it, as env lines.
struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate JWT_SECRET, ANON_KEY and SERVICE_ROLE_KEY (print as env lines); with --signing-key, also JWT_KEYS.")

    enum Algorithm: String, ExpressibleByArgument, CaseIterable { case es256, rs256 }

    @Option(help: "Also print JWT_KEYS: a new asymmetric key (es256 or rs256) that signs access tokens.")
    var signingKey: Algorithm?

    func run() throws {
        let keys = LocalKeys.generate()
        print("JWT_SECRET=\(keys.secret)")
        print("ANON_KEY=\(keys.anonKey)")
        print("SERVICE_ROLE_KEY=\(keys.serviceRoleKey)")
        if let signingKey {
            let key = SigningKey(kind: signingKey == .es256 ? .p256 : .rsa, keyID: UUID().uuidString.lowercased())
            // Single-quoted: the JSON has no quote of that kind, so shells and env files read it whole.
            print("JWT_KEYS='\(JWT.serialize([key.privateJWK]))'")
        }
    }

}

struct LocalKeys {
    let secret: String
    let anonKey: String
    let serviceRoleKey: String

    static func generate() -> LocalKeys {
        let secret = Base64URL.encode(Crypto.randomBytes(32))
        return LocalKeys(
            secret: secret, anonKey: APIKey.make(role: "anon", secret: Array(secret.utf8)),
            serviceRoleKey: APIKey.make(role: "service_role", secret: Array(secret.utf8)))
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
