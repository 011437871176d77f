import CPostgres
import EventLoop
import Glibc

/// One connection of a `PipelineClient`: its exchanges in flight, in order, and the results read
/// so far; which result belongs where is its `ExchangeStateMachine`'s to say. Loop thread only.
final class PipelinedConnection {
    /// What an exchange in flight has gathered, in the order the state machine answers them.
    private struct Exchange {
        var completion: PipelineClient.Completion
        var results: [QueryResult] = []
        var failure: PostgresError?
    }

    private let handle: OpaquePointer
    let fd: Int32
    private let allowsPreparedStatements: Bool
    private unowned let client: PipelineClient
    private var machine = ExchangeStateMachine()
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
        guard PQstatus(handle) == CONNECTION_OK else {
            PQfinish(handle)
            return nil
        }
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        guard let result = PQexec(handle, "SET client_encoding TO 'UTF8'; SET TimeZone TO 'UTC'") else {
            PQfinish(handle)
            return nil
        }
        let ok = PQresultStatus(result) == PGRES_COMMAND_OK
        PQclear(result)
        guard ok, PQsetnonblocking(handle, 1) == 0, PQenterPipelineMode(handle) == 1 else {
            PQfinish(handle)
            return nil
        }
        return handle
    }

    init(handle: OpaquePointer, allowsPreparedStatements: Bool, client: PipelineClient) {
        self.handle = handle
        self.fd = PQsocket(handle)
        self.allowsPreparedStatements = allowsPreparedStatements
        self.client = client
    }

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
        var steps: [ExchangeStateMachine.Step] = []
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
        machine.sent(steps)
        inFlight.append(Exchange(completion: completion))
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
            if watchingWrites {
                watchingWrites = false
                client.loop.modify(fd, events: EventLoop.readable)
            }
        case 1:
            if !watchingWrites {
                watchingWrites = true
                client.loop.modify(fd, events: EventLoop.readable | EventLoop.writable)
            }
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

    /// Reads every result already received, in order, doing what the state machine says of each.
    private func readResults() {
        while machine.inFlight > 0, !closed, PQisBusy(handle) == 0 {
            guard let result = PQgetResult(handle) else {
                switch machine.receivedEnd() {
                case .nextStep, .ignore:
                    continue
                case .connectionLost:
                    fail(PostgresError.connection(handle, "connection lost"))
                    return
                }
            }
            let status = PQresultStatus(result)
            switch machine.receivedResult(isSync: status == PGRES_PIPELINE_SYNC) {
            case .record(let step):
                record(result, status: status, step: step, into: &inFlight[head])
                PQclear(result)
            case .discard:
                PQclear(result)
            case .answered(let last):
                PQclear(result)
                answer(last: last)
            }
        }
    }

    /// The head exchange's Sync arrived: its completion runs, and the connection takes more.
    private func answer(last: Bool) {
        let exchange = inFlight[head]
        client.answered(self)
        head += 1
        if head == inFlight.count {
            inFlight.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64 {
            inFlight.removeFirst(head)
            head = 0
        }
        // Every exchange is an implicit transaction; one left open would take the exchanges
        // behind it along. (libpq reports the status only while nothing is in flight; `submit`
        // declines BEGIN, this is the check behind that rule.)
        if last, PQtransactionStatus(handle) != PQTRANS_IDLE {
            exchange.completion(.failure(PostgresError(kind: .client, message: "an exchange left a transaction open")))
            fail(PostgresError(kind: .connection, message: "connection left inside a transaction"))
            return
        }
        if let failure = exchange.failure {
            exchange.completion(.failure(failure))
        } else {
            exchange.completion(.success(exchange.results))
        }
        if !closed { client.takeWaiting(self) }
    }

    private func record(_ result: OpaquePointer, status: ExecStatusType, step: ExchangeStateMachine.Step, into exchange: inout Exchange) {
        let ok = status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY
        var failure: PostgresError?
        if status == PGRES_PIPELINE_ABORTED {
            failure = PostgresError(kind: .server, message: "statement skipped: an earlier statement in the pipeline failed", sqlState: "25P02")
        } else if !ok {
            failure = PostgresError(result: result)
        }
        switch step {
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
        machine.closed()
        for exchange in pending { exchange.completion(.failure(error)) }
    }
}
