import EmbeddedPostgres
import Foundation
import Glibc
import Postgres
import Synchronization

/// A real streaming hot standby of the test cluster (`pg_basebackup` through a physical slot),
/// running until it is stopped or released; with the test cluster's databases, the test's own
/// included, as they are on the primary once replayed.
public final class TestStandby: @unchecked Sendable {  // its state is set once in init
    private static let counter = Mutex(0)
    public let cluster: EmbeddedPostgres
    public let slot: String

    public init() throws {
        let primary = try TestPostgres.cluster()
        let number = Self.counter.withLock { value -> Int in
            value += 1
            return value
        }
        slot = "test_standby_\(getpid())_\(number)"
        let folder = URL(fileURLWithPath: primary.dataDirectory.path + "-standby-\(number)")
        try? FileManager.default.removeItem(at: folder)
        cluster = try primary.makeStandby(in: folder, slot: slot)
        try cluster.start()
    }

    deinit {
        try? cluster.stop()
        try? FileManager.default.removeItem(at: cluster.dataDirectory)
        if let admin = try? TestPostgres.adminConnection() {
            _ = try? admin.query("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = \(slot)")
        }
    }

    /// The standby's URL for the database of `primaryURL` (same name).
    public func url(for primaryURL: String) -> String {
        let name = primaryURL.split(separator: "/").last?.split(separator: "?").first.map(String.init) ?? "postgres"
        return cluster.url(database: name)
    }

    /// A connection to the standby's `postgres` database (to pause or resume replay).
    public func adminConnection() throws -> Connection {
        try Connection(conninfo: cluster.url(database: "postgres"))
    }

    /// Waits until the standby has replayed everything the primary has written so far.
    public func waitForReplay(timeout: Double = 30) throws -> Bool {
        let target = try TestPostgres.adminConnection().query("SELECT pg_current_wal_insert_lsn()::text").scalar ?? "0/0"
        let standby = try adminConnection()
        return try eventually(timeout: timeout) {
            try standby.query("SELECT pg_last_wal_replay_lsn() >= \(target)::pg_lsn").scalar == "t"
        }
    }

    public func stop() throws { try cluster.stop() }
    public func start() throws { try cluster.start() }
}
