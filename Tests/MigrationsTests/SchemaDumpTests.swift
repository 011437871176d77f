import Foundation
import Postgres
import TestSupport
import Testing

/// `docs/schema.sql` is the schema every migration makes, as `pg_dump --schema-only` prints it:
/// every table, policy and current function body in one place. A migration that changes the
/// schema changes this file in the same commit (`UPDATE_SCHEMA_SQL=1 swift test --filter
/// SchemaDump` writes it).
@Suite("docs/schema.sql matches the migrations")
struct SchemaDumpTests {
    static let file = TestPostgres.packageRoot.appendingPathComponent("docs/schema.sql")

    /// The dump of a freshly migrated database, without what differs between runs: the header's
    /// versions, psql's `\restrict` keys, and the database's name.
    static func dump() throws -> String {
        let url = try TestPostgres.makeDatabase()
        let process = Process()
        process.executableURL = try TestPostgres.cluster().binDirectory.appendingPathComponent("pg_dump")
        process.arguments = ["--schema-only", "--no-owner", "--no-comments", "--dbname", url]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw DumpFailed(status: process.terminationStatus) }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).filter {
            !$0.hasPrefix("-- Dumped ") && !$0.hasPrefix("\\restrict") && !$0.hasPrefix("\\unrestrict")
        }
        return lines.joined(separator: "\n")
    }

    struct DumpFailed: Error {
        let status: Int32
    }

    @Test func theCommittedSchemaIsTheMigrationsOwn() throws {
        let current = try Self.dump()
        if ProcessInfo.processInfo.environment["UPDATE_SCHEMA_SQL"] == "1" {
            try current.write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let committed = try String(contentsOf: Self.file, encoding: .utf8)
        #expect(committed == current, "docs/schema.sql differs from the migrations' schema: run UPDATE_SCHEMA_SQL=1 swift test --filter SchemaDump")
    }
}
