import CPostgres
import Glibc

/// A position in PostgreSQL's write-ahead log, written as PostgreSQL writes it (`16/B374D848`).
public struct LSN: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var value: UInt64

    public init(_ value: UInt64) { self.value = value }

    public init?(_ text: String) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let high = UInt64(parts[0], radix: 16), let low = UInt64(parts[1], radix: 16),
            high <= UInt64(UInt32.max), low <= UInt64(UInt32.max)
        else { return nil }
        value = high << 32 | low
    }

    public static let zero = LSN(0)
    public static func < (lhs: LSN, rhs: LSN) -> Bool { lhs.value < rhs.value }
    public var description: String { String(value >> 32, radix: 16, uppercase: true) + "/" + String(value & 0xFFFF_FFFF, radix: 16, uppercase: true) }
}

/// A connection in logical replication mode (`replication=database`): replication commands,
/// then one `START_REPLICATION` whose CopyBoth stream carries the decoded changes. Blocking,
/// used by one thread.
///
/// The slot is always TEMPORARY: PostgreSQL drops it when this connection ends, however it ends
/// (closed, lost, the process killed), so a dead server never holds back the WAL.
public final class ReplicationConnection: @unchecked Sendable {  // confined to its feed's thread
    private let handle: OpaquePointer

    /// What the server sent on the stream.
    public enum Message: Sendable, Equatable {
        /// XLogData: one output-plugin message written at `start` (`end`: the server's WAL end).
        case data(start: LSN, end: LSN, payload: [UInt8])
        /// Primary keepalive: everything before `end` was sent; `replyRequested` wants a status
        /// update at once (else the server ends the connection after `wal_sender_timeout`).
        case keepalive(end: LSN, replyRequested: Bool)
    }

    /// Connects with `conninfo` (a URL or key=value string) in logical replication mode.
    public init(conninfo: String) throws {
        let keywords = ["dbname", "replication", "application_name"]
        let values = [conninfo, "database", "onboard realtime"]
        let handle: OpaquePointer? = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in PQconnectdbParams(keywordPointers, valuePointers, 1) }
        }
        guard let handle else { throw PostgresError(kind: .connection, message: "out of memory allocating a connection") }
        guard PQstatus(handle) == CONNECTION_OK else {
            let error = PostgresError.connection(handle, "could not connect for replication")
            PQfinish(handle)
            throw error
        }
        self.handle = handle
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    deinit { PQfinish(handle) }

    /// The walsender's process id (`pg_stat_replication.pid`).
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// Runs a fixed replication command or plain SQL (simple protocol, no parameters).
    public func command(_ text: StaticString) throws -> QueryResult {
        try command(unsafeSQL: text.description)
    }

    /// Runs a replication command built at run time; the caller quotes every name and literal in it.
    public func command(unsafeSQL text: String) throws -> QueryResult {
        guard let result = PQexec(handle, text) else { throw PostgresError.connection(handle, "could not send command") }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK: return QueryResult(result: result)
        default:
            let error = PostgresError(result: result)
            if PQstatus(handle) != CONNECTION_OK { throw PostgresError(kind: .connection, message: error.message, sqlState: error.sqlState) }
            throw error
        }
    }

    /// `CREATE_REPLICATION_SLOT name TEMPORARY LOGICAL plugin`, without an exported snapshot;
    /// returns the slot's consistent point (changes committed after it are streamed).
    public func createTemporaryLogicalSlot(name: String, plugin: String) throws -> LSN {
        let result = try command(unsafeSQL: "CREATE_REPLICATION_SLOT \(quoteIdentifier(name)) TEMPORARY LOGICAL \(quoteIdentifier(plugin)) NOEXPORT_SNAPSHOT")
        guard result.count == 1, let text = result[0, "consistent_point"], let point = LSN(text) else {
            throw PostgresError(kind: .client, message: "CREATE_REPLICATION_SLOT answered no consistent point")
        }
        return point
    }

    /// `START_REPLICATION SLOT name LOGICAL start (option 'value', …)`: the connection then
    /// carries the stream (`next`, `sendStatus`).
    public func startLogicalReplication(slot: String, start: LSN, options: [(String, String)]) throws {
        let list = options.map { quoteIdentifier($0.0) + " " + quoteLiteral($0.1) }.joined(separator: ", ")
        let text = "START_REPLICATION SLOT \(quoteIdentifier(slot)) LOGICAL \(start)" + (list.isEmpty ? "" : " (\(list))")
        guard let result = PQexec(handle, text) else { throw PostgresError.connection(handle, "could not send START_REPLICATION") }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COPY_BOTH else {
            let error = PostgresError(result: result)
            throw PQstatus(handle) == CONNECTION_OK ? error : PostgresError(kind: .connection, message: error.message, sqlState: error.sqlState)
        }
    }

    /// The next message of the stream, or nil when none arrives within `timeout` seconds.
    public func next(timeout: Double) throws -> Message? {
        let deadline = Self.monotonicSeconds() + max(0, min(timeout, 3600))
        while true {
            var buffer: UnsafeMutablePointer<CChar>? = nil
            let length = PQgetCopyData(handle, &buffer, 1)
            if length > 0, let buffer {
                defer { PQfreemem(buffer) }
                if let message = Self.parse(Array(UnsafeRawBufferPointer(start: buffer, count: Int(length)))) { return message }
                continue  // a message kind this client does not use
            }
            if length == 0 {
                // No whole message buffered: wait for the socket, then let libpq read it.
                let left = deadline - Self.monotonicSeconds()
                guard left > 0 else { return nil }
                var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, Int32(left * 1000) + 1)
                if ready < 0 && errno != EINTR { throw PostgresError(kind: .connection, message: "poll failed: \(String(cString: strerror(errno)))") }
                if ready > 0, PQconsumeInput(handle) != 1 { throw PostgresError.connection(handle, "replication connection lost") }
                continue
            }
            // -1: the server ended the stream; -2: an error.
            var failure = PostgresError.connection(handle, "replication stream ended")
            while let result = PQgetResult(handle) {
                if PQresultStatus(result) == PGRES_FATAL_ERROR {
                    let error = PostgresError(result: result)
                    failure = PostgresError(kind: .connection, message: error.message, sqlState: error.sqlState)
                }
                PQclear(result)
            }
            throw failure
        }
    }

    /// Standby status update: WAL up to `flushed` is processed and may be recycled (for a
    /// logical slot this moves `confirmed_flush_lsn`). `replyRequested` asks for a keepalive.
    public func sendStatus(written: LSN, flushed: LSN, applied: LSN, replyRequested: Bool = false) throws {
        var message: [UInt8] = [UInt8(ascii: "r")]
        for value in [written.value, flushed.value, applied.value, UInt64(bitPattern: Self.postgresEpochMicroseconds())] {
            for shift in stride(from: 56, through: 0, by: -8) { message.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        message.append(replyRequested ? 1 : 0)
        let sent = message.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { PQputCopyData(handle, $0, Int32(buffer.count)) }
        }
        guard sent == 1, PQflush(handle) == 0 else { throw PostgresError.connection(handle, "could not send the status update") }
    }

    /// Closes the socket under libpq without the protocol's goodbye: what the server sees when
    /// this process dies (tests).
    public func abandon() {
        shutdown(PQsocket(handle), Int32(SHUT_RDWR))
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Microseconds since 2000-01-01 00:00 UTC, the protocol's clock.
    static func postgresEpochMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return (Int64(now.tv_sec) - 946_684_800) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    /// An XLogData ('w') or keepalive ('k') message; nil for anything else.
    static func parse(_ bytes: [UInt8]) -> Message? {
        var reader = ByteReader(bytes)
        switch reader.byte() {
        case UInt8(ascii: "w"):
            guard let start = reader.uint64(), let end = reader.uint64(), reader.uint64() != nil else { return nil }
            return .data(start: LSN(start), end: LSN(end), payload: reader.rest())
        case UInt8(ascii: "k"):
            guard let end = reader.uint64(), reader.uint64() != nil, let reply = reader.byte() else { return nil }
            return .keepalive(end: LSN(end), replyRequested: reply != 0)
        default:
            return nil
        }
    }
}

/// Reads big-endian protocol fields front to back; every read is nil past the end.
public struct ByteReader {
    private let bytes: [UInt8]
    public private(set) var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var isAtEnd: Bool { offset >= bytes.count }

    public mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    private mutating func integer(_ size: Int) -> UInt64? {
        guard size <= bytes.count - offset else { return nil }
        var value: UInt64 = 0
        for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
        offset += size
        return value
    }

    public mutating func uint16() -> UInt16? { integer(2).map { UInt16($0) } }
    public mutating func uint32() -> UInt32? { integer(4).map { UInt32($0) } }
    public mutating func int32() -> Int32? { uint32().map { Int32(bitPattern: $0) } }
    public mutating func uint64() -> UInt64? { integer(8) }
    public mutating func int64() -> Int64? { uint64().map { Int64(bitPattern: $0) } }

    /// `count` bytes.
    public mutating func bytes(_ count: Int) -> [UInt8]? {
        guard count >= 0, count <= bytes.count - offset else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    /// A NUL-terminated string (UTF-8).
    public mutating func cString() -> String? {
        guard let end = bytes[offset...].firstIndex(of: 0) else { return nil }
        defer { offset = end + 1 }
        return String(decoding: bytes[offset..<end], as: UTF8.self)
    }

    /// Everything left.
    public mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[min(offset, bytes.count)...])
    }
}

/// A string literal as PostgreSQL reads it with standard_conforming_strings: quotes doubled.
public func quoteLiteral(_ value: String) -> String {
    "'" + value.replacingOccurrences(of: "'", with: "''").filter { $0 != "\0" } + "'"
}

/// Runs `body` with the strings as a NULL-terminated array of C strings.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { buffer in
        buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { body($0) }
    }
}
