import Foundation
import Identity
import Postgres

/// Realtime Authorization: what row-level security on `realtime.messages` lets a caller do on
/// a topic, asked the way Supabase asks it (probe rows in a transaction that is rolled back).
struct TopicPolicies: Sendable {
    var readsBroadcast = false
    var readsPresence = false
    /// nil until first needed (a send, a track).
    var writesBroadcast: Bool?
    var writesPresence: Bool?
}

extension RealtimeService {
    func claimsSetup(_ caller: Caller, topic: String) -> SQL {
        let sub = caller.userID?.uuidString.lowercased() ?? ""
        return """
            SELECT set_config('role', \(caller.role), true), set_config('realtime.topic', \(topic), true), \
            set_config('request.jwt.claims', \(caller.claimsJSON), true), set_config('request.jwt.claim.sub', \(sub), true), \
            set_config('request.jwt.claim.role', \(caller.role), true)
            """
    }

    /// Whether `caller` may read broadcasts and presences of the private topic `topic`: two probe
    /// rows inserted (as the tables' owner), then selected as the caller, then rolled back.
    func readPolicies(topic: String, caller: Caller) throws -> TopicPolicies {
        let broadcastID = UUID().uuidString.lowercased()
        let presenceID = UUID().uuidString.lowercased()
        let rows = try pool.withConnection { connection -> QueryResult in
            try connection.execute("BEGIN")
            defer { if !connection.isIdle { try? connection.execute("ROLLBACK") } }
            let results = try connection.pipeline([
                """
                INSERT INTO realtime.messages (id, topic, extension) VALUES \
                (\(broadcastID)::uuid, \(topic), 'broadcast'), (\(presenceID)::uuid, \(topic), 'presence')
                """,
                claimsSetup(caller, topic: topic),
                "SELECT id::text FROM realtime.messages WHERE id IN (\(broadcastID)::uuid, \(presenceID)::uuid)"
            ])
            return results[2]
        }
        let visible = Set((0..<rows.count).compactMap { rows[$0, 0] })
        return TopicPolicies(readsBroadcast: visible.contains(broadcastID), readsPresence: visible.contains(presenceID))
    }

    /// Whether `caller` may send (`broadcast`) or track (`presence`) on the private topic: an
    /// insert as the caller, rolled back. Row-level security refusing it (42501) is a no.
    func mayWrite(topic: String, extension name: String, caller: Caller) throws -> Bool {
        try pool.withConnection { connection in
            try connection.execute("BEGIN")
            defer { if !connection.isIdle { try? connection.execute("ROLLBACK") } }
            do {
                _ = try connection.pipeline([
                    claimsSetup(caller, topic: topic),
                    "INSERT INTO realtime.messages (topic, extension) VALUES (\(topic), \(name))"
                ])
                return true
            } catch let error as PostgresError where error.sqlState == "42501" {
                return false
            }
        }
    }
}
