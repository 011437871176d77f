import EventLoop
import Foundation
import HTTP
import Identity
import Logging
import Postgres
import REST
import Synchronization

/// Which change feed a server process runs (`REALTIME_FEED`).
public enum RealtimeFeedChoice: String, Sendable, CaseIterable {
    /// The WAL when the database can stream it (wal_level=logical and a replication connection
    /// with a slot), else the triggers, with one warning.
    case auto
    /// The WAL, or the server does not start.
    case wal
    /// The triggers (pg_notify under leases).
    case triggers
}

/// The feed a running server process uses.
public enum RealtimeFeedKind: String, Sendable {
    /// Logical replication: each committed change, in commit order, with its committed row.
    case wal
    /// Triggers: `pg_notify` of the row's key while a server holds a lease; the row is re-read.
    case triggers
}

/// The change feed: a direct connection (never the pool's) brings every committed change of the
/// enabled tables; each is checked once per distinct subscriber (role + claims) on a pool
/// connection, under that subscriber's role and claims with the ownership rule added, so RLS and
/// the middleware both decide who hears of it. If the feed's connection drops, every Realtime
/// socket is closed with 1001 (clients reconnect, rejoin and re-read what they missed).
///
/// The WAL feed (`WALStream`) streams the publication through a temporary logical replication
/// slot; the trigger feed hears the triggers' notifications through the process's LISTEN
/// connection (`NotificationListener`) and takes leases so that only watched writes notify. `start` picks one for the process's lifetime.
public final class ChangeFeed: Sendable {
    static let channel = "realtime_changes"
    static let filtersPerStatement = 1000

    let service: RealtimeService
    /// The WAL stream's database (a direct connection, as `listener`'s).
    let conninfo: String
    /// The trigger feed's notifications come through it.
    let listener: NotificationListener
    let choice: RealtimeFeedChoice
    let running = Atomic<Bool>(false)
    /// Signalled when the feed's thread has closed its connection and ended.
    private let ended = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    private let delivered = Atomic<Int>(0)
    /// WAL: the end of the last transaction processed (where a new stream resumes from).
    let processed = Atomic<UInt64>(0)
    /// WAL: streams opened so far (each gets its own slot name).
    let streams = Atomic<Int>(0)

    public init(service: RealtimeService, conninfo: String, listener: NotificationListener, choice: RealtimeFeedChoice = .auto) {
        self.service = service
        self.conninfo = conninfo
        self.listener = listener
        self.choice = choice
    }

    /// Events sent to channels since start.
    public var deliveredCount: Int { delivered.load(ordering: .relaxed) }
    /// True while the feed's connection is up (the stream or the LISTEN).
    public var isListening: Bool { service.feedIsListening }
    /// The feed in use, once `start` has chosen.
    public var kind: RealtimeFeedKind? { service.feedKind }
    /// This process's replication slots are named with this prefix and a stream number.
    public var slotPrefix: String { "onboard_realtime_" + service.serverID.uuidString.lowercased().replacingOccurrences(of: "-", with: "") }

    /// Chooses the feed and, when the database answers, connects it before returning (the first
    /// joins need not wait for it), then runs it on a thread of its own; a database that does not
    /// answer yet is tried again there (joins wait for the feed, then are refused). Throws only
    /// when the choice cannot be honoured: `wal` on a database without logical WAL, or whose
    /// role may not replicate.
    public func start() throws {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var first: Chosen? = nil
        do {
            first = try chooseFeed()
        } catch let refusal as FeedError {
            running.store(false, ordering: .releasing)
            throw refusal
        } catch {
            service.logger.error("realtime: the change feed cannot reach the database yet; retrying", metadata: ["error": "\(logText(error))"])
        }
        started.store(true, ordering: .releasing)
        startThread(name: "change-feed") { [self, first] in
            run(first)
            ended.signal()
        }
    }

    /// Stops the feed and waits (up to a few seconds) until its connection is closed (which ends
    /// a WAL feed's slot), so the database is not stopped under it.
    public func stop() {
        running.store(false, ordering: .releasing)
        if started.exchange(false, ordering: .acquiringAndReleasing) { _ = ended.wait(timeout: .now() + 5) }
        // The trigger feed's subscription ignores what comes after this.
        if service.feedKind == .triggers { service.setFeed(.triggers, listening: false) }
    }

    private enum Chosen: Sendable {
        case wal(WALStream)
        case triggers
    }

    /// A choice that cannot be honoured (configuration, not connectivity).
    private struct FeedError: Error, CustomStringConvertible {
        let description: String
    }

    private func chooseFeed() throws -> Chosen {
        if choice == .triggers {
            service.setFeed(.triggers, listening: false)
            return .triggers
        }
        let level = try Connection(conninfo: conninfo, allowsPreparedStatements: false).query("SHOW wal_level").scalar ?? "unknown"
        guard level == "logical" else {
            if choice == .wal { throw FeedError(description: "REALTIME_FEED=wal needs wal_level=logical; the database has wal_level=\(level)") }
            service.logger.warning(
                "realtime: the database has wal_level=\(level), not logical, so Realtime uses its trigger feed (each write to an enabled table pays a trigger, watched ones a NOTIFY); set wal_level=logical and restart PostgreSQL to stream the WAL instead"
            )
            service.setFeed(.triggers, listening: false)
            return .triggers
        }
        do {
            let stream = try openStream()
            service.setFeed(.wal, listening: true)
            service.logger.info("realtime change feed streaming the WAL", metadata: ["slot": "\(stream.slot)"])
            return .wal(stream)
        } catch {
            if choice == .wal { throw FeedError(description: "REALTIME_FEED=wal, but the WAL cannot be streamed: \(logText(error))") }
            service.logger.warning(
                "realtime: the WAL cannot be streamed (\(logText(error))), so Realtime uses its trigger feed; give the server's database role REPLICATION (and pg_hba.conf a line for its replication connections) to stream the WAL instead"
            )
            service.setFeed(.triggers, listening: false)
            return .triggers
        }
    }

    private func run(_ first: Chosen?) {
        var chosen = first
        var backoff = Backoff()
        while chosen == nil && running.load(ordering: .acquiring) {
            do {
                chosen = try chooseFeed()
            } catch {
                backoff.wait()
            }
        }
        switch chosen {
        case .wal(let stream)?: runWAL(first: stream)
        case .triggers?: runTriggers()
        case nil: break
        }
    }

    /// The feed's connection is gone: every Realtime socket is closed (clients rejoin and re-read).
    func lost(_ error: any Error) {
        guard service.feedIsListening else { return }
        service.setFeed(service.feedKind ?? .wal, listening: false)
        service.logger.error("realtime change feed lost; closing realtime sockets", metadata: ["error": "\(logText(error))"])
        service.closeAll(reason: "change feed lost")
    }

    // MARK: fan-out

    /// Fans one change out to the channels allowed to see it.
    func process(_ change: Change) {
        guard change.schema == "public", let table = service.schema.cache.tables[change.table], !table.primaryKey.isEmpty else { return }
        // A filter on the primary key (the common "my own row") is decided here, without a query.
        let subscriptions = service.hub.matching(schema: change.schema, table: change.table, type: change.type)
            .filter { subscription in subscription.filter.map { !change.keyMisses($0, table: table) } ?? true }
            .filter { subscription in
                guard let xid = change.xid, let since = subscription.since else { return true }
                return !since.sees(xid)
            }
        guard !subscriptions.isEmpty else { return }

        // One check per distinct subscriber; then one frame per channel with its matching ids.
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
                service.logger.error(
                    "realtime: checking a change for a subscriber failed", metadata: ["table": "\(change.table)", "error": "\(logText(error))"])
            }
        }
    }

    /// The event's `data` as `group`'s subscriber sees it, and which subscriptions' filters match;
    /// nil when the row is not visible to them.
    ///
    /// Three ways to the row, one statement shape (`SELECT record, old_record, filters… FROM row
    /// WHERE ownership AND visible`), run as the subscriber:
    /// - WAL: the committed row, rebuilt from the stream's text values in their own types. It
    ///   is visible when the table still holds exactly that row and the subscriber can read it
    ///   there (PostgreSQL's RLS), or, when the table no longer holds it (written again since,
    ///   deleted, or this is the old row of a DELETE), when the table's SELECT policies allow it
    ///   (`realtime.policies_allow`; `realtime.is_current` tells the two cases apart past RLS,
    ///   in the same snapshot).
    /// - triggers, DELETE: the old row from the notification, by the policies likewise.
    /// - triggers, INSERT/UPDATE: the row as the table holds it now, read by key under RLS.
    private func evaluate(_ change: Change, table: SchemaCache.Table, for group: [Subscription]) throws -> (String, [Bool])? {
        let caller = group[0].caller
        var conditions: [Condition] = []
        switch RowAccess.readScope(table: table.name, policy: service.config.policy, enabled: service.config.enforceOwnership, caller: caller) {
        case .none: return nil
        case .all: break
        case .only(let condition): conditions.append(condition)
        }
        let (filters, slots) = Self.distinctFilters(group)
        let source = Self.source(of: change, table: table, conditions: &conditions)
        var condition = try RowAccess.sql(conditions, table: table)
        if let visible = source.visible { condition = condition + " AND " + visible }
        let from = source.from + " WHERE " + condition
        let statements = try Self.statements(caller: caller, table: table, record: source.record, oldRecord: source.oldRecord, filters: filters, from: from)
        let results = try service.pool.withConnection { try $0.pipeline(statements) }
        let rows = results[1]
        guard rows.count == 1 else { return nil }
        let matched = slots.map { slot -> Bool in
            guard let slot else { return true }
            let chunk = results[1 + slot / Self.filtersPerStatement]
            return chunk.count == 1 && chunk[0].bool(2 + slot % Self.filtersPerStatement) == true
        }
        guard matched.contains(true) else { return nil }

        var data =
            #"{"schema":\#(jsonString(change.schema)),"table":\#(jsonString(change.table)),"commit_timestamp":\#(jsonString(change.commitTimestamp)),"type":\#(jsonString(change.type)),"columns":\#(results[results.count - 1].scalar ?? "[]")"#
        if let recordJSON = rows[0, 0] { data += #","record":\#(recordJSON)"# }
        if let oldJSON = rows[0, 1] { data += #","old_record":\#(oldJSON)"# }
        data += #","errors":null}"#
        return (data, matched)
    }

    /// Each distinct filter of `group` once (subscribers often share one), and per subscription
    /// the index of its filter (nil: no filter).
    private static func distinctFilters(_ group: [Subscription]) -> (filters: [Condition], slots: [Int?]) {
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
        return (filters, slots)
    }

    /// Where the row comes from (a FROM clause), when it is visible beside RLS, and the
    /// `record` and `old_record` expressions; a row read from the table adds its key to `conditions`.
    private static func source(
        of change: Change, table: SchemaCache.Table, conditions: inout [Condition]
    ) -> (from: SQL, visible: SQL?, record: SQL, oldRecord: SQL) {
        let isDelete = change.type == "DELETE"
        let qualified = quoteIdentifier("public") + "." + quoteIdentifier(table.name)
        let row = quoteIdentifier(table.name)
        var from: SQL
        var visible: SQL? = nil
        var record: SQL = isDelete ? "NULL::text" : SQL(unsafeSQL: "to_jsonb(\(row).*)::text")
        var oldRecord: SQL = "NULL::text"
        if let committed = change.committed {
            let values = table.name == "realtime_committed" ? "realtime_committed_values" : "realtime_committed"
            let columns = SQL.join(committed.columns.map { "\($0.value, type: $0.typeOID) AS \(ident: $0.name)" }, separator: ", ")
            from =
                " FROM (SELECT " + columns
                + ") AS \(ident: values), jsonb_populate_record(NULL::\(unsafeRaw: qualified), to_jsonb(\(ident: values))) AS \(unsafeRaw: row)"
            if isDelete {
                visible = "realtime.policies_allow(\(unsafeRaw: row).*)"
            } else {
                let current = table.name == "realtime_current" ? "realtime_current_row" : "realtime_current"
                let sameKey = table.primaryKey.map { "\(ident: current).\(ident: $0) = \(unsafeRaw: row).\(ident: $0)" as SQL }
                visible =
                    "CASE WHEN EXISTS (SELECT 1 FROM \(unsafeRaw: qualified) AS \(ident: current) WHERE " + SQL.join(sameKey, separator: " AND ")
                    + " AND (\(ident: current).*)::text = (\(unsafeRaw: row).*)::text) THEN true WHEN realtime.is_current(\(unsafeRaw: row).*) THEN false "
                    + "ELSE realtime.policies_allow(\(unsafeRaw: row).*) END"
                if !committed.missing.isEmpty {
                    record = "(to_jsonb(\(unsafeRaw: row).*) - \(array: committed.missing)::text[])::text"
                }
            }
            if change.type != "INSERT" {
                oldRecord =
                    "jsonb_build_object(" + SQL.join(committed.oldKey.map { "\($0.name)::text, \($0.value, type: $0.typeOID)" as SQL }, separator: ", ")
                    + ")::text"
            }
        } else if isDelete {
            from = " FROM jsonb_populate_record(NULL::\(unsafeRaw: qualified), \(JWT.serialize(change.oldRow ?? change.key))::jsonb) AS \(unsafeRaw: row)"
            visible = "realtime.policies_allow(\(unsafeRaw: row).*)"
            oldRecord = "\(JWT.serialize(change.key))::text"
        } else {
            from = SQL(unsafeSQL: " FROM \(qualified)")
            for (column, value) in change.key { conditions.append(.filter(Filter(column: column, op: .eq, operand: .value(text(value) ?? "")))) }
            if change.type != "INSERT" { oldRecord = "\(JWT.serialize(change.key))::text" }
        }
        return (from, visible, record, oldRecord)
    }

    /// The statements run as the subscriber: the role's setup, the row with the filters (at most
    /// `filtersPerStatement` a statement: PostgreSQL's target lists stop at 1,664 entries), and the
    /// columns the subscriber may read.
    private static func statements(
        caller: Caller, table: SchemaCache.Table, record: SQL, oldRecord: SQL, filters: [Condition], from: SQL
    ) throws -> [SQL] {
        let qualified = quoteIdentifier("public") + "." + quoteIdentifier(table.name)
        var statements = [RESTService.setup(caller: caller, readOnly: true)]
        let chunks = stride(from: 0, to: max(filters.count, 1), by: filtersPerStatement).map {
            Array(filters[$0..<min(filters.count, $0 + filtersPerStatement)])
        }
        for chunk in chunks {
            var select = "SELECT " + record + ", " + oldRecord
            for filter in chunk {
                select = select + SQL(unsafeSQL: ", COALESCE((") + (try RowAccess.sql([filter], table: table)) + SQL(unsafeSQL: "), false)")
            }
            statements.append(select + from)
        }
        statements.append(
            """
            SELECT COALESCE(json_agg(json_build_object('name', a.attname, 'type', t.typname) ORDER BY a.attnum), '[]')::text \
            FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid \
            WHERE a.attrelid = \(qualified)::regclass AND a.attnum > 0 AND NOT a.attisdropped \
            AND has_column_privilege(a.attrelid, a.attnum, 'SELECT')
            """)
        return statements
    }

    private static func text(_ value: Any) -> String? {
        switch value {
        case let text as String: return text
        case is NSNull: return nil
        default: return JWT.serialize(value)
        }
    }
}
