import Auth

/// The passkey settings from the environment, with GoTrue's names (without its `GOTRUE_`
/// prefix); docs/configuration.md's configuration table lists them.
extension PasskeyConfig {
    mutating func apply(environment: [String: String]) throws {
        let env = EnvironmentReader(environment)
        if let on = try env.boolean("PASSKEY_ENABLED") { enabled = on }
        if let count = try env.integer("PASSKEY_MAX_PASSKEYS_PER_USER", minimum: 1) { maxPerUser = count }
        if let id = env.value("WEBAUTHN_RP_ID") { rpID = id }
        if let name = env.value("WEBAUTHN_RP_DISPLAY_NAME") { rpDisplayName = name }
        if env.value("WEBAUTHN_RP_ORIGINS") != nil { rpOrigins = env.list("WEBAUTHN_RP_ORIGINS") }
        if let value = try env.seconds("WEBAUTHN_CHALLENGE_EXPIRY_DURATION") { challengeExpiry = value }
        if let hits = try env.integer("RATE_LIMIT_PASSKEY", minimum: 1) { limit = RateLimit(hits: hits, window: 300) }
    }

    /// The `--print-config` rows.
    func summaryRows() -> [(String, String)] {
        [
            ("PASSKEY_ENABLED", "\(enabled)"), ("PASSKEY_MAX_PASSKEYS_PER_USER", "\(maxPerUser)"), ("WEBAUTHN_RP_ID", rpID),
            ("WEBAUTHN_RP_DISPLAY_NAME", rpDisplayName), ("WEBAUTHN_RP_ORIGINS", rpOrigins.joined(separator: ",")),
            ("WEBAUTHN_CHALLENGE_EXPIRY_DURATION", "\(Int(challengeExpiry)) s"), ("RATE_LIMIT_PASSKEY", "\(limit.hits) per \(Int(limit.window)) s")
        ]
    }
}
