/// GoTrue's passkeys (`PASSKEY_*`) and the relying party they are registered for
/// (`WEBAUTHN_*`, shared with WebAuthn factors in GoTrue).
public struct PasskeyConfig: Sendable {
    /// `PASSKEY_ENABLED`: the `/passkeys` endpoints (off by default, as in GoTrue: 404
    /// `passkey_disabled`). The admin endpoints are served either way.
    public var enabled = false
    /// `PASSKEY_MAX_PASSKEYS_PER_USER` (GoTrue's default: 10).
    public var maxPerUser = 10
    /// `WEBAUTHN_RP_ID`: the relying party's id, a registrable domain (e.g. `example.com`).
    public var rpID = ""
    /// `WEBAUTHN_RP_DISPLAY_NAME`.
    public var rpDisplayName = ""
    /// `WEBAUTHN_RP_ORIGINS`: the origins a ceremony's client data may name
    /// (e.g. `https://app.example.com`).
    public var rpOrigins: [String] = []
    /// `WEBAUTHN_CHALLENGE_EXPIRY_DURATION`: seconds a challenge may be answered (GoTrue's
    /// default: 5 minutes).
    public var challengeExpiry: Double = 300
    /// `RATE_LIMIT_PASSKEY`: passkey sign-in options per 5 minutes per client (GoTrue's
    /// default: 30).
    public var limit = RateLimit(hits: 30, window: 300)

    public init() {}
}
