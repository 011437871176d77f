import Analytics
import App
import Foundation
import Realtime

/// The settings `eachVariableTakesEffect` walks: each variable, a usable value and what it changes.
extension ConfigurationTests {
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
}
