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

    /// Each variable: a usable value and what it must change. (LOG_LEVEL and LOG_FORMAT are read
    /// by the logging bootstrap of the command, not by the server's configuration.)
    static let effects: [String: (value: String, check: @Sendable (ServerConfig) -> Bool)] = [
        "DATABASE_URL": ("postgresql://x@h/d", { $0.database == .url("postgresql://x@h/d") }),
        "ONBOARD_DATA_DIR": ("/tmp/x/pg", { _ in true }),  // with DATABASE_URL unset only; see below
        "ONBOARD_MIGRATIONS_DIR": ("/srv/migrations", { $0.migrationsDirectory.path == "/srv/migrations" }),
        "ONBOARD_HOST": ("0.0.0.0", { $0.host == "0.0.0.0" }),
        "ONBOARD_PORT": ("8080", { $0.port == 8080 }),
        "JWT_SECRET": (String(repeating: "t", count: 32), { String(decoding: $0.keys.jwtSecret, as: UTF8.self) == String(repeating: "t", count: 32) }),
        "ANON_KEY": (anonKey, { $0.keys.anonKey == anonKey }),
        "SERVICE_ROLE_KEY": (serviceKey, { $0.keys.serviceRoleKey == serviceKey }),
        "JWT_KEYS": (
            #"[{"kty":"EC","crv":"P-256","kid":"k","key_ops":["verify"],"x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"}]"#,
            { $0.keys.verificationKeys.keys.map(\.keyID) == ["k"] && $0.keys.signingKey == nil }
        ),
        "JWT_KEY_ID": ("hs-1", { $0.keys.secretKeyID == "hs-1" }),
        "JWT_ADMIN_ROLES": ("service_role, ops_admin", { $0.auth.adminRoles == ["service_role", "ops_admin"] }),
        "PUBLISHABLE_KEYS": ("sb_publishable_a,sb_publishable_b", { $0.keys.publishableKeys == ["sb_publishable_a", "sb_publishable_b"] }),
        "SECRET_KEYS": ("sb_secret_a", { $0.keys.secretKeys == ["sb_secret_a"] }),
        "LOG_LEVEL": ("debug", { _ in true }),
        "LOG_FORMAT": ("json", { _ in true }),
        "JWT_EXP": ("600", { $0.auth.jwtExpiry == 600 }),
        "SITE_URL": ("https://app.example", { $0.auth.siteURL == "https://app.example" }),
        "CORS_ALLOWED_ORIGINS": ("https://a.example, https://b.example", { $0.cors.allowedOrigins == ["https://a.example", "https://b.example"] }),
        "DATABASE_LISTEN_URL": ("postgresql://direct/app", { $0.listenDatabaseURL == "postgresql://direct/app" }),
        "DB_REQUEST_ROLE": ("api_login", { $0.requestRole == "api_login" }),
        "DB_REQUEST_PASSWORD": ("p@ss", { $0.requestPassword == "p@ss" }),
        "DATABASE_READ_URLS": (
            "postgresql://standby-a/app, postgresql://standby-b/app",
            { $0.readReplicas.urls == ["postgresql://standby-a/app", "postgresql://standby-b/app"] }
        ),
        "DB_READ_MAX_LAG": ("16MB", { $0.readReplicas.maxLagBytes == 16 << 20 && $0.readReplicas.maxLagSeconds == .infinity }),
        "DB_POOL_SIZE": ("20", { $0.poolSize == 20 && $0.limits.workerThreads >= 24 }),
        "DB_PREPARED_STATEMENTS": ("false", { !$0.preparedStatements && $0.effectivePipelineConnections == 0 }),
        "DB_PIPELINE_CONNECTIONS": ("0", { $0.effectivePipelineConnections == 0 && $0.effectivePipelineReadConnections == 0 }),
        "DB_PIPELINE_READ_CONNECTIONS": ("3", { $0.effectivePipelineReadConnections == 3 && $0.effectivePipelineConnections == 8 }),
        "DB_MIGRATE_ON_START": ("false", { !$0.migrateOnStart }),
        "MAX_BODY_BYTES": ("2048", { $0.limits.maxBodyBytes == 2048 }),
        "STORAGE_DIR": ("/srv/objects", { $0.storage.directory.path == "/srv/objects" }),
        "TUS_URL_EXPIRY_MS": ("90000", { $0.storage.resumableExpirySeconds == 90 }),
        "STORAGE_MAX_FILE_SIZE": (
            "1000000",
            { $0.storage.maxFileSize == 1_000_000 && $0.limits.maxBodyBytes(forPath: "/storage/v1/object/b/x") == 1_000_000 + 64 * 1024 }
        ),
        "MAX_CONNECTIONS": ("99", { $0.limits.maxConnections == 99 }),
        "WORKER_THREADS": ("40", { $0.limits.workerThreads == 40 }),
        "IO_THREAD_NICE": ("0", { $0.limits.ioThreadNice == 0 }),
        "BCRYPT_COST": ("12", { $0.auth.bcryptCost == 12 }),
        "RATE_LIMIT_SIGN_IN_SIGN_UPS": ("7", { $0.auth.signInLimit.hits == 7 && $0.auth.signInLimit.window == 300 }),
        "RATE_LIMIT_AUTH_PER_MINUTE": ("9", { $0.auth.signInLimit.hits == 9 && $0.auth.signInLimit.window == 60 }),
        "RATE_LIMIT_TOKEN_REFRESH": ("11", { $0.auth.refreshLimit.hits == 11 }),
        "RATE_LIMIT_HEADER": ("X-Forwarded-For", { $0.auth.rateLimitHeader == "X-Forwarded-For" }),
        "PGRST_DB_TX_END": ("commit-allow-override", { $0.postgrest.transactionEnd == .commitAllowOverride }),
        "OPENAPI_ACCESS": ("all", { $0.openAPIAccess == .all }),
        "ANALYTICS_PROJECT_KEY": ("phc_project", { $0.analytics.projectKey == "phc_project" }),
        "ANALYTICS_SECRET_KEY": ("phx_secret", { $0.analytics.secretKey == "phx_secret" }),
        "ANALYTICS_MAX_EVENT_BYTES": ("2048", { $0.analytics.maxEventBytes == 2048 }),
        "ANALYTICS_MAX_BATCH_EVENTS": ("10", { $0.analytics.maxBatchEvents == 10 }),
        "ANALYTICS_DROP_IP": ("true", { $0.analytics.dropIP }),
        "ANALYTICS_RETENTION_DAYS": ("90", { $0.analytics.retentionDays == 90 }),
        "ANALYTICS_RATE_LIMIT_CLIENT_EVENTS": ("120", { $0.analytics.eventsPerMinutePerClient == 120 }),
        "ANALYTICS_RATE_LIMIT_EVENTS": ("1200", { $0.analytics.eventsPerMinute == 1200 }),
        "PGRST_DB_AGGREGATES_ENABLED": ("true", { $0.aggregatesEnabled }),
        "PGRST_DB_PREPARED_STATEMENTS": ("false", { !$0.preparedStatements }),
        "PGRST_DB_MAX_ROWS": ("1000", { $0.postgrest.maxRows == 1000 }),
        "PGRST_DB_SCHEMAS": ("public, personal", { $0.postgrest.schemas == ["public", "personal"] && $0.postgrest.defaultSchema == "public" }),
        "PGRST_DB_PRE_REQUEST": ("private.check_request", { $0.postgrest.preRequest == .init("private.check_request") }),
        "PGRST_DB_PRE_CONFIG": ("settings", { $0.postgrest.preConfig == .init("public.settings") }),
        "PGRST_DB_EXTRA_SEARCH_PATH": ("extensions, util", { $0.postgrest.extraSearchPath == ["extensions", "util"] }),
        "PGRST_JWT_AUD": ("my-app", { $0.postgrest.jwtAudience == "my-app" }),
        "PGRST_SERVER_TIMING_ENABLED": ("true", { $0.postgrest.serverTimingEnabled }),
        "PGRST_DB_PLAN_ENABLED": ("true", { $0.postgrest.planEnabled }),
        "PGRST_CLIENT_ERROR_VERBOSITY": ("minimal", { $0.postgrest.minimalErrors }),
        "PGRST_APP_SETTINGS_<NAME>": ("x", { $0.postgrest.appSettings.map(\.name) == ["app.settings.<name>"] }),
        "REALTIME_FEED": ("triggers", { $0.realtimeFeed == .triggers }),
        "REALTIME_PRIVATE_ONLY": ("true", { $0.realtimePrivateOnly }),
        "GOOGLE_JWKS": ("/etc/google.json", { $0.auth.providers["google"]?.keys.location == "/etc/google.json" }),
        "GOOGLE_CLIENT_IDS": ("a,b", { _ in true }),  // read with GOOGLE_JWKS; see below
        "APPLE_JWKS": ("https://appleid.apple.com/auth/keys", { $0.auth.providers["apple"] != nil }),
        "APPLE_CLIENT_IDS": ("c", { _ in true }),  // read with APPLE_JWKS; see below
        "EXTERNAL_GOOGLE_ENABLED": ("true", { $0.auth.external["google"]?.enabled == true }),
        "EXTERNAL_GOOGLE_CLIENT_ID": ("id-1,id-2", { $0.auth.external["google"]?.clientID == "id-1" && $0.auth.external["google"]?.enabled == false }),
        "EXTERNAL_GOOGLE_SECRET": ("s3cret", { $0.auth.external["google"]?.secret == "s3cret" }),
        "EXTERNAL_GOOGLE_REDIRECT_URI": (
            "https://api.example.com/auth/v1/callback", { $0.auth.external["google"]?.redirectURI == "https://api.example.com/auth/v1/callback" }
        ),
        "EXTERNAL_GOOGLE_URL": ("https://idp.example.com", { $0.auth.external["google"]?.url == "https://idp.example.com" }),
        "EXTERNAL_APPLE_ENABLED": ("true", { $0.auth.external["apple"]?.enabled == true }),
        "EXTERNAL_APPLE_CLIENT_ID": ("id-1,id-2", { $0.auth.external["apple"]?.clientID == "id-1" && $0.auth.external["apple"]?.enabled == false }),
        "EXTERNAL_APPLE_SECRET": ("s3cret", { $0.auth.external["apple"]?.secret == "s3cret" }),
        "EXTERNAL_APPLE_REDIRECT_URI": (
            "https://api.example.com/auth/v1/callback", { $0.auth.external["apple"]?.redirectURI == "https://api.example.com/auth/v1/callback" }
        ),
        "EXTERNAL_APPLE_URL": ("https://idp.example.com", { $0.auth.external["apple"]?.url == "https://idp.example.com" }),
        "EXTERNAL_GITHUB_ENABLED": ("true", { $0.auth.external["github"]?.enabled == true }),
        "EXTERNAL_GITHUB_CLIENT_ID": ("id-1,id-2", { $0.auth.external["github"]?.clientID == "id-1" && $0.auth.external["github"]?.enabled == false }),
        "EXTERNAL_GITHUB_SECRET": ("s3cret", { $0.auth.external["github"]?.secret == "s3cret" }),
        "EXTERNAL_GITHUB_REDIRECT_URI": (
            "https://api.example.com/auth/v1/callback", { $0.auth.external["github"]?.redirectURI == "https://api.example.com/auth/v1/callback" }
        ),
        "EXTERNAL_GITHUB_URL": ("https://idp.example.com", { $0.auth.external["github"]?.url == "https://idp.example.com" }),
        "EXTERNAL_OIDC_ENABLED": ("true", { $0.auth.external["oidc"]?.enabled == true }),
        "EXTERNAL_OIDC_CLIENT_ID": ("id-1,id-2", { $0.auth.external["oidc"]?.clientID == "id-1" && $0.auth.external["oidc"]?.enabled == false }),
        "EXTERNAL_OIDC_SECRET": ("s3cret", { $0.auth.external["oidc"]?.secret == "s3cret" }),
        "EXTERNAL_OIDC_REDIRECT_URI": (
            "https://api.example.com/auth/v1/callback", { $0.auth.external["oidc"]?.redirectURI == "https://api.example.com/auth/v1/callback" }
        ),
        "EXTERNAL_OIDC_URL": ("https://idp.example.com", { $0.auth.external["oidc"]?.url == "https://idp.example.com" }),
        "EXTERNAL_APPLE_TEAM_ID": ("TEAM123", { $0.auth.external["apple"]?.appleTeamID == "TEAM123" }),
        "EXTERNAL_APPLE_KEY_ID": ("KEY123", { $0.auth.external["apple"] != nil }),  // the kid of EXTERNAL_APPLE_PRIVATE_KEY; see below
        "EXTERNAL_APPLE_PRIVATE_KEY": (applePEM, { $0.auth.external["apple"]?.appleKey?.algorithm == "ES256" }),
        "DISABLE_SIGNUP": ("true", { $0.auth.disableSignup }),
        "EXTERNAL_ANONYMOUS_USERS_ENABLED": ("false", { !$0.auth.anonymousUsersEnabled }),
        "EXTERNAL_EMAIL_ENABLED": ("false", { !$0.auth.emailEnabled }),
        "OAUTH_SERVER_ENABLED": ("true", { $0.auth.oauthServer.enabled }),
        "EXTERNAL_WEB3_ETHEREUM_ENABLED": ("true", { $0.auth.web3.ethereumEnabled }),
        "EXTERNAL_WEB3_ETHEREUM_MAXIMUM_VALIDITY_DURATION": ("5m", { $0.auth.web3.ethereumMaximumValidity == 300 }),
        "EXTERNAL_WEB3_SOLANA_ENABLED": ("true", { $0.auth.web3.solanaEnabled }),
        "EXTERNAL_WEB3_SOLANA_MAXIMUM_VALIDITY_DURATION": ("90", { $0.auth.web3.solanaMaximumValidity == 90 }),
        "RATE_LIMIT_WEB3": ("12", { $0.auth.web3.limit.hits == 12 && $0.auth.web3.limit.window == 300 }),
        "PASSKEY_ENABLED": ("true", { $0.auth.passkey.enabled }),
        "PASSKEY_MAX_PASSKEYS_PER_USER": ("3", { $0.auth.passkey.maxPerUser == 3 }),
        "WEBAUTHN_RP_ID": ("example.com", { $0.auth.passkey.rpID == "example.com" }),
        "WEBAUTHN_RP_DISPLAY_NAME": ("My app", { $0.auth.passkey.rpDisplayName == "My app" }),
        "WEBAUTHN_RP_ORIGINS": (
            "https://a.example.com, https://b.example.com", { $0.auth.passkey.rpOrigins == ["https://a.example.com", "https://b.example.com"] }
        ),
        "WEBAUTHN_CHALLENGE_EXPIRY_DURATION": ("1m", { $0.auth.passkey.challengeExpiry == 60 }),
        "RATE_LIMIT_PASSKEY": ("12", { $0.auth.passkey.limit.hits == 12 && $0.auth.passkey.limit.window == 300 }),
        "OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION": ("true", { $0.auth.oauthServer.allowDynamicRegistration }),
        "OAUTH_SERVER_AUTHORIZATION_PATH": ("/consent", { $0.auth.oauthServer.authorizationPath == "/consent" }),
        "OAUTH_SERVER_AUTHORIZATION_TTL": ("5m", { $0.auth.oauthServer.authorizationTTL == 300 }),
        "OAUTH_SERVER_DEFAULT_SCOPE": ("openid", { $0.auth.oauthServer.defaultScope == "openid" }),
        "MAILER_AUTOCONFIRM": ("false", { !$0.auth.mail.autoconfirm }),
        "MAILER_SECURE_EMAIL_CHANGE_ENABLED": ("false", { !$0.auth.mail.secureEmailChange }),
        "MAILER_OTP_EXP": ("2h", { $0.auth.mail.otpExpiry == 7200 }),
        "MAILER_OTP_LENGTH": ("8", { $0.auth.mail.otpLength == 8 }),
        "MAILER_OTP_MAX_FAILURES": ("3", { $0.auth.mail.otpMaxFailures == 3 }),
        "MAILER_TEMPLATES_CONFIRMATION": (#filePath, { $0.auth.mail.template(.confirmation).body.contains("ConfigurationTests") }),
        "MAILER_SUBJECTS_CONFIRMATION": ("Welcome", { $0.auth.mail.template(.confirmation).subject == "Welcome" }),
        "SMTP_HOST": ("smtp.example.com", { $0.auth.mail.smtp?.host == "smtp.example.com" && $0.auth.mail.smtp?.port == 587 }),
        "SMTP_PORT": ("2525", { _ in true }),  // read with SMTP_HOST; see below
        "SMTP_USER": ("mailer", { _ in true }),  // read with SMTP_HOST; see below
        "SMTP_TLS": ("starttls", { _ in true }),  // read with SMTP_HOST; see below
        "SMTP_CA_FILE": (#filePath, { _ in true }),  // read with SMTP_HOST; see below
        "SMTP_ADMIN_EMAIL": ("ops@example.com", { $0.auth.mail.sender.address == "ops@example.com" }),
        "SMTP_SENDER_NAME": ("Onboard", { $0.auth.mail.sender.name == "Onboard" }),
        "SMTP_MAX_FREQUENCY": ("5s", { $0.auth.mail.maxFrequency == 5 }),
        "RATE_LIMIT_EMAIL_SENT": ("7", { $0.auth.mail.emailSentLimit == .init(hits: 7, window: 3600) }),
        "RATE_LIMIT_OTP": ("8", { $0.auth.mail.otpRequestLimit == .init(hits: 8, window: 300) }),
        "RATE_LIMIT_VERIFY": ("9", { $0.auth.mail.verifyLimit == .init(hits: 9, window: 300) }),
        "API_EXTERNAL_URL": ("https://api.example", { $0.auth.mail.externalURL == "https://api.example" }),
        "URI_ALLOW_LIST": ("myapp://**, https://*.example.com/**", { $0.auth.mail.allowList == ["myapp://**", "https://*.example.com/**"] }),
        "EXTERNAL_FLOW_STATE_EXPIRY_DURATION": ("10m", { $0.auth.mail.flowStateExpiry == 600 }),
        "SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION": ("true", { $0.auth.mail.requireReauthentication }),
        "EXTERNAL_PHONE_ENABLED": ("true", { $0.auth.sms.enabled }),
        "SMS_AUTOCONFIRM": ("true", { $0.auth.sms.autoconfirm }),
        "SMS_OTP_EXP": ("5m", { $0.auth.sms.otpExpiry == 300 }),
        "SMS_OTP_LENGTH": ("8", { $0.auth.sms.otpLength == 8 }),
        "SMS_MAX_FREQUENCY": ("30s", { $0.auth.sms.maxFrequency == 30 }),
        "RATE_LIMIT_SMS_SENT": ("4", { $0.auth.sms.sentLimit == .init(hits: 4, window: 3600) }),
        "SMS_TEMPLATE": ("Code: {{ .Code }}", { $0.auth.sms.template == "Code: {{ .Code }}" }),
        "SMS_TEST_OTP": ("+1 555 000 0000:123456, 4915100000000:654321", { $0.auth.sms.testOTPs == ["15550000000": "123456", "4915100000000": "654321"] }),
        "SMS_TEST_OTP_VALID_UNTIL": ("2030-01-01T00:00:00Z", { $0.auth.sms.testOTPValidUntil?.timeIntervalSince1970 == 1_893_456_000 }),
        // Twilio's settings are read together; see twilioNeedsItsCredentials.
        "SMS_PROVIDER": ("", { $0.auth.sms.twilio == nil }),
        "SMS_TWILIO_ACCOUNT_SID": ("AC1", { _ in true }),
        "SMS_TWILIO_AUTH_TOKEN": ("secret", { _ in true }),
        "SMS_TWILIO_MESSAGE_SERVICE_SID": ("MG1", { _ in true }),
        "SMS_TWILIO_API_URL": ("http://127.0.0.1:9", { _ in true }),
        "DASHBOARD_PASSWORD": ("correct-horse-battery", { $0.dashboard.password == "correct-horse-battery" && $0.dashboard.isEnabled }),
        "DASHBOARD_SERVICE_KEY_SIGN_IN": ("true", { $0.dashboard.serviceKeySignIn && $0.dashboard.isEnabled }),
        "DASHBOARD_SESSION_HOURS": ("2", { $0.dashboard.sessionSeconds == 7200 }),
        "DASHBOARD_STEP_LABELS": (
            "CHILD_INFO=About the child, GOALS=Goals", { $0.dashboard.stepLabels == ["CHILD_INFO": "About the child", "GOALS": "Goals"] }
        ),
        "MFA_TOTP_ENROLL_ENABLED": ("false", { !$0.auth.mfa.totpEnrollEnabled && $0.auth.mfa.totpVerifyEnabled }),
        "MFA_TOTP_VERIFY_ENABLED": ("false", { !$0.auth.mfa.totpVerifyEnabled && $0.auth.mfa.totpEnrollEnabled }),
        "MFA_MAX_ENROLLED_FACTORS": ("3", { $0.auth.mfa.maxEnrolledFactors == 3 }),
        "MFA_MAX_VERIFIED_FACTORS": ("2", { $0.auth.mfa.maxVerifiedFactors == 2 }),
        "MFA_CHALLENGE_EXPIRY_DURATION": ("10m", { $0.auth.mfa.challengeExpiry == 600 }),
        "MFA_FACTOR_EXPIRY_DURATION": ("15m", { $0.auth.mfa.factorExpiry == 900 }),
        "MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY": ("5", { $0.auth.mfa.challengeAndVerifyLimit == .init(hits: 5, window: 60) }),
        "SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY": (
            String(repeating: "A", count: 42) + "E", { $0.auth.mfa.encryptionKey?.id == "onboard" && $0.auth.mfa.encryptionKey?.key.last == 1 }
        ),
        "SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID": ("k2", { _ in true }),  // read with the key; see mfaEncryptionKey
        // A hook is on with both; see hooksNeedAURIGoTrueAccepts.
        "HOOK_CUSTOM_ACCESS_TOKEN_ENABLED": ("false", { _ in true }),
        "HOOK_CUSTOM_ACCESS_TOKEN_URI": ("pg-functions://postgres/public/h", { $0.auth.hooks.customAccessToken == nil }),
        "HOOK_PASSWORD_VERIFICATION_ATTEMPT_ENABLED": ("false", { _ in true }),
        "HOOK_PASSWORD_VERIFICATION_ATTEMPT_URI": ("pg-functions://postgres/public/h", { $0.auth.hooks.passwordVerificationAttempt == nil }),
        "HOOK_MFA_VERIFICATION_ATTEMPT_ENABLED": ("false", { _ in true }),
        "HOOK_MFA_VERIFICATION_ATTEMPT_URI": ("pg-functions://postgres/public/h", { $0.auth.hooks.mfaVerificationAttempt == nil }),
        "HOOK_BEFORE_USER_CREATED_ENABLED": ("false", { _ in true }),
        "HOOK_BEFORE_USER_CREATED_URI": ("pg-functions://postgres/public/h", { $0.auth.hooks.beforeUserCreated == nil }),
        "HOOK_SEND_SMS_ENABLED": ("false", { _ in true }),
        "HOOK_SEND_SMS_URI": ("pg-functions://postgres/public/h", { $0.auth.hooks.sendSMS == nil }),
        "HOOK_SEND_EMAIL_ENABLED": ("false", { _ in true }),
        "HOOK_SEND_EMAIL_URI": ("pg-functions://postgres/public/h", { $0.auth.hooks.sendEmail == nil }),
        // An HTTP hook's, read with its URI; see hooksNeedAURIGoTrueAccepts.
        "HOOK_CUSTOM_ACCESS_TOKEN_SECRETS": ("v1,whsec_x", { _ in true }),
        "HOOK_PASSWORD_VERIFICATION_ATTEMPT_SECRETS": ("v1,whsec_x", { _ in true }),
        "HOOK_MFA_VERIFICATION_ATTEMPT_SECRETS": ("v1,whsec_x", { _ in true }),
        "HOOK_BEFORE_USER_CREATED_SECRETS": ("v1,whsec_x", { _ in true }),
        "HOOK_SEND_SMS_SECRETS": ("v1,whsec_x", { _ in true }),
        "HOOK_SEND_EMAIL_SECRETS": ("v1,whsec_x", { _ in true }),
        "HOOK_TIMEOUT_MS": ("500", { $0.auth.hooks.timeoutMilliseconds == 500 })
    ]

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
