import Postgres

/// The request counters in PostgreSQL (`auth.rate_limit_hit`, `auth.rate_limit_reached`), shared
/// by every replica.
public enum RateLimitCounters {
    /// One hit on each key; whether every key is still within `limit`.
    public static func hit(_ connection: Connection, keys: [String], limit: RateLimit) throws -> Bool {
        try connection.query("SELECT auth.rate_limit_hit(\(array: keys), \(limit.hits)::integer, \(limit.window)::double precision)").first?.bool(0) == true
    }

    /// Seconds until the windows of `keys` that are over `limit` end (at least 1): what a 429's
    /// `Retry-After` says.
    public static func secondsLeft(_ connection: Connection, keys: [String], limit: RateLimit) throws -> Int {
        let left = try connection.query(
            """
            SELECT ceil(extract(epoch FROM max(window_start) + make_interval(secs => \(limit.window)::double precision) - now()))::integer
            FROM auth.rate_limits WHERE key = ANY (\(array: keys)) AND hits > \(limit.hits)::integer
            """
        ).scalar.flatMap { Int($0) }
        return max(1, left ?? Int(limit.window.rounded(.up)))
    }

    /// One hit on each key; throws 429 `over_request_rate_limit` (with the seconds until the
    /// window ends) once a key is over `limit`.
    public static func check(_ connection: Connection, keys: [String], limit: RateLimit) throws {
        guard try hit(connection, keys: keys, limit: limit) else {
            throw AuthError.rateLimited(retryAfter: try secondsLeft(connection, keys: keys, limit: limit))
        }
    }

    /// Takes back one hit on `key` (an attempt that turned out not to count).
    public static func giveBack(_ connection: Connection, key: String) throws {
        _ = try connection.query("UPDATE auth.rate_limits SET hits = greatest(hits - 1, 0) WHERE key = \(key)")
    }

    /// Forgets `key`'s hits.
    public static func reset(_ connection: Connection, key: String) throws {
        _ = try connection.query("DELETE FROM auth.rate_limits WHERE key = \(key)")
    }
}
