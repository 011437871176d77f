import Foundation
import HTTP
import JWT
import Logging
import Postgres
import REST
import Synchronization

/// One row change as the `realtime.notify_<oid>()` triggers announce it.
struct Change {
    let schema: String
    let table: String
    /// INSERT, UPDATE or DELETE.
    let type: String
    let commitTimestamp: String
    /// The primary key (the new row's; the old one's for DELETE).
    let key: [String: Any]
    /// DELETE: the whole old row when it fit the notification, else its key.
    let oldRow: [String: Any]?

    init?(json: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any],
              let schema = object["schema"] as? String, let table = object["table"] as? String,
              let type = object["type"] as? String, ["INSERT", "UPDATE", "DELETE"].contains(type),
              let timestamp = object["commit_timestamp"] as? String, let key = object["pk"] as? [String: Any], !key.isEmpty else { return nil }
        self.schema = schema
        self.table = table
        self.type = type
        commitTimestamp = timestamp
        self.key = key
        oldRow = object["old"] as? [String: Any]
    }
}

extension Change {
    /// True when `filter` is an equality on the table's key (`id=eq.…`) and this change's key
    /// is another row: decided without a query, with the same canonical key text the leases use.
    func keyMisses(_ filter: Condition, table: SchemaCache.Table) -> Bool {
        guard let wanted = table.rowKey(for: filter), let present = key[table.primaryKey[0]] else { return false }
        let text = (present as? String) ?? (present as? NSNumber)?.stringValue
        return text != nil && text != wanted
    }
}

/// The change feed: one dedicated connection (never the pool's) listens on `realtime_changes`;
/// each change is re-read once per distinct subscriber (role + claims) on a pool connection,
/// under that subscriber's role and claims with the ownership rule added, so RLS and the
/// middleware both decide who hears of it. If the listening connection drops, every Realtime
/// socket is closed with 1001 (clients reconnect, rejoin and re-read what they missed).
public final class ChangeFeed: Sendable {
    static let channel = "realtime_changes"
    static let filtersPerStatement = 1000

    let service: RealtimeService
    let conninfo: String
    private let running = Atomic<Bool>(false)
    /// Signalled when the feed's thread has closed its connection and ended.
    private let ended = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    private let delivered = Atomic<Int>(0)
    private let listening = Atomic<Bool>(false)

    public init(service: RealtimeService, conninfo: String) {
        self.service = service
        self.conninfo = conninfo
    }

    /// Events sent to channels since start.
    public var deliveredCount: Int { delivered.load(ordering: .relaxed) }
    public var isListening: Bool { listening.load(ordering: .acquiring) }

    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        started.store(true, ordering: .releasing)
        Thread.detachNewThread { [self] in
            run()
            ended.signal()
        }
    }

    /// Stops listening and waits (up to a few seconds) until the connection is closed, so the
    /// database is not stopped under it.
    public func stop() {
        running.store(false, ordering: .releasing)
        if started.exchange(false, ordering: .acquiringAndReleasing) { _ = ended.wait(timeout: .now() + 5) }
    }

    private func run() {
        var connection: Connection?
        var backoff = 0.1
        while running.load(ordering: .acquiring) {
            do {
                if connection == nil {
                    let fresh = try Connection(conninfo: conninfo, allowsPreparedStatements: false)
                    try fresh.listen(Self.channel)
                    connection = fresh
                    listening.store(true, ordering: .releasing)
                    service.setFeedListening(true)
                    backoff = 0.1
                    service.logger.info("realtime change feed listening")
                }
                for notification in try connection!.waitForNotifications(timeout: 0.25) where notification.channel == Self.channel {
                    process(notification.payload)
                }
                if running.load(ordering: .acquiring) { service.logLeaseFailure(service.renewLeases) }
            } catch {
                let wasListening = listening.exchange(false, ordering: .acquiringAndReleasing)
                service.setFeedListening(false)
                connection = nil
                if wasListening {
                    service.logger.error("realtime change feed lost; closing realtime sockets", metadata: ["error": "\(error)"])
                    service.closeAll(reason: "change feed lost")
                }
                Thread.sleep(forTimeInterval: backoff)
                backoff = min(backoff * 2, 5)
            }
        }
        listening.store(false, ordering: .releasing)
        service.setFeedListening(false)
    }

    /// Fans one change out to the channels allowed to see it.
    func process(_ payload: String) {
        guard let change = Change(json: payload) else {
            service.logger.warning("realtime: unreadable change notification")
            return
        }
        guard change.schema == "public", let table = service.schema.cache.tables[change.table] else { return }
        // A filter on the primary key (the common "my own row") is decided here, without a query.
        let subscriptions = service.hub.matching(schema: change.schema, table: change.table, type: change.type)
            .filter { subscription in subscription.filter.map { !change.keyMisses($0, table: table) } ?? true }
        guard !subscriptions.isEmpty else { return }

        // One re-read per distinct subscriber; then one frame per channel with its matching ids.
        var groups: [String: [Subscription]] = [:]
        for subscription in subscriptions { groups[subscription.caller.role + "\u{0}" + subscription.caller.claimsJSON, default: []].append(subscription) }
        for group in groups.values {
            do {
                guard let (dataJSON, matched) = try evaluate(change, table: table, for: group) else { continue }
                var channels: [String: (subscription: Subscription, ids: [Int])] = [:]
                for (subscription, matches) in zip(group, matched) where matches {
                    let key = "\(ObjectIdentifier(subscription.socket).hashValue)\u{0}\(subscription.topic)"
                    channels[key, default: (subscription, [])].ids.append(subscription.bindingID)
                }
                for (subscription, ids) in channels.values {
                    subscription.socket.deliver(topic: subscription.topic, joinRef: subscription.joinRef, ids: ids, dataJSON: dataJSON)
                    delivered.add(1, ordering: .relaxed)
                }
            } catch {
                service.logger.error("realtime: re-reading a change failed", metadata: ["table": "\(change.table)", "error": "\(error)"])
            }
        }
    }

    /// The event's `data` as `group`'s subscriber sees it, and which subscriptions' filters match;
    /// nil when the row is not visible to them.
    private func evaluate(_ change: Change, table: SchemaCache.Table, for group: [Subscription]) throws -> (String, [Bool])? {
        let caller = group[0].caller
        let isDelete = change.type == "DELETE"
        var conditions: [Condition] = []
        // A deleted row cannot be re-read, so RLS cannot judge it: the ownership rule is the
        // only check left, and it applies even where the middleware is switched off.
        let enforce = service.config.enforceOwnership || isDelete
        switch RowAccess.readScope(table: table.name, policy: service.config.policy, enabled: enforce, caller: caller) {
        case .none: return nil
        case .all: break
        case .only(let condition): conditions.append(condition)
        }
        let qualified = quoteIdentifier("public") + "." + quoteIdentifier(table.name)
        // Each distinct filter is evaluated once (subscribers often share one), in statements
        // of at most `filtersPerStatement` (PostgreSQL's target lists stop at 1,664 entries).
        var filters: [Condition] = []
        var filterIndex: [String: Int] = [:]
        let slots: [Int?] = group.map { subscription in
            guard let filter = subscription.filter else { return nil }
            let key = String(describing: filter)
            if let index = filterIndex[key] { return index }
            filters.append(filter)
            filterIndex[key] = filters.count - 1
            return filters.count - 1
        }
        var from: SQL
        if isDelete {
            // The row is gone: filters and the ownership rule are checked on the deleted row the
            // trigger sent (Realtime itself does not check DELETEs at all).
            let oldRow = JWT.serialize(change.oldRow ?? change.key)
            from = " FROM jsonb_populate_record(NULL::\(unsafeRaw: qualified), \(oldRow)::jsonb) AS \(unsafeRaw: quoteIdentifier(table.name))"
        } else {
            from = SQL(unsafeSQL: " FROM \(qualified)")
            for (column, value) in change.key { conditions.append(.filter(Filter(column: column, op: .eq, operand: .value(Self.text(value) ?? "")))) }
        }
        from = from + SQL(unsafeSQL: " WHERE ") + (try RowAccess.sql(conditions, table: table))
        var statements = [RESTService.setup(caller: caller, readOnly: true)]
        let chunks = stride(from: 0, to: max(filters.count, 1), by: Self.filtersPerStatement).map { Array(filters[$0..<min(filters.count, $0 + Self.filtersPerStatement)]) }
        for chunk in chunks {
            var select = SQL(unsafeSQL: "SELECT " + (isDelete ? "NULL::text" : "to_jsonb(\(quoteIdentifier(table.name)))::text"))
            for filter in chunk {
                select = select + SQL(unsafeSQL: ", COALESCE((") + (try RowAccess.sql([filter], table: table)) + SQL(unsafeSQL: "), false)")
            }
            statements.append(select + from)
        }
        statements.append("""
            SELECT COALESCE(json_agg(json_build_object('name', a.attname, 'type', t.typname) ORDER BY a.attnum), '[]')::text \
            FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid \
            WHERE a.attrelid = \(qualified)::regclass AND a.attnum > 0 AND NOT a.attisdropped \
            AND has_column_privilege(a.attrelid, a.attnum, 'SELECT')
            """)
        let results = try service.pool.withConnection { try $0.pipeline(statements) }
        let rows = results[1]
        guard rows.count == 1 else { return nil }
        let matched = slots.map { slot -> Bool in
            guard let slot else { return true }
            let chunk = results[1 + slot / Self.filtersPerStatement]
            return chunk.count == 1 && chunk[0, 1 + slot % Self.filtersPerStatement] == "t"
        }
        guard matched.contains(true) else { return nil }

        var data = #"{"schema":\#(jsonString(change.schema)),"table":\#(jsonString(change.table)),"commit_timestamp":\#(jsonString(change.commitTimestamp)),"type":\#(jsonString(change.type)),"columns":\#(results[results.count - 1].scalar ?? "[]")"#
        if let record = rows[0, 0] { data += #","record":\#(record)"# }
        if change.type != "INSERT" { data += #","old_record":\#(JWT.serialize(change.key))"# }
        data += #","errors":null}"#
        return (data, matched)
    }

    private static func text(_ value: Any) -> String? {
        switch value {
        case let text as String: return text
        case is NSNull: return nil
        default: return JWT.serialize(value)
        }
    }
}
