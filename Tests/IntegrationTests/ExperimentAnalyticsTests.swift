import Analytics
import Foundation
import Postgres
import TestSupport
import Testing

/// An experiment's report against data sets whose answers are known: exposures and goal events
/// sent through the capture API, an onboarding state reached by a real user, and a sample-ratio
/// mismatch.
@Suite("Analytics: experiment reports", .serialized)
struct ExperimentAnalyticsTests {
    static let projectKey = "phc_experiment_project_key_0123456789"
    let server: TestServer
    let database: Connection

    init() throws {
        server = try TestServer {
            $0.analytics.projectKey = Self.projectKey
            $0.analytics.maxBatchEvents = 1_000
        }
        database = try Connection(conninfo: server.databaseURL)
    }

    func saveFlag(_ key: String, weights: [(String, Int)]) throws {
        let variants = weights.map { #"{"key":"\#($0.0)","rollout_percentage":\#($0.1)}"# }.joined(separator: ",")
        let body = #"{"key":"\#(key)","filters":{"groups":[{"properties":[],"rollout_percentage":100}],"multivariate":{"variants":[\#(variants)]}}}"#
        let saved = try server.client().request("POST", "/analytics/v1/flags", headers: server.headers(server.serviceKey), body: body)
        #expect(saved.status == 200, "\(saved.text)")
    }

    /// `count` people exposed to `variant` of `flag`, the first `converted` of whom send `goal`
    /// an hour later; one more person sends `goal` before being exposed (not a conversion).
    func expose(_ flag: String, _ variant: String, count: Int, converted: Int, goal: String) throws {
        var events: [String] = []
        let run = UUID().uuidString.prefix(8)
        let format = ISO8601DateFormatter()
        let times = [-3.0, -2.0, -1.0].map { format.string(from: Date().addingTimeInterval($0 * 3600)) }
        let (before, exposed, after) = (times[0], times[1], times[2])
        let early = "\(flag)-\(variant)-early-\(run)"
        events.append(Self.event(goal, early, at: before))
        events.append(Self.event("$feature_flag_called", early, at: exposed, properties: #""$feature_flag":"\#(flag)","$feature_flag_response":"\#(variant)""#))
        for index in 0..<count {
            let id = "\(flag)-\(variant)-\(index)-\(run)"
            events.append(
                Self.event("$feature_flag_called", id, at: exposed, properties: #""$feature_flag":"\#(flag)","$feature_flag_response":"\#(variant)""#))
            if index < converted { events.append(Self.event(goal, id, at: after)) }
        }
        let response = try server.client().request(
            "POST", "/batch/", headers: [("Content-Type", "application/json")],
            body: #"{"api_key":"\#(Self.projectKey)","batch":[\#(events.joined(separator: ","))]}"#)
        #expect(response.status == 200, "\(response.text)")
    }

    static func event(_ name: String, _ id: String, at time: String, properties: String = "") -> String {
        #"{"event":"\#(name)","distinct_id":"\#(id)","uuid":"\#(UUID().uuidString)","timestamp":"\#(time)","properties":{\#(properties)}}"#
    }

    func report(_ flag: String, _ query: String) throws -> [String: Any] {
        let response = try server.client().request("GET", "/analytics/v1/experiments/\(flag)?\(query)", headers: server.headers(server.serviceKey))
        #expect(response.status == 200, "\(response.text)")
        return response.jsonObject ?? [:]
    }

    @Test func conversionsIntervalsAndTheZTestMatchTheKnownAnswer() throws {
        try saveFlag("order-test", weights: [("control", 50), ("short", 50)])
        try expose("order-test", "control", count: 100, converted: 10, goal: "onboarding_completed")
        try expose("order-test", "short", count: 100, converted: 25, goal: "onboarding_completed")
        let report = try report("order-test", "goal_event=onboarding_completed&days=7")
        let variants = (report["variants"] as? [[String: Any]]) ?? []
        let control = variants.first { $0["variant"] as? String == "control" }
        let short = variants.first { $0["variant"] as? String == "short" }
        // The early converters are exposed too (101 each) but converted before their exposure.
        #expect(control?["exposures"] as? Int == 101 && control?["conversions"] as? Int == 10)
        #expect(short?["exposures"] as? Int == 101 && short?["conversions"] as? Int == 25)
        #expect(report["leader"] as? String == "short")
        #expect((report["sample_ratio"] as? [String: Any])?["mismatch"] as? Bool == false)

        // The same counts without the early converters: 10/100 against 25/100, computed
        // independently: Wilson 95 % [0.05523, 0.17437] and [0.17545, 0.34304]; pooled z = 2.7915,
        // two-sided p = 0.005247.
        let known = ExperimentReport(counts: ["control": (100, 10), "short": (100, 25)], weights: ["control": 50, "short": 50])
        let knownShort = known.variants[1]
        #expect(abs(known.variants[0].interval.low - 0.055_229_137) < 1e-8 && abs(known.variants[0].interval.high - 0.174_365_662) < 1e-8)
        #expect(abs(knownShort.interval.low - 0.175_452_114) < 1e-8 && abs(knownShort.interval.high - 0.343_044_635) < 1e-8)
        #expect(abs((knownShort.pValue ?? 0) - 0.005_247_204) < 1e-8)
        #expect(abs((knownShort.difference ?? 0) - 0.15) < 1e-12)
        #expect(known.leader == "short" && !known.sampleRatioMismatch)
    }

    @Test func aSampleRatioMismatchIsFlagged() throws {
        // 300 against 200 on a 50/50 split: chi-square 20 > 10.83 (p < 0.001).
        let known = ExperimentReport(counts: ["control": (300, 30), "test": (200, 20)], weights: ["control": 50, "test": 50])
        #expect(abs(known.chiSquare - 20) < 1e-9 && known.sampleRatioMismatch && known.leader == nil)
        try saveFlag("srm-test", weights: [("control", 50), ("test", 50)])
        try expose("srm-test", "control", count: 300, converted: 0, goal: "done")
        try expose("srm-test", "test", count: 200, converted: 0, goal: "done")
        let report = try report("srm-test", "goal_event=done")
        #expect((report["sample_ratio"] as? [String: Any])?["mismatch"] as? Bool == true)
    }

    @Test func anOnboardingStateIsAGoal() throws {
        try saveFlag("state-test", weights: [("control", 50), ("test", 50)])
        let user = try server.signUp()
        let exposure = Self.event(
            "$feature_flag_called", user.id, at: ISO8601DateFormatter().string(from: Date().addingTimeInterval(-3600)),
            properties: #""$feature_flag":"state-test","$feature_flag_response":"test""#)
        let sent = try server.client().request(
            "POST", "/batch/", headers: [("Content-Type", "application/json")], body: #"{"api_key":"\#(Self.projectKey)","batch":[\#(exposure)]}"#)
        #expect(sent.status == 200, "\(sent.text)")
        _ = try database.query("INSERT INTO analytics.onboarding_transitions (user_id, from_state, to_state) VALUES (\(user.id)::uuid, 'REVIEW', 'COMPLETE')")
        let report = try report("state-test", "goal_state=COMPLETE&days=1")
        let test = (report["variants"] as? [[String: Any]])?.first { $0["variant"] as? String == "test" }
        #expect(test?["exposures"] as? Int == 1 && test?["conversions"] as? Int == 1, "\(report)")
        let refused = try server.client().request("GET", "/analytics/v1/experiments/state-test?goal_state=COMPLETE", headers: server.headers())
        #expect(refused.status == 401)
        let neither = try server.client().request("GET", "/analytics/v1/experiments/state-test", headers: server.headers(server.serviceKey))
        #expect(neither.status == 400)
    }
}
