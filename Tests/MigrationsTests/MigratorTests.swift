import Foundation
import Migrations
import Postgres
import TestSupport
import Testing

@Suite("Migrations against a real server")
struct MigratorTests {
    /// A fresh folder of migration files.
    static func folder(_ files: [String: String]) throws -> URL {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, sql) in files {
            try sql.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return directory
    }

    static let basic = [
        "20250101000000_create_log.sql": "CREATE TABLE log (id serial PRIMARY KEY, note text NOT NULL);\n",
        "20250102000000_first_entry.sql": "INSERT INTO log (note) VALUES ('once');\n"
    ]

    @Test func freshDatabaseGetsEverythingAndASecondRunNothing() throws {
        let directory = try Self.folder(Self.basic)
        let connection = try Connection(conninfo: TestPostgres.makeDatabase(migrated: false))
        let migrator = Migrator(directory: directory)
        #expect(try migrator.status(connection).map(\.kind) == [.pending, .pending])
        #expect(try migrator.up(connection, dryRun: true).map(\.version) == ["20250101000000", "20250102000000"])
        #expect(try migrator.status(connection).map(\.kind) == [.pending, .pending])
        #expect(try migrator.up(connection).map(\.name) == ["create_log", "first_entry"])
        #expect(try migrator.up(connection).isEmpty)
        #expect(try connection.query("SELECT count(*) FROM log").scalar == "1")
        let states = try migrator.status(connection)
        #expect(states.map(\.kind) == [.applied, .applied])
        #expect(states.allSatisfy { $0.appliedAt != nil && $0.durationMilliseconds != nil })
        let recorded = try connection.query("SELECT checksum FROM onboard_migrations.schema_migrations ORDER BY version")
        #expect(recorded.count == 2 && recorded[0, 0]!.count == 64)
        try migrator.verify(connection)
    }

    @Test func anEditedFileFailsVerifyAndUp() throws {
        let directory = try Self.folder(Self.basic)
        let connection = try Connection(conninfo: TestPostgres.makeDatabase(migrated: false))
        let migrator = Migrator(directory: directory)
        try migrator.up(connection)
        try "INSERT INTO log (note) VALUES ('twice');\n".write(
            to: directory.appendingPathComponent("20250102000000_first_entry.sql"), atomically: true, encoding: .utf8)
        try "SELECT 1;\n".write(to: directory.appendingPathComponent("20250103000000_later.sql"), atomically: true, encoding: .utf8)
        #expect(throws: MigrationError.checksumMismatch(["20250102000000_first_entry.sql"])) { try migrator.verify(connection) }
        #expect(throws: MigrationError.checksumMismatch(["20250102000000_first_entry.sql"])) { try migrator.up(connection) }
        #expect(try migrator.status(connection).map(\.kind) == [.applied, .changed, .pending])
        // Nothing ran: the later file is still pending.
        #expect(try connection.query("SELECT count(*) FROM onboard_migrations.schema_migrations").scalar == "2")
    }

    @Test func aFailingFileLeavesNothingBehindAndSaysWhere() throws {
        let directory = try Self.folder([
            "20250101000000_ok.sql": "CREATE TABLE kept (id int);\n",
            "20250102000000_broken.sql": "CREATE TABLE half (id int);\nINSERT INTO half VALUES (1);\nSELECT no_such_column FROM half;\n"
        ])
        let connection = try Connection(conninfo: TestPostgres.makeDatabase(migrated: false))
        do {
            try Migrator(directory: directory).up(connection)
            Issue.record("expected the broken migration to fail")
        } catch let MigrationError.failed(file, line, error) {
            #expect(file == "20250102000000_broken.sql")
            #expect(line == 3)
            #expect(error.sqlState == "42703")
        }
        #expect(try connection.query("SELECT to_regclass('half') IS NULL").scalar == "t")
        #expect(try connection.query("SELECT to_regclass('kept') IS NOT NULL").scalar == "t")
        #expect(try Migrator(directory: directory).status(connection).map(\.kind) == [.applied, .pending])
        #expect(connection.isIdle)
    }

    @Test func concurrentRunnersApplyEachFileOnce() throws {
        let directory = try Self.folder([
            "20250101000000_create_log.sql": "CREATE TABLE log (id serial PRIMARY KEY, note text NOT NULL);\n",
            "20250102000000_slow.sql": "SELECT pg_sleep(0.3); INSERT INTO log (note) VALUES ('slow');\n",
            "20250103000000_fast.sql": "INSERT INTO log (note) VALUES ('fast');\n"
        ])
        let url = try TestPostgres.makeDatabase(migrated: false)
        let group = DispatchGroup()
        let outcomes = OutcomeBox()
        for _ in 0..<3 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    let connection = try Connection(conninfo: url)
                    outcomes.append(.success(try Migrator(directory: directory).up(connection).count))
                } catch {
                    outcomes.append(.failure(error))
                }
            }
        }
        group.wait()
        let counts = try outcomes.values.map { try $0.get() }
        #expect(counts.reduce(0, +) == 3)  // each file applied by exactly one runner
        let connection = try Connection(conninfo: url)
        #expect(try connection.query("SELECT string_agg(note, ',' ORDER BY id) FROM log").scalar == "slow,fast")
    }

    @Test func badFileNamesAreRejected() throws {
        let directory = try Self.folder(["2025_oops.sql": "SELECT 1;"])
        #expect(throws: MigrationError.badFileName("2025_oops.sql")) { try Migrator(directory: directory).migrations() }
    }

    @Test func newCreatesATimestampedFile() throws {
        let directory = try Self.folder([:])
        let date = Date(timeIntervalSince1970: 1_760_000_000)  // 2025-10-09 08:53:20 UTC
        let file = try Migrator.create(name: "Add families!", in: directory, now: date)
        #expect(file.lastPathComponent == "20251009085320_add_families_.sql")
        #expect(try Migrator(directory: directory).migrations().map(\.version) == ["20251009085320"])
    }
}

final class OutcomeBox: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var stored: [Result<Int, any Error>] = []
    func append(_ outcome: Result<Int, any Error>) { lock.withLock { stored.append(outcome) } }
    var values: [Result<Int, any Error>] { lock.withLock { stored } }
}
