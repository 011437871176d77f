/// INSERT, UPDATE and DELETE from their plans (PostgREST's mutation queries).
extension QueryWriter {
    static func write(_ plan: MutatePlan, into sql: inout SQLBuilder) {
        let builder = QueryBuilder(table: plan.table)
        let table = qualified(plan.table.qualifiedName)
        switch plan.action {
        case .insert(let insert):
            sql.unsafeRaw("INSERT INTO ")
            sql.unsafeRaw(table)
            write(insert, builder, into: &sql)
            sql.unsafeRaw(" RETURNING ")
            switch plan.returning {
            case .nothing: sql.unsafeRaw("1")
            case .columns(let columns): builder.writeColumnList(columns, into: &sql)
            case .rows: sql.unsafeRaw(table + ".*")
            }
            if plan.returnsInserted { sql.unsafeRaw(", (xmax::text = '0') AS pgrst_inserted") }
            return
        case .updateNothing:
            sql.unsafeRaw("SELECT \(table).* FROM \(table) WHERE false")
            return
        case .update(let keys, let payload, let missingDefaults):
            sql.unsafeRaw("UPDATE ")
            sql.unsafeRaw(table)
            writeSet(keys, payload: payload, missingDefaults: missingDefaults, builder, into: &sql)
        case .delete:
            sql.unsafeRaw("DELETE FROM ")
            sql.unsafeRaw(table)
        }
        // UPDATE and DELETE: the rows chosen, then all of each row returned.
        writeWhere(plan.conditions, denyAll: plan.denyAll, builder, into: &sql)
        if let limited = plan.limited {
            // PostgREST's limited update/delete: only the first rows in `order`, by their `ctid`.
            sql.unsafeRaw(plan.conditions.isEmpty && !plan.denyAll ? " WHERE " : " AND ")
            sql.unsafeRaw("ctid = ANY(ARRAY")
            writeSubquery(limited, into: &sql)
            sql.unsafeRaw(")")
        }
        sql.unsafeRaw(" RETURNING ")
        sql.unsafeRaw(table + ".*")
    }

    /// The rows and ` ON CONFLICT …` of an INSERT.
    static func write(_ insert: InsertPlan, _ builder: QueryBuilder, into sql: inout SQLBuilder) {
        if insert.keys.isEmpty {
            // `{}` or `[{}, …]`: every column takes its default, once per element.
            if insert.payload.isArray {
                sql.unsafeRaw(" SELECT FROM json_array_elements(")
                sql.bind(insert.payload.raw)
                sql.unsafeRaw("::json)")
            } else {
                sql.unsafeRaw(" DEFAULT VALUES")
            }
        } else {
            sql.unsafeRaw(" (")
            builder.writeColumnList(insert.keys, into: &sql)
            sql.unsafeRaw(") ")
            builder.writeJSONRows(payload: insert.payload, keys: insert.keys, applyDefaults: insert.applyDefaults, into: &sql)
        }
        guard !insert.conflict.isEmpty else { return }
        sql.unsafeRaw(" ON CONFLICT (")
        builder.writeColumnList(insert.conflict, into: &sql)
        sql.unsafeRaw(") ")
        guard insert.merge, !insert.keys.isEmpty else {
            sql.unsafeRaw("DO NOTHING")
            return
        }
        sql.unsafeRaw("DO UPDATE SET ")
        sql.unsafeRaw(insert.keys.map { builder.quoted($0) + " = EXCLUDED." + builder.quoted($0) }.joined(separator: ", "))
        if let owner = insert.owner {
            sql.unsafeRaw(" WHERE ")
            builder.writeColumn(owner.column, into: &sql)
            sql.unsafeRaw(" = ")
            sql.bind(owner.user)
        }
    }

    /// ` SET "a" = pgrst_body."a", … FROM json_to_record($n::json) AS pgrst_body(…)`. With
    /// `columns=` and `Prefer: missing=default`, a listed column the body lacks takes its default
    /// (the column's, else its domain's), as PostgREST does.
    static func writeSet(_ keys: [String], payload: Payload, missingDefaults: Bool, _ builder: QueryBuilder, into sql: inout SQLBuilder) {
        sql.unsafeRaw(" SET ")
        let present = Set(payload.keys)
        for (index, key) in keys.enumerated() {
            if index > 0 { sql.unsafeRaw(", ") }
            sql.unsafeRaw(builder.quoted(key))
            if missingDefaults && !present.contains(key) {
                sql.unsafeRaw(" = DEFAULT")
            } else {
                sql.unsafeRaw(" = ")
                builder.writeBodyValue(key, into: &sql)
            }
        }
        // An array's rows as PostgREST's update reads them (each target row takes one of them).
        sql.unsafeRaw(payload.isArray ? " FROM json_to_recordset(" : " FROM json_to_record(")
        sql.bind(payload.raw)
        sql.unsafeRaw("::json) AS pgrst_body(")
        builder.writeTypedColumns(keys, into: &sql)
        sql.unsafeRaw(")")
    }
}
