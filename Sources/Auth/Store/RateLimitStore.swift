import Postgres

/// The request counters in PostgreSQL (`auth.rate_limit_hit`, `auth.rate_limit_reached`), shared
/// by every replica.
public enum RateLimitCounters {
    /// One hit on each key; whether every key is still within `limit`.
    public static func hit(_ connection: Connection, keys: [String], limit: RateLimit) throws -> Bool {
        try connection.query("SELECT auth.rate_limit_hit(\(array: keys), \(limit.hits)::integer, \(limit.window)::double precision)").scalar == "t"
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
