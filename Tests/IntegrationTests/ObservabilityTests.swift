import Foundation
import Postgres
import TestSupport
import Testing

/// `/health`, `/ready` and `/metrics` as orchestrators and Prometheus read them.
@Suite("Health, readiness and metrics", .serialized)
struct ObservabilityTests {
    @Test func readyFollowsTheMigrationsOnDisk() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("onboard-ready-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: TestPostgres.migrationsDirectory, to: folder)
        let server = try TestServer { $0.migrationsDirectory = folder }
        let http = server.client()
        let health = try http.request("GET", "/health")
        #expect(health.status == 200 && health.text == #"{"status":"ok","database":"ok"}"#)
        let ready = try http.request("GET", "/ready")
        #expect(ready.status == 200)
        #expect(ready.jsonObject?["status"] as? String == "ready")

        // A migration deployed but not yet applied: not ready, and it says which.
        try "SELECT 1;\n".write(to: folder.appendingPathComponent("29990101000000_later.sql"), atomically: true, encoding: .utf8)
        let pending = try http.request("GET", "/ready")
        #expect(pending.status == 503)
        #expect((pending.jsonObject?["migrations"] as? [String: Any])?["pending"] as? [String] == ["29990101000000_later"])
        #expect(try http.request("GET", "/health").status == 200)  // liveness is unaffected
    }

    @Test func metricsCountRequestsLatencyPoolAndAuthFailures() throws {
        let server = try TestServer()
        let http = server.client()
        let user = try server.signUp()
        _ = try http.request("GET", "/rest/v1/children?select=*", headers: server.headers(user.token))
        _ = try http.request("GET", "/rest/v1/children?select=*", headers: server.headers("not-a-jwt"))
        _ = try http.request("GET", "/rest/v1/no_such_table", headers: server.headers(user.token))
        _ = try http.request(
            "POST", "/auth/v1/token?grant_type=password", headers: server.headers(), body: #"{"email":"nobody@example.com","password":"wrong-one"}"#)
        let response = try http.request("GET", "/metrics")
        #expect(response.status == 200)
        #expect(response.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = response.text
        #expect(text.contains(#"onboard_http_requests_total{route="/rest/v1/children",method="GET",status="200"} 1"#))
        #expect(text.contains(#"onboard_http_requests_total{route="/rest/v1/children",method="GET",status="401"} 1"#))
        #expect(text.contains(#"onboard_http_requests_total{route="/rest/v1/other",method="GET",status="404"} 1"#))
        #expect(text.contains(#"onboard_http_requests_total{route="/auth/v1/signup",method="POST",status="200"} 1"#))
        #expect(text.contains(#"onboard_http_request_duration_seconds_count{route="/rest/v1/children"} 2"#))
        #expect(text.contains(#"onboard_http_request_duration_seconds_bucket{route="/rest/v1/children",le="+Inf"} 2"#))
        #expect(text.contains(#"onboard_auth_failures_total{reason="invalid_credentials"} 1"#))
        #expect(text.contains(#"onboard_auth_failures_total{reason="bad_jwt"} 1"#))
        // Background work (Realtime's lease renewal, schema reloads) may hold a connection for a
        // moment: the pool is idle once nothing runs, not at an arbitrary instant.
        #expect(
            try eventually {
                let now = try http.request("GET", "/metrics").text
                return now.contains(#"onboard_db_pool_waiting 0"#) && now.contains(#"onboard_db_pool_connections{state="in_use"} 0"#)
            })
        // Every sample line is `name{labels} value` or `name value`.
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            #expect(line.split(separator: " ").count == 2, "\(line)")
        }
    }

    /// Plain REST reads and writes are answered on the I/O thread over the pipelined connections,
    /// reads on connections of their own; killing those connections' backends costs at most the
    /// requests in flight, and the server reconnects by itself.
    @Test func restIsServedOverThePipelinedConnectionsAndSurvivesTheirLoss() throws {
        let server = try TestServer()
        let http = server.client()
        let user = try server.signUp()
        /// Exchanges answered: (on the general connections, on the read connections).
        func pipelined() throws -> (Int, Int) {
            let lines = try http.request("GET", "/metrics").text.split(separator: "\n")
            func count(_ name: String) -> Int {
                lines.first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
            }
            return (count("onboard_db_pipeline_exchanges_total"), count("onboard_db_pipeline_read_exchanges_total"))
        }
        func allOpen() throws -> Bool {
            let text = try http.request("GET", "/metrics").text
            return text.contains("onboard_db_pipeline_connections 4") && text.contains("onboard_db_pipeline_read_connections 2")
        }
        #expect(try eventually { try allOpen() })
        let before = try pipelined()
        let patched = try http.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: server.headers(user.token, [("Prefer", "return=representation")]),
            body: #"{"onboarding_state":"CHILD_INFO"}"#)
        #expect(patched.status == 200 && patched.text.contains("CHILD_INFO"), "\(patched.status) \(patched.text)")
        let read = try http.request("GET", "/rest/v1/user_profiles?select=onboarding_state&id=eq.\(user.id)", headers: server.headers(user.token))
        #expect(read.status == 200 && read.text == #"[{"onboarding_state":"CHILD_INFO"}]"#)
        #expect(try pipelined() == (before.0 + 1, before.1 + 1))

        let admin = try Connection(conninfo: server.databaseURL)
        _ = try admin.query(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            """)
        // Every request gets an answer at once: a worker's pool connection when no pipelined one
        // is open, and the pipelined ones again once they are back.
        for _ in 0..<5 {
            let again = try http.request("GET", "/rest/v1/user_profiles?select=onboarding_state&id=eq.\(user.id)", headers: server.headers(user.token))
            #expect(again.status == 200 || again.status == 503, "\(again.status) \(again.text)")
        }
        #expect(
            try eventually {
                let response = try http.request("GET", "/rest/v1/user_profiles?select=onboarding_state&id=eq.\(user.id)", headers: server.headers(user.token))
                return response.status == 200 && response.text == #"[{"onboarding_state":"CHILD_INFO"}]"#
            })
        #expect(try eventually { try allOpen() })
        let afterReconnect = try pipelined()
        _ = try http.request("GET", "/rest/v1/user_profiles?select=onboarding_state&id=eq.\(user.id)", headers: server.headers(user.token))
        #expect(try pipelined() == (afterReconnect.0, afterReconnect.1 + 1))
    }
}
