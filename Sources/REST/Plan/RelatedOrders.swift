/// `order=rel(col)`: ordering a level by a column of one of its embeds or to-one spreads.
extension Planner {

    /// The `order` of one level: each `rel(col)` term's value is the column of the one row of
    /// that level's embed `rel` (its alias, else its table; PGRST108 when there is no such embed,
    /// PGRST118 when it is to-many), read as the embed reads it (its join, the caller's read
    /// rule, its filters) so an order reaches nothing the embed would not show: a related row the
    /// caller may not read orders as NULL. `origin` names the level in PGRST118 (PostgREST names
    /// a write's own rows `pgrst_source` there). A to-one spread's column, by its output name
    /// (an alias too), orders by its place in the select list (`spreadPositions`), as grouped
    /// rows must.
    func relatedOrders(
        _ terms: [OrderTerm], items: [SelectItem], table: SchemaCache.Table, realName: String, origin: String, path: String,
        parentQualifier: String? = nil, spreadPositions: [String: [String: Int]] = [:], state: inout EmbedState
    ) throws(RESTError) -> [OrderPlan] {
        var plans: [OrderPlan] = []
        for term in terms {
            guard let relation = term.relation else {
                plans.append(OrderPlan(term: term))
                continue
            }
            guard let item = items.first(where: { $0.embed != nil && ($0.alias ?? $0.column) == relation }), let embed = item.embed else {
                throw .notEmbedded(relation)
            }
            let parent = Parent(table: table, name: realName, qualifier: parentQualifier)
            let relationship = try resolve(realName, item.column, hint: embed.hint)
            guard let target = cache.tables[relationship.targetTable] else { throw .noRelationship(parent: realName, target: item.column) }
            guard !relationship.isToMany else { throw .relatedOrderNotToOne(origin: origin, target: relation) }
            if embed.spread, term.jsonPath.isEmpty, let position = spreadPositions[relation]?[term.column] {
                plans.append(OrderPlan(term: term, position: position))
                continue
            }
            guard target.hasField(term.column) else { throw .unknownColumn(column: term.column, table: target.name) }
            let filters = state.request.embedded[path.isEmpty ? relation : path + "." + relation]?.conditions ?? []
            let alias = state.alias()
            try QueryBuilder(table: target.aliased(alias)).validate(filters)
            let related = Related(relationship: relationship, target: target, select: [], query: ApiRequest.EmbeddedQuery())
            var value = try rows(related, alias: alias, parent: parent, caller: state.caller)
            value.select = .field(term.column, path: term.jsonPath)
            value.conditions += filters.map { .condition($0) }
            plans.append(OrderPlan(term: term, related: value))
        }
        return plans
    }
}
