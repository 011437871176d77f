import Foundation
import Postgres
import TestSupport
import Testing

/// The capture budgets: events a minute per client address and for the project key. A capture
/// over either is refused whole with PostHog's throttle answer, and nothing of it is stored.
@Suite("Analytics: events a minute per client and per key", .serialized)
struct AnalyticsRateLimitTests {
    static let projectKey = "phc_rate_limit_project_key_0123456789"

    static func batch(_ count: Int, client: String) -> String {
        let events = (0..<count).map { _ in #"{"event":"tapped","distinct_id":"\#(client)","uuid":"\#(UUID().uuidString)","properties":{}}"# }
        return #"{"api_key":"\#(projectKey)","batch":[\#(events.joined(separator: ","))]}"#
    }

    static func server(perClient: Int, perProject: Int) throws -> TestServer {
        try TestServer {
            $0.analytics.projectKey = projectKey
            $0.analytics.secretKey = "phx_rate_limit_secret_key_0123456789"
            $0.analytics.eventsPerMinutePerClient = perClient
            $0.analytics.eventsPerMinute = perProject
            // Each test client names its address, as a trusted proxy would.
            $0.auth.rateLimitHeader = "X-Forwarded-For"
        }
    }

    func capture(_ server: TestServer, _ count: Int, from address: String) throws -> TestResponse {
        try server.client().request(
            "POST", "/batch/", headers: [("Content-Type", "application/json"), ("X-Forwarded-For", address)], body: Self.batch(count, client: address))
    }

    func stored(_ server: TestServer, _ address: String) throws -> Int {
        Int(
            try Connection(conninfo: server.databaseURL).query("SELECT count(*) FROM product_analytics.events WHERE distinct_id = \(address)").scalar
                ?? "0") ?? 0
    }

    @Test func aClientOverItsBudgetIsThrottledWholeAndOthersGoOn() throws {
        let server = try Self.server(perClient: 5, perProject: 1_000)
        #expect(try capture(server, 3, from: "10.0.0.1").status == 200)
        let over = try capture(server, 3, from: "10.0.0.1")
        #expect(over.status == 429 && over.jsonObject?["code"] as? String == "throttled" && over.jsonObject?["type"] as? String == "throttled_error")
        #expect(Int(over.header("Retry-After") ?? "") ?? 0 >= 1)
        #expect(try stored(server, "10.0.0.1") == 3, "nothing of the refused batch is stored")
        #expect(try capture(server, 2, from: "10.0.0.1").status == 200, "what still fits goes")
        #expect(try capture(server, 5, from: "10.0.0.2").status == 200, "another client has a budget of its own")
    }

    @Test func theProjectKeysBudgetHoldsForEveryClientTogether() throws {
        let server = try Self.server(perClient: 1_000, perProject: 4)
        #expect(try capture(server, 2, from: "10.0.1.1").status == 200)
        #expect(try capture(server, 2, from: "10.0.1.2").status == 200)
        #expect(try capture(server, 1, from: "10.0.1.3").status == 429)
        #expect(try stored(server, "10.0.1.3") == 0)
    }
}
