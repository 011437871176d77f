import Foundation
import Identity
import REST

/// Which row changes a `postgres_changes` binding asks for.
enum ChangeEvent: String, Sendable {
    case all = "*"
    case insert = "INSERT"
    case update = "UPDATE"
    case delete = "DELETE"

    func matches(_ type: String) -> Bool { self == .all || rawValue == type }
}

/// One entry of `config.postgres_changes` in a `phx_join`, as the client sent it.
struct Binding: Sendable {
    /// Realtime's id: a stable hash of the entry, 1…2^27-1 (supabase-py ignores 0).
    let id: Int
    /// The client's entry, echoed verbatim in the join reply.
    let echoJSON: String
    let event: ChangeEvent
    let schema: String
    /// Nil: every enabled table of the schema.
    let table: String?
    let filter: String?

    /// The members of an entry the server reads; one of another JSON type reads as absent
    /// (`event` then `*`, `schema` `public`).
    struct Entry: Decodable {
        var event, schema, table, filter: String?

        enum CodingKeys: String, CodingKey { case event, schema, table, filter }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            func member(_ key: CodingKeys) -> String? { container.lenient(String.self, forKey: key) }
            event = member(.event)
            schema = member(.schema)
            table = member(.table)
            filter = member(.filter)
        }
    }

    /// Nil for an entry that is not an object with a known event (the join then fails).
    init?(_ entry: JSONValue) {
        guard let object = entry.object, let fields = try? JSONTree.decode(Entry.self, from: object) else { return nil }
        guard let event = ChangeEvent(rawValue: fields.event?.uppercased() ?? "*") else { return nil }
        self.event = event
        schema = fields.schema ?? "public"
        table = fields.table.flatMap { $0.isEmpty || $0 == "*" ? nil : $0 }
        filter = fields.filter.flatMap { $0.isEmpty ? nil : $0 }
        let echo = JWT.serialize(object)
        echoJSON = echo
        id = Self.stableID(echo)
    }

    /// FNV-1a over the entry's JSON, folded into 1…2^27-1.
    static func stableID(_ text: String) -> Int {
        var hash: UInt64 = 0xcbf29ce484222325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100000001b3
        }
        return Int(hash % (1 << 27 - 1)) + 1
    }

    /// Realtime's description of the parameters in its error messages.
    var parametersDescription: String {
        let filters = filter.map { "[\"\($0)\"]" } ?? "[]"
        return "[event: \(event.rawValue), schema: \(schema), table: \(table ?? "*"), filters: \(filters)]"
    }
}

/// A binding resolved against the schema and a subscriber: what the change feed evaluates.
struct Subscription: Sendable {
    let socket: RealtimeSocket
    let topic: String
    let joinRef: String?
    let bindingID: Int
    let event: ChangeEvent
    let schema: String
    /// Nil: every enabled table of the schema.
    let table: String?
    /// The filter parsed (validated against the table when one is named).
    let filter: Condition?
    /// The row's key as PostgreSQL writes it, when `filter` is `key=eq.value` on a single-column
    /// primary key: the triggers then announce only that row's changes for this subscription.
    let rowKey: String?
    var caller: Caller
    /// WAL feed: the database's snapshot when the subscription was made. A change whose
    /// transaction it already saw is not sent: the client reads the row after subscribing, and
    /// an event older than that read would hand it stale data.
    var since: TransactionSnapshot? = nil
}

/// `pg_current_snapshot()`: which transactions had committed when it was taken.
struct TransactionSnapshot: Sendable, Equatable {
    /// Every transaction before `xmin` had ended; none from `xmax` on had.
    let xmin: UInt64
    let xmax: UInt64
    /// Between the two, those still running.
    let running: Set<UInt64>

    /// `xmin:xmax:xip,…` as PostgreSQL writes it.
    init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let xmin = UInt64(parts[0]), let xmax = UInt64(parts[1]), xmin <= xmax else { return nil }
        var running: Set<UInt64> = []
        for item in parts[2].split(separator: ",") {
            guard let xid = UInt64(item) else { return nil }
            running.insert(xid)
        }
        self.xmin = xmin
        self.xmax = xmax
        self.running = running
    }

    /// Whether the (committed) transaction `xid` — 32 bits, as logical replication names it —
    /// had committed when the snapshot was taken. The full id is the one nearest `xmax` with
    /// those low bits (transactions this recent are within 2^31 of it).
    func sees(_ xid: UInt32) -> Bool {
        let distance = Int64(Int32(bitPattern: xid &- UInt32(truncatingIfNeeded: xmax)))
        let full = Int64(bitPattern: xmax) + distance
        if full < 0 { return true }
        let id = UInt64(full)
        if id < xmin { return true }
        if id >= xmax { return false }
        return !running.contains(id)
    }
}

extension SchemaCache.Table {
    /// The text `to_jsonb(row) ->> key` gives for `filter`'s value, when `filter` is an equality
    /// on this table's single-column primary key of a type whose text is canonical once parsed.
    func rowKey(for filter: Condition?) -> String? {
        guard primaryKey.count == 1, case .filter(let condition)? = filter, condition.column == primaryKey[0], condition.op == .eq,
            case .value(let value) = condition.operand, let type = column(condition.column)?.type
        else { return nil }
        switch type {
        case "uuid": return UUID(uuidString: value).map { $0.uuidString.lowercased() }
        case "integer", "bigint", "smallint": return Int64(value).map(String.init)
        case "text": return value
        default: return nil
        }
    }
}

/// The operators Supabase Realtime's `postgres_changes` filters accept: a column, one of these,
/// a value (a list for `in`). REST's grammar parses the filter; anything else it knows is
/// refused here.
enum RealtimeFilterOperator: String, CaseIterable {
    case eq, neq, lt, lte, gt, gte, `in`

    init?(_ op: FilterOperator) {
        switch op {
        case .eq: self = .eq
        case .neq: self = .neq
        case .lt: self = .lt
        case .lte: self = .lte
        case .gt: self = .gt
        case .gte: self = .gte
        case .in: self = .in
        case .like, .ilike, .match, .imatch, .is, .isdistinct, .cs, .cd, .ov, .sl, .sr, .nxl, .nxr, .adj, .fts, .plfts, .phfts, .wfts:
            return nil
        }
    }

    /// Why a parsed filter is not one Realtime accepts; nil when it is.
    static func problem(_ condition: Condition) -> String? {
        let accepted = allCases.map(\.rawValue).joined(separator: ", ")
        guard case .filter(let filter) = condition, filter.quantifier == nil else {
            return "only a column, an operator (\(accepted)) and a value"
        }
        return Self(filter.op) == nil ? "operator \(filter.op.rawValue) is not supported: \(accepted)" : nil
    }
}
