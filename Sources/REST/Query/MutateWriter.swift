/// INSERT, UPDATE and DELETE from their plans (PostgREST's mutation queries).
extension QueryWriter {
    static func write(_ plan: MutatePlan, into sql: inout SQLBuilder) {
        let builder = QueryBuilder(table: plan.table)
        let table = qualified(plan.table.qualifiedName)
        switch plan.action {
        case .insert(let insert):
            sql.raw("INSERT INTO ")
            sql.raw(table)
            write(insert, builder, into: &sql)
            sql.raw(" RETURNING ")
            switch plan.returning {
            case .nothing: sql.raw("1")
            case .columns(let columns): builder.writeColumnList(columns, into: &sql)
            case .rows: sql.raw(table + ".*")
            }
            if plan.returnsInserted { sql.raw(", (xmax::text = '0') AS pgrst_inserted") }
            return
        case .updateNothing:
            sql.raw("SELECT \(table).* FROM \(table) WHERE false")
            return
        case .update(let keys, let payload, let missingDefaults):
            sql.raw("UPDATE ")
            sql.raw(table)
            writeSet(keys, payload: payload, missingDefaults: missingDefaults, builder, into: &sql)
        case .delete:
            sql.raw("DELETE FROM ")
            sql.raw(table)
        }
        // UPDATE and DELETE: the rows chosen, then all of each row returned.
        writeWhere(plan.conditions, denyAll: plan.denyAll, builder, into: &sql)
        if let limited = plan.limited {
            // PostgREST's limited update/delete: only the first rows in `order`, by their `ctid`.
            sql.raw(plan.conditions.isEmpty && !plan.denyAll ? " WHERE " : " AND ")
            sql.raw("ctid = ANY(ARRAY")
            writeSubquery(limited, into: &sql)
            sql.raw(")")
        }
        sql.raw(" RETURNING ")
        sql.raw(table + ".*")
    }

    /// The rows and ` ON CONFLICT …` of an INSERT.
    static func write(_ insert: InsertPlan, _ builder: QueryBuilder, into sql: inout SQLBuilder) {
        if insert.keys.isEmpty {
            // `{}` or `[{}, …]`: every column takes its default, once per element.
            if insert.payload.isArray {
                sql.raw(" SELECT FROM json_array_elements(")
                sql.bind(insert.payload.raw)
                sql.raw("::json)")
            } else {
                sql.raw(" DEFAULT VALUES")
            }
        } else {
            sql.raw(" (")
            builder.writeColumnList(insert.keys, into: &sql)
            sql.raw(") ")
            builder.writeJSONRows(payload: insert.payload, keys: insert.keys, applyDefaults: insert.applyDefaults, into: &sql)
        }
        guard !insert.conflict.isEmpty else { return }
        sql.raw(" ON CONFLICT (")
        builder.writeColumnList(insert.conflict, into: &sql)
        sql.raw(") ")
        guard insert.merge, !insert.keys.isEmpty else {
            sql.raw("DO NOTHING")
            return
        }
        sql.raw("DO UPDATE SET ")
        sql.raw(insert.keys.map { builder.quoted($0) + " = EXCLUDED." + builder.quoted($0) }.joined(separator: ", "))
        if let owner = insert.owner {
            sql.raw(" WHERE ")
            builder.writeColumn(owner.column, into: &sql)
            sql.raw(" = ")
            sql.bind(owner.user)
        }
    }

    /// ` SET "a" = pgrst_body."a", … FROM json_to_record($n::json) AS pgrst_body(…)`. With
    /// `columns=` and `Prefer: missing=default`, a listed column the body lacks takes its default
    /// (the column's, else its domain's), as PostgREST does.
    static func writeSet(_ keys: [String], payload: Payload, missingDefaults: Bool, _ builder: QueryBuilder, into sql: inout SQLBuilder) {
        sql.raw(" SET ")
        let present = Set(payload.keys)
        for (index, key) in keys.enumerated() {
            if index > 0 { sql.raw(", ") }
            sql.raw(builder.quoted(key))
            if missingDefaults && !present.contains(key) {
                sql.raw(" = DEFAULT")
            } else {
                sql.raw(" = ")
                builder.writeBodyValue(key, into: &sql)
            }
        }
        sql.raw(" FROM json_to_record(")
        sql.bind(payload.raw)
        sql.raw("::json) AS pgrst_body(")
        builder.writeTypedColumns(keys, into: &sql)
        sql.raw(")")
    }
}
