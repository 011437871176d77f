import Foundation
import Identity
import Postgres
import Realtime
import TestSupport
import Testing

/// Realtime's postgres_changes subscriptions against the change feed, on each feed: filter
/// counts, leases, confirmation only while the feed listens, and losing the feed.
@Suite("Realtime: subscriptions and the change feed", .serialized)
struct RealtimeFeedTests {
    func patch(_ server: TestServer, _ user: (id: String, token: String, refresh: String), state: String) throws {
        try RealtimeTests().patch(server, user, state: state)
    }

    /// PostgreSQL's target lists stop at 1,664 entries: more filters than that for one
    /// subscriber are evaluated in several statements (found by bench/realtime-idle.py).
    @Test(arguments: feeds)
    func oneSubscriberWithMoreFiltersThanATargetListHolds(feed: RealtimeFeedChoice) throws {
        let server = try TestServer { $0.realtimeFeed = feed }
        let user = try server.signUp()
        let client = try PhoenixClient(server)
        let bindings: [[String: Any]] =
            (0..<1_700).map { _ in
                ["event": "UPDATE", "schema": "public", "table": "user_profiles", "filter": "id=neq.\(UUID().uuidString)"]
            } + [["event": "UPDATE", "schema": "public", "table": "user_profiles", "filter": "id=neq.\(user.id)"]]
        let (_, reply) = try client.join("realtime:many", token: user.token, bindings: bindings)
        let echoed = try #require((reply["response"] as? [String: Any])?["postgres_changes"] as? [[String: Any]])
        #expect(try client.next("system", timeout: 30)?.payload["status"] as? String == "ok")
        try patch(server, user, state: "USER_INFO")
        let event = try #require(try client.next("postgres_changes"))
        // Every binding but the last (which excludes this very row) matches.
        #expect(Set(event.payload["ids"] as? [Int] ?? []) == Set(echoed.dropLast().compactMap { $0["id"] as? Int }))
    }

    /// The triggers announce changes only of tables (or rows) some server holds a lease on:
    /// taken before the join reply, dropped when the server stops. The WAL feed takes no lease,
    /// and its tables have no trigger at all.
    @Test(arguments: feeds)
    func subscriptionsTakeLeasesAndOnlyLeasedChangesAreAnnounced(feed: RealtimeFeedChoice) throws {
        let server = try TestServer { $0.realtimeFeed = feed }
        let leases = feed == .triggers
        let a = try server.signUp()
        let b = try server.signUp()
        let admin = try Connection(conninfo: server.databaseURL)
        let live: SQL = """
            SELECT coalesce(string_agg(relid::regclass::text || ':' || row_key, ',' ORDER BY relid::regclass::text, row_key), '') \
            FROM realtime.listeners WHERE expires_at > now()
            """
        let triggers: SQL = "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'realtime_changes%'"
        // The trigger feed installs its triggers as it starts; the WAL feed has none.
        #expect(try eventually { try admin.query(triggers).scalar == (leases ? "4" : "0") })
        let listener = try Connection(conninfo: server.databaseURL)
        try listener.listen("realtime_changes")
        func announced(after write: () throws -> Void) throws -> [String] {
            _ = try listener.waitForNotifications(timeout: 0.05)
            try write()
            return try listener.waitForNotifications(timeout: 0.5).map(\.payload)
        }
        #expect(try announced { try patch(server, a, state: "USER_INFO") }.isEmpty)  // nobody listens

        // A's own row (the key filter, upper case as supabase-swift sends it): a row lease.
        let client = try PhoenixClient(server)
        _ = try client.join(
            "realtime:own", token: a.token,
            bindings: [["event": "UPDATE", "schema": "public", "table": "user_profiles", "filter": "id=eq.\(a.id.uppercased())"]])
        #expect(try client.next("system")?.payload["status"] as? String == "ok")
        #expect(try admin.query(live).scalar == (leases ? "user_profiles:\(a.id)" : ""))
        #expect(try announced { try patch(server, b, state: "USER_INFO") }.isEmpty)  // B's row: nobody listens
        #expect(try announced { try patch(server, a, state: "CHILD_INFO") }.count == (leases ? 1 : 0))
        let event = try #require(try client.next("postgres_changes"))
        #expect(((event.payload["data"] as? [String: Any])?["record"] as? [String: Any])?["onboarding_state"] as? String == "CHILD_INFO")

        // A whole table: a table lease.
        _ = try client.join("realtime:kids", token: a.token, bindings: [["event": "*", "schema": "public", "table": "children"]])
        #expect(try client.next("system")?.payload["status"] as? String == "ok")
        #expect(try admin.query(live).scalar == (leases ? "children:,user_profiles:\(a.id)" : ""))
        server.application.shutdown()
        #expect(try admin.query(live).scalar == "")
    }

    @Test(arguments: feeds)
    func noSubscriptionIsConfirmedWhileTheFeedIsNotListening(feed: RealtimeFeedChoice) throws {
        // A feed that cannot connect: a join must be refused, never answered "subscribed" with
        // changes that nobody will announce (as happened when a join beat the feed at start).
        let server = try TestServer {
            $0.listenDatabaseURL = "postgresql://127.0.0.1:1/nothing?connect_timeout=1"
            $0.realtimeFeedWait = 0.5
            $0.realtimeFeed = feed
        }
        let user = try server.signUp()
        let client = try PhoenixClient(server)
        let (_, reply) = try client.join("realtime:p", token: user.token, bindings: [["event": "*", "schema": "public", "table": "user_profiles"]])
        #expect(reply["status"] as? String == "error")
        #expect(((reply["response"] as? [String: Any])?["reason"] as? String)?.hasPrefix("RealtimeNotReady") == true)
        // A channel without postgres_changes (broadcast, presence) does not need the feed.
        let (_, plain) = try client.join("realtime:chat", token: user.token, bindings: [])
        #expect(plain["status"] as? String == "ok")
    }

    @Test(arguments: feeds)
    func losingTheFeedClosesSocketsWith1001AndItComesBack(feed: RealtimeFeedChoice) throws {
        let server = try TestServer { $0.realtimeFeed = feed }
        let user = try server.signUp()
        let client = try PhoenixClient(server)
        _ = try client.join("realtime:p", token: user.token, bindings: [["event": "*", "schema": "public", "table": "user_profiles"]])
        #expect(try client.next("system")?.payload["status"] as? String == "ok")
        let admin = try Connection(conninfo: server.databaseURL)
        if feed == .wal {
            // The walsender streaming this server's slot.
            let ended = try admin.query(
                "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE starts_with(slot_name::text, \(server.application.changeFeed.slotPrefix)) AND active_pid IS NOT NULL"
            )
            #expect(ended.count == 1)
        } else {
            _ = try admin.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = \(NotificationListener.applicationName) AND datname = current_database()"
            )
        }
        var code: UInt16?
        while let frame = try client.socket.readFrame(timeout: 30) {
            if frame.opcode == 0x8 {
                code = frame.closeCode
                break
            }
        }
        #expect(code == 1001)

        // The feed reconnects; a new socket hears changes again (its join waits for the feed).
        let again = try PhoenixClient(server)
        _ = try again.join("realtime:p", token: user.token, bindings: [["event": "*", "schema": "public", "table": "user_profiles"]])
        #expect(try again.next("system")?.payload["status"] as? String == "ok")
        try patch(server, user, state: "USER_INFO")
        #expect(try again.next("postgres_changes") != nil)
    }
}
