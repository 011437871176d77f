import Foundation
import Postgres
import TestSupport
import Testing

/// What the server tells strangers when the database is down, and what it tells operators when
/// a request fails in the database.
@Suite("Health and errors: details to operators only", .serialized)
struct FailureReportingTests {
    /// `/health` answers a fixed body when PostgreSQL refuses connections; `/ready` gives the
    /// error's text to the service role only.
    @Test func healthSaysNothingOfTheDatabaseToStrangers() throws {
        let log = CapturedLog()
        let server = try TestServer(log: log)
        let http = server.client()
        #expect(try http.request("GET", "/health").text == #"{"status":"ok","database":"ok"}"#)
        let name = try #require(try Connection(conninfo: server.databaseURL).query("SELECT current_database()").scalar)
        let admin = try Connection(conninfo: server.databaseURL.replacingOccurrences(of: "/\(name)?", with: "/postgres?"))
        _ = try admin.query("ALTER DATABASE \(ident: name) ALLOW_CONNECTIONS false")
        defer { _ = try? admin.query("ALTER DATABASE \(ident: name) ALLOW_CONNECTIONS true") }
        _ = try admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(name)")
        #expect(try eventually { try http.request("GET", "/health").status == 503 })
        let health = try http.request("GET", "/health")
        #expect(health.status == 503 && health.text == #"{"status":"unavailable"}"#)
        let ready = try http.request("GET", "/ready", headers: server.headers())
        #expect(ready.status == 503 && ready.jsonObject?["database"] as? String == "unavailable" && !ready.text.contains(name))
        let detailed = try http.request("GET", "/ready", headers: server.headers(server.serviceKey, [("apikey", server.serviceKey)]))
        #expect(detailed.status == 503 && detailed.text.contains(name), "\(detailed.text)")
        #expect(log.entries.contains { $0.message.hasPrefix("health:") && ($0.metadata["error"] ?? "").contains(name) })
        _ = try admin.query("ALTER DATABASE \(ident: name) ALLOW_CONNECTIONS true")
        #expect(try eventually { try http.request("GET", "/health").status == 200 })
    }

    /// A REST request the database fails with a 5xx leaves one log line (request id, SQLSTATE,
    /// statement; not the message with its values) and one count in /metrics.
    @Test func aDatabaseFailureIsLoggedAndCounted() throws {
        let log = CapturedLog()
        let server = try TestServer(log: log)
        let http = server.client()
        let user = try server.signUp()
        let admin = try Connection(conninfo: server.databaseURL)
        _ = try admin.query(
            """
            CREATE FUNCTION public.fail_inside() RETURNS integer LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'internal detail %', 'secret-value-42' USING ERRCODE = 'XX000'; END $$
            """)
        var failed: TestResponse?
        // The server may not listen for reloads yet when a first NOTIFY goes out: ask until it has the function.
        #expect(
            try eventually {
                _ = try admin.query("NOTIFY pgrst, 'reload schema'")
                failed = try http.request("POST", "/rest/v1/rpc/fail_inside", headers: server.headers(user.token), body: "{}")
                return failed?.status == 500
            })
        let requestID = try #require(failed?.header("X-Request-Id") ?? failed?.header("sb-request-id"))
        let lines = log.entries.filter { $0.message == "database error answered as 5xx" }
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(line.level == .error && line.metadata["sqlstate"] == "XX000" && line.metadata["statement"] == "POST /rpc/fail_inside")
        #expect(line.metadata["request_id"] == requestID)
        #expect(!line.metadata.values.contains { $0.contains("secret-value-42") })
        #expect(try http.request("GET", "/metrics").text.contains(#"onboard_rest_database_errors_total{sqlstate="XX000"} 1"#))
    }
}
