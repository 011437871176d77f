import CPostgres
import Dispatch
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
    private var live: [PipelinedConnection] = []
    /// Exchanges submitted while every connection was `depth` deep, oldest first.
    private var waiting: [(statements: [SQL], completion: Completion)] = []
    private var waitingHead = 0
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
        Stats(open: counters.open.load(ordering: .relaxed), exchanges: counters.exchanges.load(ordering: .relaxed),
              declined: counters.declined.load(ordering: .relaxed))
    }

    public init(conninfo: String, size: Int, allowsPreparedStatements: Bool = true, depth: Int = 8, maxWaiting: Int = 1024, loop: EventLoop) {
        self.conninfo = conninfo
        self.size = size
        self.allowsPreparedStatements = allowsPreparedStatements
        self.depth = depth
        self.maxWaiting = maxWaiting
        self.loop = loop
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
        if statements.contains(where: { $0.binds.contains { $0?.utf8.contains(0) == true } }) {
            completion(.failure(.nulCharacter))
            return true
        }
        while let connection = leastBusy() {
            guard connection.inFlightCount < depth else {
                guard waiting.count - waitingHead < maxWaiting else { break }
                waiting.append((statements, completion))
                return true
            }
            // Killed while idle (restart, pg_terminate_backend): drop it, try another.
            if connection.inFlightCount == 0 && !connection.isAliveWhileIdle() {
                lost(connection, PostgresError(kind: .connection, message: "connection lost while idle"))
                continue
            }
            send(statements, on: connection, completion: completion)
            return true
        }
        counters.declined.add(1, ordering: .relaxed)
        return false
    }

    private func send(_ statements: [SQL], on connection: PipelinedConnection, completion: @escaping Completion) {
        connection.send(statements) { [counters] outcome in
            counters.exchanges.add(1, ordering: .relaxed)
            completion(outcome)
        }
    }

    /// A connection answered an exchange (or joined): it takes the oldest waiting ones.
    fileprivate func hasRoom(_ connection: PipelinedConnection) {
        while waitingHead < waiting.count, connection.inFlightCount < depth, live.contains(where: { $0 === connection }) {
            let next = waiting[waitingHead]
            waitingHead += 1
            if waitingHead == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                waitingHead = 0
            }
            send(next.statements, on: connection, completion: next.completion)
        }
    }

    /// Fails every waiting exchange (no connection is left to take them).
    private func failWaiting(_ error: PostgresError) {
        let failed = waiting[waitingHead...]
        waiting.removeAll()
        waitingHead = 0
        for item in failed { item.completion(.failure(error)) }
    }

    /// Closes every connection; exchanges still in flight fail. Call after the loop has stopped
    /// (or from it).
    public func close() {
        closed.store(true, ordering: .releasing)
        let connections = live
        live.removeAll()
        counters.open.store(0, ordering: .relaxed)
        let error = PostgresError(kind: .client, message: "the database client is closed")
        for connection in connections { connection.close(error) }
        failWaiting(error)
    }

    /// `BEGIN …` or `START TRANSACTION …`, in any case, after leading blanks.
    static func opensTransaction(_ statement: SQL) -> Bool {
        let words = statement.text.utf8.drop { $0 == 0x20 || $0 == 0x0a || $0 == 0x09 || $0 == 0x0d }
        func starts(_ word: String) -> Bool {
            words.count >= word.utf8.count && zip(words, word.utf8).allSatisfy { ($0 | 0x20) == $1 }
        }
        return starts("begin") || starts("start")
    }

    private func leastBusy() -> PipelinedConnection? {
        var best: PipelinedConnection?
        for connection in live where best == nil || connection.inFlightCount < best!.inFlightCount { best = connection }
        return best
    }

    fileprivate func lost(_ connection: PipelinedConnection, _ error: PostgresError) {
        live.removeAll { $0 === connection }
        counters.open.store(live.count, ordering: .relaxed)
        connection.close(error)
        if live.isEmpty { failWaiting(error) }
        if !closed.load(ordering: .acquiring) { connectInBackground(after: 0.2) }
    }

    /// Connects on a background thread (libpq's connect blocks) and hands the connection to the
    /// loop; retries every second while the database is unreachable.
    private func connectInBackground(after delay: Double) {
        let conninfo = conninfo, prepared = allowsPreparedStatements
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [self] in
            guard let handle = PipelinedConnection.open(conninfo) else {
                if !closed.load(ordering: .acquiring) { connectInBackground(after: 1) }
                return
            }
            let box = HandleBox(handle)
            loop.execute { [self] in
                guard !closed.load(ordering: .acquiring) else { PQfinish(box.handle); return }
                let connection = PipelinedConnection(handle: box.handle, allowsPreparedStatements: prepared, client: self)
                live.append(connection)
                counters.open.store(live.count, ordering: .relaxed)
                connection.register()
                hasRoom(connection)
            }
        }
    }
}

/// A libpq handle crossing from the connecting thread to the loop (used by one thread at a time).
private struct HandleBox: @unchecked Sendable {
    let handle: OpaquePointer
    init(_ handle: OpaquePointer) { self.handle = handle }
}

/// One connection of a `PipelineClient`: its exchanges in flight, in order, and the results read
/// so far. Loop thread only.
final class PipelinedConnection {
    private enum Step {
        /// The Parse of a statement about to be prepared under `name` (its key in the cache).
        case prepare(key: String, name: String)
        case execute
    }

    private struct Exchange {
        var steps: [Step]
        var completion: PipelineClient.Completion
        var results: [QueryResult] = []
        var failure: PostgresError?
        var step = 0
        /// A step's result was read; the NULL that ends it comes next.
        var awaitingEnd = false
    }

    private let handle: OpaquePointer
    let fd: Int32
    private let allowsPreparedStatements: Bool
    private unowned let client: PipelineClient
    private var inFlight: [Exchange] = []
    private var head = 0
    /// Statements prepared on this connection (confirmed by PostgreSQL), by key.
    private var prepared: [String: String] = [:]
    /// Keys whose Parse is in flight: not reused until confirmed, so that a Parse skipped by an
    /// earlier error in its exchange cannot fail the exchanges behind it.
    private var preparing: Set<String> = []
    private var nextStatementNumber = 0
    private var flushScheduled = false
    private var watchingWrites = false
    private var closed = false

    /// Connects (blocking: call off the loop), sets the session up and enters pipeline mode.
    static func open(_ conninfo: String) -> OpaquePointer? {
        guard let handle = PQconnectdb(conninfo) else { return nil }
        guard PQstatus(handle) == CONNECTION_OK else { PQfinish(handle); return nil }
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        guard let result = PQexec(handle, "SET client_encoding TO 'UTF8'; SET TimeZone TO 'UTC'") else { PQfinish(handle); return nil }
        let ok = PQresultStatus(result) == PGRES_COMMAND_OK
        PQclear(result)
        guard ok, PQsetnonblocking(handle, 1) == 0, PQenterPipelineMode(handle) == 1 else { PQfinish(handle); return nil }
        return handle
    }

    init(handle: OpaquePointer, allowsPreparedStatements: Bool, client: PipelineClient) {
        self.handle = handle
        self.fd = PQsocket(handle)
        self.allowsPreparedStatements = allowsPreparedStatements
        self.client = client
    }

    var inFlightCount: Int { inFlight.count - head }

    func register() {
        client.loop.register(fd, events: EventLoop.readable) { [weak self] events in self?.ready(events) }
    }

    /// Checks, without a round trip, that the server has not closed the connection while it sat
    /// idle (a terminated backend's error and EOF make the socket readable).
    func isAliveWhileIdle() -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return PQstatus(handle) == CONNECTION_OK }
        return PQconsumeInput(handle) == 1 && PQstatus(handle) == CONNECTION_OK
    }

    /// Queues one exchange; the bytes leave at the end of the loop's round.
    func send(_ statements: [SQL], completion: @escaping PipelineClient.Completion) {
        var steps: [Step] = []
        steps.reserveCapacity(statements.count + 1)
        var sent = true
        for statement in statements where sent {
            let types: [Oid]? = statement.types.isEmpty ? nil : statement.types.map { Oid($0) }
            let key = allowsPreparedStatements ? Connection.preparedKey(statement) : ""
            sent = withParameters(statement.binds) { count, values in
                types.withOptionalBuffer { typePointer in
                    if allowsPreparedStatements, let name = prepared[key] {
                        steps.append(.execute)
                        return PQsendQueryPrepared(handle, name, count, values, nil, nil, 0) == 1
                    }
                    if allowsPreparedStatements, !preparing.contains(key), prepared.count + preparing.count < Connection.maxPreparedStatements {
                        nextStatementNumber += 1
                        let name = "onboard_p\(nextStatementNumber)"
                        preparing.insert(key)
                        steps.append(.prepare(key: key, name: name))
                        guard PQsendPrepare(handle, name, statement.text, count, typePointer) == 1 else { return false }
                        steps.append(.execute)
                        return PQsendQueryPrepared(handle, name, count, values, nil, nil, 0) == 1
                    }
                    steps.append(.execute)
                    return PQsendQueryParams(handle, statement.text, count, typePointer, values, nil, nil, 0) == 1
                }
            }
        }
        inFlight.append(Exchange(steps: steps, completion: completion))
        guard sent, PQpipelineSync(handle) == 1 else {
            fail(PostgresError.connection(handle, "could not send statement"))
            return
        }
        // libpq 15's PQpipelineSync already tries to write; whatever the socket did not take
        // leaves once this round of the loop is over (or when the socket becomes writable).
        if !flushScheduled {
            flushScheduled = true
            client.loop.afterThisRound { [weak self] in self?.flush() }
        }
    }

    private func flush() {
        flushScheduled = false
        guard !closed else { return }
        switch PQflush(handle) {
        case 0:
            if watchingWrites { watchingWrites = false; client.loop.modify(fd, events: EventLoop.readable) }
        case 1:
            if !watchingWrites { watchingWrites = true; client.loop.modify(fd, events: EventLoop.readable | EventLoop.writable) }
        default:
            fail(PostgresError.connection(handle, "could not send to the server"))
        }
    }

    private func ready(_ events: UInt32) {
        if events & EventLoop.writable != 0 { flush() }
        guard !closed, events & (EventLoop.readable | EventLoop.failed) != 0 else { return }
        guard PQconsumeInput(handle) == 1 else {
            fail(PostgresError.connection(handle, "connection lost"))
            return
        }
        readResults()
        if !closed && PQstatus(handle) != CONNECTION_OK { fail(PostgresError.connection(handle, "connection lost")) }
    }

    /// Reads every result already received, in order: for each step its result and the NULL
    /// after it, then the exchange's Sync.
    private func readResults() {
        while head < inFlight.count, !closed, PQisBusy(handle) == 0 {
            let result = PQgetResult(handle)
            if inFlight[head].step < inFlight[head].steps.count {
                if inFlight[head].awaitingEnd {
                    if let result { PQclear(result); continue }  // a further result of the same step
                    inFlight[head].awaitingEnd = false
                    inFlight[head].step += 1
                    continue
                }
                guard let result else {
                    fail(PostgresError.connection(handle, "connection lost"))
                    return
                }
                record(result, into: &inFlight[head])
                PQclear(result)
                inFlight[head].awaitingEnd = true
            } else {
                guard let result else { continue }
                let status = PQresultStatus(result)
                PQclear(result)
                guard status == PGRES_PIPELINE_SYNC else { continue }
                let exchange = inFlight[head]
                head += 1
                if head == inFlight.count {
                    inFlight.removeAll(keepingCapacity: true)
                    head = 0
                } else if head > 64 {
                    inFlight.removeFirst(head)
                    head = 0
                }
                // Every exchange is an implicit transaction; one left open would take the
                // exchanges behind it along. (libpq reports the status only while nothing is in
                // flight; `submit` declines BEGIN, this is the check behind that rule.)
                if head == inFlight.count, PQtransactionStatus(handle) != PQTRANS_IDLE {
                    exchange.completion(.failure(PostgresError(kind: .client, message: "an exchange left a transaction open")))
                    fail(PostgresError(kind: .connection, message: "connection left inside a transaction"))
                    return
                }
                if let failure = exchange.failure {
                    exchange.completion(.failure(failure))
                } else {
                    exchange.completion(.success(exchange.results))
                }
                if !closed { client.hasRoom(self) }
            }
        }
    }

    private func record(_ result: OpaquePointer, into exchange: inout Exchange) {
        let status = PQresultStatus(result)
        let ok = status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY
        var failure: PostgresError?
        if status == PGRES_PIPELINE_ABORTED {
            failure = PostgresError(kind: .server, message: "statement skipped: an earlier statement in the pipeline failed", sqlState: "25P02")
        } else if !ok {
            failure = PostgresError(result: result)
        }
        switch exchange.steps[exchange.step] {
        case .prepare(let key, let name):
            preparing.remove(key)
            if failure == nil { prepared[key] = name }
        case .execute:
            if failure == nil { exchange.results.append(QueryResult(result: result)) }
        }
        // The first error is the cause; the statements after it only report being skipped.
        if exchange.failure == nil, let failure { exchange.failure = failure }
    }

    /// The connection is unusable: every exchange in flight fails, and the client replaces it.
    private func fail(_ error: PostgresError) {
        guard !closed else { return }
        client.lost(self, error)
    }

    /// Unregisters, closes, and fails what was in flight.
    func close(_ error: PostgresError) {
        guard !closed else { return }
        closed = true
        client.loop.unregister(fd)
        PQfinish(handle)
        let pending = inFlight[head...]
        inFlight.removeAll()
        head = 0
        for exchange in pending { exchange.completion(.failure(error)) }
    }
}
