import Foundation
import Postgres
import TestSupport
import Testing

@testable import App

/// The dashboard's product analytics for known data sets: the six success metrics (the known
/// onboarding history plus app events sent through the capture API), the events view, and the
/// experiments view against the report endpoint's own answer.
@Suite("Dashboard: product analytics", .serialized)
struct DashboardProductTests {
    static let projectKey = "phc_dashboard_product_key_0123456789"

    static func server() throws -> TestServer {
        try TestServer { config in
            config.dashboard.password = DashboardTests.password
            config.analytics.projectKey = projectKey
        }
    }

    static func event(_ name: String, _ id: String, at time: String, _ properties: String = "") -> String {
        #"{"event":"\#(name)","distinct_id":"\#(id)","uuid":"\#(UUID().uuidString)","timestamp":"\#(time)","properties":{\#(properties)}}"#
    }

    static func capture(_ server: TestServer, _ events: [String]) throws {
        let response = try server.client().request(
            "POST", "/batch/", headers: [("Content-Type", "application/json")],
            body: #"{"api_key":"\#(projectKey)","batch":[\#(events.joined(separator: ","))]}"#)
        #expect(response.status == 200, "\(response.text)")
    }

    /// In June 2025: p0…p9 shown the account prompt on 06-02; p0–p2 create an account with
    /// Apple, p3 by e-mail; q0 creates one without a prompt (not voluntary after a prompt);
    /// p4–p7 skip on onboarding_section_1 and p8 on goals (06-03); p9 gets save_failed and q0
    /// an $exception; p0 is exposed to a flag ($feature_flag_called: not an app event); p0 is
    /// shown the prompt again in July (outside the window). App events in June: 22, errors: 2.
    static func knownEvents() -> [String] {
        var events: [String] = []
        for index in 0..<10 { events.append(event("account_prompt_shown", "p\(index)", at: "2025-06-02T10:05:00Z", #""timing":"after_section_1""#)) }
        for index in 0..<3 { events.append(event("account_created", "p\(index)", at: "2025-06-02T10:06:00Z", #""method":"apple""#)) }
        events.append(event("account_created", "p3", at: "2025-06-02T10:06:00Z", #""method":"email""#))
        events.append(event("account_created", "q0", at: "2025-06-02T11:00:00Z", #""method":"email""#))
        for index in 4..<8 { events.append(event("account_skipped", "p\(index)", at: "2025-06-03T09:00:00Z", #""screen":"onboarding_section_1""#)) }
        events.append(event("account_skipped", "p8", at: "2025-06-03T09:00:00Z", #""screen":"goals""#))
        events.append(event("save_failed", "p9", at: "2025-06-02T10:07:00Z", #""screen":"goals""#))
        events.append(event("$exception", "q0", at: "2025-06-02T11:01:00Z"))
        events.append(event("$feature_flag_called", "p0", at: "2025-06-02T10:00:00Z", #""$feature_flag":"x","$feature_flag_response":"a""#))
        events.append(event("account_prompt_shown", "p0", at: "2025-07-05T10:00:00Z"))
        return events
    }

    static func metrics(_ server: TestServer, _ cookie: (String, String), _ query: String) throws -> [String: [String: Any]] {
        let response = try server.client().request("GET", "/dashboard/api/metrics?\(query)", headers: [cookie])
        #expect(response.status == 200, "\(response.text)")
        let list = response.jsonObject?["metrics"] as? [[String: Any]] ?? []
        #expect(
            list.compactMap { $0["key"] as? String } == [
                "completion_rate", "account_creation_rate", "drop_off", "time_to_complete", "error_rate", "skip_patterns"
            ])
        return Dictionary(uniqueKeysWithValues: list.map { ($0["key"] as? String ?? "", $0) })
    }

    @Test func successMetricsForAKnownDataSet() throws {
        let server = try Self.server()
        try KnownDataSet.insert(into: server.databaseURL)
        try Self.capture(server, Self.knownEvents())
        let (cookie, _) = try DashboardTests.session(server)
        let cards = try Self.metrics(server, cookie, "from=2025-06-01&to=2025-07-01")

        // The server's history: U1, U3, U6 of six completed; U1 in 23 min, U3 in 16 min.
        let completion = cards["completion_rate"] ?? [:]
        #expect(completion["value"] as? Double == 50 && completion["numerator"] as? Int == 3 && completion["denominator"] as? Int == 6)
        #expect(completion["met"] as? Bool == false && (completion["target"] as? [String: Any])?["value"] as? Int == 90)
        let time = cards["time_to_complete"] ?? [:]
        #expect(time["value"] as? Double == 1170 && time["met"] as? Bool == false && time["denominator"] as? Int == 2)
        #expect((time["target"] as? [String: Any])?["op"] as? String == "<" && (time["target"] as? [String: Any])?["value"] as? Int == 300)
        // One user stopped at each of NOT_STARTED (U5), USER_INFO (U4), CHILD_INFO (U2): 1 of 6 each.
        let drop = cards["drop_off"] ?? [:]
        let steps = drop["steps"] as? [[String: Any]] ?? []
        #expect(steps.compactMap { $0["step"] as? String } == ["NOT_STARTED", "USER_INFO", "CHILD_INFO"])
        #expect(steps.allSatisfy { $0["users"] as? Int == 1 && $0["pct"] as? Double == 16.7 } && drop["met"] is NSNull)

        // The app's events: 4 of the 10 people prompted created an account (q0 was not prompted).
        let accounts = cards["account_creation_rate"] ?? [:]
        #expect(accounts["value"] as? Double == 40 && accounts["numerator"] as? Int == 4 && accounts["denominator"] as? Int == 10)
        #expect(accounts["met"] as? Bool == true)
        #expect((accounts["methods"] as? [[String: Any]])?.map { "\($0["method"]!)=\($0["persons"]!)" } == ["apple=3", "email=1"])
        // 2 errors (save_failed, $exception) among 22 app events, from 2 people.
        let errors = cards["error_rate"] ?? [:]
        #expect(errors["value"] as? Double == 9.09 && errors["numerator"] as? Int == 2 && errors["denominator"] as? Int == 22)
        #expect(errors["persons"] as? Int == 2 && errors["met"] as? Bool == false)
        // Skips: 4 on onboarding_section_1, 1 on goals; 5 of the 10 prompted skipped.
        let skips = cards["skip_patterns"] ?? [:]
        #expect((skips["screens"] as? [[String: Any]])?.map { "\($0["screen"]!)=\($0["skips"]!)" } == ["onboarding_section_1=4", "goals=1"])
        #expect(skips["value"] as? Double == 50 && skips["skips"] as? Int == 5)

        // A window with neither sign-ups nor events: every metric is "no data", none 0 %.
        let empty = try Self.metrics(server, cookie, "from=2025-05-01&to=2025-05-31")
        for key in ["completion_rate", "account_creation_rate", "drop_off", "time_to_complete", "error_rate", "skip_patterns"] {
            #expect(empty[key]?["value"] is NSNull && empty[key]?["met"] is NSNull, "\(key)")
        }
        #expect((empty["drop_off"]?["steps"] as? [Any])?.isEmpty == true && (empty["skip_patterns"]?["screens"] as? [Any])?.isEmpty == true)
        #expect(try server.client().request("GET", "/dashboard/api/metrics?from=yesterday", headers: [cookie]).status == 400)
    }

    @Test func eventsOverTimeByAPropertyAndTheTopEvents() throws {
        let server = try Self.server()
        try Self.capture(server, Self.knownEvents())
        let (cookie, _) = try DashboardTests.session(server)
        let http = server.client()

        let all = try http.request("GET", "/dashboard/api/events?from=2025-06-01&to=2025-06-08", headers: [cookie]).jsonObject ?? [:]
        #expect(all["total"] as? Int == 23 && all["persons"] as? Int == 11 && all["breakdown"] as? String == "screen")
        let series = all["series"] as? [[String: Any]] ?? []
        #expect(series.compactMap { $0["day"] as? String }.count == 7)
        #expect(series.map { $0["count"] as? Int ?? -1 } == [0, 18, 5, 0, 0, 0, 0])
        let top = all["top_events"] as? [[String: Any]] ?? []
        #expect(
            top.map { "\($0["event"]!)=\($0["count"]!)/\($0["persons"]!)" } == [
                "account_prompt_shown=10/10", "account_created=5/5", "account_skipped=5/5", "$exception=1/1", "$feature_flag_called=1/1",
                "save_failed=1/1"
            ])
        // By screen: events without one are null, counted too.
        #expect(
            (all["breakdown_values"] as? [[String: Any]])?.map { "\($0["value"] is NSNull ? "null" : "\($0["value"]!)")=\($0["count"]!)" }
                == ["null=17", "onboarding_section_1=4", "goals=2"])

        let created = try http.request("GET", "/dashboard/api/events?from=2025-06-01&to=2025-06-08&event=account_created&breakdown=method", headers: [cookie])
        let object = created.jsonObject ?? [:]
        #expect(object["total"] as? Int == 5 && object["event"] as? String == "account_created")
        #expect((object["breakdown_values"] as? [[String: Any]])?.map { "\($0["value"]!)=\($0["count"]!)" } == ["apple=3", "email=2"])
        #expect((object["properties"] as? [String])?.first == "method")
        // The top events are the window's, whatever event is chosen.
        #expect((object["top_events"] as? [[String: Any]])?.count == 6)

        for query in ["from=yesterday", "from=2025-07-01&to=2025-06-01", "from=2020-01-01&to=2025-01-01", "breakdown=" + String(repeating: "x", count: 201)] {
            #expect(try http.request("GET", "/dashboard/api/events?\(query)", headers: [cookie]).status == 400, "\(query)")
        }
        #expect(try http.request("GET", "/dashboard/api/events").status == 401)
    }

    @Test func experimentsAreTheReportEndpointsNumbers() throws {
        let server = try Self.server()
        let (cookie, _) = try DashboardTests.session(server)
        let http = server.client()
        let admin = server.headers(server.serviceKey)
        let flag =
            #"{"key":"prompt-copy","name":"Prompt copy","filters":{"groups":[{"properties":[],"rollout_percentage":100}],"multivariate":{"variants":[{"key":"control","rollout_percentage":50},{"key":"friendly","rollout_percentage":50}]}}}"#
        #expect(try http.request("POST", "/analytics/v1/flags", headers: admin, body: flag).status == 200)
        #expect(try http.request("POST", "/analytics/v1/flags", headers: admin, body: #"{"key":"plain-switch"}"#).status == 200)
        // control: 40 exposed, 4 convert; friendly: 40 exposed, 16 convert, an hour later.
        var events: [String] = []
        let format = ISO8601DateFormatter()
        let exposed = format.string(from: Date().addingTimeInterval(-7200))
        let later = format.string(from: Date().addingTimeInterval(-3600))
        for (variant, converted) in [("control", 4), ("friendly", 16)] {
            for index in 0..<40 {
                let id = "\(variant)-\(index)"
                events.append(Self.event("$feature_flag_called", id, at: exposed, #""$feature_flag":"prompt-copy","$feature_flag_response":"\#(variant)""#))
                if index < converted { events.append(Self.event("account_created", id, at: later)) }
            }
        }
        try Self.capture(server, events)

        let page = try http.request("GET", "/dashboard/api/experiments?goal_event=account_created&days=7", headers: [cookie])
        #expect(page.status == 200, "\(page.text)")
        let object = page.jsonObject ?? [:]
        let experiments = object["experiments"] as? [[String: Any]] ?? []
        #expect(experiments.compactMap { $0["flag"] as? String } == ["prompt-copy"])  // the plain switch is no experiment
        #expect((object["goal_events"] as? [String]) == ["account_created"])
        let shown = try #require(experiments.first)
        #expect(shown["name"] as? String == "Prompt copy" && shown["active"] as? Bool == true)
        #expect((shown["weights"] as? [String: Any])?["friendly"] as? Int == 50)
        let variants = shown["variants"] as? [[String: Any]] ?? []
        #expect(variants.map { "\($0["variant"]!)=\($0["conversions"]!)/\($0["exposures"]!)" } == ["control=4/40", "friendly=16/40"])
        #expect(shown["leader"] as? String == "friendly")

        // The same numbers as the report endpoint, key for key.
        let report = try http.request("GET", "/analytics/v1/experiments/prompt-copy?goal_event=account_created&days=7", headers: admin).jsonObject ?? [:]
        var compared = shown
        for key in ["name", "active", "weights"] { compared[key] = nil }
        #expect(NSDictionary(dictionary: compared).isEqual(to: report), "\(compared) \(report)")

        // Without a goal: onboarding's COMPLETE within 14 days (nobody here completed).
        let byState = try http.request("GET", "/dashboard/api/experiments", headers: [cookie]).jsonObject ?? [:]
        #expect((byState["goal"] as? [String: Any])?["goal_state"] as? String == "COMPLETE" && byState["days"] as? Int == 14)
        #expect(((byState["experiments"] as? [[String: Any]])?.first?["variants"] as? [[String: Any]])?.map { $0["conversions"] as? Int } == [0, 0])
        for query in ["goal_state=COMPLETE&goal_event=x", "days=0", "days=366"] {
            #expect(try http.request("GET", "/dashboard/api/experiments?\(query)", headers: [cookie]).status == 400, "\(query)")
        }
    }
}
