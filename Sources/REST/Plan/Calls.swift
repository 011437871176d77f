import HTTP
import Identity
import Postgres

/// RPC: a function of the schema cache called with the request's arguments, its result shaped
/// by `select`, filters, `order` and `limit` as a table's rows are.
extension Planner {
    /// The overload a request calls, and how its arguments reach it.
    struct ResolvedCall {
        let function: SchemaCache.Function
        /// The names the request gives arguments for (GET: the query pairs that are arguments).
        let keys: Set<String>
        /// The whole body (or the GET arguments as one object) is the function's one argument:
        /// `Prefer: params=single-object`, or a single unnamed parameter.
        let positional: Bool
    }

    /// PostgREST's findProc: among the overloads of `name`, the one whose parameters the
    /// argument names fit (every required one given, no unknown one); failing that, on POST, the
    /// one with a single unnamed parameter the body's media fills. None: PGRST202; several: PGRST203.
    func resolveCall(_ name: String, _ request: ApiRequest) throws(RESTError) -> ResolvedCall {
        let overloads = cache.functions[name] ?? []
        let isPost = !request.isReadOnlyCall
        let singleObject = request.preferences.parameters == .singleObject
        let keys: Set<String>
        if isPost {
            keys = Set(request.payload?.keys ?? [])
        } else {
            keys = Set(Self.argumentPairs(request, overloads: overloads).map(\.name))
        }
        let media = request.contentMedia
        var matching: [SchemaCache.Function] = []
        var fallback: [SchemaCache.Function] = []
        for function in overloads {
            if singleObject {
                if function.arguments.count == 1, ["json", "jsonb"].contains(function.arguments[0].type) { matching.append(function) }
            } else if Self.matchesParameters(function, keys: keys, rawBody: isPost && media.isRaw) {
                matching.append(function)
            } else if isPost, function.arguments.count == 1, function.arguments[0].name.isEmpty,
                media.unnamedParameterTypes.contains(function.arguments[0].type)
            {
                fallback.append(function)
            }
        }
        switch (matching.count, fallback.count) {
        case (1, _): return ResolvedCall(function: matching[0], keys: keys, positional: singleObject)
        case (0, 1): return ResolvedCall(function: fallback[0], keys: keys, positional: true)
        case (0, 0): break
        default: throw .ambiguousFunction((matching.isEmpty ? fallback : matching).map(\.signature))
        }
        let search: RESTError.FunctionSearch
        if singleObject {
            search = .singleObject
        } else if isPost, media.isRaw {
            search = .unnamed(media == .text ? "text" : media == .xml ? "xml" : "bytea")
        } else {
            search = isPost && media == .json ? .json : .plain
        }
        var hint: String? = nil
        if search.namesArguments {
            if overloads.isEmpty {
                hint = cache.closestFunction(to: name)
            } else {
                // PostgREST's hint among the overloads' parameter lists, each sorted.
                func list(_ names: [String]) -> String { "(" + names.sorted().joined(separator: ", ") + ")" }
                hint = fuzzyClosest(list(Array(keys)), among: overloads.map { list($0.arguments.map(\.name)) }, minScore: 0.33).map { name + $0 }
            }
        }
        throw .unknownFunction(name: name, arguments: keys.sorted(), hint: hint, search: search)
    }

    /// PostgREST's matchesParams: no parameters takes no arguments (and no raw body); otherwise
    /// the names given, less the optional parameters', are exactly the required parameters'.
    static func matchesParameters(_ function: SchemaCache.Function, keys: Set<String>, rawBody: Bool) -> Bool {
        if function.arguments.isEmpty { return keys.isEmpty && !rawBody }
        let required = Set(function.arguments.filter { !$0.hasDefault }.map(\.name))
        let optional = Set(function.arguments.filter(\.hasDefault).map(\.name))
        return keys.subtracting(optional) == required
    }

    /// The query pairs of a GET call that are arguments: those naming a parameter of some
    /// overload, and (as PostgREST reads them) those whose value is not a filter.
    static func argumentPairs(_ request: ApiRequest, overloads: [SchemaCache.Function]) -> [QueryPair] {
        let parameters = Set(overloads.flatMap { $0.arguments.map(\.name) })
        return request.functionArguments.filter { pair in
            parameters.contains(pair.name) || (try? QueryGrammar.parseFilter(column: pair.name, pair.value)) == nil
        }
    }

    func planCall(_ name: String, _ request: ApiRequest) throws(RESTError) -> ActionPlan {
        let resolved = try resolveCall(name, request)
        let function = resolved.function
        var request = request
        if !function.returnsVoid {
            // Handlers of the table whose rows the function returns, else of the function itself
            // (one returning a media type's domain), else of any rows.
            let rowTable = cache.tables[function.returnType]
            request.media = try negotiateMedia(
                request, relation: rowTable?.name ?? function.name,
                rowType: rowTable.map { "\"public\"." + $0.quotedName },
                defaultSelect: request.select.count == 1 && request.select[0].isStar,
                scalar: !function.returnsComposite)
        } else if request.acceptUnmatched {
            throw .notAcceptable(request.accept ?? "")
        }
        var conditions = request.conditions
        let invocation: SQL
        if request.isReadOnlyCall {
            // GET: the pairs that are not arguments filter the result.
            for pair in request.functionArguments where !resolved.keys.contains(pair.name) {
                conditions.append(try QueryGrammar.parseFilter(column: pair.name, pair.value))
            }
        }
        if resolved.positional {
            invocation = try Self.positionalInvocation(function, request, keys: resolved.keys)
        } else {
            invocation = try Self.namedInvocation(function, request, keys: resolved.keys)
        }
        var readOnly = false
        if case .call(readOnly: true, _) = request.action { readOnly = true }
        var plan = ActionPlan(
            request: request, returnsVoid: function.returnsVoid, statement: nil, readOnly: readOnly,
            mustDecide: request.singleObject || (request.preferences.maxAffected != nil && request.preferences.handling == .strict),
            rollback: request.preferences.transaction.map { $0 == .rollback } ?? rollbackByDefault, resource: function.name)
        if readOnly { plan.mustDecide = false }
        // An empty array's first object is none: PostgREST calls a function that has parameters
        // on no row at all (its json_to_recordset is empty), so nothing runs and no row returns.
        let noCall = request.payload.map { $0.isArray && $0.rows.isEmpty } == true && !function.arguments.isEmpty && !resolved.positional
        let never: SQL = noCall ? " WHERE false" : ""
        var limits: SQL = ""
        if let limit = request.limit { limits.append(" LIMIT \(limit)") }
        if request.offset > 0 { limits.append(" OFFSET \(request.offset)") }
        if function.returnsVoid {
            plan.statement =
                "SELECT NULL::bigint AS total, 1::bigint AS page_total, NULL::text AS body, NULL::bigint AS inserted FROM (SELECT \(invocation)\(never)) pgrst_call"
        } else if function.returnsComposite {
            // Rows of a table type or of OUT columns: `select`, filters and `order` apply to them
            // as to a table's. Columns are checked when the type is a known table; otherwise
            // PostgreSQL names an unknown one (42703).
            let rowTable = Self.resultTable(function, request: request, conditions: conditions, cache: cache)
            let builder = QueryBuilder(table: rowTable)
            try builder.validate(conditions)
            for term in request.order where !rowTable.hasField(term.column) { throw .unknownColumn(column: term.column, table: function.name) }
            for item in request.select where item.column != "*" && !rowTable.hasField(item.column) {
                throw .unknownColumn(column: item.column, table: function.name)
            }
            var query = SQLBuilder()
            query.raw("SELECT ")
            var grouping: [Int] = []
            // `*` over a table's rows whose columns have domain representations: each column, as
            // PostgREST expands it (the function's rows are the table's, representations included).
            let star = rowTable.columns.contains { $0.representation.toJSON != nil } ? rowTable.starSelect : "pgrst_call.*"
            if request.select.allSatisfy(\.isStar) {
                query.raw(star)
            } else {
                grouping = builder.writeSelectList(request.select.filter { !$0.isStar }, qualifier: nil, into: &query)
                if request.select.contains(where: \.isStar) { query.raw(", " + star) }
            }
            query.raw(" FROM ")
            query.append(invocation)
            query.raw(" pgrst_call")
            builder.writeWhere(conditions, denyAll: noCall, into: &query)
            QueryBuilder.writeGroupBy(grouping, into: &query)
            builder.writeOrder(request.order, into: &query)
            var media = request.media
            // A function returning one row answers an object, as PostgREST does.
            if !function.returnsSet, media == .json { media = .singleObject(stripNulls: false) }
            var statement = Self.countedSource(query.sql, limits: limits, counted: request.preferences.wantsCount)
            statement.append(
                Self.aggregate(
                    media: media, total: request.preferences.wantsCount ? "(SELECT pg_catalog.count(*) FROM pgrst_all)" : "NULL::bigint",
                    inserted: "NULL::bigint", from: "pgrst_source", nullForEmptyObject: !function.returnsSet))
            plan.statement = statement
        } else {
            let body: SQL
            if case .custom(let custom) = request.media {
                body = SQL(unsafeSQL: Self.customBody(custom))  // names from the catalog
            } else if function.returnsSet {
                body =
                    request.singleObject
                    ? "coalesce((json_agg(_postgrest_t.pgrst_scalar) -> 0)::text, '')"
                    : "coalesce(json_agg(_postgrest_t.pgrst_scalar), '[]')::text"
            } else {
                body = "coalesce((json_agg(_postgrest_t.pgrst_scalar) -> 0)::text, 'null')"
            }
            let counted = request.preferences.wantsCount
            var statement = Self.countedSource("SELECT \(invocation) AS pgrst_scalar\(never)", limits: limits, counted: counted)
            let total: SQL = counted ? "(SELECT pg_catalog.count(*) FROM pgrst_all)" : "NULL::bigint"
            statement.append(
                "SELECT \(total) AS total, pg_catalog.count(_postgrest_t) AS page_total, \(body) AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t"
            )
            plan.statement = statement
        }
        return plan
    }

    /// `WITH pgrst_source AS (rows LIMIT …) `, or with `Prefer: count` (`exact`, `planned` and
    /// `estimated` alike: a function's rows cannot be estimated without running it) the rows once
    /// as `pgrst_all`, which the total counts, and the page taken from them: the function runs
    /// once either way.
    static func countedSource(_ rows: SQL, limits: SQL, counted: Bool) -> SQL {
        guard counted else { return "WITH pgrst_source AS (\(rows)\(limits)) " }
        return "WITH pgrst_all AS (\(rows)), pgrst_source AS (SELECT * FROM pgrst_all\(limits)) "
    }

    /// `public.f(a := $1::integer, VARIADIC v := $2::text[])`: the arguments by name, in the
    /// function's order (the statement text is stable for a request shape).
    static func namedInvocation(_ function: SchemaCache.Function, _ request: ApiRequest, keys: Set<String>) throws(RESTError) -> SQL {
        // Each argument's values in the order given (GET: the query's; POST: the body's members).
        var given: [String: [JSONValue]] = [:]
        if let payload = request.payload {
            // An array of objects (all with the same keys): the first object's members, as
            // PostgREST (since 11, which dropped `Prefer: params=multiple-objects`) calls the
            // function once, with the first object.
            if case .object(let members)? = payload.isArray ? payload.rows.first : payload.json {
                for member in members { given[member.key, default: []].append(member.value) }
            }
        } else {
            for pair in request.functionArguments where keys.contains(pair.name) { given[pair.name, default: []].append(.string(pair.value)) }
        }
        var argumentList: [SQL] = []
        for argument in function.arguments {
            guard let values = given[argument.name], let last = values.last else { continue }
            let text: String?
            if argument.variadic {
                // `?v=a&v=b` (or a form's repeated field) or a JSON array: the variadic array.
                if values.count == 1, case .array = last {
                    text = argumentText(last, type: argument.type)
                } else {
                    let element = argument.type.hasSuffix("[]") ? String(argument.type.dropLast(2)) : argument.type
                    text = SQL.arrayLiteral(values.map { argumentText($0, type: element) })
                }
            } else {
                // A repeated name: the last value, as PostgREST.
                text = argumentText(last, type: argument.type)
            }
            let variadic = argument.variadic ? "VARIADIC " : ""
            argumentList.append("\(unsafeRaw: variadic)\(ident: argument.name) := \(text)::\(unsafeRaw: castType(argument.type))")  // type: from the catalog
        }
        return "\(unsafeRaw: quoteIdentifier("public")).\(ident: function.name)(\(SQL.join(argumentList, separator: ", ")))"
    }

    /// `public.f($1::json)`: the one parameter takes the whole body (a JSON body as sent, a text
    /// or XML body as text, a binary one as bytea) or, on GET, the arguments as one JSON object.
    static func positionalInvocation(_ function: SchemaCache.Function, _ request: ApiRequest, keys: Set<String>) throws(RESTError) -> SQL {
        let type = function.arguments.first?.type ?? "json"
        let value: String
        if let raw = request.rawBody {
            if type == "bytea" {
                value =
                    "\\x"
                    + raw.map { byte in
                        let hex = String(byte, radix: 16)
                        return byte < 16 ? "0" + hex : hex
                    }.joined()
            } else {
                value = String(decoding: raw, as: UTF8.self)
            }
        } else if let payload = request.payload {
            value = payload.raw
        } else {
            // GET with `params=single-object`: the argument pairs as an object of strings (the
            // last of a repeated name).
            var members: [(String, String)] = []
            for pair in request.functionArguments where keys.contains(pair.name) {
                members.removeAll { $0.0 == pair.name }
                members.append((pair.name, pair.value))
            }
            value = "{" + members.map { jsonString($0.0) + ":" + jsonString($0.1) }.joined(separator: ",") + "}"
        }
        return "\(unsafeRaw: quoteIdentifier("public")).\(ident: function.name)(\(value)::\(unsafeRaw: castType(type)))"  // type: from the catalog
    }

    /// The rows a composite-returning function answers, as a table named `pgrst_call`: the
    /// columns of its table type when the cache knows it, else the names the request uses.
    static func resultTable(_ function: SchemaCache.Function, request: ApiRequest, conditions: [Condition], cache: SchemaCache) -> SchemaCache.Table {
        if let known = cache.tables[function.returnType] {
            return SchemaCache.Table(name: "pgrst_call", columns: known.columns, primaryKey: [], computed: known.computed)
        }
        var names: [String] = request.select.filter { !$0.isStar }.map(\.column) + request.order.map(\.column)
        func collect(_ condition: Condition) {
            switch condition {
            case .filter(let filter): names.append(filter.column)
            case .not(let inner): collect(inner)
            case .and(let items), .or(let items): items.forEach(collect)
            case .scope, .embedded: break
            }
        }
        conditions.forEach(collect)
        var seen = Set<String>()
        let columns = names.filter { seen.insert($0).inserted }.map { SchemaCache.Column(name: $0, type: "") }
        return SchemaCache.Table(name: "pgrst_call", columns: columns, primaryKey: [])
    }

    /// The type to cast an argument to. A parameter's catalog type has no length, but the SQL
    /// names `character` and `bit` mean char(1) and bit(1): "abcdefg"::character is "a". Their
    /// internal names take any length, as the parameter does.
    static func castType(_ type: String) -> String {
        switch type {
        case "character": return "bpchar"
        case "character[]": return "bpchar[]"
        case "bit": return "varbit"
        case "bit[]": return "varbit[]"
        default: return type
        }
    }

    /// A JSON argument as the text PostgreSQL parses for the parameter's type.
    static func argumentText(_ value: JSONValue, type: String) -> String? {
        // A json/jsonb parameter takes the JSON value itself: a string that looks like JSON
        // stays a string.
        if type == "json" || type == "jsonb", value != .null { return value.serialized }
        switch value {
        case .null: return nil
        case .string(let text): return text
        case .number(let text): return text
        case .bool(let flag): return flag ? "true" : "false"
        case .array(let items) where type.hasSuffix("[]"):
            return SQL.arrayLiteral(
                items.map { item -> String? in
                    if case .array = item { return item.serialized }
                    return argumentText(item, type: "")
                })
        case .array, .object: return value.serialized
        }
    }
}
