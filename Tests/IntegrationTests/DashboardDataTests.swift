import Foundation
import Logging
import Postgres
import TestSupport
import Testing

@testable import App

/// The numbers the operators' dashboard shows for a known data set, signed in as in
/// `DashboardTests`: onboarding numbers and their CSV, users, operations and latency percentiles.
@Suite("Dashboard: numbers", .serialized)
struct DashboardDataTests {
    static func column(_ rows: [[String: Any]], _ name: String) -> [String] {
        rows.map { row in row[name].map { "\($0)" } ?? "nil" }
    }

    @Test func onboardingNumbersForAKnownDataSet() throws {
        let server = try DashboardTests.server()
        try KnownDataSet.insert(into: server.databaseURL)
        _ = try server.signUp()  // a user of today: outside the window
        let (cookie, _) = try DashboardTests.session(server)
        let http = server.client()
        let window = "from=2025-06-01&to=2025-07-01"
        let response = try http.request("GET", "/dashboard/api/onboarding?\(window)", headers: [cookie])
        #expect(response.status == 200)
        let tables = response.jsonObject?["tables"] as? [String: [[String: Any]]] ?? [:]

        let funnel = tables["funnel"] ?? []
        #expect(Self.column(funnel, "step") == ["NOT_STARTED", "USER_INFO", "CHILD_INFO", "GOALS", "TOPICS", "DISPOSITIONS", "REVIEW", "COMPLETE"])
        #expect(funnel.map { $0["users_reached"] as? Int } == [6, 5, 4, 3, 3, 3, 3, 3])
        #expect(funnel.map { $0["pct_of_first"] as? Double } == [100, 83.33, 66.67, 50, 50, 50, 50, 50])

        // Everyone of 2025 has been at their step far longer than 24 hours.
        let drop = tables["drop_off"] ?? []
        #expect(drop.count == 7)
        #expect(
            drop.map { "\($0["step"]!)=\($0["users_at_step"]!)/\($0["users_stuck"]!)" }
                == ["NOT_STARTED=1/1", "USER_INFO=1/1", "CHILD_INFO=1/1", "GOALS=0/0", "TOPICS=0/0", "DISPOSITIONS=0/0", "REVIEW=0/0"])
        #expect(drop.first?["pct_stuck_of_cohort"] as? Double == 16.67)

        // NOT_STARTED visits: 2, 4, 1 and 30 minutes → median 3 min, p90 22.2 min (4 + 0.7 × 26).
        let durations = tables["step_durations"] ?? []
        let notStarted = durations.first { $0["step"] as? String == "NOT_STARTED" }
        #expect(notStarted?["visits"] as? Int == 4 && notStarted?["median_seconds"] as? Double == 180 && notStarted?["p90_seconds"] as? Double == 1332)
        // CHILD_INFO: U1 5 min, U2 never left, U3 1 and 5 min.
        let childInfo = durations.first { $0["step"] as? String == "CHILD_INFO" }
        #expect(childInfo?["visits"] as? Int == 3 && childInfo?["median_seconds"] as? Double == 300)

        // Completion: U1 in 23 min, U3 in 16 min (U6's profile was created COMPLETE).
        let completion = tables["time_to_completion"]?.first
        #expect(completion?["users_completed"] as? Int == 2 && completion?["median_seconds"] as? Double == 1170)
        #expect(tables["children_per_completed_user"]?.first?["children"] as? Int == 3)
        #expect(tables["anonymous_upgrades"]?.first?["upgraded_users"] as? Int == 1)
        #expect(tables["state_counts"]?.last?["users"] as? Int == 3)
        // Stuck: everyone not complete, the longest first, with how long.
        let stuck = tables["stuck_users"] ?? []
        #expect(Self.column(stuck, "email") == ["u2@example.com", "u4@example.com", "u5@example.com"])
        #expect(Self.column(stuck, "step") == ["CHILD_INFO", "USER_INFO", "NOT_STARTED"])
        #expect(Self.column(stuck, "stuck_since") == ["2025-06-02T11:10:00Z", "2025-06-09T08:30:00Z", "2025-06-09T12:00:00Z"])
        #expect(stuck.allSatisfy { ($0["hours_stuck"] as? Double ?? 0) > 24 * 100 })

        // The daily series over [06-01, 06-11).
        let daily = try http.request("GET", "/dashboard/api/onboarding?from=2025-06-01&to=2025-06-11", headers: [cookie])
        let days = (daily.jsonObject?["tables"] as? [String: [[String: Any]]])?["daily_completion"] ?? []
        #expect(days.count == 10)
        let byDay = Dictionary(uniqueKeysWithValues: days.map { ($0["day"] as? String ?? "", $0) })
        #expect(
            byDay["2025-06-02"]?["signed_up"] as? Int == 2 && byDay["2025-06-02"]?["completion_rate_pct"] as? Double == 50
                && byDay["2025-06-02"]?["completions"] as? Int == 1)
        #expect(byDay["2025-06-03"]?["completion_rate_pct"] as? Double == 100)
        #expect(byDay["2025-06-09"]?["signed_up"] as? Int == 2 && byDay["2025-06-09"]?["completion_rate_pct"] as? Double == 0)
        #expect(byDay["2025-06-01"]?["completion_rate_pct"] is NSNull)

        // The summary: the window and the window of the same length before it. [06-06, 06-11):
        // U4, U5, U6 signed up, U6 completed (created COMPLETE: no time to complete), no
        // completion happened; [06-01, 06-06): U1, U2, U3 signed up, U1 and U3 completed, in 23
        // and 16 minutes.
        let summary = try http.request("GET", "/dashboard/api/onboarding?from=2025-06-06&to=2025-06-11", headers: [cookie])
        let periods = (summary.jsonObject?["tables"] as? [String: [[String: Any]]])?["summary"] ?? []
        #expect(Self.column(periods, "period") == ["current", "previous"])
        #expect(Self.column(periods, "period_from") == ["2025-06-06T00:00:00Z", "2025-06-01T00:00:00Z"])
        #expect(Self.column(periods, "sign_ups") == ["3", "3"] && Self.column(periods, "completions") == ["0", "2"])
        #expect(Self.column(periods, "completion_rate_pct") == ["33.3", "66.7"])
        #expect(periods.first?["median_seconds_to_complete"] is NSNull && periods.last?["median_seconds_to_complete"] as? Double == 1170)

        // Cohorts: by provider, U4 (upgraded) counts under e-mail.
        let providers = try http.request("GET", "/dashboard/api/onboarding?\(window)&cohort=provider", headers: [cookie])
        let providerFunnel = (providers.jsonObject?["tables"] as? [String: [[String: Any]]])?["funnel"] ?? []
        #expect(
            providerFunnel.filter { $0["step_no"] as? Int == 1 }.map { "\($0["cohort"]!)=\($0["users_reached"]!)" }
                == ["anonymous=1", "apple=1", "email=3", "google=1"])

        // Bad parameters are 400s, not errors of the database.
        for query in ["cohort=month", "from=yesterday", "stuck_hours=0", "from=2025-07-01&to=2025-06-01", "from=2020-01-01&to=2025-01-01"] {
            #expect(try http.request("GET", "/dashboard/api/onboarding?\(query)", headers: [cookie]).status == 400, "\(query)")
        }
    }

    @Test func csvHasTheNumbersOfTheJSON() throws {
        let server = try DashboardTests.server()
        try KnownDataSet.insert(into: server.databaseURL)
        let (cookie, _) = try DashboardTests.session(server)
        let http = server.client()
        let csv = try http.request("GET", "/dashboard/api/onboarding/funnel.csv?from=2025-06-01&to=2025-07-01", headers: [cookie])
        #expect(csv.status == 200)
        #expect(csv.header("Content-Type") == "text/csv; charset=utf-8")
        #expect(csv.header("Content-Disposition") == #"attachment; filename="onboarding-funnel.csv""#)
        #expect(
            csv.text == """
                cohort,step_no,step,users_reached,pct_of_previous,pct_of_first\r
                all,1,NOT_STARTED,6,,100.00\r
                all,2,USER_INFO,5,83.33,83.33\r
                all,3,CHILD_INFO,4,80.00,66.67\r
                all,4,GOALS,3,75.00,50.00\r
                all,5,TOPICS,3,100.00,50.00\r
                all,6,DISPOSITIONS,3,100.00,50.00\r
                all,7,REVIEW,3,100.00,50.00\r
                all,8,COMPLETE,3,100.00,50.00\r

                """)
        // Every table's CSV has the JSON's rows.
        let json = try http.request("GET", "/dashboard/api/onboarding?from=2025-06-01&to=2025-06-11&cohort=week", headers: [cookie])
        let tables = json.jsonObject?["tables"] as? [String: [[String: Any]]] ?? [:]
        for (name, rows) in tables {
            let file = try http.request("GET", "/dashboard/api/onboarding/\(name).csv?from=2025-06-01&to=2025-06-11&cohort=week", headers: [cookie])
            let lines = file.text.split(separator: "\r\n")
            #expect(lines.count == rows.count + 1, "\(name)")
            #expect(lines.first.map { $0.split(separator: ",").count } == rows.first.map { $0.count } ?? lines.first.map { $0.split(separator: ",").count })
        }
        #expect(try http.request("GET", "/dashboard/api/onboarding/users.csv", headers: [cookie]).status == 404)
    }

    @Test func usersSearchDetailAndDelete() throws {
        let server = try DashboardTests.server()
        try KnownDataSet.insert(into: server.databaseURL)
        let (cookie, csrf) = try DashboardTests.session(server)
        let http = server.client()
        let u1 = "a0000000-0000-4000-8000-000000000001"

        let byEmail = try http.request("GET", "/dashboard/api/users?q=U1%40example", headers: [cookie])
        #expect(byEmail.status == 200 && byEmail.jsonArray?.map { $0["id"] as? String } == [u1])
        let byID = try http.request("GET", "/dashboard/api/users?q=\(u1.uppercased())", headers: [cookie])
        #expect(byID.jsonArray?.first?["onboarding_state"] as? String == "COMPLETE")
        // LIKE's wildcards are matched literally.
        #expect(try http.request("GET", "/dashboard/api/users?q=%25", headers: [cookie]).jsonArray?.isEmpty == true)
        #expect(try http.request("GET", "/dashboard/api/users", headers: [cookie]).jsonArray?.count == 6)

        let detail = try http.request("GET", "/dashboard/api/users/\(u1)", headers: [cookie])
        let object = detail.jsonObject ?? [:]
        #expect((object["user"] as? [String: Any])?["email"] as? String == "u1@example.com")
        #expect((object["profile"] as? [String: Any])?["onboarding_state"] as? String == "COMPLETE")
        #expect(Set((object["children"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }) == ["Maya", "Leo"])
        #expect((object["providers"] as? [[String: Any]])?.map { $0["provider"] as? String } == ["email"])
        #expect((object["sessions"] as? [[String: Any]])?.isEmpty == true)
        #expect(try http.request("GET", "/dashboard/api/users/not-a-uuid", headers: [cookie]).status == 400)
        #expect(try http.request("GET", "/dashboard/api/users/\(UUID().uuidString)", headers: [cookie]).status == 404)

        // A real user with a session.
        let user = try server.signUp()
        let sessions = try http.request("GET", "/dashboard/api/users/\(user.id)", headers: [cookie]).jsonObject?["sessions"] as? [[String: Any]]
        #expect(sessions?.count == 1)

        // Delete: the session's CSRF token is required.
        #expect(try http.request("DELETE", "/dashboard/api/users/\(user.id)", headers: [cookie]).status == 403)
        #expect(
            try http.request("DELETE", "/dashboard/api/users/\(user.id)", headers: [cookie, ("X-CSRF-Token", String(repeating: "0", count: 64))]).status == 403)
        #expect(try DashboardTests.userExists(server, user.id))
        let deleted = try http.request("DELETE", "/dashboard/api/users/\(user.id)", headers: [cookie, ("X-CSRF-Token", csrf)])
        #expect(deleted.status == 200 && deleted.jsonObject?["deleted"] as? String == user.id)
        #expect(try !DashboardTests.userExists(server, user.id))
        #expect(try http.request("GET", "/dashboard/api/users/\(user.id)", headers: [cookie]).status == 404)
        #expect(try http.request("DELETE", "/dashboard/api/users/\(user.id)", headers: [cookie, ("X-CSRF-Token", csrf)]).status == 404)
        // The deleted user's token is GoTrue's user_not_found now.
        #expect(try http.request("GET", "/auth/v1/user", headers: server.headers(user.token)).status == 403)
        // Their history went with them; the known users' analytics are untouched.
        let admin = try Connection(conninfo: server.databaseURL)
        #expect(try admin.query("SELECT count(*) FROM analytics.onboarding_transitions WHERE user_id = \(user.id)::uuid").scalar == "0")
    }

    @Test func operationsShowMigrationsPoolRequestsAndRealtime() throws {
        let server = try DashboardTests.server()
        let (cookie, _) = try DashboardTests.session(server)
        let http = server.client()
        _ = try http.request("GET", "/rest/v1/no_such_table", headers: server.headers())
        let response = try http.request("GET", "/dashboard/api/operations", headers: [cookie])
        #expect(response.status == 200)
        let object = response.jsonObject ?? [:]
        let migrations = object["migrations"] as? [[String: Any]] ?? []
        let files = try FileManager.default.contentsOfDirectory(atPath: TestPostgres.migrationsDirectory.path).filter { $0.hasSuffix(".sql") }
        #expect(migrations.count == files.count && migrations.allSatisfy { $0["status"] as? String == "applied" })
        #expect((object["pool"] as? [String: Any])?["size"] as? Int == 4)
        #expect((object["realtime"] as? [String: Any])?["sockets"] as? Int == 0)
        let routes = object["routes"] as? [[String: Any]] ?? []
        let other = routes.first { $0["route"] as? String == "/rest/v1/other" }
        #expect(other?["requests"] as? Int == 1 && other?["client_errors"] as? Int == 1)
        // Percentiles from the latency histogram, and a rate from the first load on.
        let p50 = try #require(other?["p50_ms"] as? Double)
        let p99 = try #require(other?["p99_ms"] as? Double)
        #expect(p50 > 0 && p50 <= p99 && p99 <= 5000)
        #expect((other?["per_second_now"] as? Double).map { $0 > 0 } == true)
        // The pool counts the pipelined connections too.
        let pool = object["pool"] as? [String: Any] ?? [:]
        let open = try #require(pool["open"] as? Int)
        let pipelined = try #require(pool["pipelined_open"] as? Int)
        #expect(pool["connections_open"] as? Int == open + pipelined)
    }

    /// Prometheus's histogram_quantile: linear within the bucket the rank falls in.
    @Test func latencyPercentilesFromTheHistogram() {
        // Buckets (s): 0.001, 0.0025, 0.005, 0.01, … — 10 requests ≤ 1 ms, 90 in (5, 10] ms.
        var histogram = Metrics.Histogram()
        histogram.counts[0] = 10
        histogram.counts[3] = 90
        histogram.total = 100
        #expect(Metrics.quantile(0.05, histogram) == 0.0005)
        #expect(abs(Metrics.quantile(0.5, histogram)! - (0.005 + 0.005 * 40 / 90)) < 1e-12)
        #expect(Metrics.quantile(0.99, histogram).map { abs($0 - (0.005 + 0.005 * 89 / 90)) < 1e-12 } == true)
        #expect(Metrics.quantile(0.5, Metrics.Histogram()) == nil)
        // Requests slower than the last bound: the last bound.
        histogram.total = 200
        #expect(Metrics.quantile(0.99, histogram) == 5)
    }
}
