import Postgres

/// The writers of the plan's values (PostgREST's `Query/QueryBuilder.hs`): each value becomes
/// its text once, front to back, its binds numbered as the statement is rendered.
enum QueryWriter {
    /// `"public"."children"`: the one place a qualified name becomes text.
    static func qualified(_ name: QualifiedIdentifier) -> String {
        quoteIdentifier(name.schema) + "." + quoteIdentifier(name.name)
    }

    /// `SELECT … FROM … WHERE … GROUP BY … ORDER BY … LIMIT … OFFSET …`: one level of a read.
    static func write(_ plan: ReadPlan, into sql: inout SQLBuilder) {
        let builder = QueryBuilder(table: plan.table)
        sql.unsafeRaw("SELECT ")
        write(plan.select, builder, qualifier: plan.qualifier, into: &sql)
        sql.unsafeRaw(" FROM ")
        write(plan.from, into: &sql)
        writeWhere(plan.conditions, denyAll: plan.denyAll, builder, into: &sql)
        writeGroupBy(plan.grouping, into: &sql)
        writeOrder(plan.order, builder, qualifier: plan.qualifier, into: &sql)
        writeRange(limit: plan.limit, offset: plan.offset, into: &sql)
    }

    /// A level as a value: `(SELECT …)`.
    static func writeSubquery(_ plan: ReadPlan, into sql: inout SQLBuilder) {
        sql.unsafeRaw("(")
        write(plan, into: &sql)
        sql.unsafeRaw(")")
    }

    static func write(_ from: FromItem, into sql: inout SQLBuilder) {
        switch from {
        case .table(let name):
            sql.unsafeRaw(qualified(name))
        case .aliased(let tables):
            for (index, table) in tables.enumerated() {
                if index > 0 { sql.unsafeRaw(", ") }
                sql.unsafeRaw(qualified(table.table))
                sql.unsafeRaw(" AS ")
                sql.unsafeRaw(quoteIdentifier(table.alias))
            }
        case .function(let function, let parent, let returned, let rowType, let alias):
            sql.unsafeRaw(qualified(function))
            sql.unsafeRaw("(")
            sql.unsafeRaw(returned ? "ROW(" + parent.rowReturned + ")" : parent.quotedName)
            sql.unsafeRaw("::")
            sql.unsafeRaw(qualified(rowType))
            sql.unsafeRaw(") AS ")
            sql.unsafeRaw(quoteIdentifier(alias))
        case .source:
            sql.unsafeRaw("pgrst_source")
        case .call(let invocation):
            write(invocation, into: &sql)
            sql.unsafeRaw(" pgrst_call")
        }
    }

    static func write(_ projection: Projection, _ builder: QueryBuilder, qualifier: String?, into sql: inout SQLBuilder) {
        switch projection {
        case .fields(let fields): writeSelectList(fields, builder, qualifier: qualifier, into: &sql)
        case .one: sql.unsafeRaw("1")
        case .count: sql.unsafeRaw("pg_catalog.count(*)")
        case .ctid: sql.unsafeRaw("ctid")
        case .field(let column, let path): builder.writeField(column, path: path, into: &sql)
        case .scalar(let value, let named):
            write(value, into: &sql)
            if named { sql.unsafeRaw(" AS value") }
        case .callRows(let fields, let star):
            // `*` over a table's rows whose columns have domain representations: each column, as
            // PostgREST expands it (the function's rows are the table's, representations included).
            let table = builder.table
            let all = table.columns.contains { $0.representation.toJSON != nil } ? table.starSelect : "pgrst_call.*"
            if fields.isEmpty {
                sql.unsafeRaw(all)
            } else {
                writeSelectList(fields, builder, qualifier: qualifier, into: &sql)
                if star { sql.unsafeRaw(", " + all) }
            }
        }
    }

    /// The select list: the request's items (`*` expanded to the table's columns), embeds and
    /// spread columns, each named as PostgREST names it; `NULL` when it has no column.
    static func writeSelectList(_ fields: [SelectField], _ builder: QueryBuilder, qualifier: String?, into sql: inout SQLBuilder) {
        var position = 0
        for field in fields {
            if position > 0 { sql.unsafeRaw(", ") }
            switch field {
            case .item(let item):
                position += builder.writeSelectItem(item, qualifier: qualifier, into: &sql)
            case .embed(let embed, let name, let jsonb):
                write(embed, into: &sql)
                if jsonb { sql.unsafeRaw("::jsonb") }
                sql.unsafeRaw(" AS ")
                sql.unsafeRaw(quoteIdentifier(name))
                position += 1
            case .spread(let column, let jsonb):
                // The aggregate over the subquery's value (`count()`: over `(SELECT 1 …)`).
                let value = SelectItem(column: column.name, aggregate: column.aggregate, aggregateCast: column.aggregateCast)
                builder.writeSelectValue(value, into: &sql) { write(column.value, into: &$0) }
                if jsonb { sql.unsafeRaw("::jsonb") }
                sql.unsafeRaw(" AS ")
                sql.unsafeRaw(quoteIdentifier(column.name))
                position += 1
            }
        }
        if position == 0 { sql.unsafeRaw("NULL") }
    }

    /// `coalesce((SELECT json_agg(r) FROM (…) r), '[]'::json)` for a to-many embed,
    /// `(SELECT row_to_json(r) FROM (…) r)` for a to-one.
    static func write(_ embed: EmbedPlan, into sql: inout SQLBuilder) {
        let row = quoteIdentifier(embed.alias + "_row")
        sql.unsafeRaw(embed.toMany ? "coalesce((SELECT json_agg(\(row)) FROM (" : "(SELECT row_to_json(\(row)) FROM (")
        write(embed.rows, into: &sql)
        sql.unsafeRaw(embed.toMany ? ") \(row)), '[]'::json)" : ") \(row))")
    }

    static func write(_ value: ScalarPlan, into sql: inout SQLBuilder) {
        switch value {
        case .field(let table, let item):
            let builder = QueryBuilder(table: table)
            builder.writeSelectValue(item, into: &sql) { builder.writeOutputField(item.column, path: item.jsonPath, into: &$0) }
        case .one:
            sql.unsafeRaw("1")
        case .embed(let embed):
            write(embed, into: &sql)
        case .spread(var rows, let value, let toMany):
            rows.select = .scalar(value, named: toMany)
            if toMany {
                sql.unsafeRaw("coalesce((SELECT json_agg(pgrst_spread.value) FROM (")
                write(rows, into: &sql)
                sql.unsafeRaw(") pgrst_spread), '[]'::json)")
            } else {
                writeSubquery(rows, into: &sql)
            }
        }
    }

    /// ` WHERE a AND b` (`AND false` when the caller may read none of the rows).
    static func writeWhere(_ conditions: [Predicate], denyAll: Bool, _ builder: QueryBuilder, into sql: inout SQLBuilder) {
        if conditions.isEmpty {
            if denyAll { sql.unsafeRaw(" WHERE false") }
            return
        }
        sql.unsafeRaw(" WHERE ")
        for (index, condition) in conditions.enumerated() {
            if index > 0 { sql.unsafeRaw(" AND ") }
            write(condition, builder, into: &sql)
        }
        if denyAll { sql.unsafeRaw(" AND false") }
    }

    static func write(_ predicate: Predicate, _ builder: QueryBuilder, into sql: inout SQLBuilder) {
        switch predicate {
        case .condition(let condition):
            builder.write(condition, into: &sql)
        case .on(let table, let condition):
            QueryBuilder(table: table).write(condition, into: &sql)
        case .equal(let left, let right):
            write(left, into: &sql)
            sql.unsafeRaw(" = ")
            write(right, into: &sql)
        case .exists(let rows):
            sql.unsafeRaw("EXISTS ")
            writeSubquery(rows, into: &sql)
        case .notExists(let rows):
            sql.unsafeRaw("NOT EXISTS ")
            writeSubquery(rows, into: &sql)
        }
    }

    static func write(_ column: ColumnReference, into sql: inout SQLBuilder) {
        QueryBuilder(table: column.table).writeField(column.name, path: [], qualifier: column.qualifier, into: &sql)
    }

    /// ` GROUP BY 1, 3` (positions of the select list); nothing when there is nothing to group.
    static func writeGroupBy(_ positions: [Int], into sql: inout SQLBuilder) {
        guard !positions.isEmpty else { return }
        sql.unsafeRaw(" GROUP BY ")
        sql.unsafeRaw(positions.map(String.init).joined(separator: ", "))
    }

    /// ` ORDER BY …` over the level's rows; a `rel(col)` term by its own subquery.
    static func writeOrder(_ terms: [OrderPlan], _ builder: QueryBuilder, qualifier: String?, into sql: inout SQLBuilder) {
        guard !terms.isEmpty else { return }
        sql.unsafeRaw(" ORDER BY ")
        for (index, plan) in terms.enumerated() {
            if index > 0 { sql.unsafeRaw(", ") }
            let term = plan.term
            if let position = plan.position {
                sql.unsafeRaw(String(position))
            } else if let related = plan.related {
                writeSubquery(related, into: &sql)
            } else {
                builder.writeField(term.column, path: term.jsonPath, qualifier: qualifier, into: &sql)
            }
            if let descending = term.descending { sql.unsafeRaw(descending ? " DESC" : " ASC") }
            if let nulls = term.nulls { sql.unsafeRaw(nulls == .first ? " NULLS FIRST" : " NULLS LAST") }
        }
    }

    /// ` LIMIT $n OFFSET $m`, each when asked for (no offset for 0).
    static func writeRange(limit: Int?, offset: Int, into sql: inout SQLBuilder) {
        if let limit {
            sql.unsafeRaw(" LIMIT ")
            sql.bind(String(limit))
        }
        if offset > 0 {
            sql.unsafeRaw(" OFFSET ")
            sql.bind(String(offset))
        }
    }
}
