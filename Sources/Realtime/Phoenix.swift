import Foundation
import HTTP
import Identity

/// One Phoenix channels message as a client sends it. Its payload is read as `PhoenixPayload`;
/// outgoing payloads are JSON text.
struct PhoenixMessage {
    var joinRef: String?
    var ref: String?
    var topic: String
    var event: String
    var payload: PhoenixPayload
}

/// The payload members the server reads, whatever the event: `access_token` (`phx_join`,
/// `access_token`), `user_token` (`phx_join`, older clients), the join's `config`
/// (`postgres_changes`, `broadcast`, `presence`, `private`), and a push's `type`, `event` and
/// `payload` (`broadcast`, `presence`). Heartbeat and leave payloads carry nothing it reads. A
/// member of another JSON type reads as absent (as Realtime ignores what it does not understand).
struct PhoenixPayload: Decodable {
    var accessToken: String?
    var userToken: String?
    /// Each entry as the client sent it: it is echoed back verbatim, and one that is not an
    /// object with a known event fails the join with its JSON in the reason.
    var postgresChanges: [JSONValue] = []
    /// `config.broadcast.self`, `config.broadcast.ack`.
    var broadcastSelf = false
    var broadcastAck = false
    /// `config.presence.enabled` and `config.presence.key` ("" or absent: a generated key).
    var presenceEnabled = false
    var presenceKey: String?
    /// `config.private`.
    var isPrivate = false
    /// `config.broadcast.replay`, when given.
    var replay: ReplayRequest?
    /// A broadcast or presence push: `type`, `event` and the inner `payload` (any JSON).
    var type: String?
    var event: String?
    var payload: JSONValue?

    enum CodingKeys: String, CodingKey { case accessToken = "access_token", userToken = "user_token", config, type, event, payload }

    struct Flags: Decodable {
        var flags: [String: Bool] = [:]
        var key: String?
        var replay: ReplayRequest?

        struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            for name in ["self", "ack", "enabled"] {
                if let value = container.lenient(Bool.self, forKey: AnyKey(stringValue: name)) { flags[name] = value }
            }
            key = container.lenient(String.self, forKey: AnyKey(stringValue: "key"))
            if container.contains(AnyKey(stringValue: "replay")) {
                replay = ReplayRequest(container.lenient(JSONValue.self, forKey: AnyKey(stringValue: "replay"))?.value)
            }
        }
    }

    struct Config: Decodable {
        var postgresChanges: [JSONValue]
        var broadcast: Flags?
        var presence: Flags?
        var isPrivate: Bool

        enum CodingKeys: String, CodingKey { case postgresChanges = "postgres_changes", broadcast, presence, isPrivate = "private" }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            postgresChanges = container.lenient([JSONValue].self, forKey: .postgresChanges) ?? []
            broadcast = container.lenient(Flags.self, forKey: .broadcast)
            presence = container.lenient(Flags.self, forKey: .presence)
            isPrivate = container.lenient(Bool.self, forKey: .isPrivate) ?? false
        }
    }

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = container.lenient(String.self, forKey: .accessToken)
        userToken = container.lenient(String.self, forKey: .userToken)
        if let config = container.lenient(Config.self, forKey: .config) {
            postgresChanges = config.postgresChanges
            broadcastSelf = config.broadcast?.flags["self"] ?? false
            broadcastAck = config.broadcast?.flags["ack"] ?? false
            presenceEnabled = config.presence?.flags["enabled"] ?? false
            presenceKey = config.presence?.key
            isPrivate = config.isPrivate
            replay = config.broadcast?.replay
        }
        type = container.lenient(String.self, forKey: .type)
        event = container.lenient(String.self, forKey: .event)
        payload = container.lenient(JSONValue.self, forKey: .payload)
    }
}

/// `config.broadcast.replay` `{since, limit}`: the private channel's stored broadcasts from
/// `since` (milliseconds since 1970, required), at most `limit` of them (25 when absent, 1 to
/// 25), the newest. Nil `since`: parameters Realtime refuses.
struct ReplayRequest: Equatable {
    var since: Int64?
    var limit: Int

    init(_ value: Any?) {
        func integer(_ value: Any?) -> Int64? {
            guard let number = value as? NSNumber, String(cString: number.objCType) != "c", number.doubleValue == number.doubleValue.rounded(),
                abs(number.doubleValue) < 9e15
            else { return nil }
            return number.int64Value
        }
        let object = value as? [String: Any]
        since = object.flatMap { integer($0["since"]) }
        let limit = object?["limit"] == nil ? 25 : integer(object?["limit"])
        if limit == nil { since = nil }
        self.limit = Int(min(max(limit ?? 25, 1), 25))
    }
}

/// A `ref` or `join_ref`: a string, or a number as `NSNumber` writes it (`7`, `1.5`; `true` is
/// `1`); anything else is none.
struct PhoenixRef: Decodable {
    var text: String?

    init(from decoder: any Decoder) throws {
        switch try JSONValue(from: decoder).value {
        case let text as String: self.text = text
        case let number as NSNumber: self.text = number.stringValue
        default: self.text = nil
        }
    }
}

/// `[join_ref, ref, topic, event, payload, …]`: at least five elements, the payload an object.
private struct Version2Frame: Decodable {
    var message: PhoenixMessage

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        guard (container.count ?? 0) >= 5 else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "fewer than 5 elements"))
        }
        let joinRef = try container.decode(PhoenixRef.self).text
        let ref = try container.decode(PhoenixRef.self).text
        let topic = try container.decode(String.self)
        let event = try container.decode(String.self)
        message = PhoenixMessage(joinRef: joinRef, ref: ref, topic: topic, event: event, payload: try container.decode(PhoenixPayload.self))
    }
}

/// `{"topic","event","payload","ref","join_ref"}`: topic and event strings; a payload that is
/// missing or not an object reads as empty.
private struct Version1Frame: Decodable {
    var message: PhoenixMessage

    enum CodingKeys: String, CodingKey { case topic, event, payload, ref, joinRef = "join_ref" }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        message = PhoenixMessage(
            joinRef: try container.decodeIfPresent(PhoenixRef.self, forKey: .joinRef)?.text,
            ref: try container.decodeIfPresent(PhoenixRef.self, forKey: .ref)?.text,
            topic: try container.decode(String.self, forKey: .topic), event: try container.decode(String.self, forKey: .event),
            payload: container.lenient(PhoenixPayload.self, forKey: .payload) ?? PhoenixPayload())
    }
}

/// The two wire formats a socket picks with `vsn` (Phoenix: missing → 1.0.0).
enum PhoenixSerializer: String, Sendable {
    /// `{"topic","event","payload","ref","join_ref"}` objects (supabase-py); we send `join_ref` too.
    case v1 = "1.0.0"
    /// `[join_ref, ref, topic, event, payload]` arrays (supabase-swift, supabase-js).
    case v2 = "2.0.0"

    /// Nil for text that is not a message of this format.
    func decode(_ text: String) -> PhoenixMessage? {
        switch self {
        case .v2: return JSONTree.decode(Version2Frame.self, json: Array(text.utf8))?.message
        case .v1: return JSONTree.decode(Version1Frame.self, json: Array(text.utf8))?.message
        }
    }

    /// The frame text for an outgoing message whose payload is JSON text.
    func encode(joinRef: String?, ref: String?, topic: String, event: String, payloadJSON: String) -> String {
        switch self {
        case .v2:
            return "[\(Self.json(joinRef)),\(Self.json(ref)),\(jsonString(topic)),\(jsonString(event)),\(payloadJSON)]"
        case .v1:
            return
                #"{"topic":\#(jsonString(topic)),"event":\#(jsonString(event)),"payload":\#(payloadJSON),"ref":\#(Self.json(ref)),"join_ref":\#(Self.json(joinRef))}"#
        }
    }

    private static func json(_ ref: String?) -> String { ref.map(jsonString) ?? "null" }
}
