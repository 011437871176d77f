import App
import EmbeddedPostgres
import Foundation
import Glibc
import Postgres
import TestSupport
import Testing

@testable import Realtime

/// What only the WAL feed does: each committed change with its own committed row, in commit
/// order, stamped with its commit time; RLS deciding on rows the table no longer holds; the
/// temporary slot's life; and the fallback to the triggers when the WAL cannot be streamed.
@Suite("Realtime: the WAL feed", .serialized)
struct RealtimeWALTests {
    typealias User = (id: String, token: String, refresh: String)
    typealias Event = [String: Any]

    /// A socket of `user`'s, joined to `bindings` and confirmed.
    func subscribe(_ server: TestServer, _ user: User, _ bindings: [[String: Any]]) throws -> PhoenixClient {
        let client = try PhoenixClient(server)
        _ = try client.join("realtime:test", token: user.token, bindings: bindings)
        #expect(try client.next("system")?.payload["status"] as? String == "ok")
        return client
    }

    func nextEvent(_ client: PhoenixClient) throws -> Event {
        let event = try #require(try client.next("postgres_changes"))
        return try #require(event.payload["data"] as? Event)
    }

    func record(_ event: Event) -> [String: Any] { event["record"] as? [String: Any] ?? [:] }

    /// Proves `client` heard nothing before: `write` changes a row of its user's, and the next
    /// event must be that one (the WAL feed delivers in commit order, so anything meant for
    /// the client from earlier commits would have come first).
    func expectNothingBefore(_ client: PhoenixClient, ownWrite write: () throws -> Void, isOwn: (Event) -> Bool) throws {
        try write()
        let event = try nextEvent(client)
        #expect(isOwn(event), "heard something else first: \(event)")
    }

    func patch(_ server: TestServer, _ user: User, state: String) throws {
        let response = try server.client().request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: server.headers(user.token),
            body: #"{"onboarding_state":"\#(state)"}"#)
        #expect(response.status == 204, "\(response.text)")
    }

    static func utcMilliseconds(_ connection: Connection) throws -> String {
        try #require(try connection.query(#"SELECT to_char(clock_timestamp() AT TIME ZONE 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#).scalar)
    }

    // MARK: correctness the trigger feed lacks

    @Test func aQuickDoubleUpdateGivesTwoEventsEachWithItsOwnRow() throws {
        let server = try TestServer { $0.realtimeFeed = .wal }
        let a = try server.signUp()
        let b = try server.signUp()
        let clientA = try subscribe(server, a, [["event": "UPDATE", "schema": "public", "table": "user_profiles", "filter": "id=eq.\(a.id)"]])
        let clientB = try subscribe(server, b, [["event": "UPDATE", "schema": "public", "table": "user_profiles"]])

        // Two commits back to back: the first row is gone from the table before its event is
        // processed, so the policies decide on it (and RLS on the table for the second).
        let admin = try Connection(conninfo: server.databaseURL)
        _ = try admin.query("UPDATE public.user_profiles SET onboarding_state = 'USER_INFO' WHERE id = \(a.id)::uuid")
        _ = try admin.query("UPDATE public.user_profiles SET onboarding_state = 'CHILD_INFO' WHERE id = \(a.id)::uuid")
        let first = try nextEvent(clientA)
        let second = try nextEvent(clientA)
        #expect(record(first)["onboarding_state"] as? String == "USER_INFO")
        #expect(record(second)["onboarding_state"] as? String == "CHILD_INFO")
        #expect((first["commit_timestamp"] as? String ?? "") <= (second["commit_timestamp"] as? String ?? ""))
        // B hears neither: its own next change is the first thing it hears.
        try expectNothingBefore(clientB, ownWrite: { try patch(server, b, state: "GOALS") }, isOwn: { record($0)["id"] as? String == b.id })
    }

    @Test func anInsertThenADeleteGiveBothEventsToTheOwnerAndTheFamilyOnly() throws {
        let server = try TestServer { $0.realtimeFeed = .wal }
        let a = try server.signUp()
        let family = try server.signUp()
        let outsider = try server.signUp()
        let http = server.client()
        let created = try http.request("POST", "/rest/v1/rpc/create_family", headers: server.headers(a.token), body: #"{"name":"F"}"#)
        let code = try #require(created.jsonObject?["invite_code"] as? String)
        #expect(try http.request("POST", "/rest/v1/rpc/join_family", headers: server.headers(family.token), body: #"{"code":"\#(code)"}"#).status == 200)
        let kids: [[String: Any]] = [["event": "*", "schema": "public", "table": "children"]]
        let clientA = try subscribe(server, a, kids)
        let clientFamily = try subscribe(server, family, kids)
        let clientOutsider = try subscribe(server, outsider, kids)

        let admin = try Connection(conninfo: server.databaseURL)
        let id = try #require(try admin.query("INSERT INTO public.children (user_id, name) VALUES (\(a.id)::uuid, 'Blink') RETURNING id").scalar)
        _ = try admin.query("DELETE FROM public.children WHERE id = \(id)::uuid")
        for client in [clientA, clientFamily] {
            let inserted = try nextEvent(client)
            #expect(inserted["type"] as? String == "INSERT" && record(inserted)["id"] as? String == id && record(inserted)["name"] as? String == "Blink")
            let deleted = try nextEvent(client)
            #expect(deleted["type"] as? String == "DELETE" && deleted["old_record"] as? [String: String] == ["id": id] && deleted["record"] == nil)
        }
        try expectNothingBefore(
            clientOutsider,
            ownWrite: {
                _ = try admin.query("INSERT INTO public.children (user_id, name) VALUES (\(outsider.id)::uuid, 'Own')")
            }, isOwn: { record($0)["user_id"] as? String == outsider.id })
    }

    @Test func eventsFollowCommitOrderAcrossConnections() throws {
        let server = try TestServer { $0.realtimeFeed = .wal }
        let a = try server.signUp()
        let admin = try Connection(conninfo: server.databaseURL)
        let first = try #require(try admin.query("INSERT INTO public.children (user_id, name) VALUES (\(a.id)::uuid, 'First') RETURNING id").scalar)
        let second = try #require(try admin.query("INSERT INTO public.children (user_id, name) VALUES (\(a.id)::uuid, 'Second') RETURNING id").scalar)
        let client = try subscribe(server, a, [["event": "UPDATE", "schema": "public", "table": "children"]])

        // One transaction writes first and commits last; another writes later and commits
        // before it. Events come in commit order, and their times agree with that order.
        let early = try Connection(conninfo: server.databaseURL)
        let late = try Connection(conninfo: server.databaseURL)
        try early.execute("BEGIN")
        _ = try early.query("UPDATE public.children SET age = 1 WHERE id = \(first)::uuid")
        let written = try Self.utcMilliseconds(early)
        #expect(try eventually { try Self.utcMilliseconds(late) > written })
        _ = try late.query("UPDATE public.children SET age = 2 WHERE id = \(second)::uuid")
        try early.execute("COMMIT")
        let one = try nextEvent(client)
        let two = try nextEvent(client)
        #expect(record(one)["id"] as? String == second && record(two)["id"] as? String == first)
        #expect((one["commit_timestamp"] as? String ?? "~") <= (two["commit_timestamp"] as? String ?? ""))
        #expect((two["commit_timestamp"] as? String ?? "") > written)
    }

    @Test func commitTimestampIsWhenTheTransactionCommitted() throws {
        let server = try TestServer { $0.realtimeFeed = .wal }
        let a = try server.signUp()
        let client = try subscribe(server, a, [["event": "UPDATE", "schema": "public", "table": "user_profiles", "filter": "id=eq.\(a.id)"]])
        let writer = try Connection(conninfo: server.databaseURL)
        let clock = try Connection(conninfo: server.databaseURL)
        try writer.execute("BEGIN")
        _ = try writer.query("UPDATE public.user_profiles SET onboarding_state = 'GOALS' WHERE id = \(a.id)::uuid")
        let written = try Self.utcMilliseconds(writer)
        // The transaction stays open until the clock has moved on: its commit comes later than
        // its write, in milliseconds the timestamp shows.
        #expect(try eventually { try Self.utcMilliseconds(clock) > written })
        let beforeCommit = try Self.utcMilliseconds(clock)
        try writer.execute("COMMIT")
        let afterCommit = try Self.utcMilliseconds(clock)
        let stamp = try #require(try nextEvent(client)["commit_timestamp"] as? String)
        #expect(stamp > written, "\(stamp) is the write's time, not the commit's")
        #expect(beforeCommit <= stamp && stamp <= afterCommit, "\(beforeCommit) ≤ \(stamp) ≤ \(afterCommit)")
    }

    @Test func anUnchangedToastedValueComesFromTheOldRow() throws {
        let server = try TestServer { $0.realtimeFeed = .wal }
        let a = try server.signUp()
        let admin = try Connection(conninfo: server.databaseURL)
        // Random text does not compress below the TOAST threshold: it is stored out of line, and
        // an UPDATE of another column does not send it again.
        let long = (0..<300).map { _ in UUID().uuidString }.joined()
        let id = try #require(try admin.query("INSERT INTO public.children (user_id, name) VALUES (\(a.id)::uuid, \(long)) RETURNING id").scalar)
        let client = try subscribe(server, a, [["event": "UPDATE", "schema": "public", "table": "children"]])
        _ = try admin.query("UPDATE public.children SET age = 3 WHERE id = \(id)::uuid")
        let full = try nextEvent(client)
        #expect(record(full)["name"] as? String == long && record(full)["age"] as? Int == 3)

        // Without REPLICA IDENTITY FULL (a table enabled by hand) the value is not in the WAL at
        // all: the event leaves it out rather than showing null.
        try admin.execute("ALTER TABLE public.children REPLICA IDENTITY DEFAULT")
        _ = try admin.query("UPDATE public.children SET age = 4 WHERE id = \(id)::uuid")
        let partial = try nextEvent(client)
        #expect(record(partial)["age"] as? Int == 4 && record(partial)["id"] as? String == id)
        #expect(record(partial).keys.contains("name") == false)
    }

    @Test func changesCommittedBeforeASubscriptionAreNotSentToIt() throws {
        let server = try TestServer { $0.realtimeFeed = .wal }
        let a = try server.signUp()
        let admin = try Connection(conninfo: server.databaseURL)
        // Committed before the join, possibly still on its way through the stream when it is made.
        _ = try admin.query("UPDATE public.user_profiles SET onboarding_state = 'USER_INFO' WHERE id = \(a.id)::uuid")
        let client = try subscribe(server, a, [["event": "UPDATE", "schema": "public", "table": "user_profiles"]])
        try expectNothingBefore(
            client, ownWrite: { try patch(server, a, state: "CHILD_INFO") },
            isOwn: { record($0)["onboarding_state"] as? String == "CHILD_INFO" })
    }

    // MARK: the slot

    func slots(_ admin: Connection, prefix: String) throws -> Int {
        Int(try admin.query("SELECT count(*) FROM pg_replication_slots WHERE starts_with(slot_name::text, \(prefix))").scalar ?? "") ?? -1
    }

    @Test func theSlotIsTemporaryAndGoesWithTheServer() throws {
        let server = try TestServer { $0.realtimeFeed = .wal }
        let admin = try Connection(conninfo: server.databaseURL)
        let prefix = server.application.changeFeed.slotPrefix
        let slot = try admin.query("SELECT temporary::text, plugin, database FROM pg_replication_slots WHERE starts_with(slot_name::text, \(prefix))")
        #expect(slot.count == 1)
        #expect(slot.count == 1 && slot[0, 0] == "true" && slot[0, 1] == "pgoutput")
        // /ready names the feed.
        let ready = try server.client().request("GET", "/ready").text
        #expect(ready.contains(#""realtime":{"feed":"wal","connected":true}"#), "\(ready)")
        server.application.shutdown()
        #expect(try eventually { try slots(admin, prefix: prefix) == 0 })
    }

    /// Writes to tables outside the publication produce no events, yet the slot confirms past
    /// them: it never holds back WAL PostgreSQL could recycle.
    @Test func theSlotConfirmsTheWALEvenWhenNothingIsPublished() throws {
        let server = try TestServer { $0.realtimeFeed = .wal }
        let admin = try Connection(conninfo: server.databaseURL)
        try admin.execute("CREATE TABLE public.unpublished (id serial PRIMARY KEY, body text)")
        _ = try admin.query("INSERT INTO public.unpublished (body) SELECT repeat('x', 100) FROM generate_series(1, 1000)")
        let written = try #require(try admin.query("SELECT pg_current_wal_lsn()::text").scalar)
        let confirmed: SQL = """
            SELECT confirmed_flush_lsn >= \(written)::pg_lsn FROM pg_replication_slots \
            WHERE starts_with(slot_name::text, \(server.application.changeFeed.slotPrefix))
            """
        #expect(try eventually { try admin.query(confirmed).scalar == "t" })
    }

    /// The real binary, killed with SIGKILL (no shutdown code runs): PostgreSQL drops its slot.
    @Test func aKilledServerLeavesNoSlot() throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("onboard")
        let fallback = TestPostgres.packageRoot.appendingPathComponent(".build/debug/onboard")
        let path = try #require(
            [binary.path, fallback.path].first { FileManager.default.isExecutableFile(atPath: $0) },
            "the onboard executable is built beside the tests (swift build --build-tests)")
        let url = try TestPostgres.makeDatabase()
        let database = try #require(url.split(separator: "/").last?.split(separator: "?").first.map(String.init))
        let admin = try Connection(conninfo: url)
        let log = NSTemporaryDirectory() + "onboard-killed-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
        defer { unlink(log) }
        let environment = [
            "DATABASE_URL=\(url)", "JWT_SECRET=\(TestServer.secret)", "LOG_LEVEL=warning", "REALTIME_FEED=wal",
            "PATH=/usr/bin:/bin"
        ]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let arguments: [String] = [path, "serve", "--port", "0"]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        #expect(posix_spawn(&pid, path, &actions, nil, argv, envp) == 0)
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        let slotOfDatabase: SQL = "SELECT count(*) FROM pg_replication_slots WHERE database = \(database) AND temporary"
        let streaming = try eventually(timeout: 60) { try admin.query(slotOfDatabase).scalar == "1" }
        #expect(streaming, "no slot appeared: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect((status & 0x7f) == SIGKILL)
        #expect(try eventually { try admin.query(slotOfDatabase).scalar == "0" })
    }

    // MARK: falling back to the triggers

    @Test func aRoleWithoutReplicationFallsBackToTheTriggersUnlessTheWALIsRequired() throws {
        let role = "norepl_\(UInt32.random(in: 0...UInt32.max))"
        try TestPostgres.adminConnection().execute(unsafeSQL: "CREATE ROLE \(quoteIdentifier(role)) LOGIN NOREPLICATION")
        // The feed's direct connection logs in as that role; the pool as before.
        func listenAsRole(_ config: inout ServerConfig) {
            guard case .url(let url) = config.database else { return }
            config.listenDatabaseURL = url.replacingOccurrences(of: "postgres@", with: role + "@")
        }
        #expect(throws: (any Error).self) {
            _ = try TestServer {
                listenAsRole(&$0)
                $0.realtimeFeed = .wal
            }
        }
        let server = try TestServer { listenAsRole(&$0) }
        #expect(server.application.changeFeed.kind == .triggers)
        // The trigger feed connects on its own thread once chosen.
        var ready = ""
        #expect(
            try eventually {
                ready = try server.client().request("GET", "/ready").text
                return ready.contains(#""realtime":{"feed":"triggers","connected":true}"#)
            }, "\(ready)")
        // The trigger feed works: its triggers were installed when it started.
        let a = try server.signUp()
        let client = try subscribe(server, a, [["event": "UPDATE", "schema": "public", "table": "user_profiles", "filter": "id=eq.\(a.id)"]])
        try patch(server, a, state: "USER_INFO")
        #expect(record(try nextEvent(client))["onboarding_state"] as? String == "USER_INFO")
    }

    /// A database whose wal_level is below logical (a cluster of its own): the trigger feed,
    /// or no start at all when the WAL is required.
    @Test func aDatabaseWithoutLogicalWALUsesTheTriggers() throws {
        var options = EmbeddedPostgres.Options()
        options.durable = false
        options.settings = ["wal_level": "replica"]
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("onboard-replica-wal-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let cluster = try EmbeddedPostgres(dataDirectory: folder, options: options)
        try cluster.start()
        defer {
            try? cluster.stop()
            try? FileManager.default.removeItem(at: folder)
        }
        try Connection(conninfo: cluster.url(database: "postgres")).execute("CREATE DATABASE app")
        let url = cluster.url(database: "app")
        #expect(throws: (any Error).self) {
            _ = try TestServer {
                $0.database = .url(url)
                $0.realtimeFeed = .wal
            }
        }
        let server = try TestServer { $0.database = .url(url) }
        #expect(server.application.changeFeed.kind == .triggers)
        let admin = try Connection(conninfo: url)
        #expect(try eventually { try admin.query("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'realtime_changes%'").scalar == "4" })
        let a = try server.signUp()
        let client = try subscribe(server, a, [["event": "UPDATE", "schema": "public", "table": "user_profiles", "filter": "id=eq.\(a.id)"]])
        try patch(server, a, state: "USER_INFO")
        #expect(record(try nextEvent(client))["onboarding_state"] as? String == "USER_INFO")
    }
}
