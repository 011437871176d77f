/// GoTrue's Web3 providers (`EXTERNAL_WEB3_ETHEREUM_*`, `EXTERNAL_WEB3_SOLANA_*`) and their
/// request budget.
public struct Web3Config: Sendable {
    /// `EXTERNAL_WEB3_ETHEREUM_ENABLED`: Sign-In with Ethereum (off by default, as in GoTrue).
    public var ethereumEnabled = false
    /// `EXTERNAL_WEB3_SOLANA_ENABLED`: Sign-In with Solana (off by default, as in GoTrue).
    public var solanaEnabled = false
    /// `EXTERNAL_WEB3_ETHEREUM_MAXIMUM_VALIDITY_DURATION`: seconds a message is accepted around
    /// its Issued At (GoTrue's default: 10 minutes).
    public var ethereumMaximumValidity: Double = 600
    /// `EXTERNAL_WEB3_SOLANA_MAXIMUM_VALIDITY_DURATION`, likewise.
    public var solanaMaximumValidity: Double = 600
    /// `RATE_LIMIT_WEB3`: Web3 sign-ins per 5 minutes per client (GoTrue's default: 30).
    public var limit = RateLimit(hits: 30, window: 300)

    public init() {}

    func enabled(_ chain: Web3Chain) -> Bool {
        switch chain {
        case .ethereum: return ethereumEnabled
        case .solana: return solanaEnabled
        }
    }

    func maximumValidity(_ chain: Web3Chain) -> Double {
        switch chain {
        case .ethereum: return ethereumMaximumValidity
        case .solana: return solanaMaximumValidity
        }
    }
}
