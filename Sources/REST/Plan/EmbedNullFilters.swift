/// PostgREST's null filtering on embedded resources: a filter naming an embed of its level
/// (`select=name,clients()&clients=not.is.null`, also an embed's own embeds as
/// `child_entities.grandchild_entities=not.is.null`) says whether the parent row has a related
/// row: `not.is.null` (or `is.not_null`) keeps the rows that have one, as `!inner`; `is.null`
/// keeps those that have none. Such filters leave the conditions and mark the embed.
enum EmbedNullFilters {
    static func apply(_ request: ApiRequest) -> ApiRequest {
        var request = request
        guard request.select.contains(where: { $0.embed != nil }) else { return request }
        request.conditions = mark(request.conditions, in: &request.select)
        for (path, query) in request.embedded where !query.conditions.isEmpty {
            var updated = query
            let names = path.split(separator: ".").map(String.init)
            updated.conditions = markNested(query.conditions, path: names[...], in: &request.select)
            request.embedded[path] = updated
        }
        return request
    }

    /// The embed at `path` (names or aliases, level by level), its own embeds marked.
    private static func markNested(_ conditions: [Condition], path: ArraySlice<String>, in items: inout [SelectItem]) -> [Condition] {
        guard let first = path.first,
            let index = items.firstIndex(where: { $0.embed != nil && ($0.alias ?? $0.column) == first }),
            var embed = items[index].embed
        else { return conditions }
        let rest = path.dropFirst()
        let remaining = rest.isEmpty ? mark(conditions, in: &embed.select) : markNested(conditions, path: rest, in: &embed.select)
        items[index].embed = embed
        return remaining
    }

    /// The top-level conditions (ANDed) that are null filters on an embed of `items` mark it and
    /// leave; the others stay.
    private static func mark(_ conditions: [Condition], in items: inout [SelectItem]) -> [Condition] {
        conditions.filter { condition in
            guard let (name, present) = nullFilter(condition),
                let index = items.firstIndex(where: { $0.embed != nil && !($0.embed!.spread) && ($0.alias ?? $0.column) == name })
            else { return true }
            if present { items[index].embed!.inner = true } else { items[index].embed!.anti = true }
            return false
        }
    }

    /// `name=is.null` → (name, false); `name=not.is.null` or `name=is.not_null` → (name, true).
    private static func nullFilter(_ condition: Condition) -> (String, Bool)? {
        switch condition {
        case .filter(let filter) where filter.op == .is && filter.jsonPath.isEmpty:
            if filter.operand == .isValue(.null) { return (filter.column, false) }
            if filter.operand == .isValue(.notNull) { return (filter.column, true) }
            return nil
        case .not(.filter(let filter)) where filter.op == .is && filter.jsonPath.isEmpty && filter.operand == .isValue(.null):
            return (filter.column, true)
        default:
            return nil
        }
    }
}
