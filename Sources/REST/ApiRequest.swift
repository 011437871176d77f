import HTTP

/// A REST request parsed into PostgREST's terms, before it is checked against the schema cache
/// (PostgREST's `ApiRequest`). Pure: built from the method, the resource path, the query pairs,
/// the headers and the body.
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
        /// `PUT`: upsert of the one row its primary-key filters name.
        case singleUpsert
        /// RPC; GET/HEAD calls run read-only and take their arguments from the query.
        case call(readOnly: Bool, headOnly: Bool)
        case describe(headOnly: Bool)
    }

    public enum Media: Sendable, Equatable {
        case json
        /// `application/vnd.pgrst.object+json` (optionally `;nulls=stripped`).
        case singleObject(stripNulls: Bool)
        case csv
        case openAPI
    }

    public var target: Target
    public var action: Action
    /// The `select` list; `[.star]` when absent.
    public var select: [SelectItem] = [SelectItem(column: "*")]
    /// The filters and logic trees, ANDed (the query string's top level).
    public var conditions: [Condition] = []
    public var order: [OrderTerm] = []
    public var limit: Int?
    public var offset: Int = 0
    public var onConflict: [String]?
    public var columns: [String]?
    public var preferences = Preferences()
    public var media: Media = .json
    /// The parsed body of a write or POST call.
    var payload: Payload?
    /// The query arguments of a GET/HEAD RPC call, in order.
    public var functionArguments: [QueryPair] = []

    public static func == (lhs: ApiRequest, rhs: ApiRequest) -> Bool {
        lhs.target == rhs.target && lhs.action == rhs.action && lhs.select == rhs.select && lhs.conditions == rhs.conditions
            && lhs.order == rhs.order && lhs.limit == rhs.limit && lhs.offset == rhs.offset && lhs.onConflict == rhs.onConflict
            && lhs.columns == rhs.columns && lhs.preferences == rhs.preferences && lhs.media == rhs.media
            && lhs.payload == rhs.payload && lhs.functionArguments == rhs.functionArguments
    }

    public var isRead: Bool {
        if case .read = action { return true }
        return false
    }

    public var isHeadOnly: Bool {
        switch action {
        case .read(let head), .call(_, let head), .describe(let head): return head
        default: return false
        }
    }

    public var singleObject: Bool {
        if case .singleObject = media { return true }
        return false
    }
}

public struct QueryPair: Sendable, Equatable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A write or RPC body: the raw JSON (handed to PostgreSQL as one bind) and what Swift looks at.
struct Payload: Sendable, Equatable {
    var json: JSONValue
    /// The raw bytes, sent to PostgreSQL as they came (no re-serialisation on the hot path).
    var raw: String
    /// The rows: one for an object, the elements for an array of objects.
    var rows: [JSONValue]
    /// The columns the body writes: the keys (all rows share them, as PostgREST requires).
    var keys: [String]
    var isArray: Bool
}

public struct SelectItem: Sendable, Equatable {
    public var column: String
    public var alias: String?
    public var cast: String?
    public init(column: String, alias: String? = nil, cast: String? = nil) {
        self.column = column
        self.alias = alias
        self.cast = cast
    }
    public var isStar: Bool { column == "*" && alias == nil && cast == nil }
}

public struct OrderTerm: Sendable, Equatable {
    public enum Nulls: String, Sendable { case first, last }
    public var column: String
    public var descending: Bool?
    public var nulls: Nulls?
    public init(column: String, descending: Bool? = nil, nulls: Nulls? = nil) {
        self.column = column
        self.descending = descending
        self.nulls = nulls
    }
}

public enum FilterOperator: String, Sendable, CaseIterable {
    case eq, neq, gt, gte, lt, lte, like, ilike, match, imatch, `in`, `is`, isdistinct, cs, cd, ov, sl, sr, nxl, nxr, adj
    case fts, plfts, phfts, wfts
}

public enum IsValue: String, Sendable { case null, notNull = "not_null", `true`, `false`, unknown }

public enum FilterOperand: Sendable, Equatable {
    case value(String)
    case list([String])
    case isValue(IsValue)
}

public struct Filter: Sendable, Equatable {
    public var column: String
    public var op: FilterOperator
    public var operand: FilterOperand
    /// The text-search configuration of `fts(english)`.
    public var language: String?
    public init(column: String, op: FilterOperator, operand: FilterOperand, language: String? = nil) {
        self.column = column
        self.op = op
        self.operand = operand
        self.language = language
    }
}

public indirect enum Condition: Sendable, Equatable {
    case filter(Filter)
    case not(Condition)
    case and([Condition])
    case or([Condition])
    /// Added by the ownership middleware, never parsed from a request.
    case scope(OwnershipScope)
}

// MARK: - Prefer

/// The `Prefer` header (PostgREST's Preferences.hs): the first value given for each preference
/// wins, unknown ones are ignored unless `handling=strict` (then 400 PGRST122).
public struct Preferences: Sendable, Equatable {
    public enum Return: String, Sendable { case minimal, headersOnly = "headers-only", representation }
    public enum Count: String, Sendable { case exact, planned, estimated }
    public enum Resolution: String, Sendable { case mergeDuplicates = "merge-duplicates", ignoreDuplicates = "ignore-duplicates" }
    public enum Missing: String, Sendable { case `default`, null }
    public enum Handling: String, Sendable { case strict, lenient }
    public enum Transaction: String, Sendable { case commit, rollback }

    public var returning: Return?
    public var count: Count?
    public var resolution: Resolution?
    public var missing: Missing?
    public var handling: Handling?
    public var transaction: Transaction?
    public var maxAffected: Int?
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
                case "max-affected":
                    if let v = Int(operand) { if preferences.maxAffected == nil { preferences.maxAffected = v } } else { known = false }
                case "timezone":
                    break  // accepted, not applied: the session is always UTC
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

// MARK: - Parsing a request

extension ApiRequest {
    /// Parses a request whose path has already lost its `/rest/v1` prefix (`resource` is the rest:
    /// `/children`, `/rpc/get_user_with_profile`, `/` or empty for the root).
    public static func parse(method: String, resource: String, query: [(name: String, value: String)],
                             headers: HTTPHeaders, body: [UInt8]) throws(RESTError) -> ApiRequest {
        func header(_ name: String) -> String? { headers[name] }
        func headerValues(_ name: String) -> [String] { headers.values(name) }

        let segments = resource.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        let target: Target
        switch segments.count {
        case 0: target = .root
        case 1 where segments[0] != "rpc": target = .table(segments[0])
        case 2 where segments[0] == "rpc": target = .function(segments[1])
        default: throw .invalidResourcePath
        }
        let action: Action
        switch (target, method) {
        case (.root, "GET"): action = .describe(headOnly: false)
        case (.root, "HEAD"): action = .describe(headOnly: true)
        case (.table, "GET"): action = .read(headOnly: false)
        case (.table, "HEAD"): action = .read(headOnly: true)
        case (.table, "POST"): action = .insert
        case (.table, "PATCH"): action = .update
        case (.table, "DELETE"): action = .delete
        case (.table, "PUT"): action = .singleUpsert
        case (.function, "POST"): action = .call(readOnly: false, headOnly: false)
        case (.function, "GET"): action = .call(readOnly: true, headOnly: false)
        case (.function, "HEAD"): action = .call(readOnly: true, headOnly: true)
        case (.function, _): throw .invalidRPCMethod(method)
        default: throw .unsupportedMethod(method)
        }

        // Only `public` is exposed: Accept-Profile for GET/HEAD, Content-Profile for the rest.
        let profileHeader = (method == "GET" || method == "HEAD") ? "accept-profile" : "content-profile"
        if let profile = header(profileHeader), profile != "public" { throw .invalidSchema(profile) }

        var request = ApiRequest(target: target, action: action)
        request.preferences = Preferences.parse(headerValues("prefer"))
        if request.preferences.handling == .strict, !request.preferences.invalid.isEmpty {
            throw .invalidPreferences(request.preferences.invalid)
        }
        request.media = try negotiate(accept: header("accept"), action: action)

        var isRPCRead = false
        if case .call(readOnly: true, _) = action { isRPCRead = true }
        // PostgreSQL refuses NUL in text (22021); refuse it before any value is used.
        if query.contains(where: { $0.name.utf8.contains(0) || $0.value.utf8.contains(0) }) {
            throw .database(.nulCharacter, authenticated: false)
        }
        for (name, value) in query {
            switch name {
            case "select": request.select = try QueryGrammar.parseSelect(value)
            case "order": request.order = try QueryGrammar.parseOrder(value)
            case "limit":
                guard let limit = Int(value.trimmedOWS), limit >= 0 else {
                    throw .parse(message: QueryGrammar.message("limit parameter", value, column: 1), details: "unexpected \"\(value.prefix(1))\" expecting digit")
                }
                request.limit = limit
            case "offset":
                guard let offset = Int(value.trimmedOWS), offset >= 0 else {
                    throw .parse(message: QueryGrammar.message("offset parameter", value, column: 1), details: "unexpected \"\(value.prefix(1))\" expecting digit")
                }
                request.offset = offset
            case "on_conflict": request.onConflict = try QueryGrammar.parseColumns(value, what: "on_conflict parameter")
            case "columns": request.columns = try QueryGrammar.parseColumns(value, what: "columns parameter")
            case "or", "and", "not.or", "not.and":
                request.conditions.append(try QueryGrammar.parseLogicTree(key: name, value))
            case "apikey":
                continue  // a credential (Supabase's gateway accepts it as a query parameter)
            default:
                if isRPCRead {
                    request.functionArguments.append(QueryPair(name, value))
                } else {
                    request.conditions.append(try QueryGrammar.parseFilter(column: name, value))
                }
            }
        }

        // Range: 0-9 (items) narrows limit/offset for reads (RangeQuery.hs).
        if request.isRead || isRPCRead, let range = header("range") {
            let spec = range.hasPrefix("items=") ? String(range.dropFirst(6)) : range
            let bounds = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            if bounds.count == 2, let low = Int(bounds[0].trimmedOWS), low >= 0 {
                let high = bounds[1].trimmedOWS.isEmpty ? nil : Int(bounds[1].trimmedOWS)
                if let high, high < low { throw .invalidRange(.lowerGreaterThanUpper) }
                // The bounds are the client's: saturate instead of trapping (PostgREST's are
                // unbounded integers; nothing lies past Int.max rows anyway).
                let rangeLimit = high.map { ($0 - low).addingSaturated(1) }
                request.offset = request.offset.addingSaturated(low)
                if let rangeLimit { request.limit = min(request.limit ?? Int.max, rangeLimit) }
            }
        }

        // Bodies: writes and POST calls (DELETE bodies are ignored, as supabase-py sends `{}`).
        switch action {
        case .insert, .update, .singleUpsert:
            request.payload = try parsePayload(body, allowArray: action == .insert, sameKeys: request.columns == nil)
        case .call(readOnly: false, _):
            request.payload = try parsePayload(body, allowArray: false, emptyIsObject: true)
        default:
            break
        }
        return request
    }

    /// PostgREST's Payload.hs: a JSON object, or (for inserts) an array of objects with the same keys.
    /// With `columns=` the rows may differ (a missing key is NULL, or the default with `missing=default`).
    static func parsePayload(_ body: [UInt8], allowArray: Bool, sameKeys: Bool = true, emptyIsObject: Bool = false) throws(RESTError) -> Payload {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            if emptyIsObject { return Payload(json: .object([]), raw: "{}", rows: [.object([])], keys: [], isArray: false) }
            throw .invalidBody("Empty or invalid json")
        }
        guard let json = JSONValue.parse(body) else { throw .invalidBody("Empty or invalid json") }
        let raw = String(decoding: body, as: UTF8.self)
        switch json {
        case .object:
            return Payload(json: json, raw: raw, rows: [json], keys: json.keys, isArray: false)
        case .array(let items) where allowArray:
            var keys: [String]? = nil
            for item in items {
                guard case .object = item else { throw .invalidBody("All object keys must match") }
                let itemKeys = item.keys
                if sameKeys, let keys, Set(keys) != Set(itemKeys) { throw .invalidBody("All object keys must match") }
                if keys == nil { keys = itemKeys }
            }
            return Payload(json: json, raw: raw, rows: items, keys: keys ?? [], isArray: true)
        default:
            throw .invalidBody("Empty or invalid json")
        }
    }

    /// `Accept` negotiation (PostgREST's Negotiate.hs, restricted to what this server produces).
    static func negotiate(accept: String?, action: Action) throws(RESTError) -> Media {
        if case .describe = action {
            guard let accept, !accept.isEmpty else { return .openAPI }
            for part in accept.split(separator: ",") {
                // `split` drops empty pieces: a part that is only `;` has none (no `[0]`).
                let type = (part.split(separator: ";").first ?? "").trimmedOWS.lowercased()
                if ["application/openapi+json", "application/json", "*/*", "application/*"].contains(type) { return .openAPI }
            }
            throw .notAcceptable(accept)
        }
        guard let accept, !accept.trimmedOWS.isEmpty else { return .json }
        // What the clients send on almost every request.
        if accept == "*/*" || accept == "application/json" { return .json }
        for part in accept.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmedOWS.lowercased() }
            switch pieces.first ?? "" {
            case "application/vnd.pgrst.object+json", "application/vnd.pgrst.object":
                return .singleObject(stripNulls: pieces.dropFirst().contains("nulls=stripped"))
            case "application/json", "*/*", "application/*", "application/vnd.pgrst.array+json":
                return .json
            case "text/csv", "text/*":
                return .csv
            default:
                continue
            }
        }
        throw .notAcceptable(accept)
    }
}

// MARK: - The query-string grammar

/// PostgREST's query grammar (QueryParams.hs), hand-written. Errors carry PostgREST's shape:
/// message `"failed to parse filter (…)" (line 1, column n)`, details `unexpected … expecting …`.
public enum QueryGrammar {
    static func message(_ what: String, _ input: String, column: Int) -> String {
        "\"failed to parse \(what) (\(input))\" (line 1, column \(column))"
    }

    static func unexpected(_ characters: [Character], at index: Int) -> String {
        index < characters.count ? "unexpected \"\(characters[index])\"" : "unexpected end of input"
    }

    // MARK: select

    /// `select=id,name,alias:col,col::text,"quoted col"`; embedding (`rel(*)`) is refused.
    public static func parseSelect(_ text: String) throws(RESTError) -> [SelectItem] {
        let chars = Array(text)
        var index = 0
        var items: [SelectItem] = []
        func fail(_ expecting: String) -> RESTError {
            .parse(message: message("select parameter", text, column: index + 1), details: "\(unexpected(chars, at: index)) expecting \(expecting)")
        }
        skipSpaces(chars, &index)
        if index == chars.count { return [SelectItem(column: "*")] }
        while true {
            skipSpaces(chars, &index)
            guard index < chars.count else { throw fail("field name (* or [a..z0..9_$])") }
            if chars[index] == "*" {
                index += 1
                items.append(SelectItem(column: "*"))
            } else {
                guard var name = fieldName(chars, &index) else { throw fail("field name (* or [a..z0..9_$])") }
                var alias: String? = nil
                if index < chars.count, chars[index] == ":", index + 1 < chars.count, chars[index + 1] != ":" {
                    index += 1
                    alias = name
                    skipSpaces(chars, &index)
                    guard let real = fieldName(chars, &index) else { throw fail("field name (* or [a..z0..9_$])") }
                    name = real
                }
                if index < chars.count, chars[index] == "(" || chars[index] == "!" {
                    throw .parse(message: message("select parameter", text, column: index + 1),
                                 details: "resource embedding is not supported: \"\(name)\" is not an embedded resource in this request")
                }
                var cast: String? = nil
                if index + 1 < chars.count, chars[index] == ":", chars[index + 1] == ":" {
                    index += 2
                    let start = index
                    while index < chars.count, chars[index].isLetter || chars[index].isNumber || chars[index] == "_" || chars[index] == " " || chars[index] == "[" || chars[index] == "]" {
                        index += 1
                    }
                    let castText = String(chars[start..<index]).trimmedOWS
                    guard !castText.isEmpty else { throw fail("letter or digit") }
                    cast = castText
                }
                items.append(SelectItem(column: name, alias: alias, cast: cast))
            }
            skipSpaces(chars, &index)
            if index == chars.count { return items }
            guard chars[index] == "," else { throw fail("\"::\", \",\" or end of input") }
            index += 1
        }
    }

    // MARK: order

    /// `order=created_at.desc.nullslast,name` (PostgREST's pOrder).
    public static func parseOrder(_ text: String) throws(RESTError) -> [OrderTerm] {
        let chars = Array(text)
        var index = 0
        var terms: [OrderTerm] = []
        func fail(_ expecting: String) -> RESTError {
            .parse(message: message("order", text, column: index + 1), details: "\(unexpected(chars, at: index)) expecting \(expecting)")
        }
        while true {
            skipSpaces(chars, &index)
            guard let column = fieldName(chars, &index) else { throw fail("field name (* or [a..z0..9_$])") }
            var term = OrderTerm(column: column)
            var expectDirection = true
            while index < chars.count, chars[index] == "." {
                index += 1
                let start = index
                while index < chars.count, chars[index].isLetter { index += 1 }
                let word = String(chars[start..<index])
                switch word {
                case "asc" where expectDirection: term.descending = false
                case "desc" where expectDirection: term.descending = true
                case "nullsfirst" where term.nulls == nil: term.nulls = .first
                case "nullslast" where term.nulls == nil: term.nulls = .last
                default:
                    index = start
                    throw fail(expectDirection && term.nulls == nil ? "\"asc\", \"desc\", \"nullsfirst\" or \"nullslast\"" : "\"nullsfirst\" or \"nullslast\"")
                }
                expectDirection = false
                if term.nulls != nil { break }
            }
            terms.append(term)
            skipSpaces(chars, &index)
            if index == chars.count { return terms }
            guard chars[index] == "," else { throw fail("\",\" or end of input") }
            index += 1
        }
    }

    // MARK: columns / on_conflict

    public static func parseColumns(_ text: String, what: String) throws(RESTError) -> [String] {
        let chars = Array(text)
        var index = 0
        var names: [String] = []
        while true {
            skipSpaces(chars, &index)
            guard let name = fieldName(chars, &index) else {
                throw .parse(message: message(what, text, column: index + 1),
                             details: "\(unexpected(chars, at: index)) expecting field name (* or [a..z0..9_$])")
            }
            names.append(name)
            skipSpaces(chars, &index)
            if index == chars.count { return names }
            guard chars[index] == "," else {
                throw .parse(message: message(what, text, column: index + 1), details: "\(unexpected(chars, at: index)) expecting \",\" or end of input")
            }
            index += 1
        }
    }

    // MARK: filters

    static let plainOperators: Set<FilterOperator> = [.eq, .neq, .gt, .gte, .lt, .lte, .like, .ilike, .match, .imatch, .isdistinct, .cs, .cd, .ov, .sl, .sr, .nxl, .nxr, .adj]

    /// `column=[not.]op.value` (PostgREST's pOpExpr with pSingleVal: the rest of the value is
    /// the operand, quotes included, except for `in.(…)` lists).
    public static func parseFilter(column: String, _ expression: String) throws(RESTError) -> Condition {
        let name = unquoteName(column)
        // Fast path for the common `op.value` with a plain operator: the value is the rest as
        // written, so no character-level parse is needed.
        if let dot = expression.utf8.firstIndex(of: UInt8(ascii: ".")) {
            let opText = expression[..<dot]
            if opText.utf8.count <= 6, let op = FilterOperator(rawValue: String(opText)), Self.plainOperators.contains(op) {
                let value = String(expression[expression.utf8.index(after: dot)...])
                return .filter(Filter(column: name, op: op, operand: .value(value)))
            }
        }
        let chars = Array(expression)
        var index = 0
        let condition = try operation(chars, &index, column: name, input: expression, what: "filter", inLogicTree: false)
        if index != chars.count {
            throw .parse(message: message("filter", expression, column: index + 1), details: "\(unexpected(chars, at: index)) expecting end of input")
        }
        return condition
    }

    /// `or=(a.eq.1,and(b.gt.2,c.is.null))`, `not.and=(…)`.
    public static func parseLogicTree(key: String, _ value: String) throws(RESTError) -> Condition {
        let negated = key.hasPrefix("not.")
        let op = negated ? String(key.dropFirst(4)) : key
        let text = op + value
        let chars = Array(text)
        var index = 0
        let tree = try logicTree(chars, &index, input: value, forceLogic: true)
        if index != chars.count {
            throw .parse(message: message("logic tree", value, column: index + 1),
                         details: "\(unexpected(chars, at: index)) expecting end of input")
        }
        return negated ? .not(tree) : tree
    }

    private static func logicTree(_ chars: [Character], _ index: inout Int, input: String, forceLogic: Bool) throws(RESTError) -> Condition {
        func fail(_ expecting: String) -> RESTError {
            .parse(message: message("logic tree", input, column: index + 1), details: "\(unexpected(chars, at: index)) expecting \(expecting)")
        }
        // `[not.](and|or)(…)` or, inside a tree, `field.[not.]op.value`.
        let start = index
        var negated = false
        if matches(chars, index, "not.") { negated = true; index += 4 }
        var logic: String? = nil
        if matches(chars, index, "and(") { logic = "and"; index += 3 } else if matches(chars, index, "or(") { logic = "or"; index += 2 }
        if let logic {
            index += 1  // "("
            var items: [Condition] = []
            while true {
                skipSpaces(chars, &index)
                items.append(try logicTree(chars, &index, input: input, forceLogic: false))
                skipSpaces(chars, &index)
                guard index < chars.count else { throw fail("\",\" or \")\"") }
                if chars[index] == "," { index += 1; continue }
                if chars[index] == ")" { index += 1; break }
                throw fail("\",\" or \")\"")
            }
            let tree: Condition = logic == "and" ? .and(items) : .or(items)
            return negated ? .not(tree) : tree
        }
        if forceLogic {
            // PostgREST parses `or` + the value: the error points just after the operator.
            index = start + (negated ? 4 : 0)
            if matches(chars, index, "and") { index += 3 } else if matches(chars, index, "or") { index += 2 }
            throw fail("\"(\"")
        }
        index = start
        guard let column = fieldName(chars, &index) else {
            throw fail("field name (* or [a..z0..9_$]), negation operator (not) or logic operator (and, or)")
        }
        guard index < chars.count, chars[index] == "." else { throw fail("delimiter (.)") }
        index += 1
        return try operation(chars, &index, column: column, input: input, what: "logic tree", inLogicTree: true)
    }

    /// `[not.]op.operand` from `index`.
    private static func operation(_ chars: [Character], _ index: inout Int, column: String, input: String, what: String,
                                  inLogicTree: Bool) throws(RESTError) -> Condition {
        func failAt(_ position: Int, _ expecting: String) -> RESTError {
            .parse(message: message(what, input, column: position + 1), details: "\(unexpected(chars, at: position)) expecting \(expecting)")
        }
        func fail(_ expecting: String) -> RESTError { failAt(index, expecting) }
        var negated = false
        if matches(chars, index, "not.") { negated = true; index += 4 }
        let opStart = index
        while index < chars.count, chars[index].isLetter { index += 1 }
        let opName = String(chars[opStart..<index])
        guard let op = FilterOperator(rawValue: opName) else {
            index = opStart
            throw fail(negated ? "operator (eq, gt, ...)" : "\"not\" or operator (eq, gt, ...)")
        }
        var language: String? = nil
        if [.fts, .plfts, .phfts, .wfts].contains(op), index < chars.count, chars[index] == "(" {
            let langStart = index + 1
            guard let close = chars[langStart...].firstIndex(of: ")"), close > langStart,
                  chars[langStart..<close].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                index = langStart
                throw fail("operator (eq, gt, ...)")
            }
            language = String(chars[langStart..<close])
            index = close + 1
        }
        guard index < chars.count, chars[index] == "." else { throw fail("delimiter (.)") }
        index += 1
        let operand: FilterOperand
        switch op {
        case .in:
            operand = .list(try list(chars, &index, failAt: failAt))
        case .is:
            let valueStart = index
            let word = inLogicTree ? rawValue(chars, &index) : String(chars[index...])
            if !inLogicTree { index = chars.count }
            guard let value = IsValue(rawValue: word.lowercased()) else {
                index = valueStart
                throw fail("isVal: (null, not_null, true, false, unknown)")
            }
            operand = .isValue(value)
        default:
            if inLogicTree {
                operand = .value(try logicValue(chars, &index, failAt: failAt))
            } else {
                operand = .value(String(chars[index...]))
                index = chars.count
            }
        }
        let condition = Condition.filter(Filter(column: column, op: op, operand: operand, language: language))
        return negated ? .not(condition) : condition
    }

    /// `(a,"b, c","q\"uote")`: elements quoted with `"` and backslash escapes, else raw up to `,` or `)`.
    private static func list(_ chars: [Character], _ index: inout Int, failAt: (Int, String) -> RESTError) throws(RESTError) -> [String] {
        skipSpaces(chars, &index)
        guard index < chars.count, chars[index] == "(" else { throw failAt(index, "\"(\"") }
        index += 1
        skipSpaces(chars, &index)
        var items: [String] = []
        if index < chars.count, chars[index] == ")" {
            index += 1
            return items
        }
        while true {
            let start = index
            if index < chars.count, chars[index] == "\"", let quoted = quotedValue(chars, &index),
               index < chars.count, chars[index] == "," || chars[index] == ")" {
                items.append(quoted)
            } else {
                index = start
                items.append(rawValue(chars, &index))
            }
            guard index < chars.count else { throw failAt(index, "\",\" or \")\"") }
            if chars[index] == "," { index += 1; continue }
            index += 1  // ")"
            skipSpaces(chars, &index)
            return items
        }
    }

    /// A value inside a logic tree: quoted, a `{…}` array literal, or raw up to `,` or `)`.
    private static func logicValue(_ chars: [Character], _ index: inout Int, failAt: (Int, String) -> RESTError) throws(RESTError) -> String {
        let start = index
        if index < chars.count, chars[index] == "\"", let quoted = quotedValue(chars, &index),
           index == chars.count || chars[index] == "," || chars[index] == ")" {
            return quoted
        }
        index = start
        if index < chars.count, chars[index] == "{", let close = chars[index...].firstIndex(of: "}"),
           !chars[(index + 1)..<close].contains("{") {
            index = close + 1
            return String(chars[start..<index])
        }
        return rawValue(chars, &index)
    }

    private static func rawValue(_ chars: [Character], _ index: inout Int) -> String {
        let start = index
        while index < chars.count, chars[index] != ",", chars[index] != ")" { index += 1 }
        return String(chars[start..<index])
    }

    /// `"…"` with `\x` escapes; nil if unterminated.
    private static func quotedValue(_ chars: [Character], _ index: inout Int) -> String? {
        var out = ""
        var i = index + 1
        while i < chars.count {
            let c = chars[i]
            if c == "\\" {
                guard i + 1 < chars.count else { return nil }
                out.append(chars[i + 1])
                i += 2
                continue
            }
            if c == "\"" {
                index = i + 1
                return out
            }
            out.append(c)
            i += 1
        }
        return nil
    }

    /// A field name: `"quoted"` or identifier characters (PostgREST's pFieldName: letters, digits,
    /// `_`, `$`, spaces, `-` not followed by `>`).
    private static func fieldName(_ chars: [Character], _ index: inout Int) -> String? {
        if index < chars.count, chars[index] == "\"" {
            var i = index
            guard let name = quotedValue(chars, &i), !name.isEmpty else { return nil }
            index = i
            return name
        }
        let start = index
        while index < chars.count {
            let c = chars[index]
            if c.isLetter || c.isNumber || c == "_" || c == "$" || c == " " {
                index += 1
            } else if c == "-", index + 1 < chars.count, chars[index + 1] != ">" {
                index += 1
            } else {
                break
            }
        }
        let name = String(chars[start..<index]).trimmedOWS
        return name.isEmpty ? nil : name
    }

    /// A query key naming a column may be quoted too.
    static func unquoteName(_ text: String) -> String {
        if !text.utf8.contains(UInt8(ascii: "\"")) && !text.utf8.contains(UInt8(ascii: " ")) { return text }
        let chars = Array(text)
        var index = 0
        if let name = fieldName(chars, &index), index == chars.count { return name }
        return text
    }

    private static func skipSpaces(_ chars: [Character], _ index: inout Int) {
        while index < chars.count, chars[index] == " " || chars[index] == "\t" { index += 1 }
    }

    private static func matches(_ chars: [Character], _ index: Int, _ word: String) -> Bool {
        var i = index
        for c in word {
            guard i < chars.count, chars[i] == c else { return false }
            i += 1
        }
        return true
    }
}

extension Int {
    /// `self + other`, clamped to `Int.min…Int.max` instead of trapping: for arithmetic on
    /// numbers that came from a request.
    func addingSaturated(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
