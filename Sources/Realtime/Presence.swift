import Foundation
import HTTP
import Identity
import Postgres

/// One tracked presence: its key, `phx_ref` and meta (the track's payload plus `phx_ref`).
struct PresenceEntry: Sendable {
    let key: String
    let ref: String
    /// The meta as a JSON object's text.
    let metaJSON: String
}

extension RealtimeService {
    /// Tracks (or, with `previous`, updates) a presence of `key` on every server; returns it.
    func track(_ key: TopicKey, presenceKey: String, meta: [String: Any], previous: PresenceEntry?) throws -> PresenceEntry {
        var meta = meta
        let ref = Self.phxRef()
        meta["phx_ref"] = ref
        if let previous { meta["phx_ref_prev"] = previous.ref }
        let entry = PresenceEntry(key: presenceKey, ref: ref, metaJSON: JWT.serialize(meta))
        var statements: [SQL] = []
        if let previous { statements.append("DELETE FROM realtime.presences WHERE phx_ref = \(previous.ref)") }
        statements.append(
            """
            INSERT INTO realtime.presences (phx_ref, topic, private, key, meta, server_id) \
            VALUES (\(ref), \(key.name), \(key.isPrivate), \(presenceKey), \(entry.metaJSON)::jsonb, \(origin)::uuid)
            """)
        _ = try pool.withConnection { try $0.pipeline(statements) }
        publishDiff(key, joins: [entry], leaves: previous.map { [$0] } ?? [])
        return entry
    }

    /// Untracks presences of `key` on every server.
    func untrack(_ key: TopicKey, _ entries: [PresenceEntry]) {
        guard !entries.isEmpty else { return }
        do {
            _ = try pool.withConnection { try $0.query("DELETE FROM realtime.presences WHERE phx_ref = ANY(\(array: entries.map(\.ref))::text[])") }
        } catch {
            logger.error("realtime: could not remove presences (the next sweep does)", metadata: ["error": "\(logText(error))"])
        }
        publishDiff(key, joins: [], leaves: entries)
    }

    /// `presence_state`: every presence of `key`, on every running server.
    func presenceState(_ key: TopicKey) throws -> String {
        let result = try pool.withConnection { connection in
            try connection.query(
                """
                SELECT COALESCE(jsonb_object_agg(k.key, jsonb_build_object('metas', k.metas)), '{}')::text FROM (\
                SELECT p.key, jsonb_agg(p.meta ORDER BY p.tracked_at, p.phx_ref) AS metas FROM realtime.presences p \
                JOIN realtime.nodes n ON n.server_id = p.server_id AND n.expires_at > now() \
                WHERE p.topic = \(key.name) AND p.private = \(key.isPrivate) GROUP BY p.key) k
                """)
        }
        return result.scalar ?? "{}"
    }

    private static func diffJSON(joins: [PresenceEntry], leaves: [PresenceEntry]) -> String {
        func side(_ entries: [PresenceEntry]) -> String {
            var byKey: [String: [String]] = [:]
            var order: [String] = []
            for entry in entries {
                if byKey[entry.key] == nil { order.append(entry.key) }
                byKey[entry.key, default: []].append(entry.metaJSON)
            }
            return "{" + order.map { #"\#(jsonString($0)):{"metas":[\#(byKey[$0]!.joined(separator: ","))]}"# }.joined(separator: ",") + "}"
        }
        return #"{"joins":\#(side(joins)),"leaves":\#(side(leaves))}"#
    }

    /// A presence change: this server's subscribers at once, the others through notifications
    /// (leaves and joins apart when together they do not fit one).
    private func publishDiff(_ key: TopicKey, joins: [PresenceEntry], leaves: [PresenceEntry]) {
        deliverPresenceDiff(key, diffJSON: Self.diffJSON(joins: joins, leaves: leaves))
        func note(_ joins: [PresenceEntry], _ leaves: [PresenceEntry]) -> String {
            #"{"o":\#(jsonString(origin)),"k":"p","t":\#(jsonString(key.name)),"p":\#(key.isPrivate),"d":\#(Self.diffJSON(joins: joins, leaves: leaves))}"#
        }
        var notes = [note(joins, leaves)]
        if notes[0].utf8.count > Self.notificationLimit {
            notes = leaves.map { note([], [$0]) } + joins.map { note([$0], []) }
        }
        do {
            _ = try pool.withConnection { connection in
                try connection.pipeline(notes.map { "SELECT pg_notify(\(Self.messagesChannel), \($0))" })
            }
        } catch {
            logger.error("realtime: a presence change did not reach the other servers", metadata: ["topic": "\(key.name)", "error": "\(logText(error))"])
        }
    }

    func deliverPresenceDiff(_ key: TopicKey, diffJSON: String) {
        for member in topics.members(key) where member.readsPresence {
            member.socket.deliver(topic: "realtime:" + key.name, joinRef: member.joinRef, event: "presence_diff", payloadJSON: diffJSON)
        }
    }

    /// A `phx_ref`: 12 random bytes, base64url (Phoenix's refs are opaque strings too).
    static func phxRef() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Base64URL.encode(bytes)
    }

    /// Renews this server's row (its presences stay listed) and sweeps the presences of servers
    /// that are gone, announcing their leaves.
    func presenceHeartbeat() throws {
        _ = try pool.withConnection { try $0.query("SELECT realtime.presence_heartbeat(\(origin)::uuid, \(Self.nodeSeconds)::integer)") }
    }

    /// Presences of the public topic `topic` listed in the database (every server's).
    public func presenceCount(topic: String) throws -> Int {
        let text = try pool.withConnection { try $0.query("SELECT count(*) FROM realtime.presences WHERE topic = \(topic) AND NOT private").scalar }
        return text.flatMap(Int.init) ?? 0
    }

    /// At shutdown: this server's presences leave everywhere.
    public func releasePresences() {
        for socket in allSockets() { socket.untrackAll() }
        do {
            _ = try pool.withConnection { try $0.query("DELETE FROM realtime.nodes WHERE server_id = \(origin)::uuid") }
        } catch {
            logger.warning("realtime: could not release this server's presence row", metadata: ["error": "\(logText(error))"])
        }
    }
}
