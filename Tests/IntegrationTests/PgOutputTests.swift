import App
import EmbeddedPostgres
import Foundation
import Glibc
import Postgres
import TestSupport
import Testing

@testable import Realtime

/// The WAL feed's pure parts: pgoutput decoding, snapshots, timestamps.
@Suite("Realtime: pgoutput and snapshots")
struct PgOutputTests {
    static func bytes(_ parts: [Any]) -> [UInt8] {
        var out: [UInt8] = []
        for part in parts {
            switch part {
            case let character as Character: out.append(character.asciiValue!)
            case let text as String: out += Array(text.utf8) + [0]
            case let value as UInt8: out.append(value)
            case let value as UInt16: out += [UInt8(value >> 8), UInt8(value & 0xFF)]
            case let value as UInt32: out += (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
            case let value as UInt64: out += (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
            default: Issue.record("unknown part \(part)")
            }
        }
        return out
    }

    /// A TupleData column: `t` with its length-prefixed text, `n` or `u`.
    static func text(_ value: String) -> [Any] { [Character("t"), UInt32(value.utf8.count)] + value.utf8.map { $0 as Any } }

    @Test func decodesTheMessagesOfATransaction() throws {
        let relation = try PgOutput.decode(
            Self.bytes([
                Character("R"), UInt32(16384), "public", "children", UInt8(ascii: "f"), UInt16(2),
                UInt8(1), "id", UInt32(2950), UInt32(0xFFFF_FFFF), UInt8(1), "name", UInt32(25), UInt32(0xFFFF_FFFF)
            ]))
        #expect(
            relation
                == .relation(
                    .init(
                        id: 16384, schema: "public", name: "children", replicaIdentity: UInt8(ascii: "f"),
                        columns: [
                            .init(name: "id", typeOID: 2950, typeModifier: -1, isIdentity: true),
                            .init(name: "name", typeOID: 25, typeModifier: -1, isIdentity: true)
                        ])))
        #expect(try PgOutput.decode(Self.bytes([Character("B"), UInt64(0x100), UInt64(5), UInt32(42)])) == .begin(finalLSN: LSN(0x100), commitTime: 5, xid: 42))
        #expect(
            try PgOutput.decode(Self.bytes([Character("C"), UInt8(0), UInt64(0x100), UInt64(0x180), UInt64(5)]))
                == .commit(commitLSN: LSN(0x100), endLSN: LSN(0x180), commitTime: 5))
        let insert = try PgOutput.decode(
            Self.bytes([Character("I"), UInt32(16384), Character("N"), UInt16(3)] + Self.text("é ü") + [Character("n"), Character("u")]))
        #expect(insert == .insert(relation: 16384, new: [.text("é ü"), .null, .unchanged]))
        let update = try PgOutput.decode(
            Self.bytes([Character("U"), UInt32(7), Character("O"), UInt16(1)] + Self.text("old") + [Character("N"), UInt16(1)] + Self.text("new")))
        #expect(update == .update(relation: 7, old: .full([.text("old")]), new: [.text("new")]))
        let keyChange = try PgOutput.decode(
            Self.bytes([Character("U"), UInt32(7), Character("K"), UInt16(1)] + Self.text("1") + [Character("N"), UInt16(1)] + Self.text("2")))
        #expect(keyChange == .update(relation: 7, old: .key([.text("1")]), new: [.text("2")]))
        let plain = try PgOutput.decode(Self.bytes([Character("U"), UInt32(7), Character("N"), UInt16(1)] + Self.text("2")))
        #expect(plain == .update(relation: 7, old: nil, new: [.text("2")]))
        let delete = try PgOutput.decode(Self.bytes([Character("D"), UInt32(7), Character("K"), UInt16(2)] + Self.text("1") + [Character("n")]))
        #expect(delete == .delete(relation: 7, old: .key([.text("1"), .null])))
        #expect(try PgOutput.decode(Self.bytes([Character("T"), UInt32(2), UInt8(0), UInt32(7), UInt32(8)])) == .truncate(relations: [7, 8]))
        #expect(try PgOutput.decode(Self.bytes([Character("O"), UInt64(1), "origin"])) == .other(UInt8(ascii: "O")))
    }

    @Test func malformedMessagesAreErrorsNotTraps() {
        let cases: [[UInt8]] = [
            [], [UInt8(ascii: "B"), 0, 0], [UInt8(ascii: "R"), 0, 0, 0, 1, 0x61],
            Self.bytes([Character("I"), UInt32(1), Character("N"), UInt16(2)] + Self.text("a")),
            Self.bytes([Character("I"), UInt32(1), Character("N"), UInt16(1), Character("t"), UInt32(0xFFFF_FFFF), UInt8(1)]),
            Self.bytes([Character("I"), UInt32(1), Character("N"), UInt16(1), Character("b"), UInt32(1), UInt8(1)]),
            Self.bytes([Character("U"), UInt32(1), Character("X")]),
            Self.bytes([Character("D"), UInt32(1), Character("N"), UInt16(0)])
        ]
        for bytes in cases {
            #expect(throws: PgOutput.DecodingError.self, "\(bytes)") { _ = try PgOutput.decode(bytes) }
        }
    }

    @Test func snapshotsTellCommittedFromLaterTransactions() throws {
        let snapshot = try #require(TransactionSnapshot("100:105:101,103"))
        #expect(snapshot.sees(99) && snapshot.sees(100) && snapshot.sees(102) && snapshot.sees(104))
        #expect(!snapshot.sees(101) && !snapshot.sees(103) && !snapshot.sees(105) && !snapshot.sees(4_000))
        // Ids past a wraparound of the 32-bit counter, as logical replication sends them.
        let wrapped = try #require(TransactionSnapshot("\((UInt64(3) << 32) + 10):\((UInt64(3) << 32) + 20):"))
        #expect(wrapped.sees(5) && !wrapped.sees(25) && wrapped.sees(UInt32.max - 3))
        let nearEnd = try #require(TransactionSnapshot("\(UInt64(UInt32.max) - 10):\(UInt64(UInt32.max) - 5):"))
        #expect(!nearEnd.sees(3) && nearEnd.sees(UInt32.max - 20))
        #expect(TransactionSnapshot("1:2") == nil && TransactionSnapshot("5:4:") == nil && TransactionSnapshot("1:9:x") == nil)
    }

    @Test func commitTimesAreWrittenAsRealtimeWritesThem() {
        #expect(WALStream.timestamp(0) == "2000-01-01T00:00:00.000Z")
        #expect(WALStream.timestamp(817_301_045_123_999) == "2025-11-24T12:04:05.123Z")
        #expect(WALStream.timestamp(-1) == "1999-12-31T23:59:59.999Z")
    }
}
