import Foundation
import HTTP
import Identity

/// The answers of the flag routes: values for one distinct id (`/flags`, `/decide`) and the
/// definitions for SDKs that evaluate locally.
enum FlagsAnswer {
    /// Every active flag's value and payload, in `/flags`'s `flags` records and in `/decide`'s
    /// `featureFlags` / `featureFlagPayloads` maps (each SDK reads the one it knows).
    static func values(_ flags: [FeatureFlag], distinctID: String, properties: [String: JSON]) -> String {
        var records: [String: JSON] = [:]
        var values: [String: JSON] = [:]
        var payloads: [String: JSON] = [:]
        for flag in flags where flag.active {
            let (value, condition) = FlagEvaluation.evaluate(flag, distinctID: distinctID, properties: properties)
            let payload = value.payloadKey.flatMap { flag.filters["payloads"]?[$0] }.map(payloadText)
            var variant = JSON.null
            if case .variant(let key) = value { variant = .string(key) }
            let reason: JSON = .object([
                "code": .string(condition == nil ? "no_condition_match" : "condition_match"),
                "condition_index": condition.map { .number(Double($0)) } ?? .null,
                "description": .string(condition.map { "Matched condition set \($0 + 1)" } ?? "No matching condition set")
            ])
            records[flag.key] = .object([
                "key": .string(flag.key), "enabled": .bool(value != .disabled), "variant": variant, "value": value.json,
                "reason": reason,
                "metadata": .object([
                    "id": .number(Double(flag.id)), "version": .number(Double(flag.version)), "description": .string(flag.name),
                    "payload": payload.map(JSON.string) ?? .null
                ])
            ])
            values[flag.key] = value.json
            if let payload { payloads[flag.key] = .string(payload) }
        }
        return JSON.object([
            "flags": .object(records), "featureFlags": .object(values), "featureFlagPayloads": .object(payloads),
            "errorsWhileComputingFlags": .bool(false), "requestId": .string(UUID().uuidString.lowercased())
        ]).text
    }

    /// The definitions in PostHog's local-evaluation format (no cohorts or groups here).
    static func definitions(_ flags: [FeatureFlag]) -> String {
        let records: [JSON] = flags.map { flag in
            .object([
                "id": .number(Double(flag.id)), "team_id": .number(1), "key": .string(flag.key), "name": .string(flag.name),
                "active": .bool(flag.active), "deleted": .bool(false), "ensure_experience_continuity": .bool(false),
                "version": .number(Double(flag.version)), "filters": flag.filters
            ])
        }
        return JSON.object(["flags": .array(records), "group_type_mapping": .object([:]), "cohorts": .object([:])]).text
    }

    /// A payload as PostHog keeps it: JSON text.
    static func payloadText(_ payload: JSON) -> String {
        payload.string ?? payload.text
    }

    /// Filters as given by the admin API, with each payload kept as JSON text (PostHog's form).
    static func storedFilters(_ filters: JSON) -> JSON {
        guard case .object(var members) = filters, let payloads = members["payloads"]?.object else { return filters }
        members["payloads"] = .object(payloads.mapValues { .string(payloadText($0)) })
        return .object(members)
    }
}
