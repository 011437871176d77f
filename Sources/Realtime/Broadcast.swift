import Foundation
import HTTP
import Identity
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

extension RealtimeService {
    static let messagesChannel = "realtime_messages"
    /// pg_notify refuses payloads from 8000 bytes on.
    static let notificationLimit = 7900
    /// Seconds a server's presences outlive it when it stops without untracking them, and how
    /// often it renews its own row.
    static let nodeSeconds = 60
    static let nodeRenewal = 20.0

    var origin: String { serverID.uuidString.lowercased() }

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
                try storeForOtherServers(key, event: event, payloadJSON: payloadJSON)
            }
        } catch {
            logger.error("realtime: a broadcast did not reach the other servers", metadata: ["topic": "\(key.name)", "error": "\(logText(error))"])
        }
    }

    /// A broadcast too large for a notification: a row of realtime.messages, whose trigger
    /// announces it to the other servers (this one skips its own by `realtime.origin`).
    func storeForOtherServers(_ key: TopicKey, event: String, payloadJSON: String) throws {
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

    /// This server's subscribers of `key` get the frame (`sender` only with `self`).
    func deliverBroadcast(_ key: TopicKey, frameJSON: String, sender: ObjectIdentifier?) {
        for member in topics.members(key) where member.readsBroadcast {
            if let sender, ObjectIdentifier(member.socket) == sender, !member.selfBroadcast { continue }
            member.socket.deliver(topic: "realtime:" + key.name, joinRef: member.joinRef, event: "broadcast", payloadJSON: frameJSON)
        }
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
        case "u":
            guard let event = note["e"] as? String, let isJSON = note["j"] as? Bool, let encoded = note["d"] as? String,
                let payload = Data(base64Encoded: encoded)
            else { return }
            deliverUserBroadcast(key, event: event, payload: Array(payload), isJSON: isJSON, sender: nil)
        default: break
        }
    }
}
