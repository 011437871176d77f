import Foundation
import Postgres
import TestSupport
import Testing

/// A private channel's stored broadcasts replayed at join, the project setting that allows
/// private channels only, and the housekeeping of realtime.messages and the LISTEN connection.
@Suite("Realtime: replay, private-only, housekeeping", .serialized)
struct RealtimeReplayTests {
    static func join(_ client: PhoenixClient, _ topic: String, token: String, isPrivate: Bool = true, replay: Any? = nil) throws -> PhoenixFrame {
        var broadcast: [String: Any] = ["self": false, "ack": false]
        if let replay { broadcast["replay"] = replay }
        let config: [String: Any] = ["broadcast": broadcast, "presence": ["enabled": false, "key": ""], "private": isPrivate, "postgres_changes": []]
        let joinRef = try client.push(topic, "phx_join", ["config": config, "access_token": token])
        let reply = try #require(try client.next("phx_reply"))
        #expect(reply.ref == joinRef)
        return reply
    }

    static func nowMilliseconds() -> Int { Int(Date().timeIntervalSince1970 * 1000) }

    @Test func aPrivateJoinReplaysTheStoredBroadcastsItsPoliciesAllow() throws {
        let server = try TestServer()
        let reader = try server.signUp()
        let stranger = try server.signUp()
        let admin = try Connection(conninfo: server.databaseURL)
        try admin.execute(
            unsafeSQL: """
                CREATE POLICY "reader reads the diary" ON realtime.messages FOR SELECT TO authenticated
                  USING (realtime.topic() = 'diary' AND auth.uid() = '\(reader.id)' AND coalesce(payload->>'secret', '') <> 'yes');
                INSERT INTO realtime.messages (topic, extension, event, payload, private, inserted_at)
                  VALUES ('diary', 'broadcast', 'entry', '{"n":0}', true, (now() AT TIME ZONE 'UTC') - interval '2 hours');
                """)
        // One transaction each: each its own time.
        for (payload, isPrivate) in [(#"{"n":1}"#, true), (#"{"n":2}"#, true), (#"{"n":3,"secret":"yes"}"#, true), (#"{"n":4}"#, false)] {
            _ = try admin.query("SELECT realtime.send(\(payload)::jsonb, 'entry', 'diary', \(isPrivate))")
        }
        let since = Self.nowMilliseconds() - 3_600_000
        let client = try PhoenixClient(server)
        #expect(RealtimeBroadcastTests.status(try Self.join(client, "realtime:diary", token: reader.token, replay: ["since": since])) == "ok")
        var replayed: [[String: Any]] = []
        for _ in 0..<2 { replayed.append(try #require(try client.next("broadcast")).payload) }
        #expect(replayed.map { ($0["payload"] as? [String: Any])?["n"] as? Int } == [1, 2])
        #expect(replayed.allSatisfy { $0["event"] as? String == "entry" && ($0["meta"] as? [String: Any])?["replayed"] as? Bool == true })
        #expect(replayed.allSatisfy { (($0["meta"] as? [String: Any])?["id"] as? String).flatMap(UUID.init) != nil })
        #expect(try client.next("broadcast", timeout: 1) == nil, "nothing else: not the older one, the secret one or the public one")

        // `limit`: the newest.
        let newest = try PhoenixClient(server)
        _ = try Self.join(newest, "realtime:diary", token: reader.token, replay: ["since": since, "limit": 1])
        #expect((try newest.next("broadcast")?.payload["payload"] as? [String: Any])?["n"] as? Int == 2)

        // Realtime's refusals.
        let cases: [(String, String, Bool, Any, String)] = [
            ("realtime:diary", reader.token, false, ["since": since], "UnableToReplayMessages: Replay is not allowed for public channels"),
            ("realtime:diary", reader.token, true, ["limit": 3], "UnableToReplayMessages: Replay params are not valid"),
            ("realtime:diary", reader.token, true, ["since": "yesterday"], "UnableToReplayMessages: Replay params are not valid"),
            ("realtime:diary", stranger.token, true, ["since": since], "Unauthorized: You do not have permissions to read from this Channel topic: diary")
        ]
        for (topic, token, isPrivate, replay, reason) in cases {
            let refused = try Self.join(try PhoenixClient(server), topic, token: token, isPrivate: isPrivate, replay: replay)
            #expect(RealtimeBroadcastTests.status(refused) == "error" && RealtimeBroadcastTests.reason(refused) == reason, "\(refused.payload)")
        }
    }

    @Test func privateOnlyRefusesPublicChannels() throws {
        let server = try TestServer { $0.realtimePrivateOnly = true }
        let user = try server.signUp()
        try Connection(conninfo: server.databaseURL).execute(
            unsafeSQL: #"CREATE POLICY "all read" ON realtime.messages FOR SELECT TO authenticated USING (true)"#)
        let refused = try Self.join(try PhoenixClient(server), "realtime:open", token: user.token, isPrivate: false)
        #expect(RealtimeBroadcastTests.reason(refused) == "PrivateOnly: This project only allows private channels")
        #expect(RealtimeBroadcastTests.status(try Self.join(try PhoenixClient(server), "realtime:open", token: user.token)) == "ok")
    }

    @Test func storedBroadcastsOlderThanTheRetentionAreDeleted() throws {
        let url = try TestPostgres.makeDatabase()
        let admin = try Connection(conninfo: url)
        try admin.execute(
            """
            INSERT INTO realtime.messages (topic, extension, event, payload, private, inserted_at) VALUES
              ('old', 'broadcast', 'e', '{}', true, (now() AT TIME ZONE 'UTC') - interval '73 hours'),
              ('recent', 'broadcast', 'e', '{}', true, (now() AT TIME ZONE 'UTC') - interval '71 hours')
            """)
        let server = try TestServer(databaseURL: url)
        #expect(try eventually { try admin.query("SELECT string_agg(topic, ',') FROM realtime.messages").scalar == "recent" })
        _ = server
    }

    @Test func aLostBroadcastFeedClosesTheSocketsSoClientsRejoin() throws {
        let server = try TestServer()
        let client = try PhoenixClient(server)
        _ = try client.joinChannel("realtime:watch", token: nil)
        let admin = try Connection(conninfo: server.databaseURL)
        #expect(
            try eventually {
                try admin.query(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND application_name = \(NotificationListener.applicationName)"
                ).scalar != "0"
            })
        var code: UInt16?
        while code == nil, let frame = try client.socket.readFrame(timeout: 30) { code = frame.closeCode }
        #expect(code == 1001)
    }
}
