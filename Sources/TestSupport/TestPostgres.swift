import EmbeddedPostgres
import Foundation
import Glibc
import Migrations
import Postgres
import Synchronization

/// The test suite's PostgreSQL: one embedded cluster per test process (the same code `serve`
/// uses), a template database migrated once per process, and a fresh copy of it per test suite.
public enum TestPostgres {
    /// The package root, found from this file's path.
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static var migrationsDirectory: URL { packageRoot.appendingPathComponent("migrations", isDirectory: true) }

    static let templateName = "onboard_test_template"
    private static let counter = Mutex(0)
    /// CREATE DATABASE … TEMPLATE must not overlap another session using the template.
    private static let createLock = Mutex(())

    private static let started: Result<EmbeddedPostgres, any Error> = Result {
        var options = EmbeddedPostgres.Options()
        options.durable = false
        // Every test server streams the WAL through a slot of its own (suites run in parallel).
        // Without synchronous commits (durable = false) the WAL reaches the disk, and so the
        // WAL senders, on the WAL writer's cycle: keep that short.
        options.settings = ["max_wal_senders": "100", "max_replication_slots": "100", "wal_writer_delay": "10ms"]
        // A cluster of this process's own: two test runs on one machine (a developer's and a
        // stress loop's) must not drop each other's databases or stop each other's cluster.
        let temporary = URL(fileURLWithPath: NSTemporaryDirectory())
        let prefix = "onboard-test-cluster-\(geteuid())-"
        removeAbandonedClusters(in: temporary, prefix: prefix, options: options)
        let folder = temporary.appendingPathComponent(prefix + "\(getpid())")
        let cluster = try EmbeddedPostgres(dataDirectory: folder, options: options)
        try cluster.start()
        stopAtExit(cluster)
        try prepareTemplate(cluster)
        return cluster
    }

    /// Clusters left by test processes that died without their exit handler (killed, crashed):
    /// stopped and removed, so they neither run on nor fill the disk.
    private static func removeAbandonedClusters(in folder: URL, prefix: String, options: EmbeddedPostgres.Options) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names where name.hasPrefix(prefix) {
            // `<prefix><pid>`, or `<prefix><pid>-replication-…` for TestStandby's pair.
            guard let pid = pid_t(name.dropFirst(prefix.count).prefix { $0.isNumber }), kill(pid, 0) != 0, errno == ESRCH else { continue }
            let abandoned = folder.appendingPathComponent(name)
            try? EmbeddedPostgres(dataDirectory: abandoned, options: options).stop()
            try? FileManager.default.removeItem(at: abandoned)
        }
    }

    /// The running test cluster (started on first use).
    public static func cluster() throws -> EmbeddedPostgres { try started.get() }

    /// A connection to the cluster's `postgres` database as the superuser.
    public static func adminConnection() throws -> Connection {
        try Connection(conninfo: cluster().url(database: "postgres"))
    }

    /// A new database with every migration applied (copied from the template); returns its URL.
    public static func makeDatabase(migrated: Bool = true) throws -> String {
        let cluster = try cluster()
        let number = counter.withLock { value -> Int in
            value += 1
            return value
        }
        let name = "onboard_t_\(getpid())_\(number)"
        let admin = try adminConnection()
        try createLock.withLock { _ in
            if migrated {
                try admin.execute(unsafeSQL: "CREATE DATABASE \(quoteIdentifier(name)) TEMPLATE \(quoteIdentifier(templateName))")
            } else {
                try admin.execute(unsafeSQL: "CREATE DATABASE \(quoteIdentifier(name))")
            }
        }
        return cluster.url(database: name)
    }

    /// Drops the test databases of earlier runs, then builds the migrated template.
    private static func prepareTemplate(_ cluster: EmbeddedPostgres) throws {
        let admin = try Connection(conninfo: cluster.url(database: "postgres"))
        let stale = try admin.query("SELECT datname FROM pg_database WHERE datname LIKE 'onboard_t\\_%' OR datname = \(templateName)")
        for row in 0..<stale.count {
            try admin.execute(unsafeSQL: "DROP DATABASE IF EXISTS \(quoteIdentifier(stale[row, 0]!)) WITH (FORCE)")
        }
        try admin.execute(unsafeSQL: "CREATE DATABASE \(quoteIdentifier(templateName))")
        let template = try Connection(conninfo: cluster.url(database: templateName))
        try Migrator(directory: migrationsDirectory).up(template)
    }
}

nonisolated(unsafe) private var clusterToStop: EmbeddedPostgres?  // written once, before atexit runs

private func stopAtExit(_ cluster: EmbeddedPostgres) {
    clusterToStop = cluster
    atexit {
        guard let cluster = clusterToStop else { return }
        try? cluster.stop()
        removeInBackground(cluster.dataDirectory)
    }
}

/// A whole run's cluster holds over 100,000 files (a database per test); FileManager takes
/// minutes to remove them on a busy disk, which the test process would spend after its verdict.
/// `rm -rf` outlives the process instead, with no standard stream shared with it, so whoever
/// reads the test's output sees it end. Should it not finish, the next run removes the folder
/// as an abandoned cluster's.
private func removeInBackground(_ folder: URL) {
    let remover = Process()
    remover.executableURL = URL(fileURLWithPath: "/bin/rm")
    remover.arguments = ["-rf", "--", folder.path]
    remover.standardInput = FileHandle.nullDevice
    remover.standardOutput = FileHandle.nullDevice
    remover.standardError = FileHandle.nullDevice
    if (try? remover.run()) == nil { try? FileManager.default.removeItem(at: folder) }
}
