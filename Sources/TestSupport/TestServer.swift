import App
import Foundation
import HTTP
import Identity
import Logging

/// The real application (HTTP server, REST, Auth) on an ephemeral port over a fresh migrated
/// database, for integration tests.
public final class TestServer: Sendable {
    public static let secret = "integration-test-secret-of-at-least-32-chars"
    /// The anon and service_role keys, signed once per test process: every test server has the
    /// same ones, so a test's servers accept each other's keys (an API key is compared whole,
    /// so keys signed a second apart would differ in `iat` and be refused).
    static let keys: (anon: String, service: String) = {
        let now = Int(Date().timeIntervalSince1970)
        func key(_ role: String) -> String {
            JWT.signHS256(claims: ["role": role, "iss": "supabase", "iat": now, "exp": now + 24 * 3600], secret: Array(secret.utf8))
        }
        return (key("anon"), key("service_role"))
    }()
    public let application: Application
    public let databaseURL: String
    public let anonKey: String
    public let serviceKey: String

    /// `log`: where the server logs (info and up) instead of standard error. `databaseURL`: a
    /// migrated database made elsewhere (a new one of the test cluster by default).
    public init(databaseURL: String? = nil, log: CapturedLog? = nil, configure: (inout ServerConfig) -> Void = { _ in }) throws {
        self.databaseURL = try databaseURL ?? TestPostgres.makeDatabase()
        (anonKey, serviceKey) = Self.keys
        var config = ServerConfig(keys: KeyConfig(jwtSecret: Self.secret, anonKey: anonKey, serviceRoleKey: serviceKey))
        config.port = 0
        config.database = .url(self.databaseURL)
        config.migrationsDirectory = TestPostgres.migrationsDirectory
        config.poolSize = 4
        // Many test servers share one cluster: few pipelined connections each (they still serve
        // every plain REST request of the tests).
        config.pipelineConnections = 4
        config.pipelineReadConnections = 2
        config.limits.workerThreads = 8
        config.auth.bcryptCost = 4
        // One mail sender (and its connection) per test server; the outbox is the same.
        config.auth.mail.senders = 1
        config.auth.signInLimit.hits = 10_000
        config.auth.refreshLimit.hits = 10_000
        // Storage's bytes in a folder of this server's own (the database is new too).
        config.storage.directory = FileManager.default.temporaryDirectory.appendingPathComponent("onboard-storage-\(UUID().uuidString)")
        config.limits.bodyLimits = [BodyLimit(pathPrefix: "/storage/v1/", maxBytes: config.storage.maxRequestBytes)]
        configure(&config)
        var logger = Logger(label: "onboard.test")
        // TEST_LOG_INFO=1: the servers' info lines too (a reload, a feed connecting), for a failure's story.
        logger.logLevel = ProcessInfo.processInfo.environment["TEST_LOG_INFO"] == nil ? .warning : .info
        if let log { logger = log.logger(label: "onboard.test") }
        application = try Application.start(config, logger: logger)
    }

    deinit { application.shutdown() }

    public var port: Int { application.port }

    /// A new client on its own connection.
    public func client() -> TestHTTPClient { TestHTTPClient(port: port) }

    /// Headers as supabase-py sends them, with `token` as bearer (the anon key by default).
    public func headers(_ token: String? = nil, _ extra: [(String, String)] = []) -> [(String, String)] {
        [
            ("apikey", anonKey), ("Authorization", "Bearer \(token ?? anonKey)"), ("Content-Type", "application/json"),
            ("X-Supabase-Api-Version", "2024-01-01")
        ] + extra
    }

    /// Signs a new user up; returns (id, access token, refresh token).
    public func signUp(email: String? = nil, password: String = "Secret-pass-1", data: String = "{}") throws -> (id: String, token: String, refresh: String) {
        let address = email ?? "user-\(UUID().uuidString.prefix(12).lowercased())@example.com"
        let response = try client().request(
            "POST", "/auth/v1/signup", headers: headers(), body: #"{"email":"\#(address)","password":"\#(password)","data":\#(data)}"#)
        guard response.status == 200, let session = response.jsonObject, let token = session["access_token"] as? String,
            let refresh = session["refresh_token"] as? String, let user = session["user"] as? [String: Any], let id = user["id"] as? String
        else {
            throw TestHTTPError.protocolError("sign-up failed: \(response.status) \(response.text)")
        }
        return (id, token, refresh)
    }
}
