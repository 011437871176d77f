import Postgres

/// SQL fragments for one table, written into a `SQLBuilder`. Identifiers come only from the
/// schema cache (quoted there, once); values only as binds.
struct QueryBuilder {
    let table: SchemaCache.Table

    /// The quoted name of a column of the table (callers validated it).
    func quoted(_ column: String) -> String { table.quotedColumns[column] ?? quoteIdentifier(column) }

    /// `"children"."user_id"`; a computed field is its function applied to the row,
    /// `"public"."f"("children")`.
    func writeColumn(_ name: String, into sql: inout SQLBuilder) {
        if !table.computed.isEmpty, let call = computedCall(name, qualifier: nil) {
            sql.unsafeRaw(call)
            return
        }
        sql.unsafeRaw(table.quotedName)
        sql.unsafeRaw(".")
        sql.unsafeRaw(quoted(name))
    }

    /// A computed field (not shadowed by a column) as a call on the row: the table's own row, or
    /// `pgrst_source`'s columns made a row of the table's type again (a mutation's RETURNING).
    func computedCall(_ name: String, qualifier: String?) -> String? {
        guard table.column(name) == nil, table.computed[name] != nil else { return nil }
        let row = qualifier == nil ? table.quotedName : "ROW(" + table.rowReturned + ")::" + QueryWriter.qualified(table.qualifiedName)
        return QueryWriter.qualified(table.function(name)) + "(" + row + ")"
    }

    func writeColumnList(_ names: [String], into sql: inout SQLBuilder) {
        for (index, name) in names.enumerated() {
            if index > 0 { sql.unsafeRaw(", ") }
            sql.unsafeRaw(quoted(name))
        }
    }

    /// `"a" uuid, "b" text[]` for json_to_record(set); types from the catalog. A column whose
    /// domain has a json → domain representation is read as json (its function parses it).
    func writeTypedColumns(_ names: [String], into sql: inout SQLBuilder) {
        for (index, name) in names.enumerated() {
            if index > 0 { sql.unsafeRaw(", ") }
            sql.unsafeRaw(quoted(name))
            sql.unsafeRaw(" ")
            let column = table.column(name)!
            sql.unsafeRaw(column.representation.fromJSON == nil ? column.type : "json")
        }
    }

    /// `pgrst_body."a"`: a body's value for a column, through its json → domain function if the
    /// column's domain has one (PostgREST's domain representations).
    func writeBodyValue(_ name: String, into sql: inout SQLBuilder) {
        let parser = table.column(name)?.representation.fromJSON
        if let parser {
            sql.unsafeRaw(parser)
            sql.unsafeRaw("(")
        }
        sql.unsafeRaw("pgrst_body.")
        sql.unsafeRaw(quoted(name))
        if parser != nil { sql.unsafeRaw(")") }
    }

    /// A selected field, through its domain → json function when the column's domain has one
    /// (not along a JSON path, where the value is json already).
    func writeOutputField(_ name: String, path: [JSONPathStep], qualifier: String? = nil, into sql: inout SQLBuilder) {
        let formatter = path.isEmpty ? outputFormatter(name) : nil
        if let formatter {
            sql.unsafeRaw(formatter)
            sql.unsafeRaw("(")
        }
        writeField(name, path: path, qualifier: qualifier, into: &sql)
        if formatter != nil { sql.unsafeRaw(")") }
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
            sql.unsafeRaw(column)
            return
        }
        let type = table.fieldType(name)
        let isJSON = type == "json" || type == "jsonb"
        sql.unsafeRaw(isJSON ? column : "to_jsonb(" + column + ")")
        for step in path {
            sql.unsafeRaw(step.asText ? "->>" : "->")
            switch step.operand {
            case .key(let key):
                sql.bind(key)
                sql.unsafeRaw("::text")
            case .index(let index):
                sql.bind(index)
                sql.unsafeRaw("::int")
            }
        }
    }

    /// One field of a select list: `*` (every column), or the column along its JSON path, cast,
    /// aggregated, its aggregate cast, named as PostgREST names it. Returns the number of
    /// output columns written.
    @discardableResult
    func writeSelectItem(_ item: SelectItem, qualifier: String?, into sql: inout SQLBuilder) -> Int {
        if item.column == "*" && item.aggregate == nil {
            sql.unsafeRaw(qualifier == nil ? table.starSelect : table.starReturned)
            return table.columns.count
        }
        writeSelectValue(item, into: &sql) { sql in
            writeOutputField(item.column, path: item.jsonPath, qualifier: qualifier, into: &sql)
        }
        let computed = table.column(item.column) == nil && table.computed[item.column] != nil
        let formatted = item.jsonPath.isEmpty && outputFormatter(item.column) != nil
        if item.alias != nil || item.cast != nil || !item.jsonPath.isEmpty || item.aggregate != nil || computed || formatted, let name = item.outputName {
            sql.unsafeRaw(" AS ")
            sql.unsafeRaw(quoteIdentifier(name))
        }
        return 1
    }

    /// `CAST(pg_catalog.sum(CAST(<value> AS cast)) AS aggregateCast)`, each part when asked for;
    /// `pg_catalog.count(*)` for `count()`. The casts are type names the grammar restricted to
    /// letters, digits, `_`, ` `, `[]`.
    func writeSelectValue(_ item: SelectItem, into sql: inout SQLBuilder, value: (inout SQLBuilder) -> Void) {
        if item.aggregateCast != nil, item.aggregate != nil { sql.unsafeRaw("CAST(") }
        if let aggregate = item.aggregate {
            sql.unsafeRaw("pg_catalog.\(aggregate.rawValue)(")
            if item.column == "*" {
                sql.unsafeRaw("*)")
                if let cast = item.aggregateCast { sql.unsafeRaw(" AS \(cast))") }
                return
            }
        }
        if item.cast != nil { sql.unsafeRaw("CAST(") }
        value(&sql)
        if let cast = item.cast { sql.unsafeRaw(" AS \(cast))") }
        if item.aggregate != nil {
            sql.unsafeRaw(")")
            if let cast = item.aggregateCast { sql.unsafeRaw(" AS \(cast))") }
        }
    }

    /// The body's rows as a SELECT of `keys` (PostgREST's fromJsonBodyF): json_to_record(set)
    /// with the catalog's types; with `missing=default`, a key a row lacks takes the column default.
    func writeJSONRows(payload: Payload, keys: [String], applyDefaults: Bool, into sql: inout SQLBuilder) {
        if applyDefaults {
            sql.unsafeRaw("SELECT ")
            for (index, key) in keys.enumerated() {
                if index > 0 { sql.unsafeRaw(", ") }
                if let expression = table.column(key)?.defaultExpression {
                    // The default expression comes from the catalog (pg_get_expr), not from the request.
                    sql.unsafeRaw("CASE WHEN pgrst_elem.value -> ")
                    sql.bind(key)
                    sql.unsafeRaw(" IS NULL THEN \(expression) ELSE ")
                    writeBodyValue(key, into: &sql)
                    sql.unsafeRaw(" END")
                } else {
                    writeBodyValue(key, into: &sql)
                }
            }
            sql.unsafeRaw(" FROM json_array_elements(")
            sql.bind(payload.isArray ? payload.raw : "[" + payload.raw + "]")
            sql.unsafeRaw("::json) AS pgrst_elem, LATERAL json_to_record(pgrst_elem.value) AS pgrst_body(")
            writeTypedColumns(keys, into: &sql)
            sql.unsafeRaw(")")
            return
        }
        sql.unsafeRaw("SELECT ")
        for (index, key) in keys.enumerated() {
            if index > 0 { sql.unsafeRaw(", ") }
            writeBodyValue(key, into: &sql)
        }
        sql.unsafeRaw(payload.isArray ? " FROM json_to_recordset(" : " FROM json_to_record(")
        sql.bind(payload.raw)
        sql.unsafeRaw("::json) AS pgrst_body(")
        writeTypedColumns(keys, into: &sql)
        sql.unsafeRaw(")")
    }
}
