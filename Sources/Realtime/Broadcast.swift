import EventLoop
import Foundation
import HTTP
import Identity
import Logging
import Postgres
import Synchronization

/// A channel's topic as Realtime keys its messages: a public and a private channel of one
/// name are apart (a private message reaches private channels only, and the other way round).
struct TopicKey: Hashable, Sendable {
    /// The topic without `realtime:`.
    let name: String
    let isPrivate: Bool
}

/// A joined channel as broadcast and presence see it.
struct Member: Sendable {
    let socket: RealtimeSocket
    let joinRef: String?
    let selfBroadcast: Bool
    let readsBroadcast: Bool
    let readsPresence: Bool
}

/// One tracked presence: its key, `phx_ref` and meta (the track's payload plus `phx_ref`).
struct PresenceEntry: Sendable {
    let key: String
    let ref: String
    /// The meta as a JSON object's text.
    let metaJSON: String
}

/// The joined channels by topic, for broadcast and presence fan-out.
final class Topics: Sendable {
    private let state = Mutex<[TopicKey: [ObjectIdentifier: Member]]>([:])

    func add(_ key: TopicKey, _ member: Member) {
        state.withLock { $0[key, default: [:]][ObjectIdentifier(member.socket)] = member }
    }

    func remove(_ key: TopicKey, socket: RealtimeSocket) {
        state.withLock { state in
            state[key]?[ObjectIdentifier(socket)] = nil
            if state[key]?.isEmpty == true { state[key] = nil }
        }
    }

    func members(_ key: TopicKey) -> [Member] { state.withLock { Array(($0[key] ?? [:]).values) } }

    var count: Int { state.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}

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
    static let messagesChannel = "realtime_messages"
    /// pg_notify refuses payloads from 8000 bytes on.
    static let notificationLimit = 7900
    /// Seconds a server's presences outlive it when it stops without untracking them, and how
    /// often it renews its own row.
    static let nodeSeconds = 60
    static let nodeRenewal = 20.0

    var origin: String { serverID.uuidString.lowercased() }

    // MARK: authorization

    private func claimsSetup(_ caller: Caller, topic: String) -> SQL {
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

    // MARK: broadcast

    /// Sends a broadcast to every subscriber of `key` on every server: this server's own at
    /// once (the sender only when it asked for its own messages), the others through a
    /// notification (or, when it is too large for one, a row in realtime.messages whose trigger
    /// announces it).
    func broadcast(_ key: TopicKey, event: String, payloadJSON: String, sender: RealtimeSocket?) {
        let frame = #"{"type":"broadcast","event":\#(jsonString(event)),"payload":\#(payloadJSON)}"#
        deliverBroadcast(key, frameJSON: frame, sender: sender.map(ObjectIdentifier.init))
        let note = #"{"o":\#(jsonString(origin)),"k":"b","t":\#(jsonString(key.name)),"p":\#(key.isPrivate),"m":\#(frame)}"#
        do {
            if note.utf8.count <= Self.notificationLimit {
                _ = try pool.withConnection { try $0.query("SELECT pg_notify(\(Self.messagesChannel), \(note))") }
            } else {
                _ = try pool.withConnection { connection in
                    try connection.pipeline([
                        "SELECT set_config('realtime.origin', \(origin), true)",
                        """
                        INSERT INTO realtime.messages (topic, extension, event, payload, private) \
                        VALUES (\(key.name), 'broadcast', \(event), \(payloadJSON)::jsonb, \(key.isPrivate))
                        """
                    ])
                }
            }
        } catch {
            logger.error("realtime: a broadcast did not reach the other servers", metadata: ["topic": "\(key.name)", "error": "\(logText(error))"])
        }
    }

    /// This server's subscribers of `key` get the frame (`sender` only with `self`).
    func deliverBroadcast(_ key: TopicKey, frameJSON: String, sender: ObjectIdentifier?) {
        for member in topics.members(key) where member.readsBroadcast {
            if let sender, ObjectIdentifier(member.socket) == sender, !member.selfBroadcast { continue }
            member.socket.deliver(topic: "realtime:" + key.name, joinRef: member.joinRef, event: "broadcast", payloadJSON: frameJSON)
        }
    }

    // MARK: presence

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

    // MARK: notifications from every server

    /// One notification of `realtime_messages`: a broadcast or a presence change, delivered to
    /// this server's subscribers unless this server sent it (it delivered it already).
    func receive(_ text: String) {
        guard let note = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            logger.warning("realtime: unreadable broadcast notification")
            return
        }
        if let from = note["o"] as? String, from == origin { return }
        if let id = note["id"] as? String {
            do {
                let rows = try pool.withConnection { connection in
                    try connection.query(
                        """
                        SELECT topic, COALESCE(private, false)::text, jsonb_build_object('type', 'broadcast', 'event', event, \
                        'payload', payload, 'meta', jsonb_build_object('id', id))::text FROM realtime.messages WHERE id = \(id)::uuid
                        """)
                }
                guard rows.count == 1, let topic = rows[0, 0], let frame = rows[0, 2] else { return }
                deliverBroadcast(TopicKey(name: topic, isPrivate: rows[0, 1] == "true"), frameJSON: frame, sender: nil)
            } catch {
                logger.error("realtime: could not read a broadcast message", metadata: ["id": "\(id)", "error": "\(logText(error))"])
            }
            return
        }
        guard let topic = note["t"] as? String, let isPrivate = note["p"] as? Bool else { return }
        let key = TopicKey(name: topic, isPrivate: isPrivate)
        switch note["k"] as? String {
        case "b": if let frame = note["m"] { deliverBroadcast(key, frameJSON: JWT.serialize(frame), sender: nil) }
        case "p": if let diff = note["d"] { deliverPresenceDiff(key, diffJSON: JWT.serialize(diff)) }
        default: break
        }
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

/// The LISTEN on `realtime_messages`: broadcasts and presence changes of every server (and of
/// realtime.send in the database), on a direct connection of its own; and the presence
/// heartbeat. Notifications come in commit order, after commit.
public final class MessageFeed: Sendable {
    let service: RealtimeService
    let conninfo: String
    private let running = Atomic<Bool>(false)
    private let ended = DispatchSemaphore(value: 0)
    private let listening = Atomic<Bool>(false)

    public init(service: RealtimeService, conninfo: String) {
        self.service = service
        self.conninfo = conninfo
    }

    /// True while the LISTEN connection is up.
    public var isListening: Bool { listening.load(ordering: .acquiring) }

    /// Connects and listens before returning when the database answers (else retries on its
    /// thread), so a broadcast sent right after start reaches this server.
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let ready = DispatchSemaphore(value: 0)
        startThread(name: "message-feed") { [self] in
            run(ready)
            ended.signal()
        }
        _ = ready.wait(timeout: .now() + 10)
    }

    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        _ = ended.wait(timeout: .now() + 5)
    }

    private func connect() throws -> Connection {
        let connection = try Connection(conninfo: conninfo, allowsPreparedStatements: false)
        try connection.listen(RealtimeService.messagesChannel)
        try service.presenceHeartbeat()
        listening.store(true, ordering: .releasing)
        return connection
    }

    /// `ready` is signalled after the first attempt to connect, whatever its outcome.
    private func run(_ ready: DispatchSemaphore) {
        var connection: Connection? = nil
        do {
            connection = try connect()
        } catch {
            service.logger.error("realtime: the broadcast feed cannot reach the database yet; retrying", metadata: ["error": "\(logText(error))"])
        }
        ready.signal()
        var backoff = 0.1
        var renewedAt = Date()
        while running.load(ordering: .acquiring) {
            do {
                if connection == nil {
                    connection = try connect()
                    renewedAt = Date()
                    backoff = 0.1
                    service.logger.info("realtime broadcast feed listening")
                }
                for notification in try connection!.waitForNotifications(timeout: 0.25)
                where notification.channel == RealtimeService.messagesChannel {
                    service.receive(notification.payload)
                }
                if Date().timeIntervalSince(renewedAt) > RealtimeService.nodeRenewal {
                    renewedAt = Date()
                    do {
                        try service.presenceHeartbeat()
                    } catch {
                        service.logger.error("realtime: could not renew this server's presence row", metadata: ["error": "\(logText(error))"])
                    }
                }
            } catch {
                // What is broadcast until it listens again does not reach this server's sockets.
                connection = nil
                listening.store(false, ordering: .releasing)
                service.logger.error("realtime broadcast feed lost; reconnecting", metadata: ["error": "\(logText(error))"])
                Thread.sleep(forTimeInterval: backoff)
                backoff = min(backoff * 2, 5)
            }
        }
        connection = nil
        listening.store(false, ordering: .releasing)
    }
}
