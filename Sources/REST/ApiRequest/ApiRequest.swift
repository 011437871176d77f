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

    /// What the request does; the plan keeps it (`ActionPlan.action`) and adds what planning decides.
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

        public var isDescribe: Bool {
            if case .describe = self { return true }
            return false
        }

        public var isCall: Bool {
            if case .call = self { return true }
            return false
        }
    }

    public enum Media: Sendable, Equatable {
        case json
        /// `application/vnd.pgrst.object+json` (optionally `;nulls=stripped`).
        case singleObject(stripNulls: Bool)
        /// `application/vnd.pgrst.array+json;nulls=stripped`: the array, each object without its null members.
        case strippedArray
        case csv
        case openAPI
        /// A media type handler of the schema cache (a domain named for the media type).
        case custom(CustomMedia)
    }

    /// What a custom media handler makes the body of, as the planner chose it.
    public struct CustomMedia: Sendable, Equatable {
        /// The aggregate over the rows, qualified and quoted; nil when the function's value is
        /// the body (it returns the media type's domain).
        public var aggregate: String?
        /// The table type the rows are cast to for a table's own aggregate (nil: `anyelement`).
        public var rowType: String?
        /// `Content-Type`, as PostgREST writes it (with `; charset=utf-8` for the types it knows).
        public var contentType: String
        /// The body is bytes (a bytea domain), read as hex.
        public var binary: Bool
        /// The rows are a function's values (`pgrst_scalar`), not records.
        public var scalar: Bool
    }

    /// The body's media type (`Content-Type`; none is JSON), as PostgREST reads it: JSON, forms
    /// (and CSV for inserts) are rows or arguments by name; for a function, a text, XML or binary
    /// body is a single unnamed parameter's value. Anything else is only named, for the error.
    public enum ContentMedia: Sendable, Equatable {
        case json, form, csv
        case text, xml, octetStream
        /// A type no body is read as: the type as sent, without its parameters.
        case other(String)

        /// The parameter type a raw body of this media fills (PostgREST's single unnamed parameter).
        var unnamedParameterTypes: [String] {
            switch self {
            case .json: return ["json", "jsonb"]
            case .text: return ["text"]
            case .xml: return ["xml"]
            case .octetStream: return ["bytea"]
            case .form, .csv, .other: return []
            }
        }

        /// PostgREST's name for the type (`MediaType.toMime`), in its refusal.
        var mime: String {
            switch self {
            case .json: return "application/json"
            case .form: return "application/x-www-form-urlencoded"
            case .csv: return "text/csv"
            case .text: return "text/plain"
            case .xml: return "text/xml"
            case .octetStream: return "application/octet-stream"
            case .other(let type): return type
            }
        }

        var isRaw: Bool { self == .text || self == .xml || self == .octetStream }

        var isOther: Bool {
            if case .other = self { return true }
            return false
        }

        static func of(_ header: String?) -> ContentMedia {
            guard let header else { return .json }
            let type = header.split(separator: ";", maxSplits: 1).first.map { $0.trimmedOWS.lowercased() } ?? ""
            switch type {
            case "application/x-www-form-urlencoded": return .form
            case "text/csv": return .csv
            case "text/plain": return .text
            case "text/xml", "application/xml": return .xml
            case "application/octet-stream": return .octetStream
            case "application/json": return .json
            default: return .other(header.split(separator: ";", maxSplits: 1).first.map { String($0.trimmedOWS) } ?? "")
            }
        }
    }

    public var target: Target
    public var action: Action
    /// The schema the request is about: its `Accept-Profile` (GET/HEAD) or `Content-Profile`
    /// (POST/PATCH/PUT/DELETE), else `db-schemas`' first.
    public var schema = "public"
    /// Whether the schema was negotiated (a profile header named it, or several schemas are
    /// exposed): the response then says which in `Content-Profile`, as PostgREST.
    public var negotiatedByProfile = false
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
    /// `Accept`, as sent (the planner looks it up among the schema cache's media handlers).
    public var accept: String?
    /// `Accept: application/vnd.pgrst.plan…`: answer the statement's plan instead of its rows.
    public var explain: Explain?
    /// Whether none of `Accept`'s media types is one this server produces by itself: the planner
    /// answers 406 unless a media handler takes it.
    public var acceptUnmatched = false
    /// The parsed body of a write or POST call.
    var payload: Payload?
    public var contentMedia: ContentMedia = .json
    /// A POST call's body as it came, when it is text, XML or binary (not parsed).
    public var rawBody: [UInt8]?
    /// The query arguments of a GET/HEAD RPC call, in order.
    public var functionArguments: [QueryPair] = []
    /// Filters, `order`, `limit` and `offset` for embedded resources (`children.age=gt.3`,
    /// `children.order=name`), by embed path (`name` or `outer.inner`, aliases as written).
    public var embedded: [String: EmbeddedQuery] = [:]

    public struct EmbeddedQuery: Sendable, Equatable {
        public var conditions: [Condition] = []
        public var order: [OrderTerm] = []
        public var limit: Int?
        public var offset = 0
    }

    public static func == (lhs: ApiRequest, rhs: ApiRequest) -> Bool {
        lhs.target == rhs.target && lhs.action == rhs.action && lhs.schema == rhs.schema
            && lhs.negotiatedByProfile == rhs.negotiatedByProfile && lhs.select == rhs.select && lhs.conditions == rhs.conditions
            && lhs.order == rhs.order && lhs.limit == rhs.limit && lhs.offset == rhs.offset && lhs.onConflict == rhs.onConflict
            && lhs.columns == rhs.columns && lhs.preferences == rhs.preferences && lhs.media == rhs.media
            && lhs.payload == rhs.payload && lhs.functionArguments == rhs.functionArguments && lhs.embedded == rhs.embedded
            && lhs.contentMedia == rhs.contentMedia && lhs.rawBody == rhs.rawBody && lhs.accept == rhs.accept
            && lhs.acceptUnmatched == rhs.acceptUnmatched && lhs.explain == rhs.explain
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

    /// A GET/HEAD call: arguments from the query, run read-only.
    public var isReadOnlyCall: Bool {
        if case .call(readOnly: true, _) = action { return true }
        return false
    }

    public var singleObject: Bool {
        if case .singleObject = media { return true }
        return false
    }
}

// MARK: - Parsing a request

extension ApiRequest {
    /// Parses a request whose path has already lost its `/rest/v1` prefix (`resource` is the rest:
    /// `/children`, `/rpc/get_user_with_profile`, `/` or empty for the root). `schemas`: the
    /// exposed ones (`db-schemas`), the first the default.
    public static func parse(
        method: HTTPMethod, resource: String, query: [(name: String, value: String)],
        headers: HTTPHeaders, body: [UInt8], schemas: [String] = ["public"]
    ) throws(RESTError) -> ApiRequest {
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
        case (.root, .get): action = .describe(headOnly: false)
        case (.root, .head): action = .describe(headOnly: true)
        case (.table, .get): action = .read(headOnly: false)
        case (.table, .head): action = .read(headOnly: true)
        case (.table, .post): action = .insert
        case (.table, .patch): action = .update
        case (.table, .delete): action = .delete
        case (.table, .put): action = .singleUpsert
        case (.function, .post): action = .call(readOnly: false, headOnly: false)
        case (.function, .get): action = .call(readOnly: true, headOnly: false)
        case (.function, .head): action = .call(readOnly: true, headOnly: true)
        case (.function, _): throw .invalidRPCMethod(method.rawValue)
        default: throw .unsupportedMethod(method.rawValue)
        }

        let profile = try Profile.negotiate(method: method, headers: headers, schemas: schemas)
        var request = ApiRequest(target: target, action: action)
        request.schema = profile.schema
        request.negotiatedByProfile = profile.negotiated
        request.preferences = Preferences.parse(headerValues("prefer"))
        if request.preferences.handling == .strict, !request.preferences.invalid.isEmpty {
            throw .invalidPreferences(request.preferences.invalid)
        }
        // A media type none of the built-in ones matches may still be a media handler's (the
        // planner decides, with the schema cache, as PostgREST negotiates in its plan).
        request.accept = header("accept")
        do {
            if let explain = Explain(accept: request.accept), !action.isDescribe {
                // The plan of what the `for` media type would run.
                request.explain = explain
                request.media = try negotiate(accept: explain.target, action: action)
            } else {
                request.media = try negotiate(accept: request.accept, action: action)
            }
        } catch {
            if action.isDescribe { throw error }
            request.acceptUnmatched = true
        }

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
                // PostgREST reads both as integers where it can (`readMaybe`) and ignores them
                // where it cannot; a negative limit is an empty range (416), a negative offset none.
                guard let limit = Self.integer(value) else { continue }
                guard limit >= 0 else { throw .invalidRange(.negativeLimit) }
                request.limit = limit
            case "offset":
                guard let offset = Self.integer(value) else { continue }
                request.offset = max(offset, 0)
            case "on_conflict": request.onConflict = try QueryGrammar.parseColumns(value, what: "on_conflict parameter")
            case "columns": request.columns = try QueryGrammar.parseColumns(value, what: "columns parameter")
            case "or", "and", "not.or", "not.and":
                request.conditions.append(try QueryGrammar.parseLogicTree(key: name, value))
            case "apikey":
                continue  // a credential (Supabase's gateway accepts it as a query parameter)
            default:
                if !name.hasPrefix("not."), let split = QueryGrammar.splitEmbedPath(name) {
                    // `path.column=op.value` or `path.order|limit|offset|or|and`: for an embed
                    // (also of a function's rows; a parameter's name has no dot).
                    let path = split.path
                    let key = split.last
                    var query = request.embedded[path] ?? EmbeddedQuery()
                    switch key {
                    case "order": query.order = try QueryGrammar.parseOrder(value)
                    case "limit", "offset":
                        guard let number = Int(value.trimmedOWS), number >= 0 else {
                            throw .parse(
                                message: QueryGrammar.message("\(key) parameter", value, column: 1),
                                details: "unexpected \"\(value.prefix(1))\" expecting digit")
                        }
                        if key == "limit" { query.limit = number } else { query.offset = number }
                    case "or", "and": query.conditions.append(try QueryGrammar.parseLogicTree(key: key, value))
                    default: query.conditions.append(try QueryGrammar.parseFilter(column: key, value))
                    }
                    request.embedded[path] = query
                } else if isRPCRead {
                    // PostgREST's rule for a GET call: a value with an operator is a filter of the
                    // result (`id=gt.2`), any other an argument (`id=5`), whatever the name.
                    if let filter = try? QueryGrammar.parseFilter(column: name, value) {
                        request.conditions.append(filter)
                    } else {
                        request.functionArguments.append(QueryPair(name, value))
                    }
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
        // A form body (`application/x-www-form-urlencoded`) is one object of text values, as
        // PostgREST reads it.
        var body = body
        request.contentMedia = ContentMedia.of(header("content-type"))
        if request.contentMedia == .form {
            let fields = parseQuery(String(decoding: body, as: UTF8.self))
            if fields.contains(where: { $0.name.utf8.contains(0) || $0.value.utf8.contains(0) }) { throw .database(.nulCharacter, authenticated: false) }
            body = Array(("{" + fields.map { jsonString($0.name) + ":" + jsonString($0.value) }.joined(separator: ",") + "}").utf8)
        } else if action == .insert, request.contentMedia == .csv {
            body = Array(try Payload.csvAsJSON(body).utf8)
        }
        switch action {
        case .insert, .update, .singleUpsert:
            // A table's rows come as JSON, a form or CSV; PostgREST refuses other bodies.
            if request.contentMedia.isRaw || request.contentMedia.isOther {
                throw .invalidBody("Content-Type not acceptable: " + request.contentMedia.mime)
            }
            var payload = try parsePayload(body, allowArray: action != .update, sameKeys: request.columns == nil)
            // PUT takes an array too, as PostgREST does: one element is that row; any other count
            // writes no row but the URL's, which the plan refuses (PGRST115) once filters pass.
            if action == .singleUpsert, payload.isArray, payload.rows.count == 1 {
                payload = Payload(json: payload.rows[0], raw: payload.rows[0].serialized, rows: payload.rows, keys: payload.keys, isArray: false)
            }
            request.payload = payload
        case .call(readOnly: false, _):
            if request.contentMedia.isOther { throw .invalidBody("Content-Type not acceptable: " + request.contentMedia.mime) }
            if request.contentMedia.isRaw {
                // A text, XML or binary body is one unnamed parameter's value, as it came.
                request.rawBody = body
            } else {
                // An array of objects is accepted too: it is the value of a single json
                // parameter (`params=single-object` or an unnamed one).
                request.payload = try parsePayload(body, allowArray: true, emptyIsObject: true)
            }
        default:
            break
        }
        return request
    }
}

extension ApiRequest {
    /// A query parameter's integer as PostgREST's `readMaybe` reads one (optional sign, digits,
    /// spaces around), saturated where PostgREST's unbounded integers exceed this one's range.
    static func integer(_ text: String) -> Int? {
        let trimmed = text.trimmedOWS
        if let value = Int(trimmed) { return value }
        let digits = trimmed.hasPrefix("-") || trimmed.hasPrefix("+") ? trimmed.dropFirst() : Substring(trimmed)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return trimmed.hasPrefix("-") ? Int.min : Int.max
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
