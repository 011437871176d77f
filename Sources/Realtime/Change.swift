import Foundation
import REST

/// One row change, as either feed announces it: the seam between the feeds and everything above
/// them (the hub, the per-subscriber check, delivery).
struct Change {
    let schema: String
    let table: String
    /// INSERT, UPDATE or DELETE.
    let type: String
    /// When the transaction committed (WAL); when the row was written (triggers).
    let commitTimestamp: String
    /// The primary key (the new row's; the old one's for DELETE), for the key filters: JSON
    /// values (triggers) or the text of each value (WAL).
    let key: [String: Any]
    /// Triggers, DELETE: the whole old row when it fit the notification, else its key.
    let oldRow: [String: Any]?
    /// WAL: the row as committed (the old row for DELETE), so the event carries that row and
    /// not whatever the table holds when the event is processed.
    let committed: CommittedRow?
    /// WAL: the transaction's id (subscriptions made after it committed do not hear of it).
    var xid: UInt32? = nil
}

/// A row as logical replication sent it: each column's value in its type's text form.
struct CommittedRow {
    struct Column {
        let name: String
        let typeOID: UInt32
        /// Nil: NULL.
        let value: String?
    }

    /// The columns whose values the WAL carried.
    let columns: [Column]
    /// Columns it did not carry: TOASTed values an UPDATE left unchanged, with no old row to take
    /// them from (a table without REPLICA IDENTITY FULL). They are left out of the event.
    let missing: [String]
    /// The old row's primary key, for `old_record` (UPDATE, DELETE).
    let oldKey: [Column]
}

extension Change {
    /// A trigger's notification: {"schema","table","type","commit_timestamp","pk",["old"]}.
    init?(json: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any],
            let schema = object["schema"] as? String, let table = object["table"] as? String,
            let type = object["type"] as? String, ["INSERT", "UPDATE", "DELETE"].contains(type),
            let timestamp = object["commit_timestamp"] as? String, let key = object["pk"] as? [String: Any], !key.isEmpty
        else { return nil }
        self.init(schema: schema, table: table, type: type, commitTimestamp: timestamp, key: key, oldRow: object["old"] as? [String: Any], committed: nil)
    }

    /// True when `filter` is an equality on the table's key (`id=eq.…`) and this change's key
    /// is another row: decided without a query, with the same canonical key text the leases use.
    func keyMisses(_ filter: Condition, table: SchemaCache.Table) -> Bool {
        guard let wanted = table.rowKey(for: filter), let present = key[table.primaryKey[0]] else { return false }
        let text = (present as? String) ?? (present as? NSNumber)?.stringValue
        return text != nil && text != wanted
    }
}
