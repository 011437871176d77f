/// A REST request parsed into PostgREST's terms, before it is checked against the schema cache.
/// Pure: built from the method, path, query pairs, headers and body.
public struct ApiRequest: Sendable, Equatable {
    public enum Target: Sendable, Equatable {
        case table(String)
        case function(String)
        /// `GET /rest/v1/`: the OpenAPI description.
        case root
    }

    public enum Action: Sendable, Equatable {
        case read(headOnly: Bool)
        case insert
        case update
        case delete
        /// `PUT`: upsert of one row identified by its primary key filters.
        case put
        case call(readOnly: Bool)
        case describe
    }

    public enum Media: Sendable, Equatable {
        case json, singleObject, csv
    }

    public var target: Target
    public var action: Action
    public var select: [SelectItem]
    public var condition: Condition?
    public var order: [OrderTerm]
    public var limit: Int?
    public var offset: Int
    public var onConflict: [String]?
    public var columns: [String]?
    public var preferences: Preferences
    public var media: Media
    public var body: [UInt8]
    /// Query arguments of a GET/HEAD RPC call.
    public var functionArguments: [(name: String, value: String)]

    public static func == (lhs: ApiRequest, rhs: ApiRequest) -> Bool {
        lhs.target == rhs.target && lhs.action == rhs.action && lhs.select == rhs.select && lhs.condition == rhs.condition
            && lhs.order == rhs.order && lhs.limit == rhs.limit && lhs.offset == rhs.offset && lhs.onConflict == rhs.onConflict
            && lhs.columns == rhs.columns && lhs.preferences == rhs.preferences && lhs.media == rhs.media && lhs.body == rhs.body
            && lhs.functionArguments.map(\.name) == rhs.functionArguments.map(\.name)
            && lhs.functionArguments.map(\.value) == rhs.functionArguments.map(\.value)
    }
}

public struct SelectItem: Sendable, Equatable {
    public var column: String
    public var alias: String?
    public var cast: String?
    /// `*`
    public var isStar: Bool { column == "*" }
}

public struct OrderTerm: Sendable, Equatable {
    public var column: String
    public var descending: Bool
    public var nullsFirst: Bool?
}

public enum FilterOperator: String, Sendable, CaseIterable {
    case eq, neq, gt, gte, lt, lte, like, ilike, match, imatch, `in`, `is`, isdistinct, cs, cd, ov, fts, plfts, phfts, wfts
}

public struct Filter: Sendable, Equatable {
    public var column: String
    public var op: FilterOperator
    /// The operand as written; for `in` the parsed list.
    public var value: String
    public var list: [String]
    /// The language of a full-text search operator, e.g. `fts(english)`.
    public var language: String?
}

public indirect enum Condition: Sendable, Equatable {
    case filter(Filter)
    case not(Condition)
    case and([Condition])
    case or([Condition])
}

public struct Preferences: Sendable, Equatable {
    public enum Return: String, Sendable { case minimal, headersOnly = "headers-only", representation }
    public enum Count: String, Sendable { case exact, planned, estimated }
    public enum Resolution: String, Sendable { case mergeDuplicates = "merge-duplicates", ignoreDuplicates = "ignore-duplicates" }

    public var returning: Return?
    public var count: Count?
    public var resolution: Resolution?
    public var missingDefault = false
    public var strict = false
    public var rollback = false
    public var maxAffected: Int?
    /// The preferences honoured, for `Preference-Applied`.
    public var applied: [String] = []

    /// Parses `Prefer` header values (several headers and comma lists); unknown ones are ignored
    /// (`handling=lenient`), as PostgREST does.
    public static func parse(_ values: [String]) -> Preferences {
        var preferences = Preferences()
        for item in values.flatMap({ $0.split(separator: ",") }).map({ $0.trimmedOWS }) {
            let parts = item.split(separator: "=", maxSplits: 1).map { String($0).trimmedOWS }
            guard parts.count == 2 else { continue }
            let (key, value) = (parts[0], parts[1])
            switch key {
            case "return": if let v = Return(rawValue: value) { preferences.returning = v; preferences.applied.append(item) }
            case "count": if let v = Count(rawValue: value) { preferences.count = v; preferences.applied.append(item) }
            case "resolution": if let v = Resolution(rawValue: value) { preferences.resolution = v; preferences.applied.append(item) }
            case "missing": if value == "default" { preferences.missingDefault = true; preferences.applied.append(item) }
            case "handling": preferences.strict = value == "strict"; if value == "strict" || value == "lenient" { preferences.applied.append(item) }
            case "tx": if value == "rollback" || value == "commit" { preferences.rollback = value == "rollback"; preferences.applied.append(item) }
            case "max-affected": if let v = Int(value) { preferences.maxAffected = v; preferences.applied.append(item) }
            default: continue
            }
        }
        return preferences
    }
}

extension StringProtocol {
    var trimmedOWS: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}

/// The query-string grammar of PostgREST (its QueryParams.hs), as a small hand-written parser.
public enum QueryGrammar {
    static let reserved: Set<String> = ["select", "order", "limit", "offset", "on_conflict", "columns", "or", "and", "not.or", "not.and"]

    public static func parseSelect(_ text: String) throws(RESTError) -> [SelectItem] {
        let trimmed = text.filter { !$0.isWhitespace }
        if trimmed.isEmpty { return [SelectItem(column: "*")] }
        return try splitTopLevel(trimmed).map { item throws(RESTError) -> SelectItem in
            if item.contains("(") || item.contains(")") {
                throw .parse(message: "failed to parse select parameter (\(text))", details: "resource embedding is not supported by this server: \(item)")
            }
            var rest = Substring(item)
            var alias: String?
            var cast: String?
            if let castRange = rest.range(of: "::") {
                cast = String(rest[castRange.upperBound...])
                rest = rest[..<castRange.lowerBound]
            }
            if let colon = rest.firstIndex(of: ":") {
                alias = String(rest[..<colon])
                rest = rest[rest.index(after: colon)...]
            }
            let column = unquote(String(rest))
            guard !column.isEmpty, alias?.isEmpty != true, cast.map(isIdentifierLike) ?? true else {
                throw .parse(message: "failed to parse select parameter (\(text))", details: "unexpected \"\(item)\"")
            }
            return SelectItem(column: column, alias: alias.map(unquote), cast: cast)
        }
    }

    public static func parseOrder(_ text: String) throws(RESTError) -> [OrderTerm] {
        try splitTopLevel(text).map { term throws(RESTError) -> OrderTerm in
            var parts = term.split(separator: ".").map(String.init)
            guard let column = parts.first, !column.isEmpty else {
                throw .parse(message: "failed to parse order (\(text))", details: "unexpected \"\(term)\"")
            }
            parts.removeFirst()
            var order = OrderTerm(column: unquote(column), descending: false, nullsFirst: nil)
            for modifier in parts {
                switch modifier {
                case "asc": order.descending = false
                case "desc": order.descending = true
                case "nullsfirst": order.nullsFirst = true
                case "nullslast": order.nullsFirst = false
                default: throw .parse(message: "failed to parse order (\(text))", details: "unexpected \"\(modifier)\" expecting \"asc\", \"desc\", \"nullsfirst\" or \"nullslast\"")
                }
            }
            return order
        }
    }

    /// `column=[not.]op.value`
    public static func parseFilter(column: String, _ expression: String) throws(RESTError) -> Condition {
        var rest = Substring(expression)
        var negated = false
        if rest.hasPrefix("not.") {
            negated = true
            rest = rest.dropFirst(4)
        }
        guard let dot = rest.firstIndex(of: ".") else {
            throw .parse(message: "failed to parse filter (\(expression))", details: "unexpected end of input expecting operator (eq, gt, ...)")
        }
        var opText = String(rest[..<dot])
        let value = String(rest[rest.index(after: dot)...])
        var language: String?
        if let open = opText.firstIndex(of: "("), opText.hasSuffix(")") {
            language = String(opText[opText.index(after: open)..<opText.index(before: opText.endIndex)])
            opText = String(opText[..<open])
        }
        guard let op = FilterOperator(rawValue: opText) else {
            throw .parse(message: "failed to parse filter (\(expression))", details: "unexpected \"\(opText)\" expecting operator (eq, gt, ...)")
        }
        var filter = Filter(column: unquote(column), op: op, value: value, list: [], language: language)
        switch op {
        case .in:
            guard value.hasPrefix("("), value.hasSuffix(")") else {
                throw .parse(message: "failed to parse filter (\(expression))", details: "unexpected \"\(value.prefix(1))\" expecting \"(\"")
            }
            let inner = String(value.dropFirst().dropLast())
            filter.list = inner.isEmpty ? [] : try splitTopLevel(inner).map(unquote)
        case .is:
            guard ["null", "not_null", "true", "false", "unknown"].contains(value.lowercased()) else {
                throw .parse(message: "failed to parse filter (\(expression))", details: "unexpected \"\(value)\" expecting null or trilean value (unknown, true, false)")
            }
        default:
            break
        }
        let condition = Condition.filter(filter)
        return negated ? .not(condition) : condition
    }

    /// `or=(a.eq.1,and(b.gt.2,c.is.null))` and `and=(…)`.
    public static func parseLogic(_ key: String, _ value: String) throws(RESTError) -> Condition {
        var negated = false
        var operatorName = key
        if operatorName.hasPrefix("not.") {
            negated = true
            operatorName.removeFirst(4)
        }
        guard value.hasPrefix("("), value.hasSuffix(")") else {
            throw .parse(message: "failed to parse logic tree (\(value))", details: "unexpected \"\(value.prefix(1))\" expecting \"(\"")
        }
        let items = try splitTopLevel(String(value.dropFirst().dropLast())).map { item throws(RESTError) -> Condition in
            for logic in ["and", "or", "not.and", "not.or"] where item.hasPrefix(logic + "(") {
                return try parseLogic(logic, String(item.dropFirst(logic.count)))
            }
            guard let dot = firstUnquotedDot(item) else {
                throw .parse(message: "failed to parse logic tree (\(value))", details: "unexpected \"\(item)\"")
            }
            return try parseFilter(column: String(item[..<dot]), String(item[item.index(after: dot)...]))
        }
        guard !items.isEmpty else { throw .parse(message: "failed to parse logic tree (\(value))", details: "empty logic tree") }
        let tree: Condition = operatorName == "or" ? .or(items) : .and(items)
        return negated ? .not(tree) : tree
    }

    /// Splits on commas outside parentheses, braces and double quotes.
    static func splitTopLevel(_ text: String) throws(RESTError) -> [String] {
        var parts: [String] = []
        var current = ""
        var depth = 0
        var inQuotes = false
        var escaped = false
        for character in text {
            if escaped { current.append(character); escaped = false; continue }
            if inQuotes && character == "\\" { current.append(character); escaped = true; continue }
            if character == "\"" { inQuotes.toggle() }
            if !inQuotes {
                if character == "(" || character == "{" { depth += 1 }
                if character == ")" || character == "}" { depth -= 1 }
                if depth < 0 { throw .parse(message: "failed to parse (\(text))", details: "unbalanced parentheses") }
                if character == "," && depth == 0 {
                    parts.append(current)
                    current = ""
                    continue
                }
            }
            current.append(character)
        }
        guard depth == 0, !inQuotes else { throw .parse(message: "failed to parse (\(text))", details: "unexpected end of input") }
        parts.append(current)
        return parts
    }

    /// Removes PostgREST's double quotes and backslash escapes from a value or name.
    static func unquote(_ text: String) -> String {
        guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else { return text }
        var out = ""
        var escaped = false
        for character in text.dropFirst().dropLast() {
            if escaped { out.append(character); escaped = false }
            else if character == "\\" { escaped = true }
            else { out.append(character) }
        }
        return out
    }

    private static func firstUnquotedDot(_ text: String) -> String.Index? {
        var inQuotes = false
        for index in text.indices {
            if text[index] == "\"" { inQuotes.toggle() }
            if text[index] == "." && !inQuotes { return index }
        }
        return nil
    }

    static func isIdentifierLike(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == " " || $0 == "[" || $0 == "]" }
    }
}
