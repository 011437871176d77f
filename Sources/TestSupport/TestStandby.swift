import EmbeddedPostgres
import Foundation
import Glibc
import Migrations
import Postgres
import Synchronization

/// A primary and its real streaming hot standby (`pg_basebackup` through a physical slot), one
/// pair per test process, apart from the main test cluster: its base backup copies only a
/// migrated template, not every suite's databases. Tests make databases on the primary and
/// read them on the standby once replayed.
public final class TestStandby: Sendable {
    public let primary: EmbeddedPostgres
    public let standby: EmbeddedPostgres
    static let templateName = "onboard_replica_template"
    private static let counter = Mutex(0)

    private static let started: Result<TestStandby, any Error> = Result {
        var options = EmbeddedPostgres.Options()
        options.durable = false
        options.settings = ["max_wal_senders": "20", "max_replication_slots": "20", "wal_writer_delay": "10ms"]
        let base = try TestPostgres.cluster().dataDirectory.path
        let primary = try EmbeddedPostgres(dataDirectory: URL(fileURLWithPath: base + "-replication-primary"), options: options)
        try? primary.stop()
        try? FileManager.default.removeItem(at: primary.dataDirectory)
        try primary.start()
        let admin = try Connection(conninfo: primary.url(database: "postgres"))
        try admin.execute(unsafeSQL: "CREATE DATABASE \(quoteIdentifier(templateName))")
        try Migrator(directory: TestPostgres.migrationsDirectory).up(Connection(conninfo: primary.url(database: templateName)))
        let folder = URL(fileURLWithPath: base + "-replication-standby")
        let standby = try primary.makeStandby(in: folder, slot: "test_standby")
        try standby.start()
        let pair = TestStandby(primary: primary, standby: standby)
        stopAtExit(pair)
        return pair
    }

    private init(primary: EmbeddedPostgres, standby: EmbeddedPostgres) {
        self.primary = primary
        self.standby = standby
    }

    /// The process's pair, started on first use.
    public static func shared() throws -> TestStandby { try started.get() }

    /// A new migrated database on the primary; returns its URL.
    public func makeDatabase() throws -> String {
        let number = Self.counter.withLock { value -> Int in
            value += 1
            return value
        }
        let name = "onboard_r_\(getpid())_\(number)"
        try Connection(conninfo: primary.url(database: "postgres"))
            .execute(unsafeSQL: "CREATE DATABASE \(quoteIdentifier(name)) TEMPLATE \(quoteIdentifier(Self.templateName))")
        return primary.url(database: name)
    }

    /// The standby's URL for the database of `primaryURL` (same name).
    public func url(for primaryURL: String) -> String {
        let name = primaryURL.split(separator: "/").last?.split(separator: "?").first.map(String.init) ?? "postgres"
        return standby.url(database: name)
    }

    /// A connection to the standby's `postgres` database (to pause or resume replay).
    public func adminConnection() throws -> Connection {
        try Connection(conninfo: standby.url(database: "postgres"))
    }

    /// Waits until the standby has replayed everything the primary has written so far.
    public func waitForReplay(timeout: Double = 30) throws -> Bool {
        let target = try Connection(conninfo: primary.url(database: "postgres")).query("SELECT pg_current_wal_insert_lsn()::text").scalar ?? "0/0"
        let standby = try adminConnection()
        return try eventually(timeout: timeout) {
            try standby.query("SELECT pg_last_wal_replay_lsn() >= \(target)::pg_lsn").first?.bool(0) == true
        }
    }

    public func stopStandby() throws { try standby.stop() }
    public func startStandby() throws { try standby.start() }
}

nonisolated(unsafe) private var pairToStop: TestStandby?  // written once, before atexit runs

private func stopAtExit(_ pair: TestStandby) {
    pairToStop = pair
    atexit {
        guard let pair = pairToStop else { return }
        try? pair.standby.stop()
        try? pair.primary.stop()
        try? FileManager.default.removeItem(at: pair.standby.dataDirectory)
        try? FileManager.default.removeItem(at: pair.primary.dataDirectory)
    }
}
