import CPostgres
import Glibc

/// One libpq connection. Blocking: every call waits for the server, so use it from a thread that
/// may block (a worker thread), and from one thread at a time — the `Pool` guarantees that.
///
/// Statements run with the extended protocol and bound parameters only. With `prepared: true`
/// a statement is prepared once per connection under a generated name and re-used, which halves
/// PostgreSQL's CPU per statement (no parse and plan each time); the cache is keyed by statement text,
/// so callers keep values out of the text.
public final class Connection: @unchecked Sendable {  // confined: one thread at a time (Pool)
    private let handle: OpaquePointer
    private var preparedNames: [String: String] = [:]
    private var nextStatementNumber = 0
    /// Upper bound on prepared statements kept per connection before they are all dropped.
    public static let maxPreparedStatements = 256
    /// Off when the server is behind a transaction-pooling PgBouncer that can't keep them.
    public let allowsPreparedStatements: Bool

    public init(conninfo: String, allowsPreparedStatements: Bool = true) throws {
        guard let handle = PQconnectdb(conninfo) else {
            throw PostgresError(kind: .connection, message: "out of memory allocating a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let error = PostgresError.connection(handle, "could not connect")
            PQfinish(handle)
            throw error
        }
        self.handle = handle
        self.allowsPreparedStatements = allowsPreparedStatements
        PQsetNoticeProcessor(handle, { _, _ in }, nil)  // notices are not errors; keep stderr clean
        try execute("SET client_encoding TO 'UTF8'; SET TimeZone TO 'UTC'")
    }

    deinit {
        PQfinish(handle)
    }

    /// False once the connection is lost; the pool then replaces it.
    public var isHealthy: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Checks, without a round trip, that the server has not closed the connection while it sat
    /// idle (a terminated backend sends its error and EOF, which make the socket readable).
    public func isAliveWhileIdle() -> Bool {
        guard isHealthy else { return false }
        // libpq notices EOF only on a read that returns nothing, after it has consumed the
        // backend's last message, so keep reading while the socket stays readable.
        for _ in 0..<4 {
            var pollDescriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            guard poll(&pollDescriptor, 1, 0) > 0 else { return isHealthy }
            guard PQconsumeInput(handle) == 1, isHealthy else { return false }
        }
        return isHealthy
    }

    /// True when no transaction is open (or left aborted) on the connection.
    public var isIdle: Bool { PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// The backend process id (`pg_backend_pid()`), e.g. to terminate it in a test.
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// Runs fixed SQL text through the simple protocol: several statements allowed, no
    /// parameters. The text is a literal in the source, so no value can reach it; a statement
    /// with values is a `query`.
    public func execute(_ statements: StaticString) throws {
        try execute(unsafeSQL: statements.description)
    }

    /// Runs SQL text built at run time through the simple protocol (a migration file, DDL that
    /// names a database). The caller answers for every identifier in it (`quoteIdentifier`) and
    /// every literal (`quoteLiteral`); it is never built from a request.
    public func execute(unsafeSQL statements: String) throws {
        var failure: PostgresError?
        guard PQsendQuery(handle, statements) == 1 else { throw PostgresError.connection(handle, "could not send query") }
        while let result = PQgetResult(handle) {
            let status = PQresultStatus(result)
            if failure == nil, status == PGRES_FATAL_ERROR || status == PGRES_BAD_RESPONSE {
                failure = PostgresError(result: result)
            }
            PQclear(result)
        }
        if let failure { throw failure }
        if !isHealthy { throw PostgresError.connection(handle, "connection lost") }
    }

    /// Runs `body` in a transaction on this connection: COMMIT when it returns, ROLLBACK (if the
    /// transaction is still open) when it throws, and the error passed on.
    public func withTransaction<T>(_ body: (Connection) throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body(self)
            try execute("COMMIT")
            return value
        } catch {
            if !isIdle { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Runs one statement with bound parameters.
    public func query(_ sql: SQL, prepared: Bool = false) throws -> QueryResult {
        try pipeline([sql], prepared: prepared)[0]
    }

    /// Sends every statement, then one Sync, and reads all results: one round trip. Everything
    /// before the Sync is one implicit transaction (unless a statement opens its own), so an error
    /// in any statement rolls back the ones before it and skips the ones after.
    public func pipeline(_ statements: [SQL], prepared: Bool = true) throws -> [QueryResult] {
        // libpq takes each value as a C string: a NUL would silently cut it (a filter value
        // `a\0b` would compare as `a`). PostgreSQL refuses NUL in text; so do we, before sending.
        if statements.contains(where: { $0.binds.contains { $0?.utf8.contains(0) == true } }) {
            throw PostgresError.nulCharacter
        }
        let usePrepared = prepared && allowsPreparedStatements
        if usePrepared && preparedNames.count + statements.count > Self.maxPreparedStatements {
            try execute("DEALLOCATE ALL")
            preparedNames.removeAll()
        }
        guard PQenterPipelineMode(handle) == 1 else { throw PostgresError.connection(handle, "could not enter pipeline mode") }
        defer { PQexitPipelineMode(handle) }

        // What was sent for each statement: a new prepared name (to be confirmed) or not.
        var newlyPrepared: [String?] = []
        for statement in statements {
            var newName: String? = nil
            // Typed binds are part of what was prepared: the cache key names them.
            let cacheKey = Self.preparedKey(statement)
            let types: [Oid]? = statement.types.isEmpty ? nil : statement.types.map { Oid($0) }
            let ok: Bool = withParameters(statement.binds) { count, values in
                types.withOptionalBuffer { typePointer in
                    if usePrepared {
                        let name: String
                        if let known = preparedNames[cacheKey] {
                            name = known
                        } else {
                            nextStatementNumber += 1
                            name = "onboard_\(nextStatementNumber)"
                            newName = name
                            guard PQsendPrepare(handle, name, statement.text, count, typePointer) == 1 else { return false }
                        }
                        return PQsendQueryPrepared(handle, name, count, values, nil, nil, 0) == 1
                    }
                    return PQsendQueryParams(handle, statement.text, count, typePointer, values, nil, nil, 0) == 1
                }
            }
            guard ok else { throw PostgresError.connection(handle, "could not send statement") }
            newlyPrepared.append(newName)
        }
        guard PQpipelineSync(handle) == 1 else { throw PostgresError.connection(handle, "could not send sync") }

        var results: [QueryResult] = []
        results.reserveCapacity(statements.count)
        var failure: PostgresError?
        for (index, statement) in statements.enumerated() {
            if let name = newlyPrepared[index] {
                let prepareFailure = readOne(into: nil)
                if prepareFailure == nil {
                    preparedNames[Self.preparedKey(statement)] = name
                }
                failure = failure ?? prepareFailure
            }
            var result: QueryResult?
            let queryFailure = readOne(into: &result)
            failure = failure ?? queryFailure
            if let result { results.append(result) }
        }
        // Drain up to and including the Sync marker (NULLs separate results; a lost
        // connection yields NULL forever, hence the bound).
        var nullsInARow = 0
        while nullsInARow < 3 {
            guard let result = PQgetResult(handle) else {
                if !isHealthy { break }
                nullsInARow += 1
                continue
            }
            nullsInARow = 0
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        if !isHealthy, failure == nil || failure?.kind != .server {
            throw PostgresError.connection(handle, "connection lost")
        }
        if let failure { throw failure }
        return results
    }

    /// The prepared-statement cache's key: the text, and the bind types when some are given
    /// (they are part of what was prepared).
    static func preparedKey(_ statement: SQL) -> String {
        statement.types.isEmpty ? statement.text : statement.text + "\u{0}" + statement.types.map(String.init).joined(separator: ",")
    }

    /// Reads one statement's result and the NULL after it; returns its error, if any.
    private func readOne(into slot: UnsafeMutablePointer<QueryResult?>?) -> PostgresError? {
        var failure: PostgresError?
        guard let result = PQgetResult(handle) else {
            return PostgresError.connection(handle, "connection lost")
        }
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            slot?.pointee = QueryResult(result: result)
        case PGRES_PIPELINE_ABORTED:
            failure = PostgresError(kind: .server, message: "statement skipped: an earlier statement in the pipeline failed", sqlState: "25P02")
        default:
            failure = PostgresError(result: result)
        }
        PQclear(result)
        // Each statement's results end with a NULL.
        while let extra = PQgetResult(handle) { PQclear(extra) }
        return failure
    }

    private func readOne(into slot: inout QueryResult?) -> PostgresError? {
        withUnsafeMutablePointer(to: &slot) { readOne(into: $0) }
    }

    // MARK: LISTEN / NOTIFY

    /// Subscribes this connection to a channel (`LISTEN "channel"`).
    public func listen(_ channel: String) throws {
        try execute(unsafeSQL: "LISTEN \(quoteIdentifier(channel))")
    }

    /// Waits up to `timeout` seconds for notifications; returns (channel, payload) pairs.
    public func waitForNotifications(timeout: Double) throws -> [(channel: String, payload: String)] {
        var received = drainNotifications()
        if !received.isEmpty { return received }
        var pollDescriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        let ready = poll(&pollDescriptor, 1, Int32(timeout * 1000))
        if ready > 0 {
            guard PQconsumeInput(handle) == 1 else { throw PostgresError.connection(handle, "connection lost") }
            received = drainNotifications()
        }
        if !isHealthy { throw PostgresError.connection(handle, "connection lost") }
        return received
    }

    private func drainNotifications() -> [(channel: String, payload: String)] {
        var received: [(channel: String, payload: String)] = []
        while let notification = PQnotifies(handle) {
            received.append((String(cString: notification.pointee.relname), String(cString: notification.pointee.extra)))
            PQfreemem(notification)
        }
        return received
    }
}

extension Optional where Wrapped == [Oid] {
    /// The array's storage for the duration of `body` (nil when there is no array).
    func withOptionalBuffer<R>(_ body: (UnsafePointer<Oid>?) -> R) -> R {
        switch self {
        case .none: return body(nil)
        case .some(let array): return array.withUnsafeBufferPointer { body($0.baseAddress) }
        }
    }
}

/// Hands libpq the parameter values as C strings that live for the duration of `body`.
func withParameters<R>(_ binds: [String?], _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
    if binds.isEmpty { return body(0, nil) }
    var pointers: [UnsafeMutablePointer<CChar>?] = binds.map { $0.map { strdup($0) } ?? nil }
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeMutableBufferPointer { buffer in
        buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
            body(Int32(binds.count), $0)
        }
    }
}
