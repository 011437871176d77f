import Foundation
import Identity
import Postgres
import Realtime
import TestSupport
import Testing

/// A Phoenix channels client over TestWebSocket, in either serializer.
final class PhoenixClient {
    let socket: TestWebSocket
    let vsn: String
    private var ref = 0

    init(_ server: TestServer, vsn: String = "2.0.0", apikey: String? = nil) throws {
        self.vsn = vsn
        socket = try TestWebSocket(port: server.port, target: "/realtime/v1/websocket?apikey=\(apikey ?? server.anonKey)&vsn=\(vsn)")
    }

    /// A client on a socket already open (e.g. to another server).
    init(socket: TestWebSocket, vsn: String) {
        self.socket = socket
        self.vsn = vsn
    }

    /// Sends a message; returns its ref.
    @discardableResult
    func push(_ topic: String, _ event: String, _ payload: [String: Any], joinRef: String? = nil) throws -> String {
        ref += 1
        let ref = String(ref)
        let message: Any =
            vsn == "2.0.0"
            ? [joinRef ?? NSNull(), ref, topic, event, payload] as [Any]
            : ["topic": topic, "event": event, "payload": payload, "ref": ref, "join_ref": joinRef ?? NSNull()] as [String: Any]
        try socket.sendText(String(decoding: try JSONSerialization.data(withJSONObject: message), as: UTF8.self))
        return ref
    }

    /// (joinRef, ref, topic, event, payload) of the next message, in either format.
    func next(timeout: Double = 30) throws -> (joinRef: String?, ref: String?, topic: String, event: String, payload: [String: Any])? {
        guard let text = try socket.readText(timeout: timeout),
            let json = try? JSONSerialization.jsonObject(with: Data(text.utf8))
        else { return nil }
        if let array = json as? [Any], array.count == 5 {
            return (array[0] as? String, array[1] as? String, array[2] as! String, array[3] as! String, array[4] as! [String: Any])
        }
        let object = json as! [String: Any]
        return (
            object["join_ref"] as? String, object["ref"] as? String, object["topic"] as! String, object["event"] as! String, object["payload"] as! [String: Any]
        )
    }

    /// The next message with `event` (others skipped), or nil after `timeout`.
    func next(_ event: String, timeout: Double = 30) throws -> (joinRef: String?, ref: String?, topic: String, event: String, payload: [String: Any])? {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            guard let message = try next(timeout: deadline.timeIntervalSinceNow) else { return nil }
            if message.event == event { return message }
        }
        return nil
    }

    /// Joins `topic` with `bindings`; returns the join ref and the reply's payload.
    func join(_ topic: String, token: String?, bindings: [[String: Any]]) throws -> (joinRef: String, reply: [String: Any]) {
        var payload: [String: Any] = ["config": ["broadcast": ["self": false], "presence": ["key": ""], "private": false, "postgres_changes": bindings]]
        if let token { payload["access_token"] = token }
        let joinRef = String(ref + 1)
        try push(topic, "phx_join", payload, joinRef: joinRef)
        let reply = try #require(try next("phx_reply"))
        #expect(reply.ref == joinRef && reply.joinRef == (vsn == "2.0.0" ? joinRef : reply.joinRef))
        return (joinRef, reply.payload)
    }
}

/// The two change feeds every Realtime test runs on: the WAL (the embedded cluster streams it)
/// and the triggers (the fallback for a database that cannot).
let feeds: [RealtimeFeedChoice] = [.wal, .triggers]

/// Supabase Realtime's postgres_changes over a real socket against the real application, on
/// each change feed.
@Suite("Realtime", .serialized)
struct RealtimeTests {
    func patch(_ server: TestServer, _ user: (id: String, token: String, refresh: String), state: String) throws {
        let response = try server.client().request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: server.headers(user.token),
            body: #"{"onboarding_state":"\#(state)"}"#)
        #expect(response.status == 204, "\(response.text)")
    }

    @Test(arguments: ["2.0.0", "1.0.0"], feeds)
    func joinHeartbeatChangeAndLeave(vsn: String, feed: RealtimeFeedChoice) throws {
        let server = try TestServer { $0.realtimeFeed = feed }
        let user = try server.signUp()
        let client = try PhoenixClient(server, vsn: vsn)
        #expect(client.socket.status == 101)

        let beat = try client.push("phoenix", "heartbeat", [:])
        let beatReply = try #require(try client.next())
        #expect(beatReply.event == "phx_reply" && beatReply.ref == beat && beatReply.topic == "phoenix")
        #expect(beatReply.payload["status"] as? String == "ok")

        // supabase-swift sends the uuid upper-case; the filter compares it as a uuid.
        let binding: [String: Any] = ["event": "UPDATE", "schema": "public", "table": "user_profiles", "filter": "id=eq.\(user.id.uppercased())"]
        let (joinRef, reply) = try client.join("realtime:profile", token: user.token, bindings: [binding])
        #expect(reply["status"] as? String == "ok")
        let echoed = try #require((reply["response"] as? [String: Any])?["postgres_changes"] as? [[String: Any]])
        #expect(echoed.count == 1)
        #expect(echoed[0]["filter"] as? String == "id=eq.\(user.id.uppercased())" && echoed[0]["table"] as? String == "user_profiles")
        let id = try #require(echoed[0]["id"] as? Int)
        #expect(id >= 1 && id < 1 << 27)
        let system = try #require(try client.next("system"))
        #expect(system.payload["status"] as? String == "ok" && system.payload["message"] as? String == "Subscribed to PostgreSQL")
        #expect(system.payload["extension"] as? String == "postgres_changes" && system.payload["channel"] as? String == "profile")

        try patch(server, user, state: "USER_INFO")
        let event = try #require(try client.next("postgres_changes"))
        #expect(event.topic == "realtime:profile")
        #expect(event.payload["ids"] as? [Int] == [id])
        let data = try #require(event.payload["data"] as? [String: Any])
        #expect(data["type"] as? String == "UPDATE" && data["schema"] as? String == "public" && data["table"] as? String == "user_profiles")
        #expect((data["record"] as? [String: Any])?["onboarding_state"] as? String == "USER_INFO")
        #expect((data["old_record"] as? [String: Any])?["id"] as? String == user.id)
        #expect(data["errors"] is NSNull)
        let stamp = try #require(data["commit_timestamp"] as? String)
        #expect(stamp.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil)
        let columns = try #require(data["columns"] as? [[String: String]])
        #expect(columns.first == ["name": "id", "type": "uuid"])
        #expect(columns.contains(["name": "onboarding_state", "type": "text"]))

        try patch(server, user, state: "CHILD_INFO")
        let second = try #require(try client.next("postgres_changes"))
        #expect(((second.payload["data"] as? [String: Any])?["record"] as? [String: Any])?["onboarding_state"] as? String == "CHILD_INFO")

        // The server counts an event after sending it: wait for the count, not for a moment.
        var metrics = ""
        _ = try eventually {
            metrics = try server.client().request("GET", "/metrics").text
            return metrics.contains("onboard_realtime_events_total 2\n")
        }
        #expect(metrics.contains("onboard_realtime_sockets 1\n") && metrics.contains("onboard_realtime_subscriptions 1\n"))
        #expect(metrics.contains("onboard_realtime_events_total 2\n") && metrics.contains("onboard_realtime_feed_listening 1\n"))
        #expect(metrics.contains(#"onboard_http_requests_total{route="/realtime/v1/websocket",method="GET",status="101"} 1"#))

        let leave = try client.push("realtime:profile", "phx_leave", [:], joinRef: joinRef)
        let left = try #require(try client.next())
        #expect(left.event == "phx_reply" && left.ref == leave && left.payload["status"] as? String == "ok")
        let closed = try #require(try client.next())
        #expect(closed.event == "phx_close" && closed.ref == joinRef)
        try patch(server, user, state: "GOALS")
        #expect(try client.next("postgres_changes", timeout: 0.5) == nil)
    }

    @Test(arguments: feeds)
    func socketChecksTheKeyAndTheSerializer(feed: RealtimeFeedChoice) throws {
        let server = try TestServer { $0.realtimeFeed = feed }
        let missing = try TestWebSocket(port: server.port, target: "/realtime/v1/websocket?vsn=2.0.0")
        #expect(missing.status == 401 && missing.body == #"{"error":"API key is missing"}"#)
        let wrong = try TestWebSocket(port: server.port, target: "/realtime/v1/websocket?apikey=nope&vsn=2.0.0")
        #expect(wrong.status == 401 && wrong.body == #"{"error":"The token provided is not a valid JWT"}"#)
        let version = try TestWebSocket(port: server.port, target: "/realtime/v1/websocket?apikey=\(server.anonKey)&vsn=3.0.0")
        #expect(version.status == 403)
        // The key as a header (supabase-swift sends both), no vsn → 1.0.0 objects.
        let header = try TestWebSocket(port: server.port, target: "/realtime/v1/websocket", headers: [("apikey", server.anonKey)])
        #expect(header.status == 101)
        try header.sendText(#"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"9"}"#)
        #expect(try header.readText()?.contains(#""ref":"9""#) == true)
    }

    @Test(arguments: feeds)
    func joinErrorsAreRealtimes(feed: RealtimeFeedChoice) throws {
        let server = try TestServer { $0.realtimeFeed = feed }
        let user = try server.signUp()
        let client = try PhoenixClient(server)
        let secret = Array(TestServer.secret.utf8)
        let now = Int(Date().timeIntervalSince1970)

        func reason(_ token: String) throws -> String? {
            let (_, reply) = try client.join("realtime:bad", token: token, bindings: [])
            #expect(reply["status"] as? String == "error")
            return (reply["response"] as? [String: Any])?["reason"] as? String
        }
        #expect(try reason("not-a-jwt") == "MalformedJWT: The token provided is not a valid JWT")
        #expect(
            try reason(JWT.signHS256(claims: ["role": "authenticated", "exp": now + 60], secret: Array("another-secret-another-secret-xx".utf8)))
                == "JwtSignatureError: Failed to validate JWT signature")
        #expect(
            try reason(JWT.signHS256(claims: ["role": "authenticated", "exp": now - 120], secret: secret))?.hasPrefix("InvalidJWTToken: Token has expired 1")
                == true)
        #expect(try reason(JWT.signHS256(claims: ["role": "authenticated"], secret: secret)) == "InvalidJWTToken: Fields `role` and `exp` are required in JWT")

        let (_, empty) = try client.join("realtime:", token: user.token, bindings: [])
        #expect((empty["response"] as? [String: Any])?["reason"] as? String == "TopicNameRequired: You must provide a topic name")
        try client.push("realtime:never-joined", "access_token", ["access_token": user.token])
        let unmatched = try #require(try client.next("phx_reply"))
        #expect((unmatched.payload["response"] as? [String: Any])?["reason"] as? String == "unmatched topic")

        // Bindings are checked after the ok reply; problems arrive as system errors.
        let cases: [([String: Any], String)] = [
            (
                ["event": "*", "schema": "public", "table": "nope"],
                "Please check Realtime is enabled for the given connect parameters: [event: *, schema: public, table: nope, filters: []]"
            ),
            (["event": "*", "schema": "public", "table": "user_profiles", "filter": "id=eq.not-a-uuid"], "invalid input syntax for type uuid"),
            (["event": "*", "schema": "public", "table": "user_profiles", "filter": "nosuch=eq.1"], "Error parsing `filter` params"),
            (["event": "*", "schema": "public", "table": "user_profiles", "filter": "id"], "Error parsing `filter` params"),
            // Realtime's operators only (REST's grammar knows more).
            (["event": "*", "schema": "public", "table": "user_profiles", "filter": "onboarding_state=like.C*"], "operator like is not supported"),
            (["event": "*", "schema": "public", "table": "user_profiles", "filter": "id=not.eq.1"], "only a column, an operator")
        ]
        for (index, (binding, expected)) in cases.enumerated() {
            let (_, reply) = try client.join("realtime:c\(index)", token: user.token, bindings: [binding])
            #expect(reply["status"] as? String == "ok")
            let system = try #require(try client.next("system"))
            #expect(system.payload["status"] as? String == "error")
            #expect((system.payload["message"] as? String)?.contains(expected) == true, "\(system.payload)")
        }
        let (_, listed) = try client.join(
            "realtime:in", token: user.token,
            bindings: [["event": "*", "schema": "public", "table": "user_profiles", "filter": "onboarding_state=in.(REVIEW,COMPLETE)"]])
        #expect(listed["status"] as? String == "ok")
        #expect(try client.next("system")?.payload["status"] as? String == "ok", "an `in` filter is one of Realtime's")
        // Tables that exist but are not enabled for Realtime are refused the same way.
        let (_, families) = try client.join("realtime:families", token: user.token, bindings: [["event": "*", "schema": "public", "table": "families"]])
        #expect(families["status"] as? String == "ok")
        #expect((try client.next("system")?.payload["message"] as? String)?.contains("Please check Realtime is enabled") == true)
    }

    enum Layers: String, CaseIterable, Sendable { case both, rlsOnly, middlewareOnly }

    @Test(arguments: Layers.allCases, feeds)
    func aUserNeverHearsOfAnotherUsersRows(_ layers: Layers, feed: RealtimeFeedChoice) throws {
        let server = try TestServer {
            $0.enforceOwnership = layers != .rlsOnly
            $0.realtimeFeed = feed
        }
        if layers == .middlewareOnly {
            let admin = try Connection(conninfo: server.databaseURL)
            try admin.execute("ALTER TABLE public.children DISABLE ROW LEVEL SECURITY; ALTER TABLE public.user_profiles DISABLE ROW LEVEL SECURITY")
        }
        let a = try server.signUp()
        let b = try server.signUp()
        let anonymous = try PhoenixClient(server)
        let clientA = try PhoenixClient(server)
        let clientB = try PhoenixClient(server)
        let all: [[String: Any]] = [["event": "*", "schema": "public", "table": "children"], ["event": "*", "schema": "public", "table": "user_profiles"]]
        for (client, token) in [(clientA, a.token), (clientB, b.token), (anonymous, server.anonKey)] {
            _ = try client.join("realtime:everything", token: token, bindings: all)
            #expect(try client.next("system")?.payload["status"] as? String == "ok")
        }
        // B also asks for A's row by id: still not visible.
        _ = try clientB.join(
            "realtime:spy", token: b.token, bindings: [["event": "*", "schema": "public", "table": "user_profiles", "filter": "id=eq.\(a.id)"]])
        #expect(try clientB.next("system")?.payload["status"] as? String == "ok")

        // Each change is re-read when it is processed, so the test waits for each event before
        // the next write (a row deleted before its INSERT was re-read yields only the DELETE).
        let http = server.client()
        func nextEvent() throws -> [String: Any] {
            let event = try #require(try clientA.next("postgres_changes"))
            return try #require(event.payload["data"] as? [String: Any])
        }
        let created = try http.request(
            "POST", "/rest/v1/children", headers: server.headers(a.token, [("Prefer", "return=representation")]),
            body: #"{"user_id":"\#(a.id)","name":"Kid"}"#)
        let childID = try #require(created.jsonArray?.first?["id"] as? String)
        let inserted = try nextEvent()
        #expect(inserted["table"] as? String == "children" && inserted["type"] as? String == "INSERT")
        #expect((inserted["record"] as? [String: Any])?["id"] as? String == childID && inserted["old_record"] == nil)
        try patch(server, a, state: "USER_INFO")
        let updated = try nextEvent()
        #expect(updated["table"] as? String == "user_profiles" && updated["type"] as? String == "UPDATE")
        #expect(try http.request("DELETE", "/rest/v1/children?id=eq.\(childID)", headers: server.headers(a.token)).status == 204)
        let deleted = try nextEvent()
        #expect(deleted["table"] as? String == "children" && deleted["type"] as? String == "DELETE")
        #expect(deleted["old_record"] as? [String: String] == ["id": childID] && deleted["record"] == nil)

        // B's own change proves B's socket works; it must be the only thing B hears.
        try patch(server, b, state: "USER_INFO")
        let own = try #require(try clientB.next("postgres_changes"))
        #expect(((own.payload["data"] as? [String: Any])?["record"] as? [String: Any])?["id"] as? String == b.id)
        #expect(try clientB.next("postgres_changes", timeout: 0.5) == nil)
        #expect(try anonymous.next("postgres_changes", timeout: 0.2) == nil)
    }

    @Test(arguments: feeds)
    func tokenRefreshAndExpiry(feed: RealtimeFeedChoice) throws {
        let server = try TestServer { $0.realtimeFeed = feed }
        let user = try server.signUp()
        let client = try PhoenixClient(server)
        let secret = Array(TestServer.secret.utf8)
        func token(expiresIn seconds: Int) -> String {
            let now = Int(Date().timeIntervalSince1970)
            return JWT.signHS256(claims: ["sub": user.id, "role": "authenticated", "aud": "authenticated", "exp": now + seconds], secret: secret)
        }
        let binding: [String: Any] = ["event": "UPDATE", "schema": "public", "table": "user_profiles", "filter": "id=eq.\(user.id)"]
        // Lifetimes long enough that a loaded machine still joins and refreshes before they end.
        let firstExpiry = Date().timeIntervalSince1970 + 6
        let (joinRef, _) = try client.join("realtime:p", token: token(expiresIn: 6), bindings: [binding])
        #expect(try client.next("system")?.payload["status"] as? String == "ok")
        // A fresh token keeps the channel past the first one's expiry (waited for by the clock:
        // the condition is that the first token has run out).
        try client.push("realtime:p", "access_token", ["access_token": token(expiresIn: 3600)], joinRef: joinRef)
        while Date().timeIntervalSince1970 < firstExpiry + 1 { usleep(50_000) }
        try patch(server, user, state: "USER_INFO")
        #expect(try client.next("postgres_changes") != nil)
        // A bad one ends it: system error, then phx_close.
        try client.push("realtime:p", "access_token", ["access_token": "garbage"], joinRef: joinRef)
        let system = try #require(try client.next("system"))
        #expect(system.payload["status"] as? String == "error" && system.payload["extension"] as? String == "system")
        #expect(system.payload["message"] as? String == "The token provided is not a valid JWT")
        #expect(try client.next()?.event == "phx_close")

        // A join whose token runs out is closed at its exp.
        let (_, _) = try client.join("realtime:short", token: token(expiresIn: 4), bindings: [binding])
        #expect(try client.next("system")?.payload["status"] as? String == "ok")
        let expired = try #require(try client.next("system", timeout: 30))
        #expect((expired.payload["message"] as? String)?.hasPrefix("Token has expired") == true)
        #expect(try client.next()?.event == "phx_close")
    }

}
