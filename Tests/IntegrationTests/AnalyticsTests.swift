import Foundation
import Postgres
import Synchronization
import TestSupport
import Testing

/// PostHog's capture and flags protocols against the real server and database: events sent as
/// the SDKs send them, retries, batches stored whole or not at all, malformed bodies, identity
/// merges, the Supabase door (public.track), and what the project key may not do.
@Suite("Analytics: capture, persons, flags", .serialized)
struct AnalyticsTests {
    static let projectKey = "phc_integration_project_key_0123456789"
    static let secretKey = "phx_integration_secret_key_0123456789"
    let server: TestServer
    let database: Connection

    init() throws {
        server = try TestServer {
            $0.analytics.projectKey = Self.projectKey
            $0.analytics.secretKey = Self.secretKey
            $0.analytics.maxBatchEvents = 50
        }
        database = try Connection(conninfo: server.databaseURL)
    }

    func post(_ path: String, _ body: String, headers: [(String, String)] = [("Content-Type", "application/json")]) throws -> TestResponse {
        try server.client().request("POST", path, headers: headers, body: body)
    }

    func count(_ sql: SQL) throws -> Int {
        Int(try database.query(sql).scalar ?? "0") ?? 0
    }

    static func event(_ name: String, _ distinctID: String, uuid: String = UUID().uuidString, properties: String = "{}") -> String {
        #"{"event":"\#(name)","distinct_id":"\#(distinctID)","uuid":"\#(uuid)","properties":\#(properties),"timestamp":"2026-11-28T10:00:00.123456+00:00"}"#
    }

    static func gzip(_ text: String) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Array(data)
    }

    @Test func singleEventsOnEveryCapturePath() throws {
        let id = "device-\(UUID().uuidString)"
        for path in ["/i/v0/e/", "/capture/", "/e/", "/track/", "/batch/"] {
            let body =
                #"{"api_key":"\#(Self.projectKey)","#
                + Self.event("screen_viewed", id, properties: #"{"screen":"\#(path)"}"#).dropFirst()
            let response = try post(path, String(body))
            #expect(response.status == 200 && response.text == #"{"status":1}"#, "\(path): \(response.status) \(response.text)")
        }
        #expect(try count("SELECT count(*) FROM product_analytics.events WHERE distinct_id = \(id)") == 5)
    }

    @Test func gzipBatchesAndRetriesCountOnce() throws {
        let id = "gz-\(UUID().uuidString)"
        let uuids = (0..<3).map { _ in UUID().uuidString }
        let batch = #"{"api_key":"\#(Self.projectKey)","batch":[\#(uuids.map { Self.event("section_completed", id, uuid: $0) }.joined(separator: ","))]}"#
        let headers = [("Content-Type", "application/json"), ("Content-Encoding", "gzip")]
        let first = try server.client().request("POST", "/batch/", headers: headers, bodyBytes: try Self.gzip(batch))
        #expect(first.status == 200, "\(first.text)")
        // The SDK retries the same batch after a timeout: nothing is stored twice.
        let retry = try server.client().request("POST", "/batch/", headers: headers, bodyBytes: try Self.gzip(batch))
        #expect(retry.status == 200)
        // posthog-js: a bare array, gzip announced in the query, the key in each event's properties.
        let js = "[" + Self.event("onboarding_started", id, properties: #"{"token":"\#(Self.projectKey)"}"#) + "]"
        let jsResponse = try server.client().request(
            "POST", "/e/?compression=gzip-js&ver=1.0", headers: [("Content-Type", "text/plain")], bodyBytes: try Self.gzip(js))
        #expect(jsResponse.status == 200, "\(jsResponse.text)")
        #expect(try count("SELECT count(*) FROM product_analytics.events WHERE distinct_id = \(id)") == 4)
        // The key is never stored with the event.
        #expect(try count("SELECT count(*) FROM product_analytics.events WHERE distinct_id = \(id) AND properties ? 'token'") == 0)
    }

    @Test func concurrentBatchesShareANewMonth() throws {
        // Eight batches at once, all in a month that has no partition yet.
        let id = "concurrent-\(UUID().uuidString)"
        let port = server.port
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let events = (0..<20).map { _ in
                #"{"event":"e","distinct_id":"\#(id)","uuid":"\#(UUID().uuidString)","timestamp":"2025-07-15T10:00:00Z"}"#
            }
            let body = #"{"api_key":"\#(Self.projectKey)","batch":[\#(events.joined(separator: ","))]}"#
            let status = (try? TestHTTPClient(port: port).request("POST", "/batch/", headers: [("Content-Type", "application/json")], body: body).status) ?? 0
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0 } == Array(repeating: 200, count: 8))
        #expect(try count("SELECT count(*) FROM product_analytics.events WHERE distinct_id = \(id)") == 160)
    }

    @Test func aBatchIsStoredWholeOrNotAtAll() throws {
        let id = "atomic-\(UUID().uuidString)"
        let good = Self.event("ok", id)
        let badTime = #"{"event":"bad","distinct_id":"\#(id)","uuid":"\#(UUID().uuidString)","timestamp":"not a time"}"#
        let noID = #"{"event":"bad","uuid":"\#(UUID().uuidString)"}"#
        for bad in [badTime, noID] {
            let response = try post("/batch/", #"{"api_key":"\#(Self.projectKey)","batch":[\#(good),\#(bad)]}"#)
            #expect(response.status == 400, "\(response.text)")
            #expect(response.jsonObject?["type"] as? String == "validation_error")
            #expect(response.jsonObject?["code"] as? String == "invalid_payload")
        }
        #expect(try count("SELECT count(*) FROM product_analytics.events WHERE distinct_id = \(id)") == 0)
        #expect(
            try count(
                "SELECT count(*) FROM product_analytics.persons p JOIN product_analytics.person_distinct_ids d ON d.person_id = p.id WHERE d.distinct_id = \(id)"
            ) == 0)
    }

    @Test func malformedBodiesAndKeysGetPostHogsErrors() throws {
        let event = Self.event("e", "someone")
        let cases: [(String, [UInt8], Int, String)] = [
            ("/batch/", Array("{not json".utf8), 400, "invalid_payload"),
            ("/batch/", Array(#"{"batch":[\#(event)]}"#.utf8), 401, "missing_api_key"),
            ("/batch/", Array(#"{"api_key":"phc_wrong","batch":[\#(event)]}"#.utf8), 401, "invalid_api_key"),
            ("/batch/", Array(#"{"api_key":"\#(Self.projectKey)","batch":[]}"#.utf8), 400, "invalid_payload"),
            ("/batch/", Array(#"{"api_key":"\#(Self.projectKey)","batch":{}}"#.utf8), 400, "invalid_payload"),
            ("/capture/", Array(#"{"api_key":"\#(Self.projectKey)","event":"e","distinct_id":"x","properties":[]}"#.utf8), 400, "invalid_payload"),
            ("/capture/", Array(#"{"api_key":"\#(Self.projectKey)","event":"e","distinct_id":"x","uuid":"nope"}"#.utf8), 400, "invalid_payload"),
            ("/e/?compression=gzip-js", [0x1f, 0x8b, 1, 2, 3], 400, "invalid_payload"),
            (
                "/batch/", Array(#"{"api_key":"\#(Self.projectKey)","batch":[\#(Array(repeating: event, count: 51).joined(separator: ","))]}"#.utf8), 413,
                "payload_too_large"
            )
        ]
        for (path, body, status, code) in cases {
            let response = try server.client().request("POST", path, headers: [("Content-Type", "application/json")], bodyBytes: body)
            #expect(response.status == status, "\(String(decoding: body.prefix(80), as: UTF8.self)): \(response.status) \(response.text)")
            #expect(response.jsonObject?["code"] as? String == code, "\(response.text)")
            #expect(response.jsonObject?["detail"] is String)
        }
        // A form body with base64 `data` (older posthog-js).
        let encoded = Data(#"{"api_key":"\#(Self.projectKey)","event":"form_event","distinct_id":"form-user"}"#.utf8).base64EncodedString()
        let form = try post(
            "/e/", "data=" + (encoded.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
            headers: [("Content-Type", "application/x-www-form-urlencoded")])
        #expect(form.status == 200, "\(form.text)")
    }

    @Test func identifyAliasAndPersonProperties() throws {
        let anonymous = "anon-\(UUID().uuidString)"
        let user = try server.signUp()
        let other = "alias-\(UUID().uuidString)"
        let events = [
            Self.event("onboarding_started", anonymous, properties: #"{"$set_once":{"first_screen":"welcome"},"$set":{"plan":"free"}}"#),
            Self.event("$identify", user.id, properties: #"{"$anon_distinct_id":"\#(anonymous)","$set":{"plan":"pro"},"$set_once":{"first_screen":"later"}}"#),
            Self.event("$create_alias", user.id, properties: #"{"alias":"\#(other)"}"#)
        ]
        let response = try post("/batch/", #"{"api_key":"\#(Self.projectKey)","batch":[\#(events.joined(separator: ","))]}"#)
        #expect(response.status == 200, "\(response.text)")
        let persons = try database.query(
            "SELECT count(DISTINCT person_id) FROM product_analytics.person_distinct_ids WHERE distinct_id IN (\(anonymous), \(user.id), \(other))")
        #expect(persons.scalar == "1")
        let properties = try database.query(
            """
            SELECT p.properties ->> 'plan', p.properties ->> 'first_screen' FROM product_analytics.persons p
            JOIN product_analytics.person_distinct_ids d ON d.person_id = p.id WHERE d.distinct_id = \(anonymous)
            """)
        #expect(properties[0].string(0) == "pro" && properties[0].string(1) == "welcome")
        // The user's events join the user; the anonymous one joins through its person.
        #expect(try count("SELECT count(*) FROM product_analytics.events WHERE user_id = \(user.id)::uuid") == 2)
        #expect(try count("SELECT count(*) FROM product_analytics.events_with_person WHERE person_user_id = \(user.id)::uuid") == 3)
    }

    @Test func expiredMonthsAreDropped() throws {
        let keeping = try TestServer(databaseURL: server.databaseURL) {
            $0.migrateOnStart = false
            $0.analytics.projectKey = Self.projectKey
            $0.analytics.secretKey = Self.secretKey
            $0.analytics.retentionDays = 30
        }
        let old = #"{"event":"old","distinct_id":"retention","uuid":"\#(UUID().uuidString)","timestamp":"2021-03-10T10:00:00Z"}"#
        let response = try keeping.client().request(
            "POST", "/batch/", headers: [("Content-Type", "application/json")], body: #"{"api_key":"\#(Self.projectKey)","batch":[\#(old)]}"#)
        #expect(response.status == 200, "\(response.text)")
        // Stored, then its month dropped by the same request's retention run.
        #expect(try count("SELECT count(*) FROM product_analytics.events WHERE distinct_id = 'retention'") == 0)
        #expect(try database.query("SELECT to_regclass('product_analytics.events_202103') IS NULL").scalar == "t")
    }

    @Test func trackRPCUsesTheCallersOwnID() throws {
        let user = try server.signUp()
        let response = try server.client().request(
            "POST", "/rest/v1/rpc/track", headers: server.headers(user.token),
            body: #"{"event":"profile_created","properties":{"anonymous":false,"distinct_id":"someone-else"}}"#)
        #expect(response.status == 204 || response.status == 200, "\(response.status) \(response.text)")
        #expect(
            try count("SELECT count(*) FROM product_analytics.events WHERE distinct_id = \(user.id) AND user_id = \(user.id)::uuid AND source = 'rpc'") == 1)
        let anonymous = try server.client().request("POST", "/rest/v1/rpc/track", headers: server.headers(), body: #"{"event":"x"}"#)
        #expect([401, 403].contains(anonymous.status), "\(anonymous.status) \(anonymous.text)")
    }

    @Test func theProjectKeyCannotReadAnything() throws {
        let http = server.client()
        let key = Self.projectKey
        // Not a Supabase key: REST and Auth refuse it.
        let rest = try http.request("GET", "/rest/v1/user_profiles", headers: [("apikey", key), ("Authorization", "Bearer \(key)")])
        #expect(rest.status == 401, "\(rest.status)")
        for target in ["/api/feature_flag/local_evaluation?token=\(key)&send_cohorts", "/flags/definitions?token=\(key)", "/analytics/v1/flags"] {
            let response = try http.request("GET", target, headers: [("Authorization", "Bearer \(key)")])
            #expect(response.status == 401, "\(target): \(response.status)")
            #expect(!response.text.contains(Self.secretKey) && !response.text.contains("filters"))
        }
        // Signed-in users and anon may not read the events through REST either (no such schema).
        let user = try server.signUp()
        let events = try http.request("GET", "/rest/v1/events", headers: server.headers(user.token, [("Accept-Profile", "product_analytics")]))
        #expect(events.status >= 400, "\(events.status) \(events.text)")
        let privileges = try database.query(
            "SELECT has_schema_privilege('anon', 'product_analytics', 'USAGE') OR has_schema_privilege('authenticated', 'product_analytics', 'USAGE')")
        #expect(privileges.scalar == "f")
    }

    @Test func flagsForOneDistinctIDAndTheDefinitions() throws {
        let flag = #"""
            {"key":"onboarding-flow","name":"Onboarding order","active":true,"filters":{
             "groups":[{"properties":[{"key":"platform","value":["ios"],"operator":"exact"}],"rollout_percentage":100}],
             "multivariate":{"variants":[{"key":"control","rollout_percentage":50},{"key":"short","rollout_percentage":50}]},
             "payloads":{"control":["USER_INFO","GOALS"],"short":"[\"GOALS\"]"}}}
            """#
        let saved = try server.client().request("POST", "/analytics/v1/flags", headers: server.headers(server.serviceKey), body: flag)
        #expect(saved.status == 200, "\(saved.text)")
        let request = #"{"api_key":"\#(Self.projectKey)","distinct_id":"flag-user-1","person_properties":{"platform":"iOS"}}"#
        let answer = try post("/flags/?v=2", request)
        #expect(answer.status == 200, "\(answer.text)")
        let record = (answer.jsonObject?["flags"] as? [String: Any])?["onboarding-flow"] as? [String: Any]
        let variant = record?["variant"] as? String
        #expect(["control", "short"].contains(variant ?? ""), "\(answer.text)")
        let payload = (record?["metadata"] as? [String: Any])?["payload"] as? String
        #expect(payload == (variant == "control" ? #"["USER_INFO","GOALS"]"# : #"["GOALS"]"#))
        let decide = try post("/decide/?v=3", request)
        #expect((decide.jsonObject?["featureFlags"] as? [String: Any])?["onboarding-flow"] as? String == variant)
        let web = try post("/flags/?v=2", #"{"token":"\#(Self.projectKey)","distinct_id":"flag-user-1","person_properties":{"platform":"web"}}"#)
        #expect((web.jsonObject?["featureFlags"] as? [String: Any])?["onboarding-flow"] as? Bool == false)
        let wrongKey = try post("/flags/?v=2", #"{"api_key":"phc_nope","distinct_id":"a"}"#)
        #expect(wrongKey.status == 401)

        let definitions = try server.client().request(
            "GET", "/api/feature_flag/local_evaluation?token=\(Self.projectKey)&send_cohorts", headers: [("Authorization", "Bearer \(Self.secretKey)")])
        #expect(definitions.status == 200, "\(definitions.text)")
        let flags = definitions.jsonObject?["flags"] as? [[String: Any]]
        #expect(flags?.first?["key"] as? String == "onboarding-flow" && flags?.first?["active"] as? Bool == true)

        // The SDK reports the exposure.
        let called = Self.event(
            "$feature_flag_called", "flag-user-1", properties: #"{"$feature_flag":"onboarding-flow","$feature_flag_response":"\#(variant ?? "")"}"#)
        #expect(try post("/batch/", #"{"api_key":"\#(Self.projectKey)","batch":[\#(called)]}"#).status == 200)
        #expect(try count("SELECT count(*) FROM product_analytics.exposures WHERE flag_key = 'onboarding-flow' AND variant = \(variant ?? "")") == 1)

        let deleted = try server.client().request("DELETE", "/analytics/v1/flags/onboarding-flow", headers: server.headers(server.serviceKey))
        #expect(deleted.status == 204)
        let refused = try server.client().request("POST", "/analytics/v1/flags", headers: server.headers(), body: flag)
        #expect(refused.status == 401)
    }
}
