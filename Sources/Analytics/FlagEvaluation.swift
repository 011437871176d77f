import Foundation
import HTTP
import Identity

/// A feature flag as stored (`product_analytics.feature_flags`), its filters in PostHog's format.
public struct FeatureFlag: Sendable, Equatable {
    public var id: Int
    public var key: String
    public var name: String
    public var active: Bool
    public var filters: JSON
    public var version: Int

    public init(id: Int, key: String, name: String = "", active: Bool = true, filters: JSON, version: Int = 1) {
        self.id = id
        self.key = key
        self.name = name
        self.active = active
        self.filters = filters
        self.version = version
    }
}

/// A flag's value for one distinct id: off, on, or on with a variant.
public enum FlagValue: Sendable, Equatable {
    case disabled
    case enabled
    case variant(String)

    /// The key of the flag's payload for this value (`"true"` or the variant).
    var payloadKey: String? {
        switch self {
        case .disabled: return nil
        case .enabled: return "true"
        case .variant(let key): return key
        }
    }

    var json: JSON {
        switch self {
        case .disabled: return .bool(false)
        case .enabled: return .bool(true)
        case .variant(let key): return .string(key)
        }
    }
}

/// PostHog's flag evaluation, as its SDKs evaluate locally, so that both always agree.
public enum FlagEvaluation {
    /// 0xFFFFFFFFFFFFFFF: the largest 15-hex-digit number.
    static let longScale = Double(0xFFF_FFFF_FFFF_FFFF as UInt64)

    /// SHA-1 of `"<key>.<distinct id><salt>"`, its first 15 hex digits as a number over
    /// 0xFFFFFFFFFFFFFFF: uniform on [0, 1].
    public static func hash(_ key: String, _ distinctID: String, salt: String = "") -> Double {
        let digest = Crypto.sha1(Array("\(key).\(distinctID)\(salt)".utf8))
        var value: UInt64 = 0
        for byte in digest.prefix(8) { value = value << 8 | UInt64(byte) }
        // The first 15 hex digits are the first 60 bits.
        return Double(value >> 4) / longScale
    }

    /// The value for `distinctID` whose properties are `properties` (the distinct id itself is
    /// the property `distinct_id`, as the SDKs add it). The first condition group that matches
    /// decides; a group's missing property or unknown operator is no match.
    public static func evaluate(_ flag: FeatureFlag, distinctID: String, properties: [String: JSON]) -> (value: FlagValue, conditionIndex: Int?) {
        guard flag.active else { return (.disabled, nil) }
        let variants = flag.filters["multivariate"]?["variants"]?.array ?? []
        for (index, group) in (flag.filters["groups"]?.array ?? []).enumerated() {
            guard conditionMatches(group, flag: flag, distinctID: distinctID, properties: properties) else { continue }
            if let override = group["variant"]?.string, variants.contains(where: { $0["key"]?.string == override }) {
                return (.variant(override), index)
            }
            if let variant = matchingVariant(flag, distinctID: distinctID, variants: variants) { return (.variant(variant), index) }
            return (.enabled, index)
        }
        return (.disabled, nil)
    }

    static func conditionMatches(_ group: JSON, flag: FeatureFlag, distinctID: String, properties: [String: JSON]) -> Bool {
        let rollout = group["rollout_percentage"]?.number
        let filters = group["properties"]?.array ?? []
        if !filters.isEmpty {
            guard filters.allSatisfy({ propertyMatches($0, properties) }) else { return false }
            if rollout == nil { return true }
        }
        if let rollout, hash(flag.key, distinctID) > rollout / 100 { return false }
        return true
    }

    /// The variant whose share of [0, 1) holds the `variant`-salted hash (shares summed in
    /// order, as the SDKs do).
    static func matchingVariant(_ flag: FeatureFlag, distinctID: String, variants: [JSON]) -> String? {
        guard !variants.isEmpty else { return nil }
        let value = hash(flag.key, distinctID, salt: "variant")
        var lower = 0.0
        for variant in variants {
            let upper = lower + (variant["rollout_percentage"]?.number ?? 0) / 100
            if value >= lower && value < upper { return variant["key"]?.string }
            lower = upper
        }
        return nil
    }

    /// One property filter (`{key, value, operator}`) against the given properties.
    static func propertyMatches(_ filter: JSON, _ properties: [String: JSON]) -> Bool {
        guard let key = filter["key"]?.string, let actual = properties[key] else { return false }
        let expected = filter["value"] ?? .null
        switch filter["operator"]?.string ?? "exact" {
        case "is_set": return true
        case "is_not_set": return false
        case "exact": return exactMatches(expected, actual)
        case "is_not": return !exactMatches(expected, actual)
        case "icontains": return actual.plainText.lowercased().contains(expected.plainText.lowercased())
        case "not_icontains": return !actual.plainText.lowercased().contains(expected.plainText.lowercased())
        case "regex": return regexMatches(expected.plainText, actual.plainText) ?? false
        case "not_regex": return regexMatches(expected.plainText, actual.plainText).map { !$0 } ?? false
        case "gt", "gte", "lt", "lte": return numericMatches(filter["operator"]?.string ?? "", expected, actual)
        default: return false
        }
    }

    /// `exact`: case-insensitive text equality with any of the filter's values; a filter of
    /// only true/false values compares truthiness.
    static func exactMatches(_ expected: JSON, _ actual: JSON) -> Bool {
        let candidates = expected.array ?? [expected]
        if candidates.isEmpty { return truthy(actual) }
        if candidates.allSatisfy(isTruthOrFalsity) {
            return candidates.allSatisfy(truthy) == truthy(actual)
        }
        let text = actual.plainText.lowercased()
        return candidates.contains { $0.plainText.lowercased() == text }
    }

    static func isTruthOrFalsity(_ value: JSON) -> Bool {
        switch value {
        case .bool: return true
        case .string(let text): return ["true", "false"].contains(text.lowercased())
        case .array(let items): return items.allSatisfy(isTruthOrFalsity)
        case .null, .number, .object: return false
        }
    }

    static func truthy(_ value: JSON) -> Bool {
        switch value {
        case .bool(let flag): return flag
        case .string(let text): return text.lowercased() == "true"
        case .array(let items): return items.allSatisfy(truthy)
        case .null, .number, .object: return false
        }
    }

    static func numericMatches(_ operation: String, _ expected: JSON, _ actual: JSON) -> Bool {
        guard let bound = number(expected), let value = number(actual) else { return false }
        switch operation {
        case "gt": return value > bound
        case "gte": return value >= bound
        case "lt": return value < bound
        default: return value <= bound
        }
    }

    static func number(_ value: JSON) -> Double? {
        switch value {
        case .number(let number): return number.isFinite ? number : nil
        case .string(let text): return Double(text.trimmingCharacters(in: .whitespaces)).flatMap { $0.isFinite ? $0 : nil }
        case .null, .bool, .array, .object: return nil
        }
    }

    static func regexMatches(_ pattern: String, _ text: String) -> Bool? {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return nil }
        return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }
}
