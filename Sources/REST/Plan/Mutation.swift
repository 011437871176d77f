/// The planning passes of a table's writes: which columns a body writes, an upsert's conflict
/// handling, and what is returned.
extension Planner {
    /// An INSERT (POST) or a single-row upsert (PUT): the body's columns checked, the conflict
    /// target, and what RETURNING and the answer read of the rows.
    func planInsert(
        _ table: SchemaCache.Table, _ request: ApiRequest, owner: (column: String, user: String)?, into mutate: inout MutatePlan,
        answer: inout AnswerPlan, plan: inout ActionPlan
    ) throws(RESTError) {
        guard table.insertable else { throw .unsupportedMethod("POST") }
        guard let payload = request.payload else { throw .invalidBody("Empty or invalid json") }
        let keys = try Self.bodyColumns(table, request, payload: payload)
        let isPut = request.action == .singleUpsert
        var conflict: [String]? = nil
        if isPut {
            try checkPut(table, request, payload: payload)
            conflict = table.primaryKey
        } else if request.preferences.resolution != nil {
            conflict = request.onConflict ?? table.primaryKey
        }
        if let conflict {
            for key in conflict where table.column(key) == nil { throw .unknownColumn(column: key, table: table.name) }
        }
        let merge = isPut || request.preferences.resolution == .mergeDuplicates
        let upsert = conflict.map { !$0.isEmpty } ?? false
        plan.mergesDuplicates = !isPut && upsert && merge
        plan.hasConflictTarget = !(request.onConflict ?? table.primaryKey).isEmpty
        mutate.action = .insert(
            InsertPlan(
                keys: keys, payload: payload, applyDefaults: request.preferences.missing == .default, conflict: conflict ?? [], merge: merge,
                owner: owner))
        let countsInserted = upsert && merge
        mutate.returnsInserted = countsInserted
        answer.countsInserted = countsInserted
        // `return=headers-only`: the primary key is read back for the `Location` header.
        let location = request.preferences.returning == .headersOnly && !isPut ? table.primaryKey : []
        // Without a representation nothing of the rows is read back: `RETURNING 1` needs no
        // SELECT privilege, so a role that may only INSERT can still insert (PostgREST's
        // return=minimal). The rows are still counted.
        if request.preferences.returning != .representation && !countsInserted && location.isEmpty {
            mutate.returning = .nothing
            answer.rows = .source
        } else if !location.isEmpty {
            plan.locationKeys = location
            mutate.returning = .columns(location)
            answer.rows = .source
            answer.locationKeys = location
        }
    }

    /// A PATCH: the body's columns (nothing to set: nothing updated, as PostgREST, and no
    /// invalid `SET` with no columns).
    func updateAction(_ table: SchemaCache.Table, _ request: ApiRequest) throws(RESTError) -> MutatePlan.Action {
        guard let payload = request.payload else { throw .invalidBody("Empty or invalid json") }
        let keys = try Self.bodyColumns(table, request, payload: payload)
        guard !keys.isEmpty else { return .updateNothing }
        return .update(keys: keys, payload: payload, missingDefaults: request.preferences.missing == .default)
    }

    /// The columns a body writes (`columns=`, else its keys), each one of the table's; sorted,
    /// so the statement text (and its prepared statement) does not depend on the keys' order.
    static func bodyColumns(_ table: SchemaCache.Table, _ request: ApiRequest, payload: Payload) throws(RESTError) -> [String] {
        let keys = (request.columns ?? payload.keys).sorted()
        for key in keys where table.column(key) == nil {
            throw .unknownBodyColumn(column: key, table: table.name)
        }
        return keys
    }

    /// PUT's URL (PostgREST's PGRST114, then PGRST105): no range, and filters that are exactly
    /// `pk=eq.v` for every primary key column. Checked before any name of the request is looked
    /// up, so a filter on a column the table lacks is PGRST105 too. The key values by column.
    @discardableResult
    static func checkPutFilters(_ table: SchemaCache.Table, _ request: ApiRequest) throws(RESTError) -> [String: String] {
        if request.limit != nil || request.offset != 0 { throw .putLimitNotAllowed }
        guard !table.primaryKey.isEmpty else { throw .invalidFilters }
        var values: [String: String] = [:]
        for condition in request.conditions {
            guard case .filter(let filter) = condition, filter.op == .eq, filter.jsonPath.isEmpty, filter.quantifier == nil,
                case .value(let value) = filter.operand, table.primaryKey.contains(filter.column), values[filter.column] == nil
            else { throw .invalidFilters }
            values[filter.column] = value
        }
        guard Set(values.keys) == Set(table.primaryKey) else { throw .invalidFilters }
        return values
    }

    /// PUT's body (PostgREST's PGRST115): one row whose primary key values are the URL's.
    private func checkPut(_ table: SchemaCache.Table, _ request: ApiRequest, payload: Payload) throws(RESTError) {
        let values = try Self.checkPutFilters(table, request)
        // An array of other than one row (one was made the object by the parse) matches no URL.
        guard !payload.isArray else { throw .putMatchingPK }
        for (column, value) in values {
            guard let bodyValue = payload.rows.first?[column] else { throw .putMatchingPK }
            let text: String
            switch bodyValue {
            case .string(let s): text = s
            case .number(let n): text = n
            case .bool(let b): text = b ? "true" : "false"
            default: throw .putMatchingPK
            }
            if text != value && text.lowercased() != value.lowercased() { throw .putMatchingPK }
        }
    }
}
