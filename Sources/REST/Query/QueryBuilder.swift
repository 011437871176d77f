import Postgres

/// SQL fragments for one table, written into a `SQLBuilder`. Identifiers come only from the
/// schema cache (quoted there, once); values only as binds.
struct QueryBuilder {
    let table: SchemaCache.Table

    /// The quoted name of a column of the table (callers validated it).
    func quoted(_ column: String) -> String { table.quotedColumns[column] ?? quoteIdentifier(column) }

    /// `"public"."children"`.
    func writeQualified(into sql: inout SQLBuilder) {
        sql.raw(table.qualifiedName)
    }

    /// `"children"."user_id"`; a computed field is its function applied to the row,
    /// `"public"."f"("children")`.
    func writeColumn(_ name: String, into sql: inout SQLBuilder) {
        if !table.computed.isEmpty, let call = computedCall(name, qualifier: nil) {
            sql.raw(call)
            return
        }
        sql.raw(table.quotedName)
        sql.raw(".")
        sql.raw(quoted(name))
    }

    /// A computed field (not shadowed by a column) as a call on the row: the table's own row, or
    /// `pgrst_source`'s columns made a row of the table's type again (a mutation's RETURNING).
    func computedCall(_ name: String, qualifier: String?) -> String? {
        guard table.column(name) == nil, table.computed[name] != nil else { return nil }
        let row = qualifier == nil ? table.quotedName : "ROW(" + table.rowReturned + ")::" + table.qualifiedName
        return quoteIdentifier(table.schema) + "." + quoteIdentifier(name) + "(" + row + ")"
    }

    func writeColumnList(_ names: [String], into sql: inout SQLBuilder) {
        for (index, name) in names.enumerated() {
            if index > 0 { sql.raw(", ") }
            sql.raw(quoted(name))
        }
    }

    /// `"a" uuid, "b" text[]` for json_to_record(set); types from the catalog. A column whose
    /// domain has a json → domain representation is read as json (its function parses it).
    func writeTypedColumns(_ names: [String], into sql: inout SQLBuilder) {
        for (index, name) in names.enumerated() {
            if index > 0 { sql.raw(", ") }
            sql.raw(quoted(name))
            sql.raw(" ")
            let column = table.column(name)!
            sql.raw(column.representation.fromJSON == nil ? column.type : "json")
        }
    }

    /// `pgrst_body."a"`: a body's value for a column, through its json → domain function if the
    /// column's domain has one (PostgREST's domain representations).
    func writeBodyValue(_ name: String, into sql: inout SQLBuilder) {
        let parser = table.column(name)?.representation.fromJSON
        if let parser {
            sql.raw(parser)
            sql.raw("(")
        }
        sql.raw("pgrst_body.")
        sql.raw(quoted(name))
        if parser != nil { sql.raw(")") }
    }

    /// A selected field, through its domain → json function when the column's domain has one
    /// (not along a JSON path, where the value is json already).
    func writeOutputField(_ name: String, path: [JSONPathStep], qualifier: String? = nil, into sql: inout SQLBuilder) {
        let formatter = path.isEmpty ? outputFormatter(name) : nil
        if let formatter {
            sql.raw(formatter)
            sql.raw("(")
        }
        writeField(name, path: path, qualifier: qualifier, into: &sql)
        if formatter != nil { sql.raw(")") }
    }

    /// The domain → json function of a column (not of a computed field).
    func outputFormatter(_ name: String) -> String? {
        table.column(name)?.representation.toJSON
    }

    /// `"children"."metadata"`, or into it along a JSON path: `"t"."data"->$1::text->>$2::int`
    /// for json and jsonb columns, `to_jsonb("t"."goals")->$1::int` for any other type (arrays,
    /// composites), as PostgREST writes it. Keys and indexes are binds, never statement text.
    /// A computed field is its function's call on the row (`computedCall`).
    func writeField(_ name: String, path: [JSONPathStep], qualifier: String? = nil, into sql: inout SQLBuilder) {
        let computed = table.computed.isEmpty ? nil : computedCall(name, qualifier: qualifier)
        let column = computed ?? (qualifier ?? table.quotedName) + "." + quoted(name)
        guard !path.isEmpty else {
            sql.raw(column)
            return
        }
        let type = table.fieldType(name)
        let isJSON = type == "json" || type == "jsonb"
        sql.raw(isJSON ? column : "to_jsonb(" + column + ")")
        for step in path {
            sql.raw(step.asText ? "->>" : "->")
            switch step.operand {
            case .key(let key):
                sql.bind(key)
                sql.raw("::text")
            case .index(let index):
                sql.bind(index)
                sql.raw("::int")
            }
        }
    }

    /// The select list over the table (`qualifier` nil) or over `pgrst_source`; `*` expands to
    /// the table's columns (precomputed). Returns the 1-based positions the list must be grouped
    /// by: with an aggregate in it, every column that is not one (none without an aggregate).
    @discardableResult
    func writeSelectList(_ items: [SelectItem], qualifier: String?, into sql: inout SQLBuilder) -> [Int] {
        let aggregated = items.contains { $0.aggregate != nil }
        var position = 0
        var grouping: [Int] = []
        for (index, item) in items.enumerated() {
            if index > 0 { sql.raw(", ") }
            let width = writeSelectItem(item, qualifier: qualifier, into: &sql)
            if aggregated && item.aggregate == nil { grouping += (position + 1)..<(position + 1 + width) }
            position += width
        }
        if items.isEmpty { sql.raw("NULL") }
        return grouping
    }

    /// One field of a select list: `*` (every column), or the column along its JSON path, cast,
    /// aggregated, its aggregate cast, named as PostgREST names it. Returns the number of
    /// output columns written.
    @discardableResult
    func writeSelectItem(_ item: SelectItem, qualifier: String?, into sql: inout SQLBuilder) -> Int {
        if item.column == "*" && item.aggregate == nil {
            sql.raw(qualifier == nil ? table.starSelect : table.starReturned)
            return table.columns.count
        }
        writeSelectValue(item, into: &sql) { sql in
            writeOutputField(item.column, path: item.jsonPath, qualifier: qualifier, into: &sql)
        }
        let computed = table.column(item.column) == nil && table.computed[item.column] != nil
        let formatted = item.jsonPath.isEmpty && outputFormatter(item.column) != nil
        if item.alias != nil || item.cast != nil || !item.jsonPath.isEmpty || item.aggregate != nil || computed || formatted, let name = item.outputName {
            sql.raw(" AS ")
            sql.raw(quoteIdentifier(name))
        }
        return 1
    }

    /// `CAST(pg_catalog.sum(CAST(<value> AS cast)) AS aggregateCast)`, each part when asked for;
    /// `pg_catalog.count(*)` for `count()`. The casts are type names the grammar restricted to
    /// letters, digits, `_`, ` `, `[]`.
    func writeSelectValue(_ item: SelectItem, into sql: inout SQLBuilder, value: (inout SQLBuilder) -> Void) {
        if item.aggregateCast != nil, item.aggregate != nil { sql.raw("CAST(") }
        if let aggregate = item.aggregate {
            sql.raw("pg_catalog.\(aggregate.rawValue)(")
            if item.column == "*" {
                sql.raw("*)")
                if let cast = item.aggregateCast { sql.raw(" AS \(cast))") }
                return
            }
        }
        if item.cast != nil { sql.raw("CAST(") }
        value(&sql)
        if let cast = item.cast { sql.raw(" AS \(cast))") }
        if item.aggregate != nil {
            sql.raw(")")
            if let cast = item.aggregateCast { sql.raw(" AS \(cast))") }
        }
    }

    /// ` GROUP BY 1, 3` (positions of the select list); nothing when there is nothing to group.
    static func writeGroupBy(_ positions: [Int], into sql: inout SQLBuilder) {
        guard !positions.isEmpty else { return }
        sql.raw(" GROUP BY ")
        sql.raw(positions.map(String.init).joined(separator: ", "))
    }

    /// `(SELECT <select list> FROM pgrst_source ORDER BY …)`: the rows a mutation returned,
    /// shaped by `select` and in `order` (PostgREST orders a write's representation).
    func writeReturned(_ items: [SelectItem], order: [OrderTerm], into sql: inout SQLBuilder) {
        sql.raw("(SELECT ")
        let grouping = writeSelectList(items, qualifier: "pgrst_source", into: &sql)
        sql.raw(" FROM pgrst_source")
        Self.writeGroupBy(grouping, into: &sql)
        writeOrder(order, qualifier: "pgrst_source", into: &sql)
        sql.raw(")")
    }

    /// The body's rows as a SELECT of `keys` (PostgREST's fromJsonBodyF): json_to_record(set)
    /// with the catalog's types; with `missing=default`, a key a row lacks takes the column default.
    func writeJSONRows(payload: Payload, keys: [String], applyDefaults: Bool, into sql: inout SQLBuilder) {
        if applyDefaults {
            sql.raw("SELECT ")
            for (index, key) in keys.enumerated() {
                if index > 0 { sql.raw(", ") }
                if let expression = table.column(key)?.defaultExpression {
                    // The default expression comes from the catalog (pg_get_expr), not from the request.
                    sql.raw("CASE WHEN pgrst_elem.value -> ")
                    sql.bind(key)
                    sql.raw(" IS NULL THEN \(expression) ELSE ")
                    writeBodyValue(key, into: &sql)
                    sql.raw(" END")
                } else {
                    writeBodyValue(key, into: &sql)
                }
            }
            sql.raw(" FROM json_array_elements(")
            sql.bind(payload.isArray ? payload.raw : "[" + payload.raw + "]")
            sql.raw("::json) AS pgrst_elem, LATERAL json_to_record(pgrst_elem.value) AS pgrst_body(")
            writeTypedColumns(keys, into: &sql)
            sql.raw(")")
            return
        }
        sql.raw("SELECT ")
        for (index, key) in keys.enumerated() {
            if index > 0 { sql.raw(", ") }
            writeBodyValue(key, into: &sql)
        }
        sql.raw(payload.isArray ? " FROM json_to_recordset(" : " FROM json_to_record(")
        sql.bind(payload.raw)
        sql.raw("::json) AS pgrst_body(")
        writeTypedColumns(keys, into: &sql)
        sql.raw(")")
    }

    /// Throws 42703 for a filter on a column the table lacks.
    func validate(_ conditions: [Condition]) throws(RESTError) {
        for condition in conditions {
            switch condition {
            case .filter(let filter):
                if !table.hasField(filter.column) { throw .unknownColumn(column: filter.column, table: table.name) }
            case .not(let inner): try validate([inner])
            case .and(let items), .or(let items): try validate(items)
            case .scope(.family(let column, _, _, _)), .scope(.familyID(let column, _, _)):
                if table.column(column) == nil { throw .unknownColumn(column: column, table: table.name) }
            case .embedded:
                break
            }
        }
    }

    func writeWhere(_ conditions: [Condition], denyAll: Bool, into sql: inout SQLBuilder) {
        if conditions.isEmpty {
            if denyAll { sql.raw(" WHERE false") }
            return
        }
        sql.raw(" WHERE ")
        for (index, condition) in conditions.enumerated() {
            if index > 0 { sql.raw(" AND ") }
            write(condition, into: &sql)
        }
        if denyAll { sql.raw(" AND false") }
    }

    func write(_ condition: Condition, into sql: inout SQLBuilder) {
        switch condition {
        case .not(let inner):
            sql.raw("NOT ")
            write(inner, into: &sql)
        case .and(let items), .or(let items):
            let separator: String
            if case .and = condition { separator = " AND " } else { separator = " OR " }
            sql.raw("(")
            for (index, item) in items.enumerated() {
                if index > 0 { sql.raw(separator) }
                write(item, into: &sql)
            }
            sql.raw(")")
        case .filter(let filter):
            write(filter, into: &sql)
        case .scope(let scope):
            write(scope, into: &sql)
        case .embedded(let fragment):
            sql.append(fragment)
        }
    }

    /// The ownership middleware's rule, with the caller's id bound and the membership table's
    /// names quoted.
    func write(_ scope: OwnershipScope, into sql: inout SQLBuilder) {
        switch scope {
        case .family(let column, let user, let ownerOnly, let membership):
            let table = quoteIdentifier(membership.schema) + "." + quoteIdentifier(membership.table)
            let family = quoteIdentifier(membership.familyColumn)
            let member = quoteIdentifier(membership.userColumn)
            sql.raw("(")
            writeColumn(column, into: &sql)
            sql.raw(" = ")
            sql.bind(user)
            sql.raw(" OR ")
            writeColumn(column, into: &sql)
            sql.raw(" IN (SELECT theirs.\(member) FROM \(table) mine JOIN \(table) theirs ON theirs.\(family) = mine.\(family) WHERE mine.\(member) = ")
            sql.bind(user)
            if ownerOnly {
                sql.raw(" AND mine.\(quoteIdentifier(membership.roleColumn)) = ")
                sql.bind(membership.ownerRole)
            }
            sql.raw("))")
        case .familyID(let column, let user, let membership):
            writeColumn(column, into: &sql)
            sql.raw(
                " IN (SELECT mine.\(quoteIdentifier(membership.familyColumn)) FROM \(quoteIdentifier(membership.schema)).\(quoteIdentifier(membership.table)) mine WHERE mine.\(quoteIdentifier(membership.userColumn)) = "
            )
            sql.bind(user)
            sql.raw(")")
        }
    }

    /// One filter (PostgREST's SqlFragment.pgFmtFilter): operands are unknown-typed binds that
    /// PostgreSQL casts to the column's type.
    func write(_ filter: Filter, into sql: inout SQLBuilder) {
        if [.fts, .plfts, .phfts, .wfts].contains(filter.op), let type = table.fieldType(filter.column),
            !(table.column(filter.column)?.isTSVector ?? (type == "tsvector")) || !filter.jsonPath.isEmpty
        {
            // PostgREST searches a text or json column through to_tsvector([language,] column).
            sql.raw("to_tsvector(")
            if let language = filter.language {
                sql.bind(language)
                sql.raw("::regconfig, ")
            }
            writeField(filter.column, path: filter.jsonPath, into: &sql)
            sql.raw(")")
        } else {
            writeField(filter.column, path: filter.jsonPath, into: &sql)
        }
        switch filter.operand {
        case .isValue(let value):
            switch value {
            case .null: sql.raw(" IS NULL")
            case .notNull: sql.raw(" IS NOT NULL")
            case .true: sql.raw(" IS TRUE")
            case .false: sql.raw(" IS FALSE")
            case .unknown: sql.raw(" IS UNKNOWN")
            }
        case .list(let items):
            // = ANY($1), not IN ($1, $2, …): one bind, one statement text per shape, and an empty list works.
            sql.raw(" = ANY(")
            if let parser = textParser(filter) {
                // Each element through the domain's text parser (PostgREST's unnest of the list).
                sql.raw("SELECT \(parser)(unnest(")
                sql.bind(SQL.arrayLiteral(items))
                sql.raw("::text[]))")
            } else {
                sql.bind(SQL.arrayLiteral(items))
            }
            sql.raw(")")
        case .value(let value) where filter.quantifier != nil:
            // `col LIKE ANY($1)` with the `{…}` list as one array bind (`*` is `%` in patterns).
            sql.raw(Self.symbol(filter.op) ?? " = ")
            sql.raw(filter.quantifier == .all ? "ALL(" : "ANY(")
            if let parser = textParser(filter) {
                sql.raw("SELECT \(parser)(unnest(")
                sql.bind(Self.operandText(filter.op, value))
                sql.raw("::text[]))")
            } else {
                sql.bind(Self.operandText(filter.op, value))
            }
            sql.raw(")")
        case .value(let value):
            if let symbol = Self.symbol(filter.op) {
                sql.raw(symbol)
                if let parser = textParser(filter) {
                    sql.raw(parser)
                    sql.raw("(")
                    sql.bind(value)
                    sql.raw("::text)")
                } else {
                    sql.bind(Self.operandText(filter.op, value))
                }
                return
            }
            // The full-text operators: `@@ to_tsquery([language,] value)`.
            let function: String
            switch filter.op {
            case .plfts: function = "plainto_tsquery"
            case .phfts: function = "phraseto_tsquery"
            case .wfts: function = "websearch_to_tsquery"
            default: function = "to_tsquery"
            }
            sql.raw(" @@ \(function)(")
            if let language = filter.language {
                sql.bind(language)
                sql.raw("::regconfig, ")
            }
            sql.bind(value)
            sql.raw(")")
        }
    }

    /// The text → domain function a filter's value goes through (PostgREST's domain
    /// representations): on a column (no JSON path) whose domain has one, for every operator but
    /// `like`/`ilike` (patterns), `isdistinct`, `is` and full-text search, as PostgREST.
    func textParser(_ filter: Filter) -> String? {
        guard filter.jsonPath.isEmpty, let parser = table.column(filter.column)?.representation.fromText else { return nil }
        switch filter.op {
        case .like, .ilike, .isdistinct, .is, .fts, .plfts, .phfts, .wfts: return nil
        default: return parser
        }
    }

    /// PATCH and DELETE with `limit` (PostgREST's limited update/delete): only the first rows in
    /// `order` are touched, chosen by their `ctid` (appended to the statement's WHERE).
    func writeLimitedRows(
        _ conditions: [Condition], denyAll: Bool, order: [OrderTerm], related: [Int: SQL] = [:], limit: Int?, offset: Int, into sql: inout SQLBuilder
    ) {
        guard let limit else { return }
        sql.raw(conditions.isEmpty && !denyAll ? " WHERE " : " AND ")
        sql.raw("ctid = ANY(ARRAY(SELECT ctid FROM ")
        writeQualified(into: &sql)
        writeWhere(conditions, denyAll: denyAll, into: &sql)
        writeOrder(order, related: related, into: &sql)
        sql.raw(" LIMIT ")
        sql.bind(String(limit))
        if offset > 0 {
            sql.raw(" OFFSET ")
            sql.bind(String(offset))
        }
        sql.raw("))")
    }

    /// The SQL operator of a binary filter (PostgREST's SqlFragment.operators); nil for the
    /// full-text ones, written as a function call.
    static func symbol(_ op: FilterOperator) -> String? {
        switch op {
        case .eq, .in, .is: return " = "
        case .neq: return " <> "
        case .gt: return " > "
        case .gte: return " >= "
        case .lt: return " < "
        case .lte: return " <= "
        case .like: return " LIKE "
        case .ilike: return " ILIKE "
        case .match: return " ~ "
        case .imatch: return " ~* "
        case .isdistinct: return " IS DISTINCT FROM "
        case .cs: return " @> "
        case .cd: return " <@ "
        case .ov: return " && "
        case .sl: return " << "
        case .sr: return " >> "
        // PostgREST: nxr "does not extend to the right" (&<), nxl "… to the left" (&>).
        case .nxr: return " &< "
        case .nxl: return " &> "
        case .adj: return " -|- "
        case .fts, .plfts, .phfts, .wfts: return nil
        }
    }

    /// `*` stands for `%` in like patterns (URLs and `%` don't mix).
    static func operandText(_ op: FilterOperator, _ value: String) -> String {
        op == .like || op == .ilike ? String(value.map { $0 == "*" ? "%" : $0 }) : value
    }

    /// ` ORDER BY …` over the table's rows (`qualifier`: over `pgrst_source`'s); `related`: the
    /// value of each `rel(col)` term, by its position (the planner's `relatedOrders`).
    func writeOrder(_ terms: [OrderTerm], qualifier: String? = nil, related: [Int: SQL] = [:], into sql: inout SQLBuilder) {
        guard !terms.isEmpty else { return }
        sql.raw(" ORDER BY ")
        for (index, term) in terms.enumerated() {
            if index > 0 { sql.raw(", ") }
            if let value = related[index] {
                sql.append(value)
            } else {
                writeField(term.column, path: term.jsonPath, qualifier: qualifier, into: &sql)
            }
            if let descending = term.descending { sql.raw(descending ? " DESC" : " ASC") }
            if let nulls = term.nulls { sql.raw(nulls == .first ? " NULLS FIRST" : " NULLS LAST") }
        }
    }
}
