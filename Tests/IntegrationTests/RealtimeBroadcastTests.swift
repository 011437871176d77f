import App
import Foundation
import Identity
import Logging
import Postgres
import Realtime
import TestSupport
import Testing

typealias PhoenixFrame = (joinRef: String?, ref: String?, topic: String, event: String, payload: [String: Any])

extension PhoenixClient {
    /// Joins `topic` with a Broadcast/Presence config; returns the join ref and the reply.
    func joinChannel(
        _ topic: String, token: String?, selfBroadcast: Bool = false, ack: Bool = false, presence: Bool = false, key: String = "",
        isPrivate: Bool = false
    ) throws -> (joinRef: String, reply: PhoenixFrame) {
        var payload: [String: Any] = [
            "config": [
                "broadcast": ["self": selfBroadcast, "ack": ack], "presence": ["enabled": presence, "key": key], "private": isPrivate,
                "postgres_changes": [[String: Any]]()
            ]
        ]
        if let token { payload["access_token"] = token }
        let joinRef = try push(topic, "phx_join", payload, joinRef: nil)
        let reply = try #require(try next("phx_reply"))
        #expect(reply.ref == joinRef)
        return (joinRef, reply)
    }

    @discardableResult
    func send(_ topic: String, joinRef: String, event: String, _ payload: [String: Any]) throws -> String {
        try push(topic, "broadcast", ["type": "broadcast", "event": event, "payload": payload], joinRef: joinRef)
    }

    /// The next broadcast's (event, payload).
    func nextBroadcast(timeout: Double = 30) throws -> (event: String, payload: [String: Any])? {
        guard let frame = try next("broadcast", timeout: timeout) else { return nil }
        return (frame.payload["event"] as? String ?? "", frame.payload["payload"] as? [String: Any] ?? [:])
    }
}

/// Broadcast, Presence and private channels over real sockets against the real application,
/// and between two servers on one database.
@Suite("RealtimeBroadcast", .serialized)
struct RealtimeBroadcastTests {
    static func status(_ frame: PhoenixFrame) -> String? { frame.payload["status"] as? String }
    static func reason(_ frame: PhoenixFrame) -> String? { (frame.payload["response"] as? [String: Any])?["reason"] as? String }

    static func replica(of server: TestServer) throws -> Application {
        var config = server.application.config
        config.port = 0
        config.migrateOnStart = false
        return try Application.start(config, logger: Logger(label: "replica"))
    }

    static func admin(_ server: TestServer, _ sql: String) throws {
        try Connection(conninfo: server.databaseURL).execute(unsafeSQL: sql)
    }

    @Test(arguments: ["2.0.0", "1.0.0"])
    func broadcastReachesEverySubscriberWithSelfAndAck(vsn: String) throws {
        let server = try TestServer()
        let sender = try PhoenixClient(server, vsn: vsn)
        let listener = try PhoenixClient(server, vsn: vsn)
        let elsewhere = try PhoenixClient(server, vsn: vsn)
        let (senderRef, senderReply) = try sender.joinChannel("realtime:room", token: nil, selfBroadcast: true, ack: true)
        #expect(Self.status(senderReply) == "ok")
        #expect((senderReply.payload["response"] as? [String: Any])?["postgres_changes"] as? [Any] != nil)
        let (listenerRef, _) = try listener.joinChannel("realtime:room", token: nil)
        _ = try elsewhere.joinChannel("realtime:other", token: nil)

        let ref = try sender.send("realtime:room", joinRef: senderRef, event: "cursor", ["x": 1])
        let ack = try #require(try sender.next("phx_reply"))
        #expect(ack.ref == ref && Self.status(ack) == "ok")
        let echo = try #require(try sender.nextBroadcast())
        #expect(echo.event == "cursor" && echo.payload["x"] as? Int == 1)
        let heard = try #require(try listener.next("broadcast"))
        #expect(heard.topic == "realtime:room" && heard.ref == nil)
        #expect(heard.payload["type"] as? String == "broadcast" && heard.payload["event"] as? String == "cursor")
        #expect((heard.payload["payload"] as? [String: Any])?["x"] as? Int == 1)

        // Without `self` the sender does not hear itself, without `ack` nothing answers; the
        // other topic hears neither message (its next broadcast is its own topic's marker).
        try listener.send("realtime:room", joinRef: listenerRef, event: "second", ["n": 2])
        let second = try #require(try sender.nextBroadcast())
        #expect(second.event == "second")
        let marker = try PhoenixClient(server, vsn: vsn)
        let (markerRef, _) = try marker.joinChannel("realtime:other", token: nil)
        try marker.send("realtime:other", joinRef: markerRef, event: "marker", [:])
        #expect(try elsewhere.nextBroadcast()?.event == "marker")
        try sender.send("realtime:room", joinRef: senderRef, event: "third", [:])
        _ = try sender.next("phx_reply")
        let next = try #require(try listener.next(timeout: 30))
        #expect(next.event == "broadcast" && next.payload["event"] as? String == "third", "the listener heard its own message: \(next)")
    }

    @Test func payloadAndRateLimits() throws {
        let server = try TestServer {
            $0.realtimeMaxPayloadBytes = 200
            $0.realtimeMaxEventsPerSecond = 5
        }
        let sender = try PhoenixClient(server)
        let listener = try PhoenixClient(server)
        let (senderRef, _) = try sender.joinChannel("realtime:limits", token: nil, ack: true)
        _ = try listener.joinChannel("realtime:limits", token: nil)
        let big = try sender.send("realtime:limits", joinRef: senderRef, event: "big", ["text": String(repeating: "x", count: 300)])
        let refused = try #require(try sender.next("phx_reply"))
        #expect(refused.ref == big && Self.status(refused) == "error")
        #expect(refused.payload["response"] as? String == "payload_size_exceeded")
        try sender.send("realtime:limits", joinRef: senderRef, event: "small", [:])
        #expect(try listener.nextBroadcast()?.event == "small", "the oversized message was delivered")

        // 2 sent so far in this second at most; 5 more pass the limit of 5 a second.
        for _ in 0..<6 { try sender.send("realtime:limits", joinRef: senderRef, event: "flood", [:]) }
        let system = try #require(try sender.next("system"))
        #expect(system.payload["status"] as? String == "error" && system.payload["message"] as? String == "Too many messages per second")
        let close = try #require(try sender.next("phx_close"))
        #expect(close.topic == "realtime:limits" && close.joinRef == senderRef)
    }

    @Test func presenceStateDiffsUpdatesAndLeaves() throws {
        let server = try TestServer()
        let alice = try PhoenixClient(server, vsn: "1.0.0")
        let (aliceRef, aliceReply) = try alice.joinChannel("realtime:lobby", token: nil, presence: true, key: "alice")
        #expect(Self.status(aliceReply) == "ok")
        let empty = try #require(try alice.next("presence_state"))
        #expect(empty.payload.isEmpty)

        let track = try alice.push("realtime:lobby", "presence", ["type": "presence", "event": "track", "payload": ["status": "online"]], joinRef: aliceRef)
        let tracked = try #require(try alice.next("phx_reply"))
        #expect(tracked.ref == track && Self.status(tracked) == "ok")
        let joined = try #require(try alice.next("presence_diff"))
        let joinMeta = try #require((((joined.payload["joins"] as? [String: Any])?["alice"] as? [String: Any])?["metas"] as? [[String: Any]])?.first)
        #expect(joinMeta["status"] as? String == "online" && joinMeta["phx_ref"] is String)
        #expect((joined.payload["leaves"] as? [String: Any])?.isEmpty == true)

        // A later join lists alice; bob's own key is generated when the config's is "".
        let bob = try PhoenixClient(server)
        let (bobRef, _) = try bob.joinChannel("realtime:lobby", token: nil, presence: true)
        let state = try #require(try bob.next("presence_state"))
        let metas = try #require(((state.payload["alice"] as? [String: Any])?["metas"] as? [[String: Any]]))
        #expect(metas.count == 1 && metas[0]["phx_ref"] as? String == joinMeta["phx_ref"] as? String && metas[0]["status"] as? String == "online")
        try bob.push("realtime:lobby", "presence", ["type": "presence", "event": "track", "payload": ["status": "here"]], joinRef: bobRef)
        let bobJoin = try #require(try alice.next("presence_diff"))
        let bobKey = try #require((bobJoin.payload["joins"] as? [String: Any])?.keys.first)
        #expect(bobKey != "alice" && UUID(uuidString: bobKey) != nil)

        // A second track updates: the old meta leaves, the new one joins, in one diff.
        try alice.push("realtime:lobby", "presence", ["type": "presence", "event": "track", "payload": ["status": "away"]], joinRef: aliceRef)
        var update = try #require(try bob.next("presence_diff"))
        while (update.payload["joins"] as? [String: Any])?["alice"] == nil { update = try #require(try bob.next("presence_diff")) }
        let left = ((update.payload["leaves"] as? [String: Any])?["alice"] as? [String: Any])?["metas"] as? [[String: Any]]
        let came = ((update.payload["joins"] as? [String: Any])?["alice"] as? [String: Any])?["metas"] as? [[String: Any]]
        #expect(left?.first?["status"] as? String == "online" && came?.first?["status"] as? String == "away")
        #expect(came?.first?["phx_ref_prev"] as? String == joinMeta["phx_ref"] as? String)

        // Untrack: alice leaves; bob's socket closing: bob leaves.
        try alice.push("realtime:lobby", "presence", ["type": "presence", "event": "untrack"], joinRef: aliceRef)
        var leave = try #require(try bob.next("presence_diff"))
        while (leave.payload["leaves"] as? [String: Any])?["alice"] == nil { leave = try #require(try bob.next("presence_diff")) }
        #expect((leave.payload["joins"] as? [String: Any])?.isEmpty == true)
        try bob.socket.sendRaw(TestWebSocket.frame(opcode: 0x8, [0x03, 0xE8]))
        var bobLeft = try #require(try alice.next("presence_diff"))
        while (bobLeft.payload["leaves"] as? [String: Any])?[bobKey] == nil { bobLeft = try #require(try alice.next("presence_diff")) }
        #expect(try server.application.realtime.presenceCount(topic: "lobby") == 0)
    }

    @Test func sendFromTheDatabaseInCommitOrder() throws {
        let server = try TestServer()
        let listener = try PhoenixClient(server)
        _ = try listener.joinChannel("realtime:db", token: nil)
        try Self.admin(
            server,
            """
            BEGIN;
            SELECT realtime.send('{"n": 1}', 'first', 'db', false);
            SELECT realtime.send('{"n": 2, "id": "mine"}', 'second', 'db', false);
            SELECT realtime.send('{"n": 0}', 'private-only', 'db');
            COMMIT;
            BEGIN; SELECT realtime.send('{"n": 9}', 'rolled-back', 'db', false); ROLLBACK;
            SELECT realtime.send('{"n": 3}', 'third', 'db', false);
            """)
        let first = try #require(try listener.next("broadcast"))
        #expect(first.payload["event"] as? String == "first")
        let firstPayload = try #require(first.payload["payload"] as? [String: Any])
        #expect(firstPayload["n"] as? Int == 1 && UUID(uuidString: firstPayload["id"] as? String ?? "") != nil)
        #expect((first.payload["meta"] as? [String: Any])?["id"] as? String == firstPayload["id"] as? String)
        let second = try #require(try listener.nextBroadcast())
        #expect(second.event == "second" && second.payload["id"] as? String == "mine")
        #expect(try listener.nextBroadcast()?.event == "third")
        let stored = try Connection(conninfo: server.databaseURL).query("SELECT count(*) FROM realtime.messages WHERE topic = 'db'").scalar
        #expect(stored == "4")
    }

    /// The private-channel matrix: no policy, read only, read and write, expired token, and a
    /// refreshed token that loses the right to read.
    @Test func privateChannelsFollowTheRowLevelSecurityOfRealtimeMessages() throws {
        let server = try TestServer()
        let reader = try server.signUp()
        let writer = try server.signUp()
        let stranger = try server.signUp()
        try Self.admin(
            server,
            """
            CREATE POLICY "members read" ON realtime.messages FOR SELECT TO authenticated
              USING (realtime.topic() = 'club' AND auth.uid() IN ('\(reader.id)', '\(writer.id)'));
            CREATE POLICY "writer writes" ON realtime.messages FOR INSERT TO authenticated
              WITH CHECK (realtime.topic() = 'club' AND auth.uid() = '\(writer.id)');
            """)

        // No policy for the caller (or the topic): refused with Realtime's reason.
        for (topic, token) in [("realtime:club", stranger.token), ("realtime:club", server.anonKey), ("realtime:elsewhere", writer.token)] {
            let client = try PhoenixClient(server)
            let (_, reply) = try client.joinChannel(topic, token: token, isPrivate: true)
            #expect(Self.status(reply) == "error")
            #expect(Self.reason(reply) == "Unauthorized: You do not have permissions to read from this Channel topic: \(topic.dropFirst(9))")
        }
        // Expired token: refused before any policy.
        let now = Int(Date().timeIntervalSince1970)
        let expired = JWT.signHS256(
            claims: ["role": "authenticated", "sub": writer.id, "exp": now - 30], secret: Array(TestServer.secret.utf8))
        let late = try PhoenixClient(server)
        let (_, lateReply) = try late.joinChannel("realtime:club", token: expired, isPrivate: true)
        #expect(Self.reason(lateReply)?.hasPrefix("InvalidJWTToken: Token has expired") == true)

        // Read only: joined, hears the writer; its own sends are dropped (no ack), its track refused.
        let readerClient = try PhoenixClient(server)
        let (readerRef, readerReply) = try readerClient.joinChannel("realtime:club", token: reader.token, ack: true, presence: true, isPrivate: true)
        #expect(Self.status(readerReply) == "ok")
        _ = try #require(try readerClient.next("presence_state"))
        let writerClient = try PhoenixClient(server)
        let (writerRef, writerReply) = try writerClient.joinChannel("realtime:club", token: writer.token, ack: true, isPrivate: true)
        #expect(Self.status(writerReply) == "ok")
        // A public channel of the same name is another channel.
        let publicClient = try PhoenixClient(server)
        let (publicRef, _) = try publicClient.joinChannel("realtime:club", token: stranger.token)

        try readerClient.send("realtime:club", joinRef: readerRef, event: "from-reader", [:])
        let track = try readerClient.push("realtime:club", "presence", ["type": "presence", "event": "track", "payload": ["a": 1]], joinRef: readerRef)
        let refused = try #require(try readerClient.next("phx_reply"))
        #expect(refused.ref == track && Self.status(refused) == "error", "the read-only send was acknowledged or the track accepted: \(refused)")
        let sent = try writerClient.send("realtime:club", joinRef: writerRef, event: "from-writer", ["ok": true])
        let ack = try #require(try writerClient.next("phx_reply"))
        #expect(ack.ref == sent && Self.status(ack) == "ok")
        #expect(try readerClient.nextBroadcast()?.event == "from-writer")
        try publicClient.send("realtime:club", joinRef: publicRef, event: "public", [:])
        try writerClient.send("realtime:club", joinRef: writerRef, event: "after-public", [:])
        #expect(try readerClient.nextBroadcast()?.event == "after-public", "a public message reached the private channel")

        // Broadcast from the database: private by default, to the private channel only.
        try Self.admin(server, "SELECT realtime.send('{\"db\": true}', 'from-db', 'club')")
        #expect(try readerClient.nextBroadcast()?.event == "from-db")
        #expect(try writerClient.nextBroadcast()?.event == "from-db")

        // A refreshed token of someone who may not read ends the channel.
        let swapped = try server.signUp()
        try readerClient.push("realtime:club", "access_token", ["access_token": swapped.token], joinRef: readerRef)
        let system = try #require(try readerClient.next("system"))
        #expect(system.payload["message"] as? String == "You no longer have permission to read from this Channel topic: club")
        #expect(try readerClient.next("phx_close")?.joinRef == readerRef)
        // The writer's refreshed token (same user, new token) keeps the channel.
        let fresh = JWT.signHS256(
            claims: ["role": "authenticated", "sub": writer.id, "exp": now + 600, "aud": "authenticated"], secret: Array(TestServer.secret.utf8))
        try writerClient.push("realtime:club", "access_token", ["access_token": fresh], joinRef: writerRef)
        try Self.admin(server, "SELECT realtime.send('{}', 'still-here', 'club')")
        #expect(try writerClient.nextBroadcast()?.event == "still-here")
    }

    @Test func broadcastOverHTTP() throws {
        let server = try TestServer()
        let writer = try server.signUp()
        try Self.admin(
            server,
            """
            CREATE POLICY "read" ON realtime.messages FOR SELECT TO authenticated USING (true);
            CREATE POLICY "write" ON realtime.messages FOR INSERT TO authenticated WITH CHECK (auth.uid() = '\(writer.id)');
            """)
        let publicListener = try PhoenixClient(server)
        _ = try publicListener.joinChannel("realtime:news", token: nil)
        let privateListener = try PhoenixClient(server)
        let (_, joined) = try privateListener.joinChannel("realtime:news", token: writer.token, isPrivate: true)
        #expect(Self.status(joined) == "ok")
        let http = server.client()
        let path = "/realtime/v1/api/broadcast"
        let body = #"{"messages":[{"topic":"news","event":"headline","payload":{"n":1}},{"topic":"news","event":"secret","payload":{"n":2},"private":true}]}"#

        // The anon key alone: the public message goes, the private one is skipped.
        let anon = try http.request("POST", path, headers: server.headers(), body: body)
        #expect(anon.status == 202 && anon.text.isEmpty)
        #expect(try publicListener.nextBroadcast()?.payload["n"] as? Int == 1)
        // The writer's bearer: both.
        let user = try http.request("POST", path, headers: server.headers(writer.token), body: body)
        #expect(user.status == 202)
        #expect(try publicListener.nextBroadcast()?.event == "headline")
        #expect(try privateListener.nextBroadcast()?.event == "secret", "the private message was not sent for the writer, or was sent for anon")

        // One message, realtime-py's http_send: the payload is the body.
        #expect(try http.request("POST", path + "/news/events/single", headers: server.headers(), body: #"{"n":3}"#).status == 202)
        #expect(try publicListener.nextBroadcast()?.payload["n"] as? Int == 3)
        let refused = try http.request("POST", path + "/news/events/single?private=true", headers: server.headers(), body: #"{"n":4}"#)
        #expect(refused.status == 403 && refused.text == #"{"message":"Unauthorized"}"#)
        let allowed = try http.request("POST", path + "/news/events/single?private=true", headers: server.headers(writer.token), body: #"{"n":5}"#)
        #expect(allowed.status == 202)
        #expect(try privateListener.nextBroadcast()?.payload["n"] as? Int == 5, "the refused private message was sent")
        #expect(try http.request("POST", path + "/news/events/single", headers: server.headers(), body: "").status == 422)

        let missing = try http.request("POST", path, headers: server.headers(), body: #"{"messages":[{"event":"e","payload":{}}]}"#)
        #expect(missing.status == 422)
        let errors = try #require(
            ((try JSONSerialization.jsonObject(with: Data(missing.text.utf8)) as? [String: Any])?["errors"] as? [String: Any])?["messages"] as? [[String: Any]])
        #expect(errors.first?["topic"] as? [String] == ["can't be blank"])
        #expect(try http.request("POST", path, headers: server.headers(), body: "{}").status == 422)
        let noKey = try http.request("POST", path, headers: [("Content-Type", "application/json")], body: body)
        #expect(noKey.status == 401 && noKey.text == #"{"message":"Unauthorized"}"#)
        let badBearer = try http.request("POST", path, headers: server.headers("not-a-token"), body: body)
        #expect(badBearer.status == 401)
    }

    /// Two servers on one database: broadcasts, database sends and presences reach the other
    /// server's sockets through PostgreSQL, once each; latency measured.
    @Test func everyServerHearsEveryOther() throws {
        let server = try TestServer()
        let replica = try Self.replica(of: server)
        defer { replica.shutdown() }
        let onFirst = try PhoenixClient(server)
        let neighbour = try PhoenixClient(server)
        let onSecond = try TestWebSocket(port: replica.port, target: "/realtime/v1/websocket?apikey=\(server.anonKey)&vsn=2.0.0")
        let remote = PhoenixClient(socket: onSecond, vsn: "2.0.0")
        let (firstRef, _) = try onFirst.joinChannel("realtime:shared", token: nil, presence: true, key: "first")
        _ = try onFirst.next("presence_state")
        _ = try neighbour.joinChannel("realtime:shared", token: nil)
        let (remoteRef, _) = try remote.joinChannel("realtime:shared", token: nil, presence: true, key: "second")
        _ = try remote.next("presence_state")

        var latencies: [Double] = []
        for index in 0..<20 {
            let started = Date()
            try onFirst.send("realtime:shared", joinRef: firstRef, event: "tick", ["i": index])
            let heard = try #require(try remote.nextBroadcast())
            latencies.append(Date().timeIntervalSince(started) * 1000)
            #expect(heard.payload["i"] as? Int == index)
            // The sender's own server delivers it once (not again from the notification).
            let local = try #require(try neighbour.nextBroadcast())
            #expect(local.payload["i"] as? Int == index, "duplicate or out of order on the sender's server: \(local)")
        }
        latencies.sort()
        print("cross-server broadcast latency ms: p50 \(latencies[latencies.count / 2]), max \(latencies.last!)")

        try remote.send("realtime:shared", joinRef: remoteRef, event: "back", [:])
        #expect(try neighbour.nextBroadcast()?.event == "back")
        try Self.admin(server, "SELECT realtime.send('{}', 'from-db', 'shared', false)")
        #expect(try remote.nextBroadcast()?.event == "from-db")
        #expect(try neighbour.nextBroadcast()?.event == "from-db")

        // A large message goes through realtime.messages, still once each.
        let large = String(repeating: "y", count: 10_000)
        try onFirst.send("realtime:shared", joinRef: firstRef, event: "large", ["text": large])
        #expect(try remote.nextBroadcast()?.payload["text"] as? String == large)
        #expect(try neighbour.nextBroadcast()?.event == "large")
        try onFirst.send("realtime:shared", joinRef: firstRef, event: "after-large", [:])
        #expect(try neighbour.nextBroadcast()?.event == "after-large")

        // Presence: a track on the first server reaches the second, and its state lists it.
        try onFirst.push("realtime:shared", "presence", ["type": "presence", "event": "track", "payload": ["on": "first"]], joinRef: firstRef)
        let diff = try #require(try remote.next("presence_diff"))
        #expect((diff.payload["joins"] as? [String: Any])?["first"] != nil)
        let late = try TestWebSocket(port: replica.port, target: "/realtime/v1/websocket?apikey=\(server.anonKey)&vsn=2.0.0")
        let lateClient = PhoenixClient(socket: late, vsn: "2.0.0")
        _ = try lateClient.joinChannel("realtime:shared", token: nil, presence: true)
        let state = try #require(try lateClient.next("presence_state"))
        #expect(state.payload["first"] != nil)
        // Closing the first server's socket: the second hears the leave.
        try onFirst.socket.sendRaw(TestWebSocket.frame(opcode: 0x8, [0x03, 0xE8]))
        var leave = try #require(try remote.next("presence_diff"))
        while (leave.payload["leaves"] as? [String: Any])?["first"] == nil { leave = try #require(try remote.next("presence_diff")) }
    }

    /// A server that stops without untracking: the others sweep its presences once its row
    /// in realtime.nodes expires, and announce the leaves.
    @Test func presencesOfAServerThatIsGoneAreSwept() throws {
        let server = try TestServer()
        let watcher = try PhoenixClient(server)
        _ = try watcher.joinChannel("realtime:sweep", token: nil, presence: true)
        _ = try watcher.next("presence_state")
        let admin = try Connection(conninfo: server.databaseURL)
        let ghost = UUID().uuidString.lowercased()
        try admin.execute(
            unsafeSQL: """
                INSERT INTO realtime.nodes (server_id, expires_at) VALUES ('\(ghost)', now() - interval '1 second');
                INSERT INTO realtime.presences (phx_ref, topic, private, key, meta, server_id)
                  VALUES ('ghost-ref', 'sweep', false, 'ghost', '{"phx_ref":"ghost-ref"}', '\(ghost)');
                """)
        let swept = try admin.query("SELECT realtime.presence_heartbeat(gen_random_uuid(), 60)").scalar
        #expect(swept == "1")
        let leave = try #require(try watcher.next("presence_diff"))
        #expect((leave.payload["leaves"] as? [String: Any])?["ghost"] != nil)
    }
}
