import HTTP
import Identity

/// The analytics settings (`ANALYTICS_*`, read by App's environment).
public struct AnalyticsConfig: Sendable {
    /// The project key the SDKs send as `api_key` / `token` (PostHog's `phc_…`): it may only
    /// send events and ask for flag values, never read anything back.
    public var projectKey: String
    /// The key server SDKs send as `Authorization: Bearer …` for the flag definitions
    /// (PostHog's personal or secret key, `phx_…`); never in an answer to the project key.
    public var secretKey: String
    /// The largest event (its JSON, in bytes) and the most events in one batch.
    public var maxEventBytes = 1_000_000
    public var maxBatchEvents = 1_000
    /// The largest body after gzip or base64 is undone.
    public var maxDecodedBodyBytes = 20_000_000
    /// Days events are kept (whole months are dropped once all their days are older); nil: kept.
    public var retentionDays: Int?
    /// Whether the client's address is dropped instead of stored as the `$ip` property.
    public var dropIP = false
    /// Events a minute one client address may send, and the project key as a whole (per server).
    public var eventsPerMinutePerClient = 60_000
    public var eventsPerMinute = 600_000

    public init(projectKey: String, secretKey: String) {
        self.projectKey = projectKey
        self.secretKey = secretKey
    }

    /// Keys made from the JWT secret when none are set: stable across restarts, distinct per
    /// deployment, and neither reveals the secret (HMAC-SHA256 of a fixed label).
    public static func derivedKeys(jwtSecret: [UInt8]) -> (projectKey: String, secretKey: String) {
        func derive(_ label: String) -> String {
            String(Base64URL.encode(Crypto.hmacSHA256(key: jwtSecret, data: Array(label.utf8))).prefix(40))
        }
        return ("phc_" + derive("onboard analytics project key"), "phx_" + derive("onboard analytics secret key"))
    }
}
