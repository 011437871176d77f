import Identity

/// Resource embedding (PostgREST's `rel(…)` in `select`): a related table reached through a
/// foreign key (or, many-to-many, through a junction table with keys to both sides; or a computed
/// relationship, a function of the parent row returning the table's rows), planned as a
/// correlated subquery of the one statement, so PostgreSQL still builds the JSON. Spreads
/// (`...rel(…)`) put each of the related row's columns beside the parent's, one scalar subquery
/// each. Every embedded table (the junction included) gets the caller's ownership rule exactly as
/// a top-level read of it would (and RLS applies underneath): no embed, spread, `!inner`,
/// aggregate or filter reaches a row the caller could not `GET` directly.
extension Planner {

    /// What the planning passes of one request's select tree share.
    struct EmbedState {
        var nextAlias = 0
        let caller: Caller
        let request: ApiRequest
        /// The select list answers a write (its rows read back from `pgrst_source`): embedded
        /// `limit` and `offset` are not applied, as PostgREST applies no range to a mutation's
        /// read plan.
        var isWrite = false

        /// The next subquery's alias, `pgrst_1`, `pgrst_2`, ….
        mutating func alias() -> String {
            nextAlias += 1
            return "pgrst_\(nextAlias)"
        }
    }

    /// A select list planned: its fields, and what it adds to its level.
    struct SelectPlan {
        var fields: [SelectField] = []
        /// The `!inner` conditions of its embeds.
        var inner: [Predicate] = []
        /// The positions to GROUP BY (with an aggregate in the list: every other column).
        var grouping: [Int] = []
        /// Where each spread's columns are in the list: the spread's name → a column's output
        /// name → its position (what `order=rel(col)` orders by).
        var spreadPositions: [String: [String: Int]] = [:]
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
    func selectPlan(
        _ items: [SelectItem], table: SchemaCache.Table, realName: String, path: String, qualifier: String? = nil,
        state: inout EmbedState
    ) throws(RESTError) -> SelectPlan {
        let aggregated = Self.aggregates(items)
        var plan = SelectPlan()
        var position = 0
        let parent = Parent(table: table, name: realName, qualifier: qualifier)
        for item in items {
            guard let embed = item.embed else {
                plan.fields.append(.item(item))
                let width = item.column == "*" && item.aggregate == nil ? table.columns.count : 1
                if aggregated && item.aggregate == nil { plan.grouping += (position + 1)..<(position + 1 + width) }
                position += width
                continue
            }
            if embed.spread {
                let childPath = path.isEmpty ? item.column : path + "." + item.column
                let spread = try spreadPlan(item.column, embed: embed, parent: parent, path: childPath, state: &state)
                for column in spread.columns {
                    plan.fields.append(.spread(column, jsonb: aggregated && column.isJSON && column.aggregate == nil))
                    position += 1
                    plan.spreadPositions[item.column, default: [:]][column.name] = position
                    if aggregated && column.aggregate == nil { plan.grouping.append(position) }
                }
                if let exists = spread.exists { plan.inner.append(.exists(exists)) }
                continue
            }
            let name = item.alias ?? item.column
            let childPath = path.isEmpty ? name : path + "." + name
            let (value, exists) = try embedPlan(item.column, embed: embed, parent: parent, path: childPath, state: &state)
            // `rel()`: an embed with nothing selected (or only such embeds) only filters
            // (`rel!inner()`, `rel=not.is.null`): PostgREST leaves it out of the row.
            if Self.selectsNothing(embed) {
                if let exists { plan.inner.append(exists) }
                continue
            }
            // Grouped rows need an equality on the embed's value: json has none, jsonb has.
            plan.fields.append(.embed(value, name: name, jsonb: aggregated))
            position += 1
            if aggregated { plan.grouping.append(position) }
            if let exists { plan.inner.append(exists) }
        }
        return plan
    }

    /// PostgREST's empty embed: `rel()`, or one whose items are all empty embeds.
    static func selectsNothing(_ embed: SelectItem.Embed) -> Bool {
        embed.select.allSatisfy { item in item.embed.map(selectsNothing) ?? false }
    }

    /// The level an embed hangs from: its table (an alias table below the top), the table's
    /// real name, and `pgrst_source` when its rows are a write's.
    struct Parent {
        var table: SchemaCache.Table
        var name: String
        var qualifier: String? = nil
    }

    /// What every embed and spread starts with (the one preamble): the relationship the name
    /// and hint leave, the target table, its select list (`count` read as PostgREST's clients
    /// mean it) and the embed's own query terms (`rel.col=…`, `rel.order`, `rel.limit`).
    struct Related {
        var relationship: Relationship
        var target: SchemaCache.Table
        var select: [SelectItem]
        var query: ApiRequest.EmbeddedQuery
    }

    private func related(_ name: String, embed: SelectItem.Embed, parent: Parent, path: String, state: EmbedState) throws(RESTError) -> Related {
        let relationship = try resolve(parent.name, name, hint: embed.hint)
        guard let target = cache.tables[relationship.targetTable] else { throw .noRelationship(parent: parent.name, target: name) }
        return Related(
            relationship: relationship, target: target, select: Self.legacyCounts(embed.select, of: target),
            query: state.request.embedded[path] ?? ApiRequest.EmbeddedQuery())
    }

    /// The related rows of one embed under `alias`: `FROM` its table (and a many-to-many's
    /// junction) and the conditions that join them to the parent row, with the caller's read
    /// rule on each table.
    func rows(_ related: Related, alias: String, parent: Parent, caller: Caller) throws(RESTError) -> ReadPlan {
        let target = related.target
        let aliased = target.aliased(alias)
        let relationship = related.relationship
        let scope = try readScope(target.name, caller: caller)
        var plan = ReadPlan(table: aliased, from: .aliased([(target.qualifiedName, alias)]), select: .one, denyAll: scope.denyAll)
        if let function = relationship.function {
            // The function's rows of the parent row (a write's returned row made one of the
            // parent's type again), as PostgREST's `fn(parent::table)`; the read rule of the
            // returned table applies to them.
            let rowType = QualifiedIdentifier(schema: parent.table.schema, name: parent.name)
            plan.from = .function(
                QualifiedIdentifier(schema: parent.table.schema, name: function), parent: parent.table, returned: parent.qualifier != nil,
                rowType: rowType, alias: alias)
            plan.conditions = scope.conditions.map { .condition($0) }
            return plan
        }
        func parentField(_ name: String) -> ColumnReference { ColumnReference(table: parent.table, name: name, qualifier: parent.qualifier) }
        if let targetKey = relationship.targetKey, relationship.cardinality == .manyToMany, let junction = cache.tables[targetKey.table] {
            let junctionAlias = alias + "_j"
            let junctionTable = junction.aliased(junctionAlias)
            plan.from = .aliased([(target.qualifiedName, alias), (junction.qualifiedName, junctionAlias)])
            for pair in zip(targetKey.columns, targetKey.referencedColumns) {
                plan.conditions.append(.equal(ColumnReference(table: junctionTable, name: pair.0), ColumnReference(table: aliased, name: pair.1)))
            }
            for pair in relationship.joins {
                plan.conditions.append(.equal(ColumnReference(table: junctionTable, name: pair.target), parentField(pair.parent)))
            }
            // The junction's rows are read too: the caller's rule applies to them as well.
            let junctionScope = try readScope(junction.name, caller: caller)
            try QueryBuilder(table: junctionTable).validate(junctionScope.conditions)
            plan.conditions += junctionScope.conditions.map { .on(junctionTable, $0) }
            plan.denyAll = plan.denyAll || junctionScope.denyAll
        } else {
            for pair in relationship.joins {
                plan.conditions.append(.equal(ColumnReference(table: aliased, name: pair.target), parentField(pair.parent)))
            }
        }
        plan.conditions += scope.conditions.map { .condition($0) }
        return plan
    }

    /// One embed's rows as JSON (an array for a to-many relationship, else the one object),
    /// and its `EXISTS (…)` when `!inner` (`NOT EXISTS (…)` when filtered `rel=is.null`).
    private func embedPlan(
        _ targetName: String, embed: SelectItem.Embed, parent: Parent, path: String, state: inout EmbedState
    ) throws(RESTError) -> (value: EmbedPlan, exists: Predicate?) {
        let related = try related(targetName, embed: embed, parent: parent, path: path, state: state)
        let target = related.target
        for term in related.query.order where term.relation == nil && !target.hasField(term.column) {
            throw .unknownColumn(column: term.column, table: target.name)
        }
        try Self.checkColumns(related.select, of: target)
        let toMany = related.relationship.isToMany
        let alias = state.alias()
        // The rows: joined to the parent, narrowed by the caller's ownership rule and the
        // embed's filters (and its own `!inner` embeds), grouped when they aggregate.
        let aliased = target.aliased(alias)
        let select = try selectPlan(related.select, table: aliased, realName: target.name, path: path, state: &state)
        var rows = try rows(related, alias: alias, parent: parent, caller: state.caller)
        try QueryBuilder(table: aliased).validate(related.query.conditions)
        rows.select = .fields(select.fields)
        rows.conditions += related.query.conditions.map { .condition($0) } + select.inner
        rows.grouping = select.grouping
        rows.order = try relatedOrders(
            related.query.order, items: related.select, table: aliased, realName: target.name, origin: target.name, path: path,
            spreadPositions: select.spreadPositions, state: &state)
        applyRange(related.query, to: &rows, state: state)
        let value = EmbedPlan(alias: alias, toMany: toMany, rows: rows)
        guard embed.inner || embed.anti else { return (value, nil) }
        var exists = try self.rows(related, alias: state.alias(), parent: parent, caller: state.caller)
        try QueryBuilder(table: exists.table).validate(related.query.conditions)
        exists.conditions += related.query.conditions.map { .condition($0) }
        // The `!inner` embeds below this one narrow its rows here too (a row whose inner embed
        // is empty does not exist for the parent, as PostgREST's inner joins).
        exists.conditions += try selectPlan(related.select, table: exists.table, realName: target.name, path: path, state: &state).inner
        return (value, embed.anti ? .notExists(exists) : .exists(exists))
    }

    /// `...rel(cols)`: each selected column of the one related row as a scalar subquery; of a
    /// to-many relationship (PostgREST 13), the column's values of every related row as a JSON
    /// array, in the embed's `order`, within its `limit`/`offset` (`[]` for none; aggregates
    /// there are PGRST127). Nested spreads flatten into the same level. The `EXISTS (…)`
    /// when `!inner`.
    private func spreadPlan(
        _ targetName: String, embed: SelectItem.Embed, parent: Parent, path: String, state: inout EmbedState
    ) throws(RESTError) -> (columns: [SpreadColumn], exists: ReadPlan?) {
        let related = try related(targetName, embed: embed, parent: parent, path: path, state: state)
        let target = related.target
        let toMany = related.relationship.isToMany
        if toMany, Self.aggregates(related.select) {
            throw .notImplemented("Aggregates are not implemented for one-to-many or many-to-many spreads.")
        }
        try Self.checkColumns(related.select, of: target)
        for term in related.query.order where term.relation == nil && !target.hasField(term.column) {
            throw .unknownColumn(column: term.column, table: target.name)
        }
        let alias = state.alias()
        let aliased = target.aliased(alias)
        let level = Parent(table: aliased, name: target.name)
        var inner: [Predicate] = []
        var values: [SpreadColumn] = []
        for item in related.select {
            if let nestedEmbed = item.embed, nestedEmbed.spread {
                let nested = try spreadPlan(item.column, embed: nestedEmbed, parent: level, path: path + "." + item.column, state: &state)
                values += nested.columns
                if let exists = nested.exists { inner.append(.exists(exists)) }
            } else if let nestedEmbed = item.embed {
                let name = item.alias ?? item.column
                let (value, exists) = try embedPlan(item.column, embed: nestedEmbed, parent: level, path: path + "." + name, state: &state)
                if let exists { inner.append(exists) }
                if Self.selectsNothing(nestedEmbed) { continue }
                values.append(SpreadColumn(value: .embed(value), name: name, isJSON: true))
            } else if item.column == "*" && item.aggregate == nil {
                values += target.columns.map { SpreadColumn(value: .field(aliased, SelectItem(column: $0.name)), name: $0.name) }
            } else if item.column == "*" {
                // `count()`: the parent rows that have a related row.
                values.append(SpreadColumn(value: .one, name: item.outputName ?? "count", aggregate: item.aggregate, aggregateCast: item.aggregateCast))
            } else {
                var plain = item
                plain.aggregate = nil
                plain.aggregateCast = nil
                values.append(
                    SpreadColumn(
                        value: .field(aliased, plain), name: item.outputName ?? item.column, aggregate: item.aggregate,
                        aggregateCast: item.aggregateCast))
            }
        }
        var rows = try rows(related, alias: alias, parent: parent, caller: state.caller)
        try QueryBuilder(table: aliased).validate(related.query.conditions)
        rows.conditions += related.query.conditions.map { .condition($0) } + inner
        if toMany {
            rows.order = try relatedOrders(
                related.query.order, items: related.select, table: aliased, realName: target.name, origin: target.name, path: path, state: &state)
        }
        applyRange(related.query, to: &rows, state: state)
        let columns = values.map { column -> SpreadColumn in
            var wrapped = column
            wrapped.value = .spread(rows, column.value, toMany: toMany)
            if toMany { wrapped.isJSON = true }
            return wrapped
        }
        guard embed.inner else { return (columns, nil) }
        var exists = rows
        exists.order = []
        exists.limit = nil
        exists.offset = 0
        return (columns, exists)
    }

    /// An embedded level's range, as PostgREST ranges every level of a read: the embed's `limit`
    /// (within `db-max-rows`) and `offset`, on to-one embeds too (an offset past the one row
    /// answers `null`). A write's answer takes none, as PostgREST applies no range to a
    /// mutation's read plan.
    private func applyRange(_ query: ApiRequest.EmbeddedQuery, to rows: inout ReadPlan, state: EmbedState) {
        guard !state.isWrite else { return }
        rows.limit = maxRows.map { min(query.limit ?? $0, $0) } ?? query.limit
        rows.offset = query.offset
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
