import Foundation
import HTTP
import Logging
import Postgres

/// The analytics tables, always as the service role (the server's login role may be one that
/// can only `SET ROLE`): events through `product_analytics.ingest`, flags directly.
public struct AnalyticsStore: Sendable {
    let pool: Pool
    let logger: Logger
    let retention = RetentionSchedule()

    public init(pool: Pool, logger: Logger) {
        self.pool = pool
        self.logger = logger
    }

    /// Drops the events older than `days` (whole months), at most once an hour per process; a
    /// failure is logged and retried an hour later.
    func dropExpiredEvents(days: Int) {
        guard retention.isDue(every: 3600) else { return }
        do {
            let before = Date().addingTimeInterval(-Double(days) * 86_400)
            let dropped = try run { connection in
                try connection.query("SELECT product_analytics.drop_events_before(\(ISO8601DateFormatter().string(from: before))::timestamptz)")
            }
            if !dropped.isEmpty { logger.notice("analytics: dropped expired events", metadata: ["partitions": "\(dropped.compactMap { $0.string(0) })"]) }
        } catch {
            logger.warning("analytics: dropping expired events failed", metadata: ["error": "\(error)"])
        }
    }

    /// Stores the events in one statement (all or none); answers how many were new.
    func ingest(_ events: [CapturedEvent], source: String) throws(AnalyticsError) -> Int {
        let batch = JSON.array(events.map(\.json)).text
        return try run { connection in
            try connection.query("SELECT product_analytics.ingest(\(batch)::jsonb, \(source))").scalar.flatMap { Int($0) } ?? 0
        }
    }

    /// Every flag, by key.
    func flags() throws(AnalyticsError) -> [FeatureFlag] {
        try run { connection in try Self.flags(connection) }
    }

    /// The stored properties of the person `distinctID` names ({} for an unknown id).
    func personProperties(_ distinctID: String) throws(AnalyticsError) -> [String: JSON] {
        try run { connection in
            let text = try connection.query(
                """
                SELECT p.properties FROM product_analytics.person_distinct_ids AS d
                JOIN product_analytics.persons AS p ON p.id = d.person_id WHERE d.distinct_id = \(distinctID)
                """
            ).scalar
            return text.flatMap { JSON.parse(Array($0.utf8))?.object } ?? [:]
        }
    }

    /// Creates or replaces the flag `key` (its version raised on every change).
    func saveFlag(key: String, name: String, active: Bool, filters: JSON) throws(AnalyticsError) {
        try run { connection in
            _ = try connection.query(
                """
                INSERT INTO product_analytics.feature_flags (key, name, active, filters) VALUES (\(key), \(name), \(active ? "true" : "false"), \(filters.text)::jsonb)
                ON CONFLICT (key) DO UPDATE SET name = excluded.name, active = excluded.active, filters = excluded.filters,
                    version = product_analytics.feature_flags.version + 1, updated_at = now()
                """)
        }
    }

    /// An experiment's counts per variant (`product_analytics.experiment_counts`).
    func experimentCounts(flag: String, goal: ExperimentGoal, days: Int) throws(AnalyticsError) -> [String: (exposures: Int, conversions: Int)] {
        try run { connection in try Self.experimentCounts(connection, flag: flag, goal: goal, days: days) }
    }

    /// The same counts on a connection already acting as the service role (the dashboard's
    /// read-only transaction).
    public static func experimentCounts(
        _ connection: Connection, flag: String, goal: ExperimentGoal, days: Int
    ) throws -> [String: (exposures: Int, conversions: Int)] {
        var state: String?
        var event: String?
        switch goal {
        case .state(let name): state = name
        case .event(let name): event = name
        }
        let result = try connection.query(
            "SELECT variant, exposures, conversions FROM product_analytics.experiment_counts(\(flag), \(state), \(event), \(days))")
        var counts: [String: (exposures: Int, conversions: Int)] = [:]
        for row in result {
            if let key = row.string(0) { counts[key] = (row.int(1) ?? 0, row.int(2) ?? 0) }
        }
        return counts
    }

    /// Every flag, on a connection already acting as the service role.
    public static func flags(_ connection: Connection) throws -> [FeatureFlag] {
        let result = try connection.query("SELECT id, key, name, active, filters, version FROM product_analytics.feature_flags ORDER BY key")
        return result.indices.compactMap { row in
            let fields = result[row]
            guard let id = fields.int("id"), let key = fields.string("key"), let filters = fields.string("filters").flatMap({ JSON.parse(Array($0.utf8)) })
            else { return nil }
            return FeatureFlag(
                id: id, key: key, name: fields.string("name") ?? "", active: fields.bool("active") ?? false, filters: filters,
                version: fields.int("version") ?? 1)
        }
    }

    /// Deletes the flag `key`; whether there was one.
    func deleteFlag(key: String) throws(AnalyticsError) -> Bool {
        try run { connection in
            (try connection.query("DELETE FROM product_analytics.feature_flags WHERE key = \(key)").affectedRows ?? 0) > 0
        }
    }

    /// `body` in a transaction as the service role. A value the database refuses (a timestamp
    /// it cannot read, a check) is the client's error; anything else is logged and unavailable.
    private func run<T>(_ body: (Connection) throws -> T) throws(AnalyticsError) -> T {
        do {
            return try pool.withTransaction { connection in
                try connection.execute("SET LOCAL ROLE service_role")
                return try body(connection)
            }
        } catch let error as PostgresError where error.sqlState.map(Self.isClientError) ?? false {
            throw .invalidPayload(error.message)
        } catch {
            logger.error("analytics: the database failed", metadata: ["error": "\(error)"])
            throw .unavailable
        }
    }

    /// SQLSTATE classes 22 (data exception) and 23 (integrity constraint violation).
    static func isClientError(_ state: String) -> Bool {
        state.hasPrefix("22") || state.hasPrefix("23")
    }
}

/// When the retention last ran in this process.
final class RetentionSchedule: @unchecked Sendable {  // `last` is guarded by `lock`
    private let lock = NSLock()
    private var last: Date?

    /// Whether `interval` seconds have passed since the last time this answered true (true the
    /// first time), and if so, now is the last time.
    func isDue(every interval: TimeInterval) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let now = Date()
        if let last, now.timeIntervalSince(last) < interval { return false }
        last = now
        return true
    }
}
