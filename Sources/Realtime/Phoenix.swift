import Foundation
import HTTP

/// One Phoenix channels message. `payload` is kept as parsed JSON on the way in and as JSON
/// text on the way out.
struct PhoenixMessage {
    var joinRef: String?
    var ref: String?
    var topic: String
    var event: String
    var payload: [String: Any]
}

/// The two wire formats a socket picks with `vsn` (Phoenix: missing → 1.0.0).
enum PhoenixSerializer: String, Sendable {
    /// `{"topic","event","payload","ref","join_ref"}` objects (supabase-py); we send `join_ref` too.
    case v1 = "1.0.0"
    /// `[join_ref, ref, topic, event, payload]` arrays (supabase-swift, supabase-js).
    case v2 = "2.0.0"

    /// Nil for text that is not a message of this format.
    func decode(_ text: String) -> PhoenixMessage? {
        guard let json = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else { return nil }
        switch self {
        case .v2:
            guard let array = json as? [Any], array.count >= 5,
                  let topic = array[2] as? String, let event = array[3] as? String,
                  let payload = array[4] as? [String: Any] else { return nil }
            return PhoenixMessage(joinRef: Self.ref(array[0]), ref: Self.ref(array[1]), topic: topic, event: event, payload: payload)
        case .v1:
            guard let object = json as? [String: Any],
                  let topic = object["topic"] as? String, let event = object["event"] as? String else { return nil }
            let payload = object["payload"] as? [String: Any] ?? [:]
            return PhoenixMessage(joinRef: Self.ref(object["join_ref"]), ref: Self.ref(object["ref"]), topic: topic, event: event, payload: payload)
        }
    }

    /// The frame text for an outgoing message whose payload is JSON text.
    func encode(joinRef: String?, ref: String?, topic: String, event: String, payloadJSON: String) -> String {
        switch self {
        case .v2:
            return "[\(Self.json(joinRef)),\(Self.json(ref)),\(jsonString(topic)),\(jsonString(event)),\(payloadJSON)]"
        case .v1:
            return #"{"topic":\#(jsonString(topic)),"event":\#(jsonString(event)),"payload":\#(payloadJSON),"ref":\#(Self.json(ref)),"join_ref":\#(Self.json(joinRef))}"#
        }
    }

    private static func ref(_ value: Any?) -> String? {
        switch value {
        case let text as String: return text
        case let number as NSNumber: return number.stringValue
        default: return nil
        }
    }

    private static func json(_ ref: String?) -> String { ref.map(jsonString) ?? "null" }
}
