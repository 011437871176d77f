import Foundation

/// A bounded pool of connections, opened lazily.
///
/// `withConnection` blocks the calling thread until a connection is free (up to `acquireTimeout`).
/// A connection that comes back broken is closed and replaced on the next checkout, and one left
/// inside a transaction is rolled back first (or dropped if that fails): no caller ever gets a
/// connection that is mid-transaction or dead.
public final class Pool: @unchecked Sendable {  // all mutable state is guarded by `condition`
    public struct Stats: Sendable, Equatable {
        public var open: Int
        public var inUse: Int
        public var waiting: Int
    }

    public let conninfo: String
    public let size: Int
    public let acquireTimeout: Double
    public let allowsPreparedStatements: Bool
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var open = 0
    private var waiting = 0
    private var closed = false

    public init(conninfo: String, size: Int, acquireTimeout: Double = 10, allowsPreparedStatements: Bool = true) {
        precondition(size > 0, "pool size must be positive")
        self.conninfo = conninfo
        self.size = size
        self.acquireTimeout = acquireTimeout
        self.allowsPreparedStatements = allowsPreparedStatements
    }

    public var stats: Stats {
        condition.lock()
        defer { condition.unlock() }
        return Stats(open: open, inUse: open - idle.count, waiting: waiting)
    }

    /// Lends a connection to `body` and takes it back afterwards, whatever happens.
    public func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try acquire()
        var healthy = true
        defer { release(connection, healthy: healthy) }
        do {
            return try body(connection)
        } catch let error as PostgresError where error.kind == .connection {
            healthy = false
            throw error
        }
    }

    /// Runs `body` in one transaction on a lent connection: COMMIT when it returns, ROLLBACK when
    /// it throws (a decision that must survive an error is returned, and thrown afterwards).
    public func withTransaction<T>(_ body: (Connection) throws -> T) throws -> T {
        try withConnection { try $0.withTransaction(body) }
    }

    /// Closes idle connections and refuses new checkouts.
    public func close() {
        condition.lock()
        closed = true
        open -= idle.count
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    private func acquire() throws -> Connection {
        let deadline = Date(timeIntervalSinceNow: acquireTimeout)
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw PostgresError(kind: .client, message: "connection pool is closed")
            }
            if let connection = idle.popLast() {
                condition.unlock()
                if connection.isAliveWhileIdle() { return connection }
                // Killed while idle (restart, pg_terminate_backend): replace it.
                condition.lock()
                open -= 1
                continue
            }
            if open < size {
                open += 1
                condition.unlock()
                do {
                    return try Connection(conninfo: conninfo, allowsPreparedStatements: allowsPreparedStatements)
                } catch {
                    condition.lock()
                    open -= 1
                    condition.signal()
                    condition.unlock()
                    throw error
                }
            }
            waiting += 1
            let signalled = condition.wait(until: deadline)
            waiting -= 1
            if !signalled {
                condition.unlock()
                throw PostgresError(kind: .client, message: "timed out waiting for a database connection", sqlState: "08000")
            }
        }
    }

    private func release(_ connection: Connection, healthy: Bool) {
        var keep = healthy && connection.isHealthy
        if keep && !connection.isIdle {
            // Left inside a (possibly failed) transaction: roll it back before anyone else sees it.
            keep = (try? connection.execute("ROLLBACK")) != nil && connection.isIdle
        }
        condition.lock()
        if keep && !closed {
            idle.append(connection)
        } else {
            open -= 1
        }
        condition.signal()
        condition.unlock()
    }
}
