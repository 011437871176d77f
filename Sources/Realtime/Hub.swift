import JWT
import Postgres
import Synchronization

/// A (table, row) whose changes a server wants announced; `rowKey` "" is every row.
struct Lease: Hashable, Sendable {
    let table: String
    let rowKey: String
}

/// Subscriptions by table: what the change feed looks up for each change.
final class Hub: Sendable {
    private let byTable = Mutex<[String: [Subscription]]>([:])

    private static func key(_ schema: String, _ table: String?) -> String { schema + "." + (table ?? "*") }

    var count: Int { byTable.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    func add(_ subscriptions: [Subscription]) {
        byTable.withLock { table in
            for subscription in subscriptions { table[Self.key(subscription.schema, subscription.table), default: []].append(subscription) }
        }
    }

    func remove(socket: RealtimeSocket, topic: String? = nil) {
        let id = ObjectIdentifier(socket)
        byTable.withLock { table in
            for key in Array(table.keys) {
                table[key]!.removeAll { ObjectIdentifier($0.socket) == id && (topic == nil || $0.topic == topic) }
                if table[key]!.isEmpty { table[key] = nil }
            }
        }
    }

    func replaceCaller(socket: RealtimeSocket, topic: String, caller: Caller) {
        let id = ObjectIdentifier(socket)
        byTable.withLock { table in
            for key in Array(table.keys) {
                table[key] = table[key]!.map { subscription in
                    guard ObjectIdentifier(subscription.socket) == id, subscription.topic == topic else { return subscription }
                    var renewed = subscription
                    renewed.caller = caller
                    return renewed
                }
            }
        }
    }

    /// What the subscriptions need announced, as `realtime.renew_listener` takes it: one lease
    /// per row for subscriptions filtered on their row's key, one per table for the rest.
    func leases() -> Set<Lease> {
        byTable.withLock { byTable in
            Set(byTable.values.joined().map { subscription in
                let table = subscription.table.map { quoteIdentifier(subscription.schema) + "." + quoteIdentifier($0) } ?? "*"
                return Lease(table: table, rowKey: subscription.rowKey ?? "")
            })
        }
    }

    /// Subscriptions to `schema.table` (and to the whole schema) whose event matches `type`.
    func matching(schema: String, table: String, type: String) -> [Subscription] {
        byTable.withLock { byTable in
            ((byTable[Self.key(schema, table)] ?? []) + (byTable[Self.key(schema, nil)] ?? [])).filter { $0.event.matches(type) }
        }
    }
}
