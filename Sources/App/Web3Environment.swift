import Auth

/// The Web3 providers' settings from the environment, with GoTrue's names (without its
/// `GOTRUE_` prefix); docs/configuration.md's configuration table lists them.
extension Web3Config {
    mutating func apply(environment: [String: String]) throws {
        let env = EnvironmentReader(environment)
        if let on = try env.boolean("EXTERNAL_WEB3_ETHEREUM_ENABLED") { ethereumEnabled = on }
        if let on = try env.boolean("EXTERNAL_WEB3_SOLANA_ENABLED") { solanaEnabled = on }
        if let value = try env.seconds("EXTERNAL_WEB3_ETHEREUM_MAXIMUM_VALIDITY_DURATION") { ethereumMaximumValidity = value }
        if let value = try env.seconds("EXTERNAL_WEB3_SOLANA_MAXIMUM_VALIDITY_DURATION") { solanaMaximumValidity = value }
        if let hits = try env.integer("RATE_LIMIT_WEB3", minimum: 1) { limit = RateLimit(hits: hits, window: 300) }
    }

    /// The `--print-config` rows.
    func summaryRows() -> [(String, String)] {
        [
            ("EXTERNAL_WEB3_ETHEREUM_ENABLED", "\(ethereumEnabled)"), ("EXTERNAL_WEB3_ETHEREUM_MAXIMUM_VALIDITY_DURATION", "\(Int(ethereumMaximumValidity)) s"),
            ("EXTERNAL_WEB3_SOLANA_ENABLED", "\(solanaEnabled)"), ("EXTERNAL_WEB3_SOLANA_MAXIMUM_VALIDITY_DURATION", "\(Int(solanaMaximumValidity)) s"),
            ("RATE_LIMIT_WEB3", "\(limit.hits) per \(Int(limit.window)) s")
        ]
    }
}
