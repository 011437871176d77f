import Postgres

/// The messages of PostgreSQL's built-in `pgoutput` plugin, protocol version 1, as the WAL feed
/// receives them inside XLogData: a committed transaction arrives whole, in commit order, as
/// Begin, its row changes (each table described by a Relation message first) and Commit.
/// Values are in text format (the types' output functions).
enum PgOutput {
    struct Column: Sendable, Equatable {
        let name: String
        let typeOID: UInt32
        let typeModifier: Int32
        /// Part of the replica identity (with REPLICA IDENTITY FULL: every column).
        let isIdentity: Bool
    }

    struct Relation: Sendable, Equatable {
        let id: UInt32
        let schema: String
        let name: String
        /// `d` default (primary key), `n` nothing, `f` full, `i` index.
        let replicaIdentity: UInt8
        let columns: [Column]
    }

    enum Value: Sendable, Equatable {
        case null
        /// A TOASTed value the UPDATE did not change: not sent.
        case unchanged
        case text(String)
    }

    /// The old row an UPDATE or DELETE carries: the replica identity's columns ('K', others
    /// null) or the whole row ('O', REPLICA IDENTITY FULL).
    enum OldRow: Sendable, Equatable {
        case key([Value])
        case full([Value])

        var values: [Value] {
            switch self {
            case .key(let values), .full(let values): return values
            }
        }
    }

    enum Message: Sendable, Equatable {
        /// `commitTime`: microseconds since 2000-01-01 UTC.
        case begin(finalLSN: LSN, commitTime: Int64, xid: UInt32)
        case commit(commitLSN: LSN, endLSN: LSN, commitTime: Int64)
        case relation(Relation)
        case insert(relation: UInt32, new: [Value])
        case update(relation: UInt32, old: OldRow?, new: [Value])
        case delete(relation: UInt32, old: OldRow)
        case truncate(relations: [UInt32])
        /// Origin, Type and anything else this server does not use.
        case other(UInt8)
    }

    struct DecodingError: Error, CustomStringConvertible {
        let description: String
    }

    static func decode(_ bytes: [UInt8]) throws(DecodingError) -> Message {
        var reader = ByteReader(bytes)
        guard let kind = reader.byte() else { throw DecodingError(description: "empty pgoutput message") }
        func fail(_ what: String) -> DecodingError { DecodingError(description: "malformed pgoutput \(Character(Unicode.Scalar(kind))) message: \(what)") }
        switch kind {
        case UInt8(ascii: "B"):
            guard let final = reader.uint64(), let time = reader.int64(), let xid = reader.uint32() else { throw fail("short") }
            return .begin(finalLSN: LSN(final), commitTime: time, xid: xid)
        case UInt8(ascii: "C"):
            guard reader.byte() != nil, let commit = reader.uint64(), let end = reader.uint64(), let time = reader.int64() else { throw fail("short") }
            return .commit(commitLSN: LSN(commit), endLSN: LSN(end), commitTime: time)
        case UInt8(ascii: "R"):
            guard let id = reader.uint32(), let schema = reader.cString(), let name = reader.cString(),
                let identity = reader.byte(), let count = reader.uint16()
            else { throw fail("short header") }
            var columns: [Column] = []
            for _ in 0..<count {
                guard let flags = reader.byte(), let column = reader.cString(), let type = reader.uint32(), let modifier = reader.int32() else {
                    throw fail("short column")
                }
                columns.append(Column(name: column, typeOID: type, typeModifier: modifier, isIdentity: flags & 1 != 0))
            }
            return .relation(Relation(id: id, schema: schema, name: name, replicaIdentity: identity, columns: columns))
        case UInt8(ascii: "I"):
            guard let relation = reader.uint32(), reader.byte() == UInt8(ascii: "N") else { throw fail("no new tuple") }
            return .insert(relation: relation, new: try tuple(&reader, fail))
        case UInt8(ascii: "U"):
            guard let relation = reader.uint32(), var marker = reader.byte() else { throw fail("short") }
            var old: OldRow? = nil
            if marker == UInt8(ascii: "K") || marker == UInt8(ascii: "O") {
                let values = try tuple(&reader, fail)
                old = marker == UInt8(ascii: "K") ? .key(values) : .full(values)
                guard let next = reader.byte() else { throw fail("no new tuple") }
                marker = next
            }
            guard marker == UInt8(ascii: "N") else { throw fail("no new tuple") }
            return .update(relation: relation, old: old, new: try tuple(&reader, fail))
        case UInt8(ascii: "D"):
            guard let relation = reader.uint32(), let marker = reader.byte(), marker == UInt8(ascii: "K") || marker == UInt8(ascii: "O") else {
                throw fail("no old tuple")
            }
            let values = try tuple(&reader, fail)
            return .delete(relation: relation, old: marker == UInt8(ascii: "K") ? .key(values) : .full(values))
        case UInt8(ascii: "T"):
            guard let count = reader.uint32(), reader.byte() != nil else { throw fail("short") }
            var relations: [UInt32] = []
            for _ in 0..<count {
                guard let relation = reader.uint32() else { throw fail("short relation list") }
                relations.append(relation)
            }
            return .truncate(relations: relations)
        default:
            return .other(kind)
        }
    }

    /// TupleData: a column count, then per column `n` (null), `u` (unchanged TOAST) or `t`
    /// (length-prefixed text).
    private static func tuple(_ reader: inout ByteReader, _ fail: (String) -> DecodingError) throws(DecodingError) -> [Value] {
        guard let count = reader.uint16() else { throw fail("short tuple") }
        var values: [Value] = []
        values.reserveCapacity(Int(count))
        for _ in 0..<count {
            switch reader.byte() {
            case UInt8(ascii: "n"): values.append(.null)
            case UInt8(ascii: "u"): values.append(.unchanged)
            case UInt8(ascii: "t"):
                guard let length = reader.uint32(), let bytes = reader.bytes(Int(length)) else { throw fail("short value") }
                values.append(.text(String(decoding: bytes, as: UTF8.self)))
            default:
                throw fail("unknown column kind (binary values are not asked for)")
            }
        }
        return values
    }
}
