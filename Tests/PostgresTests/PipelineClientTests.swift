import EventLoop
import Foundation
import Postgres
import Synchronization
import TestSupport
import Testing

/// An event loop on a thread of its own, as the HTTP server runs it.
final class RunningLoop: Sendable {
    let loop = EventLoop()
    private let stopped = Atomic<Bool>(false)
    private let ended = DispatchSemaphore(value: 0)

    init() {
        Thread.detachNewThread { [self] in
            while !stopped.load(ordering: .acquiring) {
                _ = loop.wait(timeout: 20)
                loop.finishRound()
            }
            ended.signal()
        }
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        ended.wait()
    }
}

/// Outcomes of exchanges, by a label, filled in on the loop thread.
final class Outcomes: Sendable {
    private let values = Mutex<[String: Result<[QueryResult], PostgresError>]>([:])
    func set(_ label: String, _ outcome: Result<[QueryResult], PostgresError>) { values.withLock { $0[label] = outcome } }
    subscript(label: String) -> Result<[QueryResult], PostgresError>? { values.withLock { $0[label] } }
    var count: Int { values.withLock { $0.count } }
}

@Suite("Pipelined connections on an event loop")
struct PipelineClientTests {
    let url: String

    init() throws {
        url = try TestPostgres.makeDatabase(migrated: false)
        try Connection(conninfo: url).execute("CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL CHECK (n < 100))")
    }

    /// A client on a loop of its own with its connections open; after `body` it is closed on
    /// the loop and the loop stopped.
    func withClient(size: Int, depth: Int = 8, maxWaiting: Int = 1024, _ body: (PipelineClient, RunningLoop) throws -> Void) throws {
        let running = RunningLoop()
        defer { running.stop() }
        let client = PipelineClient(conninfo: url, size: size, depth: depth, maxWaiting: maxWaiting, loop: running.loop)
        client.start()
        #expect(eventually { client.stats.open == size })
        defer {
            let closed = Mutex(false)
            running.loop.execute {
                client.close()
                closed.withLock { $0 = true }
            }
            _ = eventually { closed.withLock { $0 } }
        }
        try body(client, running)
    }

    /// Submits on the loop thread; true when the client took it.
    func submit(_ client: PipelineClient, _ running: RunningLoop, _ outcomes: Outcomes, _ label: String, _ statements: [SQL]) -> Bool {
        let taken = Mutex<Bool?>(nil)
        running.loop.execute {
            taken.withLock { $0 = client.submit(statements) { outcomes.set(label, $0) } }
        }
        _ = eventually { taken.withLock { $0 != nil } }
        return taken.withLock { $0! }
    }

    @Test func manyExchangesInFlightKeepTheirOrderAndTheirOwnErrors() throws {
        try withClient(size: 1, depth: 500) { client, running throws in
            let outcomes = Outcomes()
            let total = 200
            running.loop.execute {
                // All queued in one round of the loop: in flight together on the one connection.
                for index in 0..<total {
                    let statements: [SQL]
                    switch index % 4 {
                    case 0: statements = ["SELECT set_config('app.n', \(String(index)), true)", "SELECT current_setting('app.n')::int + \(1)"]
                    case 1: statements = ["INSERT INTO counters VALUES (\(index), \(index % 150))", "SELECT n FROM counters WHERE id = \(index)"]
                    case 2: statements = ["SELECT 1 / \(0)", "SELECT \(index)::int"]
                    default: statements = ["SELECT \(index)::int AS value"]
                    }
                    _ = client.submit(statements) { outcomes.set("\(index)", $0) }
                }
            }
            #expect(eventually { outcomes.count == total })
            for index in 0..<total {
                let outcome = try #require(outcomes["\(index)"])
                switch index % 4 {
                case 0:
                    // A setting of one exchange is its own (set_config … true): each implicit
                    // transaction ends at its Sync.
                    #expect((try? outcome.get())?[1].scalar == String(index + 1))
                case 1:
                    if index % 150 < 100 {
                        #expect((try? outcome.get())?[1].scalar == String(index % 150))
                    } else {
                        guard case .failure(let error) = outcome else {
                            Issue.record("\(index) should violate the check")
                            continue
                        }
                        #expect(error.sqlState == "23514")
                    }
                case 2:
                    guard case .failure(let error) = outcome else {
                        Issue.record("\(index) should divide by zero")
                        continue
                    }
                    #expect(error.sqlState == "22012")
                default:
                    #expect((try? outcome.get())?[0].scalar == String(index))
                }
            }
            // What failed was rolled back with its own exchange only.
            let admin = try Connection(conninfo: url)
            #expect(try admin.query("SELECT count(*) FROM counters").scalar == String((0..<total).filter { $0 % 4 == 1 && $0 % 150 < 100 }.count))
            #expect(client.stats.exchanges == total)
        }
    }

    @Test func aFullConnectionQueuesUpToABoundThenDeclines() throws {
        try withClient(size: 1, depth: 2, maxWaiting: 2) { client, running throws in
            let taken = Mutex<[Bool]>([])
            let outcomes = Outcomes()
            running.loop.execute {
                // Two in flight, two waiting for them, the fifth declined.
                for index in 0..<5 {
                    let accepted = client.submit(["SELECT \(index)::int"]) { outcomes.set("\(index)", $0) }
                    taken.withLock { $0.append(accepted) }
                }
            }
            #expect(eventually { outcomes.count == 4 })
            #expect(taken.withLock { $0 } == [true, true, true, true, false])
            for index in 0..<4 { #expect((try? outcomes["\(index)"]?.get())?[0].scalar == String(index)) }
            #expect(client.stats.declined == 1 && client.stats.exchanges == 4)
        }
    }

    @Test func aStatementThatFailsToPrepareFailsOnlyItsExchangesAndNulIsRefusedBeforeSending() throws {
        try withClient(size: 1) { client, running throws in
            let outcomes = Outcomes()
            running.loop.execute {
                _ = client.submit(["SELECT \(1)::int / \(0)", "SELECT no_such_column FROM counters"]) { outcomes.set("skipped", $0) }
                _ = client.submit(["SELECT no_such_column FROM counters"]) { outcomes.set("bad", $0) }
                _ = client.submit(["SELECT no_such_column FROM counters"]) { outcomes.set("bad again", $0) }
                _ = client.submit(["SELECT \("a\u{0}b")::text"]) { outcomes.set("nul", $0) }
                _ = client.submit(["SELECT \(2)::int"]) { outcomes.set("fine", $0) }
            }
            #expect(eventually { outcomes.count == 5 })
            for label in ["skipped", "nul", "bad", "bad again"] {
                guard case .failure(let error)? = outcomes[label] else {
                    Issue.record("\(label) should fail")
                    continue
                }
                #expect(error.sqlState == ["skipped": "22012", "nul": "22021", "bad": "42703", "bad again": "42703"][label])
            }
            #expect((try? outcomes["fine"]?.get())?[0].scalar == "2")
        }
    }

    @Test func aLostConnectionFailsWhatWasInFlightAndIsReplaced() throws {
        try withClient(size: 2) { client, running throws in
            let outcomes = Outcomes()
            // A statement that waits, then the backends are killed under it.
            #expect(submit(client, running, outcomes, "slow", ["SELECT pg_sleep(\(30))"]))
            let admin = try Connection(conninfo: url)
            #expect(eventually { (try? admin.query("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'").scalar) == "1" })
            _ = try admin.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
            )
            #expect(eventually { outcomes["slow"] != nil })
            guard case .failure(let error)? = outcomes["slow"] else {
                Issue.record("the killed exchange should fail")
                return
            }
            #expect(error.kind == .connection)
            // Both connections come back; exchanges work again.
            #expect(
                eventually {
                    _ = submit(client, running, outcomes, "after", ["SELECT \(5)::int"])
                    return (try? outcomes["after"]?.get())?[0].scalar == "5"
                })
            #expect(eventually { client.stats.open == 2 })
        }
    }

    @Test func explicitTransactionsAreDeclined() throws {
        try withClient(size: 1) { client, running throws in
            let outcomes = Outcomes()
            #expect(!submit(client, running, outcomes, "begin", ["  begin", "INSERT INTO counters VALUES (\(7000), \(1))"]))
            #expect(!submit(client, running, outcomes, "start", ["START TRANSACTION ISOLATION LEVEL SERIALIZABLE"]))
            #expect(submit(client, running, outcomes, "plain", ["SELECT \("BEGIN")::text"]))
            #expect(eventually { (try? outcomes["plain"]?.get())?[0].scalar == "BEGIN" })
            #expect(try Connection(conninfo: url).query("SELECT count(*) FROM counters WHERE id = 7000").scalar == "0")
        }
    }
}
