/// The `Prefer` header (PostgREST's Preferences.hs): the first value given for each preference
/// wins, unknown ones are ignored unless `handling=strict` (then 400 PGRST122).
public struct Preferences: Sendable, Equatable {
    public enum Return: String, Sendable { case minimal, headersOnly = "headers-only", representation }
    public enum Count: String, Sendable { case exact, planned, estimated }
    public enum Resolution: String, Sendable { case mergeDuplicates = "merge-duplicates", ignoreDuplicates = "ignore-duplicates" }
    public enum Missing: String, Sendable { case `default`, null }
    public enum Handling: String, Sendable { case strict, lenient }
    public enum Transaction: String, Sendable { case commit, rollback }
    /// `params=single-object`: the whole body is the function's one json/jsonb argument.
    public enum Parameters: String, Sendable { case singleObject = "single-object" }

    public var returning: Return?
    public var count: Count?
    public var resolution: Resolution?
    public var missing: Missing?
    public var handling: Handling?
    public var transaction: Transaction?
    public var maxAffected: Int?
    public var parameters: Parameters?
    /// `timezone=America/Los_Angeles`: timestamps are rendered in that zone (PostgreSQL checks it).
    public var timezone: String?
    public var invalid: [String] = []

    public init() {}

    public static func parse(_ headerValues: [String]) -> Preferences {
        var preferences = Preferences()
        for value in headerValues {
            for item in value.utf8.split(separator: UInt8(ascii: ",")) {
                var bytes = item[...]
                while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
                while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
                if bytes.isEmpty { continue }
                let pref = String(Substring(bytes))
                let key: Substring
                let operand: String
                if let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
                    key = Substring(bytes[..<equals])
                    operand = String(Substring(bytes[bytes.index(after: equals)...]))
                } else {
                    key = Substring(bytes)
                    operand = ""
                }
                var known = true
                switch key {
                case "return":
                    if let v = Return(rawValue: operand) { if preferences.returning == nil { preferences.returning = v } } else { known = false }
                case "count":
                    if let v = Count(rawValue: operand) { if preferences.count == nil { preferences.count = v } } else { known = false }
                case "resolution":
                    if let v = Resolution(rawValue: operand) { if preferences.resolution == nil { preferences.resolution = v } } else { known = false }
                case "missing":
                    if let v = Missing(rawValue: operand) { if preferences.missing == nil { preferences.missing = v } } else { known = false }
                case "handling":
                    if let v = Handling(rawValue: operand) { if preferences.handling == nil { preferences.handling = v } } else { known = false }
                case "tx":
                    if let v = Transaction(rawValue: operand) { if preferences.transaction == nil { preferences.transaction = v } } else { known = false }
                case "params":
                    if let v = Parameters(rawValue: operand) { if preferences.parameters == nil { preferences.parameters = v } } else { known = false }
                case "max-affected":
                    if let v = Int(operand) { if preferences.maxAffected == nil { preferences.maxAffected = v } } else { known = false }
                case "timezone":
                    if !operand.isEmpty { if preferences.timezone == nil { preferences.timezone = operand } } else { known = false }
                default:
                    known = false
                }
                if !known { preferences.invalid.append(pref) }
            }
        }
        return preferences
    }

    /// `count=exact|planned|estimated` all produce a total here (computed exactly).
    public var wantsCount: Bool { count != nil }
}
