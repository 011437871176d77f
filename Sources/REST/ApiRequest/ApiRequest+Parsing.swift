import HTTP

// MARK: - Parsing a request

extension ApiRequest {
    /// Parses a request whose path has already lost its `/rest/v1` prefix (`resource` is the rest:
    /// `/children`, `/rpc/get_user_with_profile`, `/` or empty for the root). `schemas`: the
    /// exposed ones (`db-schemas`), the first the default.
    public static func parse(
        method: HTTPMethod, resource: String, query: [(name: String, value: String)],
        headers: HTTPHeaders, body: [UInt8], schemas: [String] = ["public"]
    ) throws(RESTError) -> ApiRequest {
        let target = try parseTarget(resource)
        let action = try parseAction(target: target, method: method)
        var request = ApiRequest(target: target, action: action)
        try request.readHeaders(method: method, headers: headers, schemas: schemas)
        try request.readQuery(query)
        request.canonicalQuery = canonical(query)
        try request.readRange(headers["range"])
        try request.readBody(body, contentType: headers["content-type"])
        return request
    }

    /// `name=value&…` sorted by name (pairs of one name in their order), each byte but letters,
    /// digits and `-_.~` as `%XX`.
    static func canonical(_ query: [(name: String, value: String)]) -> String {
        func encoded(_ text: String) -> String {
            var out = ""
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                    out.unicodeScalars.append(Unicode.Scalar(byte))
                default:
                    let hex = Array("0123456789ABCDEF".unicodeScalars)
                    out.unicodeScalars.append(contentsOf: ["%", hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
                }
            }
            return out
        }
        let sorted = query.enumerated().sorted { ($0.element.name, $0.offset) < ($1.element.name, $1.offset) }
        return sorted.map { encoded($0.element.name) + "=" + encoded($0.element.value) }.joined(separator: "&")
    }

    /// The table, function or root a resource path names.
    static func parseTarget(_ resource: String) throws(RESTError) -> Target {
        let segments = resource.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        switch segments.count {
        case 0: return .root
        case 1 where segments[0] != "rpc": return .table(segments[0])
        case 2 where segments[0] == "rpc": return .function(segments[1])
        default: throw .invalidResourcePath
        }
    }

    /// What a method does to a target.
    static func parseAction(target: Target, method: HTTPMethod) throws(RESTError) -> Action {
        switch (target, method) {
        case (.root, .get): return .describe(headOnly: false)
        case (.root, .head): return .describe(headOnly: true)
        case (.table, .get): return .read(headOnly: false)
        case (.table, .head): return .read(headOnly: true)
        case (.table, .post): return .insert
        case (.table, .patch): return .update
        case (.table, .delete): return .delete
        case (.table, .put): return .singleUpsert
        case (.function, .post): return .call(readOnly: false, headOnly: false)
        case (.function, .get): return .call(readOnly: true, headOnly: false)
        case (.function, .head): return .call(readOnly: true, headOnly: true)
        case (.function, _): throw .invalidRPCMethod(method.rawValue)
        default: throw .unsupportedMethod(method.rawValue)
        }
    }

    /// The profile (schema), `Prefer` and `Accept` headers.
    mutating func readHeaders(method: HTTPMethod, headers: HTTPHeaders, schemas: [String]) throws(RESTError) {
        let profile = try Profile.negotiate(method: method, headers: headers, schemas: schemas)
        schema = profile.schema
        negotiatedByProfile = profile.negotiated
        preferences = Preferences.parse(headers.values("prefer"))
        if preferences.handling == .strict, !preferences.invalid.isEmpty {
            throw .invalidPreferences(preferences.invalid)
        }
        // A media type none of the built-in ones matches may still be a media handler's (the
        // planner decides, with the schema cache, as PostgREST negotiates in its plan).
        accept = headers["accept"]
        do {
            if let explain = Explain(accept: accept), !action.isDescribe {
                // The plan of what the `for` media type would run.
                self.explain = explain
                media = try Self.negotiate(accept: explain.target, action: action)
            } else {
                media = try Self.negotiate(accept: accept, action: action)
            }
        } catch {
            if action.isDescribe { throw error }
            acceptUnmatched = true
        }
    }

    /// The query string's terms: `select`, `order`, `limit`, `offset`, `on_conflict`, `columns`,
    /// logic trees, filters, embedded resources' terms and a GET call's arguments.
    mutating func readQuery(_ query: [(name: String, value: String)]) throws(RESTError) {
        // PostgreSQL refuses NUL in text (22021); refuse it before any value is used.
        if query.contains(where: { $0.name.utf8.contains(0) || $0.value.utf8.contains(0) }) {
            throw .database(.nulCharacter, authenticated: false)
        }
        for (name, value) in query {
            switch name {
            case "select": select = try QueryGrammar.parseSelect(value)
            case "order": order = try QueryGrammar.parseOrder(value)
            case "limit":
                // PostgREST reads both as integers where it can (`readMaybe`) and ignores them
                // where it cannot; a negative limit is an empty range (416), a negative offset none.
                guard let limit = Self.integer(value) else { continue }
                guard limit >= 0 else { throw .invalidRange(.negativeLimit) }
                self.limit = limit
            case "offset":
                guard let offset = Self.integer(value) else { continue }
                self.offset = max(offset, 0)
            case "on_conflict": onConflict = try QueryGrammar.parseColumns(value, what: "on_conflict parameter")
            case "columns": columns = try QueryGrammar.parseColumns(value, what: "columns parameter")
            case "or", "and", "not.or", "not.and":
                conditions.append(try QueryGrammar.parseLogicTree(key: name, value))
            case "apikey":
                continue  // a credential (Supabase's gateway accepts it as a query parameter)
            default:
                try readTerm(name, value)
            }
        }
    }

    /// A query term of no reserved name: an embedded resource's term, a GET call's argument or
    /// filter, or a filter.
    private mutating func readTerm(_ name: String, _ value: String) throws(RESTError) {
        if !name.hasPrefix("not."), let split = QueryGrammar.splitEmbedPath(name) {
            // `path.column=op.value` or `path.order|limit|offset|or|and`: for an embed
            // (also of a function's rows; a parameter's name has no dot).
            let path = split.path
            let key = split.last
            var query = embedded[path] ?? EmbeddedQuery()
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
            embedded[path] = query
        } else if isReadOnlyCall {
            // PostgREST's rule for a GET call: a value with an operator is a filter of the
            // result (`id=gt.2`), any other an argument (`id=5`), whatever the name.
            if let filter = try? QueryGrammar.parseFilter(column: name, value) {
                conditions.append(filter)
            } else {
                functionArguments.append(QueryPair(name, value))
            }
        } else {
            conditions.append(try QueryGrammar.parseFilter(column: name, value))
        }
    }

    /// `Range: 0-9` (items) narrows limit/offset for reads (RangeQuery.hs).
    mutating func readRange(_ range: String?) throws(RESTError) {
        guard isRead || isReadOnlyCall, let range else { return }
        let spec = range.hasPrefix("items=") ? String(range.dropFirst(6)) : range
        let bounds = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        if bounds.count == 2, let low = Int(bounds[0].trimmedOWS), low >= 0 {
            let high = bounds[1].trimmedOWS.isEmpty ? nil : Int(bounds[1].trimmedOWS)
            if let high, high < low { throw .invalidRange(.lowerGreaterThanUpper) }
            // The bounds are the client's: saturate instead of trapping (PostgREST's are
            // unbounded integers; nothing lies past Int.max rows anyway).
            let rangeLimit = high.map { ($0 - low).addingSaturated(1) }
            offset = offset.addingSaturated(low)
            if let rangeLimit { limit = min(limit ?? Int.max, rangeLimit) }
        }
    }

    /// Bodies: writes and POST calls (DELETE bodies are ignored, as supabase-py sends `{}`).
    /// A form body (`application/x-www-form-urlencoded`) is one object of text values, as
    /// PostgREST reads it.
    mutating func readBody(_ body: [UInt8], contentType: String?) throws(RESTError) {
        var body = body
        contentMedia = ContentMedia.of(contentType)
        if contentMedia == .form {
            // JSON sent as a form (`curl -d` without a Content-Type) would read as one field named
            // by the whole JSON text and fail later, naming neither; no form field starts so.
            if let first = body.first(where: { ![0x20, 0x09, 0x0a, 0x0d].contains($0) }), first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
                JSONValue.parse(body) != nil
            {
                throw .invalidBody(
                    "The body is JSON but its Content-Type is application/x-www-form-urlencoded",
                    hint: "Send it with Content-Type: application/json (curl -d sends a form: add -H 'Content-Type: application/json').")
            }
            let fields = parseQuery(String(decoding: body, as: UTF8.self))
            if fields.contains(where: { $0.name.utf8.contains(0) || $0.value.utf8.contains(0) }) { throw .database(.nulCharacter, authenticated: false) }
            body = Array(("{" + fields.map { jsonString($0.name) + ":" + jsonString($0.value) }.joined(separator: ",") + "}").utf8)
        } else if action == .insert, contentMedia == .csv {
            body = Array(try Payload.csvAsJSON(body).utf8)
        }
        switch action {
        case .insert, .update, .singleUpsert:
            // A table's rows come as JSON, a form or CSV; PostgREST refuses other bodies.
            if contentMedia.isRaw || contentMedia.isOther {
                throw .invalidBody("Content-Type not acceptable: " + contentMedia.mime)
            }
            // A PATCH takes an array too, as PostgREST does (`[]` and `[{}]` set nothing).
            var payload = try Self.parsePayload(body, allowArray: true, sameKeys: columns == nil)
            // PUT takes an array too, as PostgREST does: one element is that row; any other count
            // writes no row but the URL's, which the plan refuses (PGRST115) once filters pass.
            if action == .singleUpsert, payload.isArray, payload.rows.count == 1 {
                payload = Payload(json: payload.rows[0], raw: payload.rows[0].serialized, rows: payload.rows, keys: payload.keys, isArray: false)
            }
            self.payload = payload
        case .call(readOnly: false, _):
            if contentMedia.isOther { throw .invalidBody("Content-Type not acceptable: " + contentMedia.mime) }
            if contentMedia.isRaw {
                // A text, XML or binary body is one unnamed parameter's value, as it came.
                rawBody = body
            } else {
                // An array of objects is accepted too: it is the value of a single json
                // parameter (`params=single-object` or an unnamed one).
                payload = try Self.parsePayload(body, allowArray: true, emptyIsObject: true)
            }
        case .read, .delete, .describe, .call(readOnly: true, _):
            // No body: GET/HEAD calls take their arguments from the query.
            break
        }
    }
}
