import Identity
import Postgres
import Synchronization

/// A (table, row) whose changes a server wants announced; `rowKey` "" is every row.
struct Lease: Hashable, Sendable {
    let table: String
    let rowKey: String
}

extension Subscription {
    /// The lease this subscription needs: its row when it is filtered on the row's key, else its
    /// table (`*`: a whole schema).
    var lease: Lease {
        Lease(table: table.map { quoteIdentifier(schema) + "." + quoteIdentifier($0) } ?? "*", rowKey: rowKey ?? "")
    }
}

/// Subscriptions by table (what the change feed looks up for each change), by socket (what a
/// leave or a close removes) and the leases they need, each kept up to date on every change so
/// no operation walks every subscription.
final class Hub: Sendable {
    /// One subscription's place: its socket, channel and position in the join's bindings.
    private struct Key: Hashable {
        let socket: ObjectIdentifier
        let topic: String
        let slot: Int
    }

    private struct State {
        var byTable: [String: [Key: Subscription]] = [:]
        var bySocket: [ObjectIdentifier: [Key: String]] = [:]
        var leaseCounts: [Lease: Int] = [:]
        var count = 0
    }

    private let state = Mutex(State())

    private static func tableKey(_ schema: String, _ table: String?) -> String { schema + "." + (table ?? "*") }

    var count: Int { state.withLock { $0.count } }

    /// One join's subscriptions (the channel's earlier ones were removed first).
    func add(_ subscriptions: [Subscription]) {
        state.withLock { state in
            for (slot, subscription) in subscriptions.enumerated() {
                let key = Key(socket: ObjectIdentifier(subscription.socket), topic: subscription.topic, slot: slot)
                let table = Self.tableKey(subscription.schema, subscription.table)
                state.byTable[table, default: [:]][key] = subscription
                state.bySocket[key.socket, default: [:]][key] = table
                state.leaseCounts[subscription.lease, default: 0] += 1
                state.count += 1
            }
        }
    }

    /// A channel's subscriptions (`topic`), or all of the socket's.
    func remove(socket: RealtimeSocket, topic: String? = nil) {
        let id = ObjectIdentifier(socket)
        state.withLock { state in
            guard let entries = state.bySocket[id] else { return }
            for (key, table) in entries where topic == nil || key.topic == topic {
                if let subscription = state.byTable[table]?.removeValue(forKey: key) {
                    let lease = subscription.lease
                    state.leaseCounts[lease, default: 1] -= 1
                    if state.leaseCounts[lease] == 0 { state.leaseCounts[lease] = nil }
                    state.count -= 1
                }
                if state.byTable[table]?.isEmpty == true { state.byTable[table] = nil }
                state.bySocket[id]?[key] = nil
            }
            if state.bySocket[id]?.isEmpty == true { state.bySocket[id] = nil }
        }
    }

    func replaceCaller(socket: RealtimeSocket, topic: String, caller: Caller) {
        let id = ObjectIdentifier(socket)
        state.withLock { state in
            for (key, table) in state.bySocket[id] ?? [:] where key.topic == topic {
                state.byTable[table]?[key]?.caller = caller
            }
        }
    }

    /// Every lease some subscription needs.
    func leases() -> Set<Lease> {
        state.withLock { Set($0.leaseCounts.keys) }
    }

    /// Subscriptions to `schema.table` (and to the whole schema) whose event matches `type`.
    func matching(schema: String, table: String, type: String) -> [Subscription] {
        state.withLock { state in
            let exact = state.byTable[Self.tableKey(schema, table)]?.values.filter { $0.event.matches(type) } ?? []
            let schemaWide = state.byTable[Self.tableKey(schema, nil)]?.values.filter { $0.event.matches(type) } ?? []
            return exact + schemaWide
        }
    }
}
