import JWT
import Postgres

/// Resource embedding (PostgREST's `rel(…)` in `select`): a related table reached through a
/// foreign key, written as a correlated subquery of the one statement, so PostgreSQL still builds
/// the JSON. Every embedded table gets the caller's ownership rule exactly as a top-level read of
/// it would (and RLS applies underneath): no embed, `!inner` or filter reaches a row the caller
/// could not `GET` directly.
extension Planner {
    /// A foreign key seen from the parent: its rows point at one target row (many-to-one), or
    /// many target rows point at it (one-to-many).
    struct Relationship {
        enum Cardinality: String { case manyToOne = "many-to-one", oneToMany = "one-to-many" }
        let key: SchemaCache.ForeignKey
        let cardinality: Cardinality

        /// (target column, parent column) pairs.
        var joins: [(target: String, parent: String)] {
            switch cardinality {
            case .manyToOne: return Array(zip(key.referencedColumns, key.columns))
            case .oneToMany: return Array(zip(key.columns, key.referencedColumns))
            }
        }
    }

    /// What the embeds of one select list add to its statement: nothing is written until the
    /// whole tree has been checked.
    struct EmbedState {
        var nextAlias = 0
        let caller: Caller
        let request: ApiRequest
    }

    /// The select list over `table` (an alias table: its name is what columns are qualified
    /// with), embeds included; returns the `!inner` conditions the list adds to its query.
    func writeSelect(_ items: [SelectItem], table: SchemaCache.Table, realName: String, path: String,
                     state: inout EmbedState, into sql: inout SQLBuilder) throws(RESTError) -> [Condition] {
        let builder = QueryBuilder(table: table)
        var inner: [Condition] = []
        for (index, item) in items.enumerated() {
            if index > 0 { sql.raw(", ") }
            guard let embed = item.embed else {
                builder.writeSelectList([item], qualifier: nil, into: &sql)
                continue
            }
            let name = item.alias ?? item.column
            let childPath = path.isEmpty ? name : path + "." + name
            let (value, exists) = try embedSQL(item.column, embed: embed, parent: table, parentName: realName, path: childPath, state: &state)
            sql.append(value)
            sql.raw(" AS ")
            sql.raw(quoteIdentifier(name))
            if let exists { inner.append(.embedded(exists)) }
        }
        if items.isEmpty { sql.raw("NULL") }
        return inner
    }

    /// `(SELECT row_to_json(…))` or `coalesce((SELECT json_agg(…)), '[]')` for one embed, and
    /// its `EXISTS (…)` when `!inner`.
    private func embedSQL(_ targetName: String, embed: SelectItem.Embed, parent: SchemaCache.Table, parentName: String, path: String,
                          state: inout EmbedState) throws(RESTError) -> (value: SQL, exists: SQL?) {
        guard let target = cache.tables[targetName] else {
            throw .noRelationship(parent: parentName, target: targetName)
        }
        let relationship = try resolve(parentName, targetName, hint: embed.hint)
        let embedded = state.request.embedded[path] ?? ApiRequest.EmbeddedQuery()
        for term in embedded.order where !target.hasField(term.column) { throw .unknownColumn(column: term.column, table: target.name) }
        for item in embed.select where item.embed == nil && item.column != "*" && !target.hasField(item.column) {
            throw .unknownColumn(column: item.column, table: target.name)
        }

        // The rows: joined to the parent, narrowed by the caller's ownership rule and the
        // embed's filters (and its own `!inner` embeds).
        func rows(alias: String, state: inout EmbedState, selecting: ((SchemaCache.Table, inout EmbedState, inout SQLBuilder) throws(RESTError) -> [Condition])?)
            throws(RESTError) -> SQL {
            let aliased = SchemaCache.Table(name: alias, columns: target.columns, primaryKey: target.primaryKey, computed: target.computed)
            let builder = QueryBuilder(table: aliased)
            var sql = SQLBuilder()
            sql.raw("SELECT ")
            var conditions = embedded.conditions
            if let selecting { conditions += try selecting(aliased, &state, &sql) } else { sql.raw("1") }
            sql.raw(" FROM ")
            sql.raw(quoteIdentifier("public") + "." + quoteIdentifier(target.name) + " AS " + quoteIdentifier(alias))
            let scope = try readScope(target.name, caller: state.caller)
            try builder.validate(embedded.conditions)
            var join = SQLBuilder()
            for (index, pair) in relationship.joins.enumerated() {
                if index > 0 { join.raw(" AND ") }
                builder.writeColumn(pair.target, into: &join)
                join.raw(" = ")
                QueryBuilder(table: parent).writeColumn(pair.parent, into: &join)
            }
            conditions = [.embedded(join.sql)] + scope.conditions + conditions
            builder.writeWhere(conditions, denyAll: scope.denyAll, into: &sql)
            if selecting != nil {
                builder.writeOrder(embedded.order, into: &sql)
                if relationship.cardinality == .oneToMany {
                    if let limit = embedded.limit { sql.raw(" LIMIT "); sql.bind(String(limit)) }
                    if embedded.offset > 0 { sql.raw(" OFFSET "); sql.bind(String(embedded.offset)) }
                }
            }
            return sql.sql
        }

        state.nextAlias += 1
        let alias = "pgrst_\(state.nextAlias)"
        let body = try rows(alias: alias, state: &state) { table, state, sql throws(RESTError) in
            try writeSelect(embed.select, table: table, realName: target.name, path: path, state: &state, into: &sql)
        }
        var value = SQLBuilder()
        let row = quoteIdentifier(alias + "_row")
        switch relationship.cardinality {
        case .manyToOne:
            value.raw("(SELECT row_to_json(\(row)) FROM (")
            value.append(body)
            value.raw(") \(row))")
        case .oneToMany:
            value.raw("coalesce((SELECT json_agg(\(row)) FROM (")
            value.append(body)
            value.raw(") \(row)), '[]'::json)")
        }
        guard embed.inner else { return (value.sql, nil) }
        state.nextAlias += 1
        var exists = SQLBuilder()
        exists.raw("EXISTS (")
        exists.append(try rows(alias: "pgrst_\(state.nextAlias)", state: &state, selecting: nil))
        exists.raw(")")
        return (value.sql, exists.sql)
    }

    /// The one relationship between `parent` and `target` the hint (a foreign key's name or one
    /// of its columns) leaves; PGRST200 when there is none, PGRST201 when several remain.
    func resolve(_ parent: String, _ target: String, hint: String?) throws(RESTError) -> Relationship {
        var candidates: [Relationship] = []
        for key in cache.foreignKeys {
            if key.table == parent && key.referencedTable == target { candidates.append(Relationship(key: key, cardinality: .manyToOne)) }
            if key.table == target && key.referencedTable == parent { candidates.append(Relationship(key: key, cardinality: .oneToMany)) }
        }
        if let hint {
            candidates = candidates.filter { $0.key.name == hint || $0.key.columns.contains(hint) || $0.key.referencedColumns == [hint] }
        }
        guard !candidates.isEmpty else { throw .noRelationship(parent: parent, target: target) }
        guard candidates.count == 1 else {
            throw .ambiguousRelationship(parent: parent, target: target, candidates: candidates.map {
                (cardinality: $0.cardinality.rawValue, name: $0.key.name,
                 description: "\($0.key.table)(\($0.key.columns.joined(separator: ", "))) and \($0.key.referencedTable)(\($0.key.referencedColumns.joined(separator: ", ")))")
            })
        }
        return candidates[0]
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
