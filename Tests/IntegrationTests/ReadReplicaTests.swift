import App
import Foundation
import Postgres
import Synchronization
import TestSupport
import Testing

/// REST reads on a real streaming hot standby (`TestStandby`): reads go to it, a user's
/// read right after their write sees the write while the standby's replay is paused, a standby
/// that lags, stops or comes back changes where reads go without losing a request.
@Suite("Read replicas", .serialized)
struct ReadReplicaTests {
    let standby: TestStandby
    let server: TestServer

    init() throws {
        let standby = try TestStandby.shared()
        self.standby = standby
        let database = try standby.makeDatabase()
        server = try TestServer(databaseURL: database) { config in
            config.readReplicas.urls = [standby.url(for: database)]
            // Generous: a slow machine must not make the standby lag while replay is paused.
            config.readReplicas.maxLagSeconds = 120
            config.readReplicas.checkInterval = 0.05
        }
        // Where a read ran, as a read-only function answers it (GET: a read; POST: a call).
        let admin = try Connection(conninfo: server.databaseURL)
        try admin.execute(
            """
            CREATE FUNCTION public.in_recovery() RETURNS boolean LANGUAGE sql STABLE AS 'SELECT pg_is_in_recovery()';
            GRANT EXECUTE ON FUNCTION public.in_recovery() TO anon, authenticated;
            """)
        // The schema listener may not listen yet: notify until the function is known.
        let server = server
        let known = try eventually(timeout: 30) {
            try admin.execute("NOTIFY pgrst, 'reload schema'")
            return try server.client().request("POST", "/rest/v1/rpc/in_recovery", headers: server.headers(), body: "{}").status == 200
        }
        guard known else { throw TestHTTPError.protocolError("the schema cache never learnt public.in_recovery()") }
    }

    func ranOnStandby(_ token: String? = nil) throws -> Bool {
        let response = try server.client().request("GET", "/rest/v1/rpc/in_recovery", headers: server.headers(token))
        #expect(response.status == 200, "\(response.text)")
        return response.text == "true"
    }

    func ready() throws -> [String: Any] {
        try server.client().request("GET", "/ready", headers: [("apikey", server.serviceKey), ("Authorization", "Bearer \(server.serviceKey)")])
            .jsonObject ?? [:]
    }

    func standbyState() throws -> String? {
        ((try ready()["standbys"] as? [[String: Any]])?.first)?["state"] as? String
    }

    func metric(_ name: String) throws -> Double {
        let text = try server.client().request("GET", "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? -1
    }

    @Test func readsGoToTheStandbyAndCallsToThePrimary() throws {
        #expect(try eventually(timeout: 60) { try standbyState() == "healthy" }, "\((try? ready()) ?? [:])")
        #expect(try eventually(timeout: 30) { try ranOnStandby() }, "anonymous GET reads reach the standby")
        let before = try metric(#"onboard_db_reads_total{target="primary"}"#)
        for _ in 0..<20 { #expect(try ranOnStandby()) }
        #expect(try metric(#"onboard_db_reads_total{target="primary"}"#) == before, "no read fell back to the primary")
        // A POST call runs on the primary, whatever the function does.
        let call = try server.client().request("POST", "/rest/v1/rpc/in_recovery", headers: server.headers(), body: "{}")
        #expect(call.text == "false")
        let standbyRow = try #require((try ready()["standbys"] as? [[String: Any]])?.first)
        #expect((standbyRow["reads"] as? Int ?? 0) >= 20 && (standbyRow["read_share"] as? Double ?? 0) > 0.5, "\(standbyRow)")
        let metrics = try server.client().request("GET", "/metrics").text
        #expect(metrics.contains("onboard_db_standby_up{standby=") && metrics.contains("onboard_db_standby_lag_seconds{standby="))
    }

    @Test func aUsersReadAfterTheirWriteSeesItWhileReplayIsPaused() throws {
        let a = try server.signUp()
        let b = try server.signUp()
        // Fresh tokens read from the primary until the standby holds what the primary held when
        // they were issued (the sign-up, the profile); then from the standby.
        #expect(try eventually(timeout: 60) { try ranOnStandby(a.token) && ranOnStandby(b.token) })
        let control = try standby.adminConnection()
        try control.execute("SELECT pg_wal_replay_pause()")
        defer { try? control.execute("SELECT pg_wal_replay_resume()") }
        #expect(try eventually { try control.query("SELECT pg_get_wal_replay_pause_state()").scalar == "paused" })

        for state in ["USER_INFO", "CHILD_INFO"] {
            let write = try server.client().request(
                "PATCH", "/rest/v1/user_profiles?id=eq.\(a.id)", headers: server.headers(a.token), body: #"{"onboarding_state":"\#(state)"}"#)
            #expect(write.status == 204, "\(write.text)")
            let read = try server.client().request("GET", "/rest/v1/user_profiles?id=eq.\(a.id)&select=onboarding_state", headers: server.headers(a.token))
            #expect(read.text == #"[{"onboarding_state":"\#(state)"}]"#, "the writer reads its write at once")
        }
        #expect(try !ranOnStandby(a.token), "the writer's reads stay on the primary while the standby has not replayed the write")
        #expect(try ranOnStandby(b.token), "other users' reads stay on the standby")
        // The standby really is behind: it still has the old state.
        let onStandby = try Connection(conninfo: standby.url(for: server.databaseURL))
        #expect(try onStandby.query("SELECT onboarding_state FROM public.user_profiles WHERE id = \(a.id)::uuid").scalar != "CHILD_INFO")

        try control.execute("SELECT pg_wal_replay_resume()")
        #expect(try eventually(timeout: 30) { try ranOnStandby(a.token) }, "once replayed, the writer reads from the standby again")
        let read = try server.client().request("GET", "/rest/v1/user_profiles?id=eq.\(a.id)&select=onboarding_state", headers: server.headers(a.token))
        #expect(read.text == #"[{"onboarding_state":"CHILD_INFO"}]"#)
    }

    @Test func stoppingTheStandbyLosesNoRequestAndItIsTakenBackWhenItReturns() throws {
        #expect(try eventually(timeout: 60) { try standbyState() == "healthy" && ranOnStandby() })
        let failures = Mutex<[String]>([])
        let answered = Atomic<Int>(0)
        let done = Atomic<Bool>(false)
        let server = server
        let readers = (0..<3).map { _ in
            Thread {
                let client = server.client()
                while !done.load(ordering: .acquiring) {
                    do {
                        let response = try client.request("GET", "/rest/v1/user_profiles?select=id&limit=1", headers: server.headers())
                        if response.status != 200 { failures.withLock { $0.append("\(response.status) \(response.text)") } }
                        answered.add(1, ordering: .relaxed)
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        readers.forEach { $0.start() }
        _ = eventually { answered.load(ordering: .relaxed) > 50 }
        try standby.stopStandby()
        #expect(try eventually(timeout: 30) { ["unreachable", "failing"].contains(try standbyState() ?? "") }, "\((try? ready()) ?? [:])")
        let atStop = answered.load(ordering: .relaxed)
        _ = eventually { answered.load(ordering: .relaxed) > atStop + 50 }
        #expect(try !ranOnStandby(), "reads fall back to the primary")
        try standby.startStandby()
        #expect(try eventually(timeout: 60) { try standbyState() == "healthy" && ranOnStandby() }, "taken back without promoting anything")
        let atStart = answered.load(ordering: .relaxed)
        _ = eventually { answered.load(ordering: .relaxed) > atStart + 50 }
        done.store(true, ordering: .releasing)
        _ = eventually { readers.allSatisfy { $0.isFinished } }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        #expect(answered.load(ordering: .relaxed) > 150)
    }

    @Test func aStandbyLaggingMoreThanTheLimitIsSkipped() throws {
        let database = try standby.makeDatabase()
        let lagging = try TestServer(databaseURL: database) { config in
            config.readReplicas.urls = [standby.url(for: database)]
            config.readReplicas.maxLagSeconds = 0.5
            config.readReplicas.checkInterval = 0.05
        }
        func state() throws -> String? {
            let ready = try lagging.client().request("GET", "/ready").jsonObject ?? [:]
            return ((ready["standbys"] as? [[String: Any]])?.first)?["state"] as? String
        }
        #expect(try eventually(timeout: 60) { try state() == "healthy" })
        let control = try standby.adminConnection()
        try control.execute("SELECT pg_wal_replay_pause()")
        defer { try? control.execute("SELECT pg_wal_replay_resume()") }
        // Something to replay: the primary moves on, the standby does not.
        _ = try Connection(conninfo: lagging.databaseURL).query("SELECT pg_logical_emit_message(false, 'lag', 'x')")
        #expect(try eventually(timeout: 30) { try state() == "lagging" })
        let metrics = try lagging.client().request("GET", "/metrics").text
        #expect(metrics.contains(#"state="lagging"} 0"#), "\(metrics)")
        try control.execute("SELECT pg_wal_replay_resume()")
        #expect(try eventually(timeout: 30) { try state() == "healthy" })
    }
}
