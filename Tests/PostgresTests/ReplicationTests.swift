import Foundation
import Postgres
import TestSupport
import Testing

/// Logical replication connections against the test cluster (wal_level=logical): temporary
/// slots, the pgoutput stream, status updates, and what an abrupt end leaves behind.
@Suite("Postgres logical replication")
struct ReplicationTests {
    let url: String

    init() throws {
        url = try TestPostgres.makeDatabase(migrated: false)
        let connection = try Connection(conninfo: url)
        try connection.execute(
            """
            CREATE TABLE notes (id int PRIMARY KEY, body text, tags text[]);
            CREATE PUBLICATION notes_feed FOR TABLE notes
            """)
    }

    func slotExists(_ name: String) throws -> Bool {
        try Connection(conninfo: url).query("SELECT 1 FROM pg_replication_slots WHERE slot_name = \(name)").count == 1
    }

    @Test func lsnTextRoundTrips() {
        #expect(LSN("16/B374D848")?.value == 0x16_B374_D848)
        #expect(LSN("16/B374D848")?.description == "16/B374D848")
        #expect(LSN("0/0") == .zero)
        #expect(LSN("nope") == nil && LSN("1/2/3") == nil && LSN("100000000/0") == nil)
    }

    @Test func typedBindsAreReadByTheirTypesInputFunction() throws {
        let connection = try Connection(conninfo: url)
        // 114 json, 3802 jsonb, 1009 text[], 23 int4: the values as a replication stream sends them.
        let row = try connection.query(
            """
            SELECT to_jsonb(v)::text FROM (SELECT \("{\"a\": [1, 2]}", type: 3802) AS doc, \("{x,\"y z\"}", type: 1009) AS tags, \("42", type: 23) AS n, \(nil, type: 23) AS missing) v
            """)
        #expect(row.scalar == #"{"n": 42, "doc": {"a": [1, 2]}, "tags": ["x", "y z"], "missing": null}"#)
        // Prepared with their types, re-used with other values.
        for value in ["1", "2"] {
            #expect(try connection.query("SELECT \(value, type: 23) + 1", prepared: true).scalar == String(Int(value)! + 1))
        }
    }

    @Test func aTemporarySlotStreamsCommittedChangesAndDiesWithAnAbruptlyClosedConnection() throws {
        let slot = "test_slot_\(UInt32.random(in: 0...UInt32.max))"
        let stream = try ReplicationConnection(conninfo: url)
        let start = try stream.createTemporaryLogicalSlot(name: slot, plugin: "pgoutput")
        try stream.startLogicalReplication(slot: slot, start: .zero, options: [("proto_version", "1"), ("publication_names", "notes_feed")])
        #expect(try slotExists(slot))

        let writer = try Connection(conninfo: url)
        try writer.execute("INSERT INTO notes VALUES (1, 'hello', '{a}')")
        // Begin, Relation, Insert, Commit: the first byte of each pgoutput message.
        var kinds: [Character] = []
        var end = LSN.zero
        let deadline = Date().addingTimeInterval(30)
        while !kinds.contains("C"), Date() < deadline {
            switch try stream.next(timeout: 1) {
            case .data(_, let serverEnd, let payload)?:
                kinds.append(Character(Unicode.Scalar(payload[0])))
                end = max(end, serverEnd)
            case .keepalive?, nil:
                continue
            }
        }
        #expect(kinds == ["B", "R", "I", "C"])
        #expect(end > start)
        // The status update moves the slot's confirmed position.
        try stream.sendStatus(written: end, flushed: end, applied: end)
        #expect(
            try eventually {
                try Connection(conninfo: url).query(
                    "SELECT confirmed_flush_lsn >= \(end.description)::pg_lsn FROM pg_replication_slots WHERE slot_name = \(slot)"
                ).first?.bool(0) == true
            })

        // The socket goes away without the protocol's goodbye, as when the process is killed:
        // PostgreSQL drops the temporary slot by itself.
        stream.abandon()
        #expect(try eventually { try !slotExists(slot) })
    }

    @Test func slotsNeedTheReplicationPrivilege() throws {
        let admin = try Connection(conninfo: url)
        let role = "norepl_\(UInt32.random(in: 0...UInt32.max))"
        try admin.execute(unsafeSQL: "CREATE ROLE \(quoteIdentifier(role)) LOGIN NOREPLICATION")
        let components = url.components(separatedBy: "postgres@")
        let asRole = components[0] + role + "@" + components[1]
        #expect(throws: PostgresError.self) {
            let stream = try ReplicationConnection(conninfo: asRole)
            _ = try stream.createTemporaryLogicalSlot(name: "never_\(role)", plugin: "pgoutput")
        }
    }
}
