import Foundation
import Identity
import TestSupport
import Testing

/// Helpers shared by the REST integration suites: supabase-py's headers, and JSON bodies
/// compared whole, with generated ids and timestamps checked for format and then masked.
enum Wire {
    static let timestampPattern = #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?\+00:00$"#
    static let uuidPattern = #"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"#

    static func matches(_ text: String, _ pattern: String) -> Bool {
        text.range(of: pattern, options: .regularExpression) != nil
    }

    /// Headers as supabase-py sends REST calls (`Accept: */*`, profiles on every request).
    static func py(_ server: TestServer, _ token: String?, _ extra: [(String, String)] = []) -> [(String, String)] {
        let base = [
            ("apiKey", server.anonKey), ("Authorization", "Bearer \(token ?? server.anonKey)"), ("Accept", "*/*"),
            ("Accept-Profile", "public"), ("Content-Profile", "public"), ("Content-Type", "application/json")
        ]
        // An extra header replaces the default of the same name.
        return base.filter { header in !extra.contains { $0.0.lowercased() == header.0.lowercased() } } + extra
    }

    /// Masks generated values after checking their format: `id` → `<uuid>` (unless listed in
    /// `keep`), timestamps → `<ts>`.
    static func masked(_ value: Any, keepIDs: Set<String> = []) -> Any {
        if let object = value as? [String: Any] {
            var out: [String: Any] = [:]
            for (key, item) in object {
                if ["created_at", "updated_at", "onboarding_completed_at"].contains(key), let text = item as? String {
                    #expect(matches(text, timestampPattern), "timestamp format: \(text)")
                    out[key] = "<ts>"
                } else if key == "id", let text = item as? String, !keepIDs.contains(text) {
                    #expect(matches(text, uuidPattern), "uuid format: \(text)")
                    out[key] = "<uuid>"
                } else {
                    out[key] = masked(item, keepIDs: keepIDs)
                }
            }
            return out
        }
        if let array = value as? [Any] { return array.map { masked($0, keepIDs: keepIDs) } }
        return value
    }

    static func canonical(_ value: Any) -> String {
        let data = try! JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
        return String(decoding: data, as: UTF8.self)
    }

    /// The whole body equals `expected` (JSON), after masking.
    static func expectBody(
        _ response: TestResponse, _ expected: String, keepIDs: Set<String> = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let json = response.json else {
            Issue.record("not JSON: \(response.status) \(response.text)", sourceLocation: sourceLocation)
            return
        }
        let wanted = try! JSONSerialization.jsonObject(with: Data(expected.utf8), options: [.fragmentsAllowed])
        #expect(canonical(masked(json, keepIDs: keepIDs)) == canonical(wanted), "\(response.text)", sourceLocation: sourceLocation)
    }

    static func token(_ server: TestServer, claims: [String: Any]) -> String {
        JWT.signHS256(claims: claims, secret: Array(TestServer.secret.utf8))
    }
}
