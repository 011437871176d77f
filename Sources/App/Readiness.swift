import HTTP
import Migrations
import Postgres
import Realtime

/// What `GET /ready` reports: whether the database answers and its migrations are current, and
/// which Realtime change feed runs (`wal` or `triggers`) and whether it is connected (a feed
/// reconnecting does not make the server unready: REST and Auth serve on).
struct Readiness: Sendable {
    var ready: Bool
    /// The answer for the service role: with the database's error text when it does not answer.
    var json: String
    /// The answer for anyone else: without that text (host names, ports, socket paths).
    var publicJSON: String

    static func check(pool: Pool, migrator: Migrator, feed: ChangeFeed? = nil, readReplicas: ReadReplicas? = nil) -> Readiness {
        var realtime = ""
        if let feed {
            realtime = #","realtime":{"feed":\#(feed.kind.map { jsonString($0.rawValue) } ?? "null"),"connected":\#(feed.isListening)}"#
        }
        // The standbys never make the server unready: reads fall back to the primary.
        if let readReplicas { realtime += "," + readReplicas.readinessJSON() }
        do {
            let states = try pool.withConnection { try migrator.status($0) }
            let pending = states.filter { $0.kind == .pending }.map { "\($0.version)_\($0.name)" }
            let changed = states.filter { $0.kind == .changed }.map { "\($0.version)_\($0.name)" }
            let ready = pending.isEmpty && changed.isEmpty
            let list = { (names: [String]) in "[" + names.map(jsonString).joined(separator: ",") + "]" }
            let json =
                #"{"status":\#(ready ? "\"ready\"" : "\"not ready\""),"database":"ok","migrations":{"applied":\#(states.filter { $0.kind == .applied }.count),"pending":\#(list(pending)),"changed":\#(list(changed))}\#(realtime)}"#
            return Readiness(ready: ready, json: json, publicJSON: json)
        } catch {
            return Readiness(
                ready: false, json: #"{"status":"not ready","database":\#(jsonString("unavailable: " + logText(error)))\#(realtime)}"#,
                publicJSON: #"{"status":"not ready","database":"unavailable"\#(realtime)}"#)
        }
    }
}
