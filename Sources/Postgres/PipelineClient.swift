import CPostgres
import EventLoop
import Glibc
import Synchronization

/// Database connections for an event loop: non-blocking libpq in pipeline mode, watched by the
/// same `EventLoop` as the HTTP sockets, so a request's statements are sent and its results read
/// by the thread that read the request, with no thread waiting on PostgreSQL.
///
/// Each `submit` is one exchange: its statements and one Sync, an implicit transaction of its own.
/// Exchanges are pipelined: several requests' exchanges are in flight on one connection at once
/// (each written as it is queued: libpq 15's Sync flushes), so a busy backend reads several
/// requests per wake-up and nobody waits for a round trip before sending the next. Results come
/// back in order; an error aborts only the rest of its own exchange (up to its Sync).
///
/// An exchange must leave the connection idle (no BEGIN left open): the exchanges behind it would
/// otherwise run inside its transaction. Explicit transactions are for `Pool`: `submit` declines
/// statements that start one.
///
/// What to do with each exchange and connection is its `PipelineClientStateMachine`'s to say.
/// Confined to the loop thread, except `start` and `close`.
public final class PipelineClient: @unchecked Sendable {
    public typealias Completion = (Result<[QueryResult], PostgresError>) -> Void

    public let conninfo: String
    /// Connections kept open (each opened in the background, reopened after a loss).
    public let size: Int
    public let allowsPreparedStatements: Bool
    /// Exchanges in flight on one connection at most; further ones wait in one queue for the
    /// first connection to answer one, so a backend held up by a long statement holds at most
    /// this many requests. (Measured on 2 cores with 64 clients and 8 connections: depth 4 gave a
    /// lower median but a higher 99th percentile than 8.)
    public let depth: Int
    /// Exchanges that may wait for a connection before `submit` declines (the caller then uses
    /// its blocking path).
    public let maxWaiting: Int
    let loop: EventLoop
    /// An exchange that waits for a connection with room.
    typealias Waiting = (statements: [SQL], completion: Completion)
    /// Decides, and keeps the waiting exchanges.
    private var machine: PipelineClientStateMachine<ObjectIdentifier, Waiting>
    /// The connections open, by identity (the state machine's names for them).
    private var live: [ObjectIdentifier: PipelinedConnection] = [:]
    /// Set by `close`; read by the connecting threads too.
    private let closed = Atomic<Bool>(false)
    private let counters = Counters()

    /// What the client has done, readable from any thread (metrics, tests).
    public struct Stats: Sendable, Equatable {
        /// Connections open and in the loop.
        public var open: Int
        /// Exchanges answered (with results or a statement's error).
        public var exchanges: Int
        /// Submissions declined (no connection open, or all busy).
        public var declined: Int
    }

    private final class Counters: Sendable {
        let open = Atomic<Int>(0)
        let exchanges = Atomic<Int>(0)
        let declined = Atomic<Int>(0)
    }

    public var stats: Stats {
        Stats(
            open: counters.open.load(ordering: .relaxed), exchanges: counters.exchanges.load(ordering: .relaxed),
            declined: counters.declined.load(ordering: .relaxed))
    }

    public init(conninfo: String, size: Int, allowsPreparedStatements: Bool = true, depth: Int = 8, maxWaiting: Int = 1024, loop: EventLoop) {
        self.conninfo = conninfo
        self.size = size
        self.allowsPreparedStatements = allowsPreparedStatements
        self.depth = depth
        self.maxWaiting = maxWaiting
        self.loop = loop
        self.machine = PipelineClientStateMachine(depth: depth, maxWaiting: maxWaiting)
    }

    /// Opens the connections in the background; each joins the loop when ready. Any thread.
    public func start() {
        for _ in 0..<size { connectInBackground(after: 0) }
    }

    /// Sends `statements` and one Sync on the least busy connection (or queues them until one is
    /// less than `depth` deep); `completion` runs on the loop thread with every statement's
    /// result, or the first error. Returns false, having sent nothing, when no connection can
    /// take it (none open yet, or `maxWaiting` already queued) or when a statement opens an
    /// explicit transaction. Loop thread only.
    public func submit(_ statements: [SQL], completion: @escaping Completion) -> Bool {
        precondition(loop.inLoop, "PipelineClient.submit off the loop thread")
        if statements.contains(where: Self.opensTransaction) { return false }
        if statements.contains(where: { $0.binds.contains { $0.map(Self.containsNUL) ?? false } }) {
            completion(.failure(.nulCharacter))
            return true
        }
        while true {
            switch machine.submit((statements, completion)) {
            case .send(let id, let checkAlive):
                let connection = live[id]!
                // Killed while idle (restart, pg_terminate_backend): drop it, try another.
                if checkAlive && !connection.isAliveWhileIdle() {
                    lost(connection, PostgresError(kind: .connection, message: "connection lost while idle"))
                    continue
                }
                send(statements, on: connection, completion: completion)
                return true
            case .wait:
                return true
            case .decline:
                counters.declined.add(1, ordering: .relaxed)
                return false
            }
        }
    }

    private func send(_ statements: [SQL], on connection: PipelinedConnection, completion: @escaping Completion) {
        connection.send(statements) { [counters] outcome in
            counters.exchanges.add(1, ordering: .relaxed)
            completion(outcome)
        }
    }

    /// A connection answered an exchange (before its completion runs, which may submit again).
    func answered(_ connection: PipelinedConnection) {
        machine.answered(on: ObjectIdentifier(connection))
    }

    /// A connection joined or answered: it takes the oldest waiting exchanges, while the state
    /// machine says it has room.
    func takeWaiting(_ connection: PipelinedConnection) {
        while true {
            switch machine.room(on: ObjectIdentifier(connection)) {
            case .send(let next):
                send(next.statements, on: connection, completion: next.completion)
            case .done:
                return
            }
        }
    }

    /// Closes every connection; exchanges still in flight fail. Call after the loop has stopped
    /// (or from it).
    public func close() {
        closed.store(true, ordering: .releasing)
        let error = PostgresError(kind: .client, message: "the database client is closed")
        switch machine.close() {
        case .close(let ids, let failing):
            let connections = ids.compactMap { live.removeValue(forKey: $0) }
            counters.open.store(0, ordering: .relaxed)
            for connection in connections { connection.close(error) }
            for waiting in failing { waiting.completion(.failure(error)) }
        }
    }

    /// Whether a value holds a NUL byte (libpq's text parameters end at one).
    static func containsNUL(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { $0.count > 0 && memchr($0.baseAddress!, 0, $0.count) != nil }
    }

    /// `BEGIN …` or `START TRANSACTION …`, in any case, after leading blanks.
    static func opensTransaction(_ statement: SQL) -> Bool {
        let words = statement.leadingText.utf8.drop { $0 == 0x20 || $0 == 0x0a || $0 == 0x09 || $0 == 0x0d }
        func starts(_ word: String) -> Bool {
            words.count >= word.utf8.count && zip(words, word.utf8).allSatisfy { ($0 | 0x20) == $1 }
        }
        return starts("begin") || starts("start")
    }

    func lost(_ connection: PipelinedConnection, _ error: PostgresError) {
        switch machine.lost(ObjectIdentifier(connection)) {
        case .close(let failing, let reconnect):
            live[ObjectIdentifier(connection)] = nil
            counters.open.store(machine.open, ordering: .relaxed)
            connection.close(error)
            for waiting in failing { waiting.completion(.failure(error)) }
            if reconnect { connectInBackground(after: 0.2) }
        }
    }

    /// Connects on a thread of its own (libpq's connect blocks) and hands the connection to the
    /// loop; retries every second while the database is unreachable, until the client closes.
    private func connectInBackground(after delay: Double) {
        let conninfo = conninfo
        let prepared = allowsPreparedStatements
        startThread(name: "db-connect") { [self] in
            var wait = delay
            var opened: OpaquePointer?
            while opened == nil {
                if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
                guard !closed.load(ordering: .acquiring) else { return }
                opened = PipelinedConnection.open(conninfo)
                wait = 1
            }
            let box = HandleBox(opened!)
            loop.execute { [self] in
                let connection = PipelinedConnection(handle: box.handle, allowsPreparedStatements: prepared, client: self)
                switch machine.joined(ObjectIdentifier(connection)) {
                case .register:
                    live[ObjectIdentifier(connection)] = connection
                    counters.open.store(machine.open, ordering: .relaxed)
                    connection.register()
                    takeWaiting(connection)
                case .close:
                    PQfinish(box.handle)  // never registered: the object goes unused
                }
            }
        }
    }
}

/// A libpq handle crossing from the connecting thread to the loop (used by one thread at a time).
private struct HandleBox: @unchecked Sendable {
    let handle: OpaquePointer
    init(_ handle: OpaquePointer) { self.handle = handle }
}
