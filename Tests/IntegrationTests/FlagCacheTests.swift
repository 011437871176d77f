import Foundation
import Postgres
import TestSupport
import Testing

/// The feature flags kept in memory by every server: a change through one server, or through
/// SQL, reaches the other's answers; the copy is answered without reading the table while the
/// LISTEN connection is up, and not trusted once it was lost.
@Suite("Analytics: flags in memory", .serialized)
struct FlagCacheTests {
    static let projectKey = "phc_flag_cache_project_key_0123456789"
    let first: TestServer
    let second: TestServer
    let database: Connection

    init() throws {
        first = try TestServer { $0.analytics.projectKey = Self.projectKey }
        second = try TestServer(databaseURL: first.databaseURL) { $0.analytics.projectKey = Self.projectKey }
        database = try Connection(conninfo: first.databaseURL)
    }

    static func flag(_ key: String, rollout: Int) -> String {
        #"{"key":"\#(key)","filters":{"groups":[{"properties":[],"rollout_percentage":\#(rollout)}]}}"#
    }

    /// `key`'s value for a distinct id on `server` (nil: the flag is not in the answer, or the
    /// answer is not 200).
    static func value(_ server: TestServer, _ key: String) throws -> Bool? {
        let answer = try server.client().request(
            "POST", "/flags/?v=2", headers: [("Content-Type", "application/json")],
            body: #"{"api_key":"\#(projectKey)","distinct_id":"cache-user-1"}"#)
        guard answer.status == 200 else { return nil }
        return ((answer.jsonObject?["flags"] as? [String: Any])?[key] as? [String: Any])?["enabled"] as? Bool
    }

    func save(_ body: String, on server: TestServer) throws {
        let saved = try server.client().request("POST", "/analytics/v1/flags", headers: server.headers(server.serviceKey), body: body)
        #expect(saved.status == 200, "\(saved.text)")
    }

    @Test func aChangeOnOneServerReachesTheOthersAnswers() throws {
        let key = "cache-\(UUID().uuidString.prefix(8).lowercased())"
        try save(Self.flag(key, rollout: 100), on: first)
        #expect(try eventually { try Self.value(second, key) == true })
        // The first server answers its own change at once; the second once notified.
        try save(Self.flag(key, rollout: 0), on: first)
        #expect(try Self.value(first, key) == false)
        #expect(try eventually { try Self.value(second, key) == false })
        // A change made in SQL, by no server, reaches both.
        _ = try database.query(
            """
            UPDATE product_analytics.feature_flags
               SET filters = jsonb_set(filters, '{groups,0,rollout_percentage}', '100'), version = version + 1 WHERE key = \(key)
            """)
        #expect(try eventually { try Self.value(first, key) == true && Self.value(second, key) == true })
        _ = try database.query("DELETE FROM product_analytics.feature_flags WHERE key = \(key)")
        #expect(try eventually { try Self.value(first, key) == nil && Self.value(second, key) == nil })
    }

    @Test func theCopyIsAnsweredFromMemoryOnlyWhileTheListenerIsUp() throws {
        let key = "memory-\(UUID().uuidString.prefix(8).lowercased())"
        try save(Self.flag(key, rollout: 100), on: first)
        #expect(try eventually { try Self.value(second, key) == true })
        // A rename notifies nobody: a server answering from memory still answers, one reading
        // the table would fail.
        _ = try database.query("ALTER TABLE product_analytics.feature_flags RENAME TO feature_flags_away")
        defer { _ = try? database.query("ALTER TABLE IF EXISTS product_analytics.feature_flags_away RENAME TO feature_flags") }
        #expect(try Self.value(second, key) == true, "answered from memory")
        // Its LISTEN connection lost, a server distrusts its copy (it may have missed a change).
        _ = try database.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'onboard listener' AND datname = current_database()")
        #expect(try eventually { try Self.value(second, key) == nil }, "read from the table again, which is gone")
        _ = try database.query("ALTER TABLE product_analytics.feature_flags_away RENAME TO feature_flags")
        #expect(try eventually { try Self.value(second, key) == true && Self.value(first, key) == true })
    }
}
