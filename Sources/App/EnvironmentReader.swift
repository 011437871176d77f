import Auth
import Foundation

/// Settings read from the environment: an empty value is unset, and a value that cannot be used is
/// a `ConfigurationError` naming the variable and what it must be (never silently the default).
struct EnvironmentReader {
    let values: [String: String]

    init(_ values: [String: String]) { self.values = values }

    func value(_ name: String) -> String? { values[name].flatMap { $0.isEmpty ? nil : $0 } }

    func integer(_ name: String, minimum: Int = 0) throws -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text.trimmingCharacters(in: .whitespaces)), number >= minimum else {
            throw ConfigurationError("\(name) must be a whole number ≥ \(minimum), not \"\(text)\"")
        }
        return number
    }

    func boolean(_ name: String) throws -> Bool? {
        guard let text = value(name)?.lowercased() else { return nil }
        switch text {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ConfigurationError("\(name) must be true or false, not \"\(text)\"")
        }
    }

    /// Seconds, or a Go duration (`60s`, `5m`, `1h`) as GoTrue reads them.
    func seconds(_ name: String) throws -> Double? {
        guard let text = value(name) else { return nil }
        guard let seconds = parseDuration(text) else {
            throw ConfigurationError("\(name) must be seconds or a duration such as 60s, 5m, 1h; not \"\(text)\"")
        }
        return seconds
    }

    func choice<T: RawRepresentable & CaseIterable>(_ name: String, _: T.Type) throws -> T? where T.RawValue == String {
        guard let text = value(name) else { return nil }
        guard let chosen = T(rawValue: text) else {
            throw ConfigurationError("\(name) must be one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(text)\"")
        }
        return chosen
    }

    /// A comma-separated list, blanks trimmed, empty items left out.
    func list(_ name: String) -> [String] {
        (value(name) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
