import Foundation
import HTTP
import Identity
import Postgres

/// A broadcast's payload: JSON text (a text push, the HTTP API, the database), or a user
/// broadcast of protocol 2.0.0's binary frames, whose payload bytes are JSON or opaque.
enum BroadcastPayload: Sendable, Equatable {
    case json(String)
    case user(bytes: [UInt8], isJSON: Bool)
}

/// Protocol 2.0.0's binary frames, as Supabase Realtime's V2 serializer and realtime-js /
/// supabase-swift lay them out: a kind byte, one byte per length, then the fields.
/// - user broadcast push (kind 3, client to server): join ref, ref, topic, user event, metadata
///   (JSON or nothing), then the payload; its encoding byte says JSON (1) or binary (0).
/// - user broadcast (kind 4, server to client): topic, user event, metadata, payload.
enum BinaryFrame {
    static let userBroadcastPush: UInt8 = 3
    static let userBroadcast: UInt8 = 4

    /// A decoded user broadcast push.
    struct Push: Equatable {
        var joinRef: String
        var ref: String
        var topic: String
        var event: String
        /// The metadata object's JSON text (`{}` when none was sent).
        var metadataJSON: String
        var payload: [UInt8]
        var isJSON: Bool
    }

    /// Why a binary frame is not a user broadcast push.
    enum Problem: Error, Equatable, CustomStringConvertible {
        case empty
        case unsupportedKind(UInt8)
        case truncated
        case notUTF8(String)
        case unknownEncoding(UInt8)
        case metadataNotAnObject
        case payloadNotJSON

        var description: String {
            switch self {
            case .empty: return "an empty binary message"
            case .unsupportedKind(let kind): return "binary message kind \(kind) is not supported (only user broadcast pushes, kind 3)"
            case .truncated: return "a binary message shorter than its header says"
            case .notUTF8(let field): return "the \(field) of a binary message is not UTF-8"
            case .unknownEncoding(let byte): return "unknown payload encoding \(byte) (0: binary, 1: JSON)"
            case .metadataNotAnObject: return "the metadata of a binary message is not a JSON object"
            case .payloadNotJSON: return "a JSON-encoded payload that is not JSON"
            }
        }
    }

    static func decodePush(_ bytes: [UInt8]) throws(Problem) -> Push {
        guard let kind = bytes.first else { throw .empty }
        guard kind == userBroadcastPush else { throw .unsupportedKind(kind) }
        let headerLength = 7
        guard bytes.count >= headerLength else { throw .truncated }
        let lengths = bytes[1..<6].map(Int.init)
        let encoding = bytes[6]
        guard encoding <= 1 else { throw .unknownEncoding(encoding) }
        guard bytes.count >= headerLength + lengths.reduce(0, +) else { throw .truncated }
        var offset = headerLength
        var fields: [String] = []
        for (index, name) in ["join ref", "ref", "topic", "event", "metadata"].enumerated() {
            let slice = bytes[offset..<offset + lengths[index]]
            guard let text = String(validating: slice, as: UTF8.self) else { throw .notUTF8(name) }
            fields.append(text)
            offset += lengths[index]
        }
        var metadataJSON = "{}"
        if !fields[4].isEmpty {
            guard (try? JSONSerialization.jsonObject(with: Data(fields[4].utf8))) is [String: Any] else { throw .metadataNotAnObject }
            metadataJSON = fields[4]
        }
        let payload = Array(bytes[offset...])
        let isJSON = encoding == 1
        if isJSON, (try? JSONSerialization.jsonObject(with: Data(payload), options: [.fragmentsAllowed])) == nil { throw .payloadNotJSON }
        return Push(joinRef: fields[0], ref: fields[1], topic: fields[2], event: fields[3], metadataJSON: metadataJSON, payload: payload, isJSON: isJSON)
    }

    /// A user broadcast (kind 4) for a 2.0.0 subscriber; nil when the topic or event is longer
    /// than a length byte holds (Realtime refuses those too).
    static func userBroadcast(topic: String, event: String, payload: [UInt8], isJSON: Bool) -> [UInt8]? {
        let topicBytes = Array(topic.utf8)
        let eventBytes = Array(event.utf8)
        guard topicBytes.count <= 255, eventBytes.count <= 255 else { return nil }
        return [userBroadcast, UInt8(topicBytes.count), UInt8(eventBytes.count), 0, isJSON ? 1 : 0] + topicBytes + eventBytes + payload
    }
}

extension RealtimeService {
    /// A user broadcast (a 2.0.0 binary push) to every subscriber of `key` on every server:
    /// this server's at once, the others through a notification carrying the payload's bytes.
    /// One too large for a notification goes as a JSON broadcast through realtime.messages when
    /// its payload is JSON; bytes that large reach this server's subscribers only.
    func broadcastUser(_ key: TopicKey, event: String, payload: [UInt8], isJSON: Bool, sender: RealtimeSocket?) {
        deliverUserBroadcast(key, event: event, payload: payload, isJSON: isJSON, sender: sender.map(ObjectIdentifier.init))
        let note =
            #"{"o":\#(jsonString(origin)),"k":"u","t":\#(jsonString(key.name)),"p":\#(key.isPrivate),"e":\#(jsonString(event)),"j":\#(isJSON),"d":"\#(Data(payload).base64EncodedString())"}"#
        do {
            if note.utf8.count <= Self.notificationLimit {
                _ = try pool.withConnection { try $0.query("SELECT pg_notify(\(Self.messagesChannel), \(note))") }
            } else if isJSON {
                try storeForOtherServers(key, event: event, payloadJSON: String(decoding: payload, as: UTF8.self))
            } else {
                logger.warning(
                    "realtime: a binary broadcast larger than a notification reaches this server's subscribers only",
                    metadata: ["topic": "\(key.name)", "bytes": "\(payload.count)"])
            }
        } catch {
            logger.error("realtime: a broadcast did not reach the other servers", metadata: ["topic": "\(key.name)", "error": "\(logText(error))"])
        }
    }

    /// This server's subscribers of `key` get the user broadcast (`sender` only with `self`).
    func deliverUserBroadcast(_ key: TopicKey, event: String, payload: [UInt8], isJSON: Bool, sender: ObjectIdentifier?) {
        for member in topics.members(key) where member.readsBroadcast {
            if let sender, ObjectIdentifier(member.socket) == sender, !member.selfBroadcast { continue }
            member.socket.deliver(topic: "realtime:" + key.name, joinRef: member.joinRef, userEvent: event, payload: payload, isJSON: isJSON)
        }
    }
}
