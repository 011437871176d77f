import EmbeddedPostgres
import Foundation
import Postgres
import Testing

@Suite("Embedded PostgreSQL cluster", .serialized)
struct EmbeddedPostgresTests {
    @Test func startsFromNothingRestartsAndRecoversFromAStalePidFile() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("onboard-embedded-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = EmbeddedPostgres.Options()
        options.durable = false
        let cluster = try EmbeddedPostgres(dataDirectory: folder, options: options)
        #expect(!cluster.isRunning())

        // From nothing: initdb + start.
        try cluster.start()
        #expect(cluster.isRunning())
        try Connection(conninfo: cluster.url(database: "postgres")).execute("CREATE TABLE survives (x int); INSERT INTO survives VALUES (42)")
        // A second start on a running cluster reuses it.
        try cluster.start()
        try cluster.stop()
        #expect(!cluster.isRunning())

        // Restart on the existing folder keeps the data.
        try cluster.start()
        #expect(try Connection(conninfo: cluster.url(database: "postgres")).query("SELECT x FROM survives").scalar == "42")
        try cluster.stop()

        // A crash leaves postmaster.pid behind, its pid possibly reused (here: pid 1, alive).
        let pidFile = folder.appendingPathComponent("data/postmaster.pid")
        try "1\n\(folder.path)/data\n1700000000\n5432\n\n\n".write(to: pidFile, atomically: true, encoding: .utf8)
        #expect(!cluster.isRunning())
        try cluster.start()
        #expect(cluster.isRunning())
        #expect(try Connection(conninfo: cluster.url(database: "postgres")).query("SELECT x FROM survives").scalar == "42")
        try cluster.stop()
        #expect(!cluster.isRunning())
    }
}
