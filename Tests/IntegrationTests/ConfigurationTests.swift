import Analytics
import App
import Foundation
import Realtime
import Testing

/// The configuration table of docs/configuration.md against `ServerConfig(environment:flags:developmentKeys:)`:
/// every variable has its documented default and its effect, and a value that cannot be used is
/// an error rather than silently the default.
@Suite("Configuration from the environment")
struct ConfigurationTests {
    static let secret = String(repeating: "s", count: 40)
    static let base = ["JWT_SECRET": secret, "DATABASE_URL": "postgresql://u:p@db/app"]
    /// Keys of their roles (a key of another role stops the start: DeploymentGuardTests).
    static let anonKey = APIKey.make(role: "anon", secret: Array("other-secret".utf8))
    static let serviceKey = APIKey.make(role: "service_role", secret: Array("other-secret".utf8))

    static func config(_ extra: [String: String] = [:], flags: ServeFlags = ServeFlags()) throws -> ServerConfig {
        try ServerConfig(environment: base.merging(extra) { $1 }, flags: flags) { _ in
            Issue.record("development keys asked for")
            return ("", "", "")
        }
    }

    /// A P-256 key as Apple's `.p8` files hold it (made for this test).
    static let applePEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgsul4jU/5Fx8Rc1Cw
        7L6hXPm60Ruur7EO7zggB4nmAc2hRANCAASUqfxdb7g93WfNqhPGUGuAC2AVkSp3
        8MvUhli2a9yY3zrPpBl9dfk8xa5TK+F9tu31WOohr0Nep6yJumFQ2arO
        -----END PRIVATE KEY-----
        """

    /// The variables the configuration table lists (docs/configuration.md: the table under
    /// "Settings", up to "Keys").
    static let documented: Set<String> = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/configuration.md")
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        guard let start = text.range(of: "\n## Settings\n"), let end = text.range(of: "\n## Keys\n", range: start.upperBound..<text.endIndex) else {
            return []
        }
        return Set(
            text[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line -> String? in
                guard line.hasPrefix("| `") else { return nil }
                return line.dropFirst(3).prefix { $0 != "`" }.description
            })
    }()

    @Test func mfaEncryptionKey() throws {
        let key = String(repeating: "A", count: 43)
        let named = try Self.config(["SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY": key, "SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID": "k2"])
        #expect(named.auth.mfa.encryptionKey?.id == "k2" && named.auth.mfa.encryptionKey?.key == [UInt8](repeating: 0, count: 32))
        #expect(throws: ConfigurationError.self) { try Self.config(["SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY": "short"]) }
        #expect(throws: ConfigurationError.self) {
            try Self.config(["SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY": key, "SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID": "jwt"])
        }
        #expect(throws: ConfigurationError.self) { try Self.config(["MFA_MAX_ENROLLED_FACTORS": "0"]) }
    }

    @Test func twilioNeedsItsCredentials() throws {
        let twilio = [
            "SMS_PROVIDER": "twilio", "SMS_TWILIO_ACCOUNT_SID": "AC1", "SMS_TWILIO_AUTH_TOKEN": "secret", "SMS_TWILIO_MESSAGE_SERVICE_SID": "MG1"
        ]
        let provider = try #require(try Self.config(twilio).auth.sms.twilio)
        #expect(provider.accountSID == "AC1" && provider.authToken == "secret" && provider.messageServiceSID == "MG1")
        #expect(provider.apiURL == "https://api.twilio.com")
        let local = try Self.config(twilio.merging(["SMS_TWILIO_API_URL": "http://127.0.0.1:9"]) { $1 }).auth.sms.twilio
        #expect(local?.apiURL == "http://127.0.0.1:9")
        #expect(throws: ConfigurationError.self) { try Self.config(twilio.merging(["SMS_TWILIO_AUTH_TOKEN": ""]) { $1 }) }
        #expect(throws: ConfigurationError.self) { try Self.config(["SMS_PROVIDER": "vonage"]) }
        #expect(throws: ConfigurationError.self) { try Self.config(twilio.merging(["SMS_TWILIO_API_URL": "ftp://x"]) { $1 }) }
        #expect(throws: ConfigurationError.self) { try Self.config(["SMS_TEST_OTP": "not-a-number:1"]) }
    }

    @Test func readReplicaLagIsADurationOrASizeOfWAL() throws {
        #expect(try Self.config().readReplicas == ReadReplicaConfig())
        let seconds = try Self.config(["DB_READ_MAX_LAG": "500ms"]).readReplicas
        #expect(seconds.maxLagSeconds == 0.5 && seconds.maxLagBytes == nil)
        #expect(try Self.config(["DB_READ_MAX_LAG": "2"]).readReplicas.maxLagSeconds == 2)
        #expect(try Self.config(["DB_READ_MAX_LAG": "512kB"]).readReplicas.maxLagBytes == 512 * 1024)
    }

    @Test func everyDocumentedVariableIsHandledAndNoOther() {
        #expect(Self.documented.count >= 30, "the table of docs/configuration.md was not found")
        #expect(Self.documented == Set(Self.effects.keys), "docs/configuration.md and tests differ: \(Self.documented.symmetricDifference(Self.effects.keys))")
    }

    @Test func defaultsAreTheDocumentedOnes() throws {
        let config = try Self.config()
        #expect(config.host == "127.0.0.1" && config.port == 54321)
        #expect(config.auth.jwtExpiry == 3600 && config.poolSize == 10 && config.preparedStatements && config.migrateOnStart)
        #expect(config.effectivePipelineConnections == 8)
        // One per core of the machine, 2 to 8.
        #expect(config.effectivePipelineReadConnections == min(max(ProcessInfo.processInfo.activeProcessorCount, 2), 8))
        #expect(
            config.limits.maxBodyBytes == 1_048_576 && config.limits.maxConnections == 10_000 && config.limits.workerThreads == 16
                && config.limits.ioThreadNice == -10)
        #expect(config.cors.allowedOrigins == ["*"] && config.auth.siteURL == "http://127.0.0.1:3000" && config.auth.bcryptCost == 10)
        #expect(config.auth.signInLimit == .init(hits: 30, window: 300) && config.auth.refreshLimit == .init(hits: 150, window: 300))
        #expect(config.auth.rateLimitHeader == nil && config.postgrest.transactionEnd == .commit && config.openAPIAccess == .serviceRole)
        #expect(!config.aggregatesEnabled)
        #expect(config.auth.providers.isEmpty && config.listenDatabaseURL == nil && config.realtimeFeed == .auto)
        #expect(!config.dashboard.isEnabled && config.dashboard.sessionSeconds == 8 * 3600)
        // --dev turns the dashboard on with the service-role key as its sign-in.
        #expect(try Self.config(flags: ServeFlags(dev: true)).dashboard.serviceKeySignIn)
        // --dev gives ten times GoTrue's request budgets (the banner says so); RATE_LIMIT_* still win.
        let dev = try Self.config(flags: ServeFlags(dev: true))
        #expect(dev.auth.signInLimit == .init(hits: 300, window: 300) && dev.auth.refreshLimit == .init(hits: 1500, window: 300))
        #expect(dev.auth.mail.otpRequestLimit.hits == 300 && dev.auth.mail.verifyLimit.hits == 300 && dev.auth.mfa.challengeAndVerifyLimit.hits == 150)
        #expect(dev.auth.mail.otpMaxFailures == config.auth.mail.otpMaxFailures && dev.auth.mfa.verifyFailureLimit == config.auth.mfa.verifyFailureLimit)
        let devSet = try Self.config(["RATE_LIMIT_SIGN_IN_SIGN_UPS": "7", "RATE_LIMIT_VERIFY": "9"], flags: ServeFlags(dev: true))
        #expect(devSet.auth.signInLimit == .init(hits: 7, window: 300) && devSet.auth.mail.verifyLimit.hits == 9)
        // API keys default to JWTs signed with the secret.
        #expect(config.keys.anonKey.split(separator: ".").count == 3 && config.keys.serviceRoleKey != config.keys.anonKey)
    }

    @Test func hooksNeedAURIGoTrueAccepts() throws {
        let on = try Self.config(["HOOK_CUSTOM_ACCESS_TOKEN_ENABLED": "true", "HOOK_CUSTOM_ACCESS_TOKEN_URI": "pg-functions://postgres/app/add_claims"])
        #expect(on.auth.hooks.customAccessToken?.target == .function(schema: "app", name: "add_claims"))
        let secret = "v1,whsec_" + Data(repeating: 7, count: 32).base64EncodedString()
        let http = try Self.config([
            "HOOK_CUSTOM_ACCESS_TOKEN_ENABLED": "true", "HOOK_CUSTOM_ACCESS_TOKEN_URI": "http://127.0.0.1:8000/hooks/claims?v=1",
            "HOOK_CUSTOM_ACCESS_TOKEN_SECRETS": secret + "|" + secret
        ])
        guard case .http(let url, let keys)? = http.auth.hooks.customAccessToken?.target else {
            Issue.record("an HTTP hook")
            return
        }
        #expect(url.absoluteString == "http://127.0.0.1:8000/hooks/claims?v=1")
        #expect(keys == [Array(repeating: 7, count: 32), Array(repeating: 7, count: 32)])
        #expect(throws: ConfigurationError("HOOK_CUSTOM_ACCESS_TOKEN_SECRETS: invalid secret format")) {
            try Self.config([
                "HOOK_CUSTOM_ACCESS_TOKEN_ENABLED": "true", "HOOK_CUSTOM_ACCESS_TOKEN_URI": "https://hooks.example/claims",
                "HOOK_CUSTOM_ACCESS_TOKEN_SECRETS": "whsec_abc"
            ])
        }
        for name in ["PASSWORD_VERIFICATION_ATTEMPT", "MFA_VERIFICATION_ATTEMPT", "BEFORE_USER_CREATED"] {
            let hooks = try Self.config(["HOOK_\(name)_ENABLED": "true", "HOOK_\(name)_URI": "pg-functions://postgres/public/h"]).auth.hooks
            #expect([hooks.passwordVerificationAttempt, hooks.mfaVerificationAttempt, hooks.beforeUserCreated].compactMap { $0 }.count == 1, "\(name)")
        }
        for (uri, reason) in [
            (nil, "HOOK_CUSTOM_ACCESS_TOKEN_ENABLED is true but HOOK_CUSTOM_ACCESS_TOKEN_URI is unset: give pg-functions://postgres/<schema>/<function>"),
            ("pg-functions://postgres/app", "HOOK_CUSTOM_ACCESS_TOKEN_URI: URI path does not contain enough parts"),
            ("pg-functions://postgres/app;drop/f", "HOOK_CUSTOM_ACCESS_TOKEN_URI: invalid schema name: app;drop"),
            ("pg-functions://postgres/app/1f", "HOOK_CUSTOM_ACCESS_TOKEN_URI: invalid table name: 1f"),
            ("ftp://hooks.example/f", "HOOK_CUSTOM_ACCESS_TOKEN_URI: only postgres hooks and HTTPS functions are supported at the moment"),
            ("http://hooks.example/f", "HOOK_CUSTOM_ACCESS_TOKEN_URI: only localhost, 127.0.0.1, and ::1 are supported with http")
        ] as [(String?, String)] {
            var environment = ["HOOK_CUSTOM_ACCESS_TOKEN_ENABLED": "true"]
            environment["HOOK_CUSTOM_ACCESS_TOKEN_URI"] = uri
            #expect(throws: ConfigurationError(reason)) { try Self.config(environment) }
        }
    }

    @Test func eachVariableTakesEffect() throws {
        for (name, effect) in Self.effects.sorted(by: { $0.key < $1.key }) {
            let config = try Self.config([name: effect.value])
            #expect(effect.check(config), "\(name)=\(effect.value) had no effect")
        }
        let google = try Self.config(["GOOGLE_JWKS": "/g.json", "GOOGLE_CLIENT_IDS": "a, b"]).auth.providers["google"]
        #expect(google?.clientIDs == ["a", "b"])
        let apple = try Self.config(["APPLE_JWKS": "/a.json", "APPLE_CLIENT_IDS": "c"]).auth.providers["apple"]
        #expect(apple?.clientIDs == ["c"])
        let appleKey = try Self.config(["EXTERNAL_APPLE_KEY_ID": "K1", "EXTERNAL_APPLE_PRIVATE_KEY": Self.applePEM]).auth.external["apple"]?.appleKey
        #expect(appleKey?.keyID == "K1")
        #expect(throws: ConfigurationError.self) { try Self.config(["EXTERNAL_APPLE_PRIVATE_KEY": "/nonexistent/apple.p8"]) }
        let smtp = try Self.config([
            "SMTP_HOST": "mail.example", "SMTP_PORT": "2525", "SMTP_USER": "mailer", "SMTP_PASS": "pw",
            "SMTP_TLS": "starttls", "SMTP_CA_FILE": #filePath
        ]).auth.mail.smtp
        #expect(smtp?.port == 2525 && smtp?.user == "mailer" && smtp?.password == "pw" && smtp?.security == .starttls && smtp?.caFile == #filePath)
        #expect(try Self.config().auth.mail.smtp == nil, "no SMTP_HOST: mails go to the log")
        let embedded = try ServerConfig(environment: ["ONBOARD_DATA_DIR": "/tmp/x/pg", "JWT_SECRET": Self.secret], flags: ServeFlags()) { _ in ("", "", "") }
        #expect(embedded.database == .embedded(folder: "/tmp/x/pg"))
        // Flags win over the environment.
        let flagged = try Self.config(["ONBOARD_HOST": "0.0.0.0", "ONBOARD_PORT": "1"], flags: ServeFlags(host: "::1", port: 2))
        #expect(flagged.host == "::1" && flagged.port == 2)
    }

    @Test(arguments: [
        ("ONBOARD_PORT", "http"), ("ONBOARD_PORT", "70000"), ("JWT_EXP", "0"), ("DB_POOL_SIZE", "ten"), ("DB_PREPARED_STATEMENTS", "maybe"),
        ("DB_PIPELINE_CONNECTIONS", "-1"), ("DB_PIPELINE_READ_CONNECTIONS", "-1"), ("DB_READ_MAX_LAG", "soon"), ("DB_READ_MAX_LAG", "0"),
        ("JWT_KEYS", "not json"),
        ("JWT_KEYS", #"[{"kty":"oct","kid":"x","k":"c2VjcmV0"}]"#),
        ("PUBLISHABLE_KEYS", "anon-key"), ("SECRET_KEYS", "sb_publishable_x"),
        ("MAX_BODY_BYTES", "-1"), ("STORAGE_MAX_FILE_SIZE", "0"), ("TUS_URL_EXPIRY_MS", "-5"), ("BCRYPT_COST", "3"), ("BCRYPT_COST", "40"),
        ("RATE_LIMIT_TOKEN_REFRESH", "many"), ("RATE_LIMIT_WEB3", "0"), ("EXTERNAL_WEB3_SOLANA_ENABLED", "maybe"),
        ("PASSKEY_ENABLED", "maybe"), ("RATE_LIMIT_PASSKEY", "0"), ("PASSKEY_MAX_PASSKEYS_PER_USER", "0"), ("WEBAUTHN_CHALLENGE_EXPIRY_DURATION", "soon"),
        ("PGRST_DB_TX_END", "sometimes"), ("PGRST_DB_MAX_ROWS", "-1"), ("PGRST_DB_PRE_REQUEST", "a.b.c"),
        ("PGRST_SERVER_TIMING_ENABLED", "sometimes"), ("PGRST_CLIENT_ERROR_VERBOSITY", "loud"), ("PGRST_DB_AGGREGATES_ENABLED", "sometimes"),
        ("OPENAPI_ACCESS", "everyone"), ("WORKER_THREADS", "0"),
        ("IO_THREAD_NICE", "20"), ("IO_THREAD_NICE", "-21"), ("REALTIME_FEED", "notify"),
        ("MAILER_AUTOCONFIRM", "perhaps"), ("MAILER_OTP_EXP", "soon"), ("SMTP_TLS", "maybe"), ("SMTP_PORT", "70000"),
        ("SMTP_CA_FILE", "/nonexistent/ca.pem"), ("SMTP_ADMIN_EMAIL", "Ops <ops@example.com>"), ("MAILER_TEMPLATES_RECOVERY", "/nonexistent.html"),
        ("DASHBOARD_PASSWORD", "short"), ("DASHBOARD_SERVICE_KEY_SIGN_IN", "maybe"), ("DASHBOARD_SESSION_HOURS", "0"), ("DASHBOARD_SESSION_HOURS", "9999"),
        ("DASHBOARD_STEP_LABELS", "CHILD_INFO"), ("DASHBOARD_STEP_LABELS", "child_info=Child")
    ])
    func unusableValuesAreErrors(name: String, value: String) {
        #expect(throws: ConfigurationError.self) { try Self.config([name: value]) }
    }

    @Test func secretsAreRequiredAgainstARealDatabase() throws {
        #expect(throws: ConfigurationError.self) {
            try ServerConfig(environment: ["DATABASE_URL": "postgresql://h/d"], flags: ServeFlags()) { _ in ("", "", "") }
        }
        #expect(throws: ConfigurationError.self) { try Self.config(["JWT_SECRET": "short"]) }
        // The embedded default (or --dev) uses the development keys.
        let dev = try ServerConfig(environment: [:], flags: ServeFlags()) { _ in (Self.secret, Self.anonKey, Self.serviceKey) }
        #expect(dev.keys.anonKey == Self.anonKey && dev.keys.serviceRoleKey == Self.serviceKey)
        // --print-config masks them.
        let summary = try Self.config(["ANON_KEY": Self.anonKey]).summary
        #expect(!summary.contains(Self.secret) && !summary.contains(Self.anonKey) && summary.contains("ANON_KEY"))
    }
}
