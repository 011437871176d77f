import Identity
import Postgres

/// Resource embedding (PostgREST's `rel(…)` in `select`): a related table reached through a
/// foreign key (or, many-to-many, through a junction table with keys to both sides; or a computed
/// relationship, a function of the parent row returning the table's rows), written as a
/// correlated subquery of the one statement, so PostgreSQL still builds the JSON. Spreads
/// (`...rel(…)`) put each of the related row's columns beside the parent's, one scalar subquery
/// each. Every embedded table (the junction included) gets the caller's ownership rule exactly as
/// a top-level read of it would (and RLS applies underneath): no embed, spread, `!inner`,
/// aggregate or filter reaches a row the caller could not `GET` directly.
extension Planner {

    /// What the embeds of one select list add to its statement: nothing is written until the
    /// whole tree has been checked.
    struct EmbedState {
        var nextAlias = 0
        let caller: Caller
        let request: ApiRequest
        /// The select list answers a write (its rows read back from `pgrst_source`): embedded
        /// `limit` and `offset` are not applied, as PostgREST applies no range to a mutation's
        /// read plan.
        var isWrite = false
    }

    /// What a select list adds to its query besides the columns.
    struct SelectShape {
        /// The `!inner` conditions of its embeds.
        var inner: [Condition] = []
        /// The positions to GROUP BY (with an aggregate in the list: every other column).
        var grouping: [Int] = []
    }

    /// Whether a select list aggregates its own rows: an aggregate of its own, or one in a
    /// spread (PostgREST hoists those to the level the spread merges into).
    static func aggregates(_ items: [SelectItem]) -> Bool {
        items.contains { $0.aggregate != nil || ($0.embed.map { $0.spread && aggregates($0.select) } ?? false) }
    }

    /// `select=count` and `rel(count)` on a table without a `count` column: PostgreSQL reads
    /// `"t"."count"` as `count(t)`, which PostgREST's clients rely on (supabase-js documents
    /// `rel(count)`); it counts the rows whether or not aggregates are enabled, as there.
    static func legacyCounts(_ items: [SelectItem], of table: SchemaCache.Table) -> [SelectItem] {
        guard table.column("count") == nil else { return items }
        return items.map { item in
            guard item.column == "count", item.embed == nil, item.jsonPath.isEmpty, item.aggregate == nil else { return item }
            return SelectItem(column: "*", alias: item.alias, aggregate: .count, aggregateCast: item.cast)
        }
    }

    /// Whether any aggregate appears anywhere in the select tree (what PGRST123 refuses).
    static func usesAggregates(_ items: [SelectItem]) -> Bool {
        items.contains { $0.aggregate != nil || ($0.embed.map { usesAggregates($0.select) } ?? false) }
    }

    /// The select list over `table` (an alias table: its name is what columns are qualified
    /// with; or, with `qualifier`, the rows of `pgrst_source`, a write's returned rows of
    /// `table`), embeds and spreads included.
    func writeSelect(
        _ items: [SelectItem], table: SchemaCache.Table, realName: String, path: String, qualifier: String? = nil,
        state: inout EmbedState, into sql: inout SQLBuilder
    ) throws(RESTError) -> SelectShape {
        let builder = QueryBuilder(table: table)
        let aggregated = Self.aggregates(items)
        var shape = SelectShape()
        var position = 0
        for item in items {
            if let embed = item.embed, embed.spread {
                let childPath = path.isEmpty ? item.column : path + "." + item.column
                let spread = try spreadColumns(
                    item.column, embed: embed, parent: table, parentName: realName, parentQualifier: qualifier, path: childPath, state: &state)
                for column in spread.columns {
                    if position > 0 { sql.raw(", ") }
                    // The aggregate over the subquery's value (`count()`: over `(SELECT 1 …)`).
                    let value = SelectItem(column: column.name, aggregate: column.aggregate, aggregateCast: column.aggregateCast)
                    builder.writeSelectValue(value, into: &sql) { $0.append(column.value) }
                    if aggregated && column.isJSON && column.aggregate == nil { sql.raw("::jsonb") }
                    sql.raw(" AS ")
                    sql.raw(quoteIdentifier(column.name))
                    position += 1
                    if aggregated && column.aggregate == nil { shape.grouping.append(position) }
                }
                if let exists = spread.exists { shape.inner.append(.embedded(exists)) }
                continue
            }
            // `rel()`: an embed with nothing selected (or only such embeds) only filters
            // (`rel!inner()`, `rel=not.is.null`): PostgREST leaves it out of the row.
            if let embed = item.embed, Self.selectsNothing(embed) {
                let name = item.alias ?? item.column
                let (_, exists) = try embedSQL(
                    item.column, embed: embed, parent: table, parentName: realName, parentQualifier: qualifier,
                    path: path.isEmpty ? name : path + "." + name, state: &state)
                if let exists { shape.inner.append(.embedded(exists)) }
                continue
            }
            if position > 0 { sql.raw(", ") }
            guard let embed = item.embed else {
                let width = builder.writeSelectItem(item, qualifier: qualifier, into: &sql)
                if aggregated && item.aggregate == nil { shape.grouping += (position + 1)..<(position + 1 + width) }
                position += width
                continue
            }
            let name = item.alias ?? item.column
            let childPath = path.isEmpty ? name : path + "." + name
            let (value, exists) = try embedSQL(
                item.column, embed: embed, parent: table, parentName: realName, parentQualifier: qualifier, path: childPath, state: &state)
            sql.append(value)
            // Grouped rows need an equality on the embed's value: json has none, jsonb has.
            if aggregated { sql.raw("::jsonb") }
            sql.raw(" AS ")
            sql.raw(quoteIdentifier(name))
            position += 1
            if aggregated { shape.grouping.append(position) }
            if let exists { shape.inner.append(.embedded(exists)) }
        }
        if position == 0 { sql.raw("NULL") }
        return shape
    }

    /// PostgREST's empty embed: `rel()`, or one whose items are all empty embeds.
    static func selectsNothing(_ embed: SelectItem.Embed) -> Bool {
        embed.select.allSatisfy { item in item.embed.map(selectsNothing) ?? false }
    }

    /// The related rows of one embed: `FROM` its table (and a many-to-many's junction) and the
    /// conditions that join them to the parent row (its columns qualified by `parentQualifier`
    /// when it is a row of `pgrst_source`), with the caller's read rule on each table.
    private func related(
        _ target: SchemaCache.Table, alias: String, relationship: Relationship, parent: SchemaCache.Table, parentName: String,
        parentQualifier: String?, caller: Caller
    ) throws(RESTError) -> (from: String, conditions: [Condition], denyAll: Bool) {
        let aliased = SchemaCache.Table(name: alias, columns: target.columns, primaryKey: target.primaryKey)
        let builder = QueryBuilder(table: aliased)
        let parentBuilder = QueryBuilder(table: parent)
        var from = target.qualifiedName + " AS " + quoteIdentifier(alias)
        let scope = try readScope(target.name, caller: caller)
        if let function = relationship.function {
            // The function's rows of the parent row (a write's returned row made one of the
            // parent's type again), as PostgREST's `fn(parent::table)`; the read rule of the
            // returned table applies to them.
            let row = parentQualifier == nil ? parent.quotedName : "ROW(" + parent.rowReturned + ")"
            from =
                quoteIdentifier(parent.schema) + "." + quoteIdentifier(function) + "(" + row + "::" + quoteIdentifier(parent.schema) + "."
                + quoteIdentifier(parentName) + ") AS " + quoteIdentifier(alias)
            return (from, scope.conditions, scope.denyAll)
        }
        var join = SQLBuilder()
        var denyAll = scope.denyAll
        if let targetKey = relationship.targetKey, relationship.cardinality == .manyToMany, let junction = cache.tables[targetKey.table] {
            let junctionAlias = alias + "_j"
            from += ", " + junction.qualifiedName + " AS " + quoteIdentifier(junctionAlias)
            let junctionBuilder = QueryBuilder(table: SchemaCache.Table(name: junctionAlias, columns: junction.columns, primaryKey: junction.primaryKey))
            for (index, pair) in zip(targetKey.columns, targetKey.referencedColumns).enumerated() {
                if index > 0 { join.raw(" AND ") }
                junctionBuilder.writeColumn(pair.0, into: &join)
                join.raw(" = ")
                builder.writeColumn(pair.1, into: &join)
            }
            for pair in relationship.joins {
                join.raw(" AND ")
                junctionBuilder.writeColumn(pair.target, into: &join)
                join.raw(" = ")
                parentBuilder.writeField(pair.parent, path: [], qualifier: parentQualifier, into: &join)
            }
            // The junction's rows are read too: the caller's rule applies to them as well.
            let junctionScope = try readScope(junction.name, caller: caller)
            try junctionBuilder.validate(junctionScope.conditions)
            for condition in junctionScope.conditions {
                join.raw(" AND ")
                junctionBuilder.write(condition, into: &join)
            }
            denyAll = denyAll || junctionScope.denyAll
        } else {
            for (index, pair) in relationship.joins.enumerated() {
                if index > 0 { join.raw(" AND ") }
                builder.writeColumn(pair.target, into: &join)
                join.raw(" = ")
                parentBuilder.writeField(pair.parent, path: [], qualifier: parentQualifier, into: &join)
            }
        }
        return (from, [.embedded(join.sql)] + scope.conditions, denyAll)
    }

    /// `(SELECT row_to_json(…))` or `coalesce((SELECT json_agg(…)), '[]')` for one embed, and
    /// its `EXISTS (…)` when `!inner`.
    private func embedSQL(
        _ targetName: String, embed: SelectItem.Embed, parent: SchemaCache.Table, parentName: String, parentQualifier: String? = nil,
        path: String, state: inout EmbedState
    ) throws(RESTError) -> (value: SQL, exists: SQL?) {
        let relationship = try resolve(parentName, targetName, hint: embed.hint)
        guard let target = cache.tables[relationship.targetTable] else { throw .noRelationship(parent: parentName, target: targetName) }
        var embed = embed
        embed.select = Self.legacyCounts(embed.select, of: target)
        let embedded = state.request.embedded[path] ?? ApiRequest.EmbeddedQuery()
        for term in embedded.order where term.relation == nil && !target.hasField(term.column) {
            throw .unknownColumn(column: term.column, table: target.name)
        }
        try Self.checkColumns(embed.select, of: target)

        // The rows: joined to the parent, narrowed by the caller's ownership rule and the
        // embed's filters (and its own `!inner` embeds), grouped when they aggregate.
        func rows(alias: String, state: inout EmbedState, selecting: Bool) throws(RESTError) -> SQL {
            let aliased = SchemaCache.Table(
                name: alias, columns: target.columns, primaryKey: target.primaryKey, computed: target.computed, schema: target.schema)
            let builder = QueryBuilder(table: aliased)
            var sql = SQLBuilder()
            sql.raw("SELECT ")
            var conditions = embedded.conditions
            var shape = SelectShape()
            if selecting {
                shape = try writeSelect(embed.select, table: aliased, realName: target.name, path: path, state: &state, into: &sql)
                conditions += shape.inner
            } else {
                sql.raw("1")
                // The `!inner` embeds below this one narrow its rows here too (a row whose
                // inner embed is empty does not exist for the parent, as PostgREST's inner joins).
                var unused = SQLBuilder()
                conditions += try writeSelect(embed.select, table: aliased, realName: target.name, path: path, state: &state, into: &unused).inner
            }
            let rows = try related(
                target, alias: alias, relationship: relationship, parent: parent, parentName: parentName, parentQualifier: parentQualifier,
                caller: state.caller)
            sql.raw(" FROM ")
            sql.raw(rows.from)
            try builder.validate(embedded.conditions)
            builder.writeWhere(rows.conditions + conditions, denyAll: rows.denyAll, into: &sql)
            if selecting {
                QueryBuilder.writeGroupBy(shape.grouping, into: &sql)
                let relatedOrder = try relatedOrders(
                    embedded.order, items: embed.select, table: aliased, realName: target.name, origin: target.name, path: path, state: &state)
                builder.writeOrder(embedded.order, related: relatedOrder, into: &sql)
                if relationship.isToMany && !state.isWrite {
                    if let limit = embedded.limit {
                        sql.raw(" LIMIT ")
                        sql.bind(String(limit))
                    }
                    if embedded.offset > 0 {
                        sql.raw(" OFFSET ")
                        sql.bind(String(embedded.offset))
                    }
                }
            }
            return sql.sql
        }

        state.nextAlias += 1
        let alias = "pgrst_\(state.nextAlias)"
        let body = try rows(alias: alias, state: &state, selecting: true)
        var value = SQLBuilder()
        let row = quoteIdentifier(alias + "_row")
        if relationship.isToMany {
            value.raw("coalesce((SELECT json_agg(\(row)) FROM (")
            value.append(body)
            value.raw(") \(row)), '[]'::json)")
        } else {
            value.raw("(SELECT row_to_json(\(row)) FROM (")
            value.append(body)
            value.raw(") \(row))")
        }
        guard embed.inner || embed.anti else { return (value.sql, nil) }
        state.nextAlias += 1
        var exists = SQLBuilder()
        exists.raw(embed.anti ? "NOT EXISTS (" : "EXISTS (")
        exists.append(try rows(alias: "pgrst_\(state.nextAlias)", state: &state, selecting: false))
        exists.raw(")")
        return (value.sql, exists.sql)
    }

    /// One column a spread puts into its parent's row: a scalar subquery over the related row,
    /// with the aggregate (hoisted, as PostgREST does) that the parent's level applies to it.
    struct SpreadColumn {
        var value: SQL
        var name: String
        var aggregate: SelectItem.Aggregate?
        var aggregateCast: String?
        /// An embed's JSON (cast to jsonb where rows are grouped).
        var isJSON = false
    }

    /// `...rel(cols)`: each selected column of the one related row as `(SELECT col FROM rel WHERE
    /// <join, scope, filters>)`; of a to-many relationship (PostgREST 13), the column's values of
    /// every related row as a JSON array, in the embed's `order`, within its `limit`/`offset`
    /// (`[]` for none; aggregates there are still PGRST119). Nested spreads flatten into the same
    /// level. The `EXISTS (…)` when `!inner`.
    private func spreadColumns(
        _ targetName: String, embed: SelectItem.Embed, parent: SchemaCache.Table, parentName: String, parentQualifier: String? = nil,
        path: String, state: inout EmbedState
    ) throws(RESTError) -> (columns: [SpreadColumn], exists: SQL?) {
        let relationship = try resolve(parentName, targetName, hint: embed.hint)
        guard let target = cache.tables[relationship.targetTable] else { throw .noRelationship(parent: parentName, target: targetName) }
        var embed = embed
        embed.select = Self.legacyCounts(embed.select, of: target)
        if relationship.isToMany, Self.aggregates(embed.select) { throw .spreadNotToOne(origin: parentName, target: targetName) }
        let embedded = state.request.embedded[path] ?? ApiRequest.EmbeddedQuery()
        try Self.checkColumns(embed.select, of: target)
        for term in embedded.order where term.relation == nil && !target.hasField(term.column) {
            throw .unknownColumn(column: term.column, table: target.name)
        }
        state.nextAlias += 1
        let alias = "pgrst_\(state.nextAlias)"
        let aliased = SchemaCache.Table(name: alias, columns: target.columns, primaryKey: target.primaryKey, computed: target.computed, schema: target.schema)
        let builder = QueryBuilder(table: aliased)
        var conditions = embedded.conditions
        var values: [SpreadColumn] = []
        for item in embed.select {
            if let inner = item.embed, inner.spread {
                let nested = try spreadColumns(
                    item.column, embed: inner, parent: aliased, parentName: target.name,
                    path: path + "." + item.column, state: &state)
                values += nested.columns
                if let exists = nested.exists { conditions.append(.embedded(exists)) }
            } else if let inner = item.embed {
                let name = item.alias ?? item.column
                let (value, exists) = try embedSQL(
                    item.column, embed: inner, parent: aliased, parentName: target.name,
                    path: path + "." + name, state: &state)
                values.append(SpreadColumn(value: value, name: name, isJSON: true))
                if let exists { conditions.append(.embedded(exists)) }
            } else if item.column == "*" && item.aggregate == nil {
                for column in target.columns {
                    var value = SQLBuilder()
                    builder.writeOutputField(column.name, path: [], into: &value)
                    values.append(SpreadColumn(value: value.sql, name: column.name))
                }
            } else if item.column == "*" {
                // `count()`: the parent rows that have a related row.
                values.append(
                    SpreadColumn(
                        value: "1", name: item.outputName ?? "count", aggregate: item.aggregate,
                        aggregateCast: item.aggregateCast))
            } else {
                var plain = item
                plain.aggregate = nil
                plain.aggregateCast = nil
                var value = SQLBuilder()
                builder.writeSelectValue(plain, into: &value) { builder.writeOutputField(item.column, path: item.jsonPath, into: &$0) }
                values.append(
                    SpreadColumn(
                        value: value.sql, name: item.outputName ?? item.column, aggregate: item.aggregate,
                        aggregateCast: item.aggregateCast))
            }
        }
        let rows = try related(
            target, alias: alias, relationship: relationship, parent: parent, parentName: parentName, parentQualifier: parentQualifier,
            caller: state.caller)
        try builder.validate(embedded.conditions)
        var tail = SQLBuilder()
        tail.raw(" FROM ")
        tail.raw(rows.from)
        builder.writeWhere(rows.conditions + conditions, denyAll: rows.denyAll, into: &tail)
        let rest = tail.sql
        var page = SQLBuilder()
        if relationship.isToMany {
            let relatedOrder = try relatedOrders(
                embedded.order, items: embed.select, table: aliased, realName: target.name, origin: target.name, path: path, state: &state)
            builder.writeOrder(embedded.order, related: relatedOrder, into: &page)
            // A write's answer takes no range, as for a to-many embed.
            if let limit = embedded.limit, !state.isWrite {
                page.raw(" LIMIT ")
                page.bind(String(limit))
            }
            if embedded.offset > 0, !state.isWrite {
                page.raw(" OFFSET ")
                page.bind(String(embedded.offset))
            }
        }
        let columns = values.map { column -> SpreadColumn in
            var wrapped = column
            var sql = SQLBuilder()
            if relationship.isToMany {
                sql.raw("coalesce((SELECT json_agg(pgrst_spread.value) FROM (SELECT ")
                sql.append(column.value)
                sql.raw(" AS value")
                sql.append(rest)
                sql.append(page.sql)
                sql.raw(") pgrst_spread), '[]'::json)")
                wrapped.isJSON = true
            } else {
                sql.raw("(SELECT ")
                sql.append(column.value)
                sql.append(rest)
                sql.raw(")")
            }
            wrapped.value = sql.sql
            return wrapped
        }
        guard embed.inner else { return (columns, nil) }
        var exists = SQLBuilder()
        exists.raw("EXISTS (SELECT 1")
        exists.append(rest)
        exists.raw(")")
        return (columns, exists.sql)
    }

    /// The values of the `rel(col)` terms of one level's `order`, by position: the column of the
    /// one row of that level's embed `rel` (its alias, else its table; PGRST108 when there is no
    /// such embed, PGRST118 when it is to-many), read as the embed reads it (its join, the
    /// caller's read rule, its filters) so an order reaches nothing the embed would not show: a
    /// related row the caller may not read orders as NULL. `origin` names the level in PGRST118
    /// (PostgREST names a write's own rows `pgrst_source` there).
    func relatedOrders(
        _ terms: [OrderTerm], items: [SelectItem], table: SchemaCache.Table, realName: String, origin: String, path: String,
        parentQualifier: String? = nil, state: inout EmbedState
    ) throws(RESTError) -> [Int: SQL] {
        var values: [Int: SQL] = [:]
        for (position, term) in terms.enumerated() {
            guard let relation = term.relation else { continue }
            guard let item = items.first(where: { $0.embed != nil && ($0.alias ?? $0.column) == relation }), let embed = item.embed else {
                throw .notEmbedded(relation)
            }
            let relationship = try resolve(realName, item.column, hint: embed.hint)
            guard let target = cache.tables[relationship.targetTable] else { throw .noRelationship(parent: realName, target: item.column) }
            guard !relationship.isToMany else { throw .relatedOrderNotToOne(origin: origin, target: relation) }
            guard target.hasField(term.column) else { throw .unknownColumn(column: term.column, table: target.name) }
            let filters = state.request.embedded[path.isEmpty ? relation : path + "." + relation]?.conditions ?? []
            state.nextAlias += 1
            let alias = "pgrst_\(state.nextAlias)"
            let builder = QueryBuilder(
                table: SchemaCache.Table(name: alias, columns: target.columns, primaryKey: target.primaryKey, computed: target.computed, schema: target.schema))
            try builder.validate(filters)
            let rows = try related(
                target, alias: alias, relationship: relationship, parent: table, parentName: realName, parentQualifier: parentQualifier,
                caller: state.caller)
            var sql = SQLBuilder()
            sql.raw("(SELECT ")
            builder.writeField(term.column, path: term.jsonPath, into: &sql)
            sql.raw(" FROM ")
            sql.raw(rows.from)
            builder.writeWhere(rows.conditions + filters, denyAll: rows.denyAll, into: &sql)
            sql.raw(")")
            values[position] = sql.sql
        }
        return values
    }

    /// 42703 for a selected column the embedded table lacks.
    private static func checkColumns(_ items: [SelectItem], of target: SchemaCache.Table) throws(RESTError) {
        for item in items where item.embed == nil && item.column != "*" && !target.hasField(item.column) {
            throw .unknownColumn(column: item.column, table: target.name)
        }
    }

    /// The caller's ownership rule for reading `table`, as conditions (a top-level read's).
    func readScope(_ table: String, caller: Caller) throws(RESTError) -> (conditions: [Condition], denyAll: Bool) {
        switch try Ownership.decide(ApiRequest.read(table: table), table: table, policy: policy, enabled: ownershipEnabled, caller: caller) {
        case .unrestricted: return ([], false)
        case .nothing: return ([], true)
        case .owner(let column, let user): return ([.filter(Filter(column: column, op: .eq, operand: .value(user)))], false)
        case .scoped(let scope, _): return ([.scope(scope)], false)
        }
    }
}
