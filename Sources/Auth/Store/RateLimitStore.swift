import Postgres

/// The request counters in PostgreSQL (`auth.rate_limit_hit`, `auth.rate_limit_reached`), shared
/// by every replica.
enum RateLimitCounters {
    /// One hit on each key; whether every key is still within `limit`.
    static func hit(_ connection: Connection, keys: [String], limit: RateLimit) throws -> Bool {
        try connection.query("SELECT auth.rate_limit_hit(\(array: keys), \(limit.hits)::integer, \(limit.window)::double precision)").scalar == "t"
    }

    /// Whether `key` has reached `limit` (no hit counted).
    static func reached(_ connection: Connection, key: String, limit: RateLimit) throws -> Bool {
        try connection.query("SELECT auth.rate_limit_reached(\(key), \(limit.hits)::integer, \(limit.window)::double precision)").scalar == "t"
    }
}
