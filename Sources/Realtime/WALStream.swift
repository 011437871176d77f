import Foundation
import Glibc
import Postgres
import REST
import Synchronization

/// The WAL feed's connection: a temporary logical replication slot on the publication
/// `supabase_realtime`, streamed with pgoutput (protocol version 1) and decoded here into
/// `Change`s, which the feed processes as they arrive: in commit order, each with its
/// transaction's commit time and the committed row.
///
/// Progress: after each transaction is processed, and whenever the server says everything
/// before a position was sent while no transaction is open, that position is "flushed" in the
/// standby status updates (at least every `statusInterval`, and a keepalive is asked for every
/// `keepaliveInterval` while nothing is published), so the slot never holds back WAL the server
/// could recycle. The slot is TEMPORARY: it ends with this connection, however the connection
/// ends; a new stream resumes from the last processed position, though a new slot starts where
/// the WAL is when it is made (changes committed in between are not replayed: the sockets were
/// closed with 1001 and their clients re-read).
final class WALStream: @unchecked Sendable {  // confined to the feed's thread once started
    static let publication = "supabase_realtime"
    static let statusInterval = 1.0
    static let keepaliveInterval = 2.0

    let slot: String
    private unowned let feed: ChangeFeed
    private let connection: ReplicationConnection
    private var relations: [UInt32: PgOutput.Relation] = [:]
    /// The open transaction's commit time and id (pgoutput sends a transaction only once
    /// committed).
    private var commitTime: Int64?
    private var xid: UInt32 = 0
    /// Everything before this was processed.
    private var processed: LSN
    private var reported = LSN.zero
    private var lastStatus = 0.0
    private var lastKeepaliveRequest = 0.0

    /// Connects, makes the slot and starts streaming from `resumeFrom` (or the slot's start).
    init(feed: ChangeFeed, conninfo: String, slot: String, resumeFrom: LSN) throws {
        self.feed = feed
        self.slot = slot
        connection = try ReplicationConnection(conninfo: conninfo)
        let consistent = try connection.createTemporaryLogicalSlot(name: slot, plugin: "pgoutput")
        processed = max(resumeFrom, consistent)
        try connection.startLogicalReplication(
            slot: slot, start: resumeFrom,
            options: [
                ("proto_version", "1"), ("publication_names", Self.publication)
            ])
    }

    /// The walsender's process id (tests end it to drop the connection).
    var backendPID: Int32 { connection.backendPID }

    /// Reads and processes messages for up to `seconds`, keeping the status updates going.
    func pump(seconds: Double) throws {
        let until = Self.now() + seconds
        while true {
            let left = until - Self.now()
            if left <= 0 { break }
            guard let message = try connection.next(timeout: left) else { break }
            switch message {
            case .data(_, _, let payload):
                try handle(try PgOutput.decode(payload))
            case .keepalive(let end, let replyRequested):
                if commitTime == nil, end > processed { advance(to: end) }
                if replyRequested { try sendStatus(requestReply: false) }
            }
            if Self.now() - lastStatus >= Self.statusInterval && processed != reported { try sendStatus(requestReply: false) }
        }
        let now = Self.now()
        if now - lastKeepaliveRequest >= Self.keepaliveInterval {
            lastKeepaliveRequest = now
            try sendStatus(requestReply: true)
        } else if now - lastStatus >= Self.statusInterval && processed != reported {
            try sendStatus(requestReply: false)
        }
    }

    private func advance(to position: LSN) {
        processed = max(processed, position)
        feed.processed.store(processed.value, ordering: .relaxed)
    }

    private func sendStatus(requestReply: Bool) throws {
        try connection.sendStatus(written: processed, flushed: processed, applied: processed, replyRequested: requestReply)
        reported = processed
        lastStatus = Self.now()
    }

    private func handle(_ message: PgOutput.Message) throws {
        switch message {
        case .begin(_, let time, let id):
            commitTime = time
            xid = id
        case .commit(_, let end, _):
            commitTime = nil
            advance(to: end)
        case .relation(let relation):
            relations[relation.id] = relation
        case .insert(let id, let new):
            if let change = change(id, type: "INSERT", row: new, old: nil) { feed.process(change) }
        case .update(let id, let old, let new):
            if let change = change(id, type: "UPDATE", row: new, old: old) { feed.process(change) }
        case .delete(let id, let old):
            if let change = change(id, type: "DELETE", row: old.values, old: old) { feed.process(change) }
        case .truncate, .other:
            break  // Realtime announces no TRUNCATE (neither did the triggers)
        }
    }

    /// The change of one row of a relation described earlier in the stream.
    private func change(_ relationID: UInt32, type: String, row values: [PgOutput.Value], old: PgOutput.OldRow?) -> Change? {
        guard let relation = relations[relationID], relation.columns.count == values.count,
            let table = feed.service.schema.cache.tables[relation.name], relation.schema == "public"
        else { return nil }
        let oldValues = old.map(\.values)
        var columns: [CommittedRow.Column] = []
        var missing: [String] = []
        for (index, column) in relation.columns.enumerated() {
            var value = values[index]
            // An unchanged TOASTed value is not sent; the old row (REPLICA IDENTITY FULL) has it.
            if value == .unchanged, case .full(let previous)? = old, previous.count == values.count { value = previous[index] }
            switch value {
            case .text(let text): columns.append(CommittedRow.Column(name: column.name, typeOID: column.typeOID, value: text))
            case .null: columns.append(CommittedRow.Column(name: column.name, typeOID: column.typeOID, value: nil))
            case .unchanged: missing.append(column.name)
            }
        }
        func keyColumns(_ source: [PgOutput.Value]) -> [CommittedRow.Column] {
            table.primaryKey.compactMap { name in
                guard let index = relation.columns.firstIndex(where: { $0.name == name }), index < source.count else { return nil }
                if case .text(let text) = source[index] { return CommittedRow.Column(name: name, typeOID: relation.columns[index].typeOID, value: text) }
                return nil
            }
        }
        let key = keyColumns(values)
        guard key.count == table.primaryKey.count else { return nil }
        // The old row's key: the old tuple's when the WAL carried one with the key (a changed
        // key, or REPLICA IDENTITY FULL), else the new row's.
        let oldKey = oldValues.map(keyColumns).flatMap { $0.count == table.primaryKey.count ? $0 : nil } ?? key
        var keyValues: [String: Any] = [:]
        for column in key { keyValues[column.name] = column.value }
        return Change(
            schema: relation.schema, table: relation.name, type: type, commitTimestamp: Self.timestamp(commitTime ?? 0),
            key: keyValues, oldRow: nil, committed: CommittedRow(columns: columns, missing: missing, oldKey: oldKey), xid: xid)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` of a pgoutput time (microseconds since 2000-01-01 UTC).
    static func timestamp(_ microseconds: Int64) -> String {
        let unixMicroseconds = microseconds + 946_684_800_000_000
        var seconds = time_t(unixMicroseconds >= 0 ? unixMicroseconds / 1_000_000 : (unixMicroseconds - 999_999) / 1_000_000)
        let milliseconds = Int((unixMicroseconds - Int64(seconds) * 1_000_000) / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(millis)Z"
    }

    private static func now() -> Double {
        var value = timespec()
        clock_gettime(CLOCK_MONOTONIC, &value)
        return Double(value.tv_sec) + Double(value.tv_nsec) / 1e9
    }
}
