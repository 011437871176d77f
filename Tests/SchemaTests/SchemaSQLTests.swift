import Foundation
import Postgres
import TestSupport
import Testing

/// One `-- test: name` section of a file in `Tests/SchemaTests/sql/`; a line
/// `-- include: KnownDataSet` in it stands for TestSupport's `KnownDataSet.sql`.
struct SchemaCase: Sendable, CustomTestStringConvertible {
    let file: String
    let name: String
    let sql: String
    var testDescription: String { "\(file): \(name)" }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("sql")

    /// Every section of every file, in file order.
    static let all: [SchemaCase] = {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".sql") }.sorted()
        return files.flatMap { file -> [SchemaCase] in
            guard let text = try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8) else { return [] }
            var cases: [SchemaCase] = []
            var name: String?
            var lines: [Substring] = []
            func flush() {
                if let name { cases.append(SchemaCase(file: file, name: name, sql: lines.joined(separator: "\n"))) }
                lines = []
            }
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if line == KnownDataSet.include {
                    lines.append(Substring(KnownDataSet.sql))
                } else if line.hasPrefix("-- test:") {
                    flush()
                    name = line.dropFirst("-- test:".count).trimmingCharacters(in: .whitespaces)
                } else {
                    lines.append(line)
                }
            }
            flush()
            return cases
        }
    }()
}

/// The schema's behaviour, checked in SQL as the `authenticated`/`anon` roles with real claims:
/// each section runs alone in a transaction that is rolled back, and passes if it raises nothing.
/// One section at a time: several create or drop triggers (DDL locks), which sections writing
/// the same tables in parallel could deadlock with.
@Suite("Schema: RLS, triggers, constraints and onboarding functions", .serialized)
struct SchemaSQLTests {
    static let database: Result<String, any Error> = Result { try TestPostgres.makeDatabase() }

    @Test func thereAreSchemaTests() {
        #expect(SchemaCase.all.count >= 20, "expected the SQL test files under Tests/SchemaTests/sql")
    }

    @Test(arguments: SchemaCase.all)
    func section(_ testCase: SchemaCase) throws {
        let connection = try Connection(conninfo: Self.database.get())
        try connection.execute("BEGIN")
        defer { try? connection.execute("ROLLBACK") }
        do {
            try connection.execute(unsafeSQL: testCase.sql)
        } catch let error as PostgresError {
            Issue.record("\(testCase.file) › \(testCase.name): \(error)\(error.hint.map { " HINT: \($0)" } ?? "")")
        }
    }
}
