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

    func planCall(_ name: String, _ request: ApiRequest, caller: Caller) throws(RESTError) -> ActionPlan {
        let resolved = try resolveCall(name, request)
        let function = resolved.function
        var request = request
        if !function.returnsVoid {
            // Handlers of the table whose rows the function returns, else of the function itself
            // (one returning a media type's domain), else of any rows.
            let rowTable = cache.tables[function.returnType]
            request.media = try negotiateMedia(
                request, relation: rowTable?.name ?? function.name, rowType: rowTable.map { QueryWriter.qualified($0.qualifiedName) },
                defaultSelect: request.select.count == 1 && request.select[0].isStar, scalar: !function.returnsComposite)
        } else if request.acceptUnmatched {
            throw .notAcceptable(request.accept ?? "")
        }
        var conditions = request.conditions
        if request.isReadOnlyCall {
            // GET: the pairs that are not arguments filter the result.
            for pair in request.functionArguments where !resolved.keys.contains(pair.name) {
                conditions.append(try QueryGrammar.parseFilter(column: pair.name, pair.value))
            }
        }
        let arguments =
            resolved.positional
            ? Self.positionalArguments(function, request, keys: resolved.keys) : Self.namedArguments(function, request, keys: resolved.keys)
        let readOnly = request.isReadOnlyCall
        var plan = ActionPlan(
            request: request, returnsVoid: function.returnsVoid, statement: nil, readOnly: readOnly,
            mustDecide: !readOnly && (request.singleObject || (request.preferences.maxAffected != nil && request.preferences.handling == .strict)),
            rollback: request.preferences.transaction.map { $0 == .rollback } ?? rollbackByDefault, resource: function.name)
        // Counted over `pgrst_all` when a range narrows the page, else the page is the total.
        let counted = request.preferences.wantsCount && !request.isWholeRange
        let total: AnswerPlan.Total = counted ? .all : request.preferences.wantsCount ? .page : .none
        var call = CallPlan(
            invocation: CallPlan.Invocation(function: function.qualifiedName, arguments: arguments),
            result: .void, limit: request.limit, offset: request.offset, counted: counted,
            answer: AnswerPlan(media: request.media, total: total, nullForEmptyObject: !function.returnsSet))
        // An empty array's first object is none: PostgREST calls a function that has parameters
        // on no row at all (its json_to_recordset is empty), so nothing runs and no row returns.
        call.callsNothing = request.payload.map { $0.isArray && $0.rows.isEmpty } == true && !function.arguments.isEmpty && !resolved.positional
        if function.returnsVoid {
            call.result = .void
        } else if function.returnsComposite {
            call.result = .rows(try callRows(function, request, conditions: conditions, call: call, caller: caller))
            // A function returning one row answers an object, as PostgREST does.
            if !function.returnsSet, request.media == .json { call.answer.media = .singleObject(stripNulls: false) }
        } else if case .custom(let custom) = request.media {
            call.result = .scalar(.custom(custom))
        } else if function.returnsSet {
            call.result = .scalar(request.singleObject ? .first(nullForNone: false) : .array)
        } else {
            call.result = .scalar(.first(nullForNone: true))
        }
        plan.statement = QueryWriter.statement(call)
        return plan
    }

    /// Rows of a table type or of OUT columns: `select`, filters and `order` apply to them as to
    /// a table's. Columns are checked when the type is a known table; otherwise PostgreSQL
    /// names an unknown one (42703).
    private func callRows(
        _ function: SchemaCache.Function, _ request: ApiRequest, conditions: [Condition], call: CallPlan, caller: Caller
    ) throws(RESTError) -> ReadPlan {
        let rowTable = Self.resultTable(function, request: request, conditions: conditions, cache: cache)
        try QueryBuilder(table: rowTable).validate(conditions)
        for term in request.order where !rowTable.hasField(term.column) { throw .unknownColumn(column: term.column, table: function.name) }
        for item in request.select where item.column != "*" && item.embed == nil && !rowTable.hasField(item.column) {
            throw .unknownColumn(column: item.column, table: function.name)
        }
        // Rows of a table's type embed as that table's rows do (PostgREST's RPC embedding).
        if request.select.contains(where: { $0.embed != nil }), let table = cache.tables[function.returnType] {
            var state = EmbedState(caller: caller, request: request)
            let select = try selectPlan(request.select, table: rowTable, realName: table.name, path: "", state: &state)
            return ReadPlan(
                table: rowTable, from: .call(call.invocation), select: .fields(select.fields),
                conditions: conditions.map { .condition($0) } + select.inner, denyAll: call.callsNothing, grouping: select.grouping,
                order: request.order.map { OrderPlan(term: $0) })
        }
        let items = request.select.allSatisfy(\.isStar) ? [] : request.select.filter { !$0.isStar }
        // With an aggregate in the list: every other column's positions are grouped.
        var grouping: [Int] = []
        if items.contains(where: { $0.aggregate != nil }) {
            var position = 0
            for item in items {
                let width = item.column == "*" && item.aggregate == nil ? rowTable.columns.count : 1
                if item.aggregate == nil { grouping += (position + 1)..<(position + 1 + width) }
                position += width
            }
        }
        return ReadPlan(
            table: rowTable, from: .call(call.invocation), select: .callRows(items.map { .item($0) }, star: request.select.contains(where: \.isStar)),
            conditions: conditions.map { .condition($0) }, denyAll: call.callsNothing, grouping: grouping,
            order: request.order.map { OrderPlan(term: $0) })
    }

    /// `f(a := $1::integer, VARIADIC v := $2::text[])`: the arguments by name, in the function's
    /// order (the statement text is stable for a request shape).
    static func namedArguments(_ function: SchemaCache.Function, _ request: ApiRequest, keys: Set<String>) -> [CallPlan.Argument] {
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
        var arguments: [CallPlan.Argument] = []
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
            // The type is the catalog's.
            arguments.append(CallPlan.Argument(name: argument.name, value: text, type: castType(argument.type), variadic: argument.variadic))
        }
        return arguments
    }

    /// `f($1::json)`: the one parameter takes the whole body (a JSON body as sent, a text or XML
    /// body as text, a binary one as bytea) or, on GET, the arguments as one JSON object.
    static func positionalArguments(_ function: SchemaCache.Function, _ request: ApiRequest, keys: Set<String>) -> [CallPlan.Argument] {
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
        return [CallPlan.Argument(name: nil, value: value, type: castType(type))]  // type: from the catalog
    }

    /// The rows a composite-returning function answers, as a table named `pgrst_call`: the
    /// columns of its table type when the cache knows it, else the names the request uses.
    static func resultTable(_ function: SchemaCache.Function, request: ApiRequest, conditions: [Condition], cache: SchemaCache) -> SchemaCache.Table {
        if let known = cache.tables[function.returnType] {
            return SchemaCache.Table(name: "pgrst_call", columns: known.columns, primaryKey: [], computed: known.computed, schema: known.schema)
        }
        var names: [String] = request.select.filter { !$0.isStar }.map(\.column) + request.order.map(\.column)
        func collect(_ condition: Condition) {
            switch condition {
            case .filter(let filter): names.append(filter.column)
            case .not(let inner): collect(inner)
            case .and(let items), .or(let items): items.forEach(collect)
            case .scope: break
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
