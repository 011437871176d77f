import Foundation
import Postgres
import TestSupport
import Testing

@Suite("Postgres layer against a real server")
struct ConnectionTests {
    let url: String

    init() throws {
        url = try TestPostgres.makeDatabase(migrated: false)
        let connection = try Connection(conninfo: url)
        try connection.execute(
            """
            CREATE TABLE things (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                name text NOT NULL,
                size int CHECK (size BETWEEN 1 AND 10),
                tags text[],
                doc jsonb,
                parent uuid REFERENCES things (id),
                CONSTRAINT unique_name UNIQUE (name)
            )
            """)
    }

    @Test func bindsTextIntsUUIDsArraysNullsAndJSON() throws {
        let connection = try Connection(conninfo: url)
        let id = "EE075242-1B6C-4B8C-9D5A-0B1C2D3E4F50"
        let inserted = try connection.query(
            """
            INSERT INTO things (id, name, size, tags, doc) VALUES (\(id), \("O'Brien \"q\" ; DROP TABLE things"), \(7), \(array: ["a b", "c,d", "e\"f", nil]), \("{\"k\": [1, null]}"))
            RETURNING id, name, size, tags, doc, parent
            """)
        #expect(inserted.count == 1)
        #expect(inserted[0, "id"] == id.lowercased())
        #expect(inserted[0, "name"] == "O'Brien \"q\" ; DROP TABLE things")
        #expect(inserted[0, "size"] == "7")
        #expect(inserted[0, "tags"] == "{\"a b\",\"c,d\",\"e\\\"f\",NULL}")
        #expect(inserted[0, "doc"] == "{\"k\": [1, null]}")
        #expect(inserted[0, "parent"] == nil)
        let nullSize = try connection.query("SELECT \(nil as Int?)::int IS NULL AS is_null")
        #expect(nullSize.first?.bool("is_null") == true)
    }

    /// Cells are read by type: booleans, integers and numbers from PostgreSQL's text forms,
    /// nil for NULL, by position or by name.
    @Test func cellsAreReadByType() throws {
        let connection = try Connection(conninfo: url)
        let result = try connection.query(
            """
            SELECT true AS yes, false AS no, NULL::boolean AS unknown, 42::bigint AS answer, -7::smallint AS small,
                   1.5::double precision AS ratio, 'Infinity'::float8 AS far, 2.25::numeric AS exact, 'text' AS word
            UNION ALL SELECT false, true, true, NULL, 0, NULL, 0, 0, NULL
            """)
        #expect(result.count == 2)
        let first = try #require(result.first)
        #expect(first.bool("yes") == true && first.bool(1) == false && first.bool("unknown") == nil)
        #expect(first.int("answer") == 42 && first.int(4) == -7)
        #expect(first.double("ratio") == 1.5 && first.double("far") == .infinity && first.double("exact") == 2.25)
        #expect(first.string("word") == "text" && first.index == 0)
        #expect(result[1].bool(0) == false && result[1].bool("unknown") == true)
        #expect(result[1].int("answer") == nil && result[1].double("ratio") == nil && result[1].string(8) == nil)
        #expect(result.map { $0.bool("yes") } == [true, false])
        #expect(try connection.query("SELECT 1 WHERE false").first == nil)
        #expect(result.rows[0].bool("yes") == true && result.rows[1].bool("answer") == nil && result.rows[0].bool("absent") == nil)
    }

    /// An error interpolated by accident says no value, host or path; the log's text says all.
    @Test func anErrorsDescriptionKeepsPostgreSQLsTextForTheLog() throws {
        let connection = try Connection(conninfo: url)
        do {
            _ = try connection.query("SELECT \("secret-value-7")::integer")
            Issue.record("the cast should fail")
        } catch let error as PostgresError {
            #expect("\(error)" == "PostgreSQL error 22P02 (server)")
            #expect(String(reflecting: error).contains("secret-value-7") && logText(error).contains("secret-value-7"))
        }
    }

    @Test func identifiersAreQuoted() throws {
        #expect(quoteIdentifier("children") == "\"children\"")
        #expect(quoteIdentifier("we\"ird") == "\"we\"\"ird\"")
        let connection = try Connection(conninfo: url)
        let result = try connection.query("SELECT 1 AS \(ident: "odd \"name\"")")
        #expect(result.columns == ["odd \"name\""])
    }

    @Test func fragmentsRenumberTheirBinds() throws {
        var sql: SQL = "SELECT \(1)::int + \(2)::int"
        sql.append(" + \(3)::int AS total")
        #expect(sql.text == "SELECT $1::int + $2::int + $3::int AS total")
        let connection = try Connection(conninfo: url)
        #expect(try connection.query(sql).scalar == "6")
    }

    @Test(
        arguments: [
            ("INSERT INTO things (name, size) VALUES ('a', 11)", "23514", "things_size_check"),
            ("INSERT INTO things (name) VALUES (NULL)", "23502", nil),
            ("INSERT INTO things (name, parent) VALUES ('b', gen_random_uuid())", "23503", "things_parent_fkey"),
            ("INSERT INTO things (name) VALUES ('dup'), ('dup')", "23505", "unique_name")
        ] as [(String, String, String?)])
    func errorsCarrySQLStateAndConstraint(statement: String, sqlState: String, constraint: String?) throws {
        let connection = try Connection(conninfo: url)
        do {
            _ = try connection.query(SQL(unsafeSQL: statement))
            Issue.record("expected \(sqlState)")
        } catch let error as PostgresError {
            #expect(error.kind == .server)
            #expect(error.sqlState == sqlState)
            #expect(error.constraint == constraint)
            #expect(error.table == "things")
            if sqlState == "23502" { #expect(error.column == "name") }
            #expect(!error.message.isEmpty)
        }
    }

    @Test func pipelineReturnsEveryResultInOrder() throws {
        let connection = try Connection(conninfo: url)
        for _ in 0..<3 {  // the second and third runs re-use the prepared statements
            let results = try connection.pipeline([
                "SELECT set_config('request.jwt.claims', \("{\"sub\":\"x\"}"), true)",
                "SELECT current_setting('request.jwt.claims', true) AS claims",
                "SELECT \(5)::int * 2 AS ten"
            ])
            #expect(results.count == 3)
            #expect(results[1].scalar == "{\"sub\":\"x\"}")  // same implicit transaction
            #expect(results[2].scalar == "10")
            #expect(connection.isIdle)
        }
        // The local setting ended with the pipeline's transaction.
        #expect(try connection.query("SELECT current_setting('request.jwt.claims', true)").scalar ?? "" == "")
    }

    @Test func pipelineRollsBackOnAnErrorInTheMiddle() throws {
        let connection = try Connection(conninfo: url)
        do {
            _ = try connection.pipeline([
                "INSERT INTO things (name) VALUES (\("pipelined"))",
                "INSERT INTO things (name, size) VALUES (\("bad"), \(99))",
                "INSERT INTO things (name) VALUES (\("after"))"
            ])
            Issue.record("expected a check violation")
        } catch let error as PostgresError {
            #expect(error.sqlState == "23514")
        }
        #expect(connection.isIdle)
        let left = try connection.query("SELECT count(*) FROM things WHERE name IN ('pipelined', 'after', 'bad')")
        #expect(left.scalar == "0")
        // The connection is still usable.
        #expect(try connection.pipeline(["SELECT \(1)::int"]).first?.scalar == "1")
    }

    @Test func aTransactionCommitsWhatItsBodyDidAndRollsBackWhenItThrows() throws {
        let connection = try Connection(conninfo: url)
        let kept = try connection.withTransaction { connection in
            try connection.query("INSERT INTO things (name) VALUES ('kept') RETURNING name").scalar
        }
        #expect(kept == "kept" && connection.isIdle)
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try connection.withTransaction { connection in
                _ = try connection.query("INSERT INTO things (name) VALUES ('thrown away')")
                throw Refused()
            }
        }
        // A statement that fails leaves the transaction aborted: rolled back all the same.
        #expect(throws: PostgresError.self) {
            try connection.withTransaction { connection in
                _ = try connection.query("INSERT INTO things (name) VALUES ('also thrown away')")
                _ = try connection.query("INSERT INTO things (name, size) VALUES ('too big', 11)")
            }
        }
        #expect(connection.isIdle)
        let names = try connection.query("SELECT string_agg(name, ',' ORDER BY name) FROM things WHERE name IN ('kept', 'thrown away', 'also thrown away')")
        #expect(names.scalar == "kept")
    }

    @Test func poolRecoversAfterTheServerKillsABackend() throws {
        let pool = Pool(conninfo: url, size: 1)
        let pid = try pool.withConnection { $0.backendPID }
        let admin = try Connection(conninfo: url)
        _ = try admin.query("SELECT pg_terminate_backend(\(Int(pid)))")
        // Give the backend a moment to go.
        let gone = try eventually { try admin.query("SELECT count(*) FROM pg_stat_activity WHERE pid = \(Int(pid))").scalar == "0" }
        #expect(gone)
        // The idle check usually notices the closed socket before lending the connection; when
        // the backend left pg_stat_activity a moment before its socket closed, the first use
        // fails with a connection error instead, and the pool drops that connection. Either way
        // the next use gets a fresh backend.
        var newPID: String?
        var failures = 0
        while newPID == nil && failures < 2 {
            do {
                newPID = try pool.withConnection { connection in try connection.query("SELECT pg_backend_pid()").scalar }
            } catch let error as PostgresError where error.kind == .connection {
                failures += 1
            }
        }
        #expect(failures <= 1)
        #expect(newPID != nil && newPID != String(pid))
        #expect(pool.stats.open == 1)
    }

    @Test func poolNeverHandsOutAConnectionInsideATransaction() throws {
        let pool = Pool(conninfo: url, size: 1)
        try pool.withConnection { connection in
            try connection.execute("BEGIN")
            _ = try connection.query("SELECT 1")
        }
        let idle = try pool.withConnection { $0.isIdle }
        #expect(idle)
        // A failed transaction is rolled back too.
        try? pool.withConnection { connection in
            try connection.execute("BEGIN; SELECT 1/0")
        }
        #expect(try pool.withConnection { $0.isIdle })
    }

    @Test func poolBoundsConnectionsAndTimesOut() throws {
        let pool = Pool(conninfo: url, size: 2, acquireTimeout: 0.2)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            Thread.detachNewThread {
                try? pool.withConnection { _ in
                    started.signal()
                    release.wait()
                }
            }
        }
        started.wait()
        started.wait()
        #expect(pool.stats.inUse == 2)
        #expect(throws: PostgresError.self) { try pool.withConnection { _ in } }
        release.signal()
        release.signal()
        #expect(eventually { pool.stats.inUse == 0 })
        #expect(try pool.withConnection { _ in 1 } == 1)
        #expect(pool.stats.open <= 2)
    }

    @Test func listenReceivesNotifications() throws {
        let listener = try Connection(conninfo: url)
        try listener.listen("pgrst")
        let sender = try Connection(conninfo: url)
        _ = try sender.query("SELECT pg_notify('pgrst', \("reload schema"))")
        var received: [(channel: String, payload: String)] = []
        for _ in 0..<20 where received.isEmpty {
            received = try listener.waitForNotifications(timeout: 0.1)
        }
        #expect(received.first?.channel == "pgrst")
        #expect(received.first?.payload == "reload schema")
    }
}
