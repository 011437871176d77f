import JWT
import Postgres

/// RPC: a function of the schema cache called with the request's arguments, its result shaped
/// by `select`, filters, `order` and `limit` as a table's rows are.
extension Planner {
    func planCall(_ function: SchemaCache.Function, _ request: ApiRequest) throws(RESTError) -> ActionPlan {
        // Arguments: the POST body's keys, or the GET query's pairs.
        var given: [(name: String, value: String?)] = []
        if let payload = request.payload {
            guard case .object(let members) = payload.json else { throw .invalidBody("Empty or invalid json") }
            for member in members {
                let type = function.argument(member.key)?.type ?? "json"
                given.removeAll { $0.name == member.key }
                given.append((member.key, Self.argumentText(member.value, type: type)))
            }
        } else {
            // GET: a query pair naming a parameter is an argument; the others filter the result.
            for pair in request.functionArguments where function.argument(pair.name) != nil {
                given.removeAll { $0.name == pair.name }
                given.append((pair.name, pair.value))
            }
        }
        var conditions = request.conditions
        if request.payload == nil {
            for pair in request.functionArguments where function.argument(pair.name) == nil {
                conditions.append(try QueryGrammar.parseFilter(column: pair.name, pair.value))
            }
        }
        let names = given.map(\.name)
        let required = function.arguments.filter { !$0.hasDefault }.map(\.name)
        guard names.allSatisfy({ function.argument($0) != nil }), required.allSatisfy(names.contains) else {
            throw .unknownFunction(name: function.name, arguments: names, hint: nil)
        }
        // Arguments in the function's order so the statement text is stable for a request shape.
        var argumentList: [SQL] = []
        for argument in function.arguments {
            guard let value = given.first(where: { $0.name == argument.name }) else { continue }
            argumentList.append("\(ident: argument.name) := \(value.value)::\(unsafeRaw: Self.castType(argument.type))")  // type: from the catalog
        }
        let invocation: SQL = "\(unsafeRaw: quoteIdentifier("public")).\(ident: function.name)(\(SQL.join(argumentList, separator: ", ")))"
        var readOnly = false
        if case .call(readOnly: true, _) = request.action { readOnly = true }
        var plan = ActionPlan(kind: .call(returnsVoid: function.returnsVoid), request: request, statement: nil, readOnly: readOnly,
                              mustDecide: request.singleObject || (request.preferences.maxAffected != nil && request.preferences.handling == .strict),
                              rollback: request.preferences.transaction.map { $0 == .rollback } ?? rollbackByDefault, resource: function.name)
        if readOnly { plan.mustDecide = false }
        var limits: SQL = ""
        if let limit = request.limit { limits.append(" LIMIT \(limit)") }
        if request.offset > 0 { limits.append(" OFFSET \(request.offset)") }
        if function.returnsVoid {
            plan.statement = "SELECT NULL::bigint AS total, 1::bigint AS page_total, NULL::text AS body, NULL::bigint AS inserted FROM (SELECT \(invocation)) pgrst_call"
        } else if function.returnsComposite {
            // Rows of a table type or of OUT columns: `select`, filters and `order` apply to them
            // as to a table's. Columns are checked when the type is a known table; otherwise
            // PostgreSQL names an unknown one (42703).
            let rowTable = Self.resultTable(function, request: request, conditions: conditions, cache: cache)
            let builder = QueryBuilder(table: rowTable)
            try builder.validate(conditions)
            for term in request.order where rowTable.column(term.column) == nil { throw .unknownColumn(column: term.column, table: function.name) }
            for item in request.select where item.column != "*" && rowTable.column(item.column) == nil {
                throw .unknownColumn(column: item.column, table: function.name)
            }
            var query = SQLBuilder()
            query.raw("SELECT ")
            if request.select.allSatisfy(\.isStar) {
                query.raw("pgrst_call.*")
            } else {
                builder.writeSelectList(request.select.filter { !$0.isStar } , qualifier: nil, into: &query)
                if request.select.contains(where: \.isStar) { query.raw(", pgrst_call.*") }
            }
            query.raw(" FROM ")
            query.append(invocation)
            query.raw(" pgrst_call")
            builder.writeWhere(conditions, denyAll: false, into: &query)
            builder.writeOrder(request.order, into: &query)
            query.append(limits)
            let source = query.sql
            var media = request.media
            // A function returning one row answers an object, as PostgREST does.
            if !function.returnsSet, media == .json { media = .singleObject(stripNulls: false) }
            var statement: SQL = "WITH pgrst_source AS (\(source)) "
            statement.append(Self.aggregate(media: media, total: "NULL::bigint", inserted: "NULL::bigint", from: "pgrst_source", nullForEmptyObject: !function.returnsSet))
            plan.statement = statement
        } else {
            let source: SQL = "SELECT \(invocation) AS pgrst_scalar\(limits)"
            let body: SQL
            if function.returnsSet {
                body = request.singleObject
                    ? "coalesce((json_agg(_postgrest_t.pgrst_scalar) -> 0)::text, '')"
                    : "coalesce(json_agg(_postgrest_t.pgrst_scalar), '[]')::text"
            } else {
                body = "coalesce((json_agg(_postgrest_t.pgrst_scalar) -> 0)::text, 'null')"
            }
            plan.statement = "WITH pgrst_source AS (\(source)) SELECT NULL::bigint AS total, pg_catalog.count(_postgrest_t) AS page_total, \(body) AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t"
        }
        return plan
    }

    /// The rows a composite-returning function answers, as a table named `pgrst_call`: the
    /// columns of its table type when the cache knows it, else the names the request uses.
    static func resultTable(_ function: SchemaCache.Function, request: ApiRequest, conditions: [Condition], cache: SchemaCache) -> SchemaCache.Table {
        if let known = cache.tables[function.returnType] {
            return SchemaCache.Table(name: "pgrst_call", columns: known.columns, primaryKey: [])
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
            return SQL.arrayLiteral(items.map { item -> String? in
                if case .array = item { return item.serialized }
                return argumentText(item, type: "")
            })
        case .array, .object: return value.serialized
        }
    }
}
