import Foundation

/// A JSON value with booleans and numbers kept apart (PostHog's flag conditions compare `true`
/// and `1` differently; a hook's claims are checked by type).
public enum JSON: Sendable, Equatable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSON].self))
        }
    }

    /// Parses UTF-8 JSON text; nil when it is not JSON.
    public static func parse(_ bytes: [UInt8]) -> JSON? {
        try? JSONDecoder().decode(JSON.self, from: Data(bytes))
    }

    public subscript(_ key: String) -> JSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    public var object: [String: JSON]? {
        if case .object(let members) = self { return members }
        return nil
    }

    public var array: [JSON]? {
        if case .array(let items) = self { return items }
        return nil
    }

    public var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The compact JSON text (object members sorted by name, so equal values read equal).
    public var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let value): out += JSON.numberText(value)
        case .string(let text): out += jsonString(text)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                out += jsonString(key)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    /// Integers without a fraction (as the SDKs wrote them), other numbers in Swift's shortest form.
    public static func numberText(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 9.007_199_254_740_992e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// The text Python's `str()` gives for a value the SDKs compare as a string (a distinct id
    /// sent as a number, a property value): integers without a fraction.
    public var plainText: String {
        switch self {
        case .string(let text): return text
        case .number(let value): return JSON.numberText(value)
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        case .array, .object: return text
        }
    }
}
