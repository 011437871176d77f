import Identity
import Postgres

/// A request checked against the schema cache, planned as values and written as SQL (PostgREST's
/// `Plan` and `Query` stages). Pure: the executor runs `statement`, the renderer reads its one
/// result row (`total`, `page_total`, `body`, `inserted`), and Swift never decodes the rows
/// themselves.
struct ActionPlan: Sendable {
    var request: ApiRequest
    /// What the request does: the request's own action (one enum for both stages). Planning adds
    /// only what it decides, in the fields below.
    var action: ApiRequest.Action { request.action }
    /// An insert that upserts and merges duplicates: a conflicting row is updated, and when no
    /// row was inserted the answer is 200, not 201.
    var mergesDuplicates = false
    /// A call of a function returning `void`: 204, no body.
    var returnsVoid = false
    /// The main statement; nil when nothing has to run (OpenAPI).
    var statement: SQL?
    /// GET/HEAD: the transaction is made read-only.
    var readOnly: Bool
    /// The result decides whether to commit (object Accept on a write, max-affected strict):
    /// the statement runs inside BEGIN, and COMMIT or ROLLBACK follows.
    var mustDecide: Bool
    /// `Prefer: tx=rollback`.
    var rollback: Bool
    /// The table or function name, for messages.
    var resource: String
    /// Whether an insert had a conflict target (for `Preference-Applied: resolution=…`).
    var hasConflictTarget = false
    /// `Prefer: count=planned`: an `EXPLAIN (FORMAT JSON)` of the read's rows, whose estimate
    /// becomes the total (PostgREST's planned count).
    var plannedCount: SQL? = nil
    /// `Prefer: count=estimated` under `db-max-rows`: the statement counts at most one row more
    /// than this, and a count above it becomes the larger of itself and `plannedCount`'s estimate.
    var estimatedBeyond: Int? = nil
    /// `Prefer: return=headers-only` on POST: the primary key's columns, whose values (the body
    /// holds them, `[[v1, v2]]`) make the `Location` of the one row inserted.
    var locationKeys: [String] = []

    /// Whether what the statement ran may have set `response.status` and `response.headers`: a
    /// function called, or a custom media handler's functions.
    var readsResponseSettings: Bool {
        if case .call = action { return true }
        if case .custom = request.media { return true }
        return false
    }
}

struct Planner {
    let cache: SchemaCache
    let policy: OwnershipPolicy
    let ownershipEnabled: Bool
    /// `db-tx-end` rolls back unless `Prefer: tx=commit` (when overrides are allowed).
    var rollbackByDefault = false
    /// PostgREST's `db-aggregates-enabled`: without it an aggregate in `select` is PGRST123.
    var aggregatesEnabled = false
    /// PostgREST's `db-max-rows`: no embedded level of a read answers more rows (the top level's
    /// limit is the request's, capped before planning).
    var maxRows: Int? = nil

    /// The request's plan: the planning passes decide values (`ReadPlan`, `MutatePlan`, …), then
    /// `QueryWriter` writes them as the statement.
    func plan(_ request: ApiRequest, caller: Caller) throws(RESTError) -> ActionPlan {
        if !aggregatesEnabled, Self.usesAggregates(request.select) { throw .aggregatesNotAllowed }
        try EmbeddedPaths.check(request)
        switch request.target {
        case .root:
            return ActionPlan(request: request, statement: nil, readOnly: true, mustDecide: false, rollback: false, resource: "")
        case .function(let name):
            // A function's rows embed nothing here, so no `rel(col)` order can name an embed.
            if let relation = request.order.first(where: { $0.relation != nil })?.relation { throw .notEmbedded(relation) }
            return try planCall(name, request.isReadOnlyCall ? EmbedNullFilters.apply(request) : request, caller: caller)
        case .table(let name):
            guard let table = cache.tables[name] else { throw .unknownTable(name, hint: cache.closestTable(to: name)) }
            let request = request.isRead ? EmbedNullFilters.apply(request) : request
            let decision = try Ownership.decide(request, table: name, policy: policy, enabled: ownershipEnabled, caller: caller)
            return try planTable(table, request, ownership: decision, caller: caller)
        }
    }

    // MARK: tables

    /// The conditions of a table's rows: the request's, and the ownership middleware's rule.
    struct Scope {
        var conditions: [Condition]
        /// The caller may reach none of the rows.
        var denyAll = false
        /// The owner column an upsert must keep the caller's.
        var owner: (column: String, user: String)? = nil
    }

    func planTable(_ table: SchemaCache.Table, _ request: ApiRequest, ownership: OwnershipDecision, caller: Caller) throws(RESTError) -> ActionPlan {
        let request = try negotiated(request, table: table)
        let scope = Self.scope(request.conditions, ownership: ownership)
        if request.action == .singleUpsert { try Self.checkPutFilters(table, request) }
        try Self.checkNames(request, table: table, conditions: scope.conditions)
        let mutation = !request.isRead
        var plan = ActionPlan(
            request: request, statement: nil, readOnly: !mutation,
            mustDecide: mutation && (request.singleObject || (request.preferences.maxAffected != nil && request.preferences.handling == .strict)),
            rollback: request.preferences.transaction.map { $0 == .rollback } ?? rollbackByDefault, resource: table.name)
        let statement: TableStatementPlan
        switch request.action {
        case .read: statement = try readStatement(table, request, scope: scope, caller: caller)
        case .insert, .singleUpsert, .update, .delete: statement = try writeStatement(table, request, scope: scope, caller: caller, plan: &plan)
        case .call, .describe: throw .unsupportedMethod("?")
        }
        // The SQL is written only now, from the values.
        plan.statement = QueryWriter.statement(statement)
        plan.plannedCount = statement.plannedCount.map(QueryWriter.plannedCount)
        plan.estimatedBeyond = statement.estimatedBeyond
        return plan
    }

    /// A read's rows as `pgrst_source`, the total when counted (exactly, by its own count of the
    /// same rows, or by the planner's estimate of them).
    private func readStatement(_ table: SchemaCache.Table, _ request: ApiRequest, scope: Scope, caller: Caller) throws(RESTError) -> TableStatementPlan {
        let read = try readPlan(table, request, scope: scope, caller: caller)
        var statement = TableStatementPlan(source: .read(read), answer: AnswerPlan(media: request.media))
        if request.preferences.count == .planned {
            statement.plannedCount = Self.counted(read, select: .one)
        } else if request.preferences.count == .estimated, let maxRows, !request.isWholeRange {
            // Exact up to `db-max-rows` (one row more tells it was passed), the planner's
            // estimate beyond.
            var capped = Self.counted(read, select: .one)
            capped.limit = maxRows + 1
            statement.answer.total = .capped(capped)
            statement.plannedCount = Self.counted(read, select: .one)
            statement.estimatedBeyond = maxRows
        } else if request.preferences.wantsCount {
            statement.answer.total = request.isWholeRange ? .page : .rows(Self.counted(read, select: .count))
        }
        return statement
    }

    /// A write's rows as `pgrst_source`, and its answer: the rows with their embeds,
    /// `pgrst_source` read back through the read's select (PostgREST's mutation read plan), the
    /// embedded rows narrowed by the caller's read rule exactly as on a read; planned (and so
    /// checked) first, whatever `Prefer: return`.
    private func writeStatement(
        _ table: SchemaCache.Table, _ request: ApiRequest, scope: Scope, caller: Caller, plan: inout ActionPlan
    ) throws(RESTError) -> TableStatementPlan {
        let embeds = request.select.contains { $0.embed != nil }
        let returned = try returnedRows(table, request, caller: caller)
        let limited = try limitedRows(table, request, scope: scope, caller: caller)
        var mutate = MutatePlan(
            table: table, action: .delete, conditions: scope.conditions.map { .condition($0) }, denyAll: scope.denyAll, limited: limited)
        var answer = AnswerPlan(media: request.media, rows: embeds && request.preferences.returning != .representation ? .source : .read(returned))
        if request.action == .update {
            mutate.action = try updateAction(table, request)
        } else if request.action != .delete {
            try planInsert(table, request, owner: scope.owner, into: &mutate, answer: &answer, plan: &plan)
        }
        return TableStatementPlan(source: .mutate(mutate), answer: answer)
    }

    /// The media a table's rows are answered in: a media handler of the table (for its whole
    /// rows) or of any rows may answer `Accept` (negotiated before the request's names are
    /// checked, as PostgREST); and `select=count` read as PostgREST's clients mean it.
    private func negotiated(_ request: ApiRequest, table: SchemaCache.Table) throws(RESTError) -> ApiRequest {
        var request = request
        let negotiated = try negotiateMedia(
            request, relation: table.name, rowType: QueryWriter.qualified(table.qualifiedName),
            defaultSelect: request.select.count == 1 && request.select[0].isStar, scalar: false)
        if case .custom = negotiated, !request.isRead, request.preferences.returning != .representation {
            // A write without a representation has no body to hand a handler (PostgREST's NoAgg).
        } else {
            request.media = negotiated
        }
        request.select = Self.legacyCounts(request.select, of: table)
        return request
    }

    /// The request's conditions with the ownership middleware's: the owner's filter (skipped
    /// when the client already filters on exactly its own id) or the family scope.
    static func scope(_ conditions: [Condition], ownership: OwnershipDecision) -> Scope {
        var scope = Scope(conditions: conditions)
        switch ownership {
        case .unrestricted: break
        case .nothing: scope.denyAll = true
        case .owner(let column, let user):
            scope.owner = (column, user)
            if !conditions.contains(where: { isSameOwnerFilter($0, column: column, user: user) }) {
                scope.conditions.append(.filter(Filter(column: column, op: .eq, operand: .value(user))))
            }
        case .scoped(let family, let upsertOwner):
            scope.owner = upsertOwner
            // A filter on exactly the caller's own id already keeps inside any family scope.
            var redundant = false
            if case .family(let column, let user, _, _) = family {
                redundant = conditions.contains(where: { isSameOwnerFilter($0, column: column, user: user) })
            }
            if !redundant { scope.conditions.append(.scope(family)) }
        }
        return scope
    }

    /// Every name of the request's top level checked before anything is planned: its filters,
    /// `order` (a `rel(col)` term needs an embed) and selected columns.
    static func checkNames(_ request: ApiRequest, table: SchemaCache.Table, conditions: [Condition]) throws(RESTError) {
        try QueryBuilder(table: table).validate(conditions)
        let embeds = request.select.contains { $0.embed != nil }
        for term in request.order {
            if let relation = term.relation {
                // `rel(col)` with nothing embedded; else checked with the embeds (`relatedOrders`).
                if !embeds { throw .notEmbedded(relation) }
            } else if !table.hasField(term.column) {
                throw .unknownColumn(column: term.column, table: table.name)
            }
        }
        for item in request.select where item.embed == nil && item.column != "*" && !table.hasField(item.column) {
            throw .unknownColumn(column: item.column, table: table.name)
        }
    }

    /// A read's rows: the select tree, the conditions (its `!inner` embeds' too), grouping,
    /// order and range.
    private func readPlan(_ table: SchemaCache.Table, _ request: ApiRequest, scope: Scope, caller: Caller) throws(RESTError) -> ReadPlan {
        var state = EmbedState(caller: caller, request: request)
        let select = try selectPlan(request.select, table: table, realName: table.name, path: "", state: &state)
        var read = ReadPlan(
            table: table, from: .table(table.qualifiedName), select: .fields(select.fields),
            conditions: scope.conditions.map { .condition($0) } + select.inner, denyAll: scope.denyAll, grouping: select.grouping)
        read.order = try relatedOrders(
            request.order, items: request.select, table: table, realName: table.name, origin: table.name, path: "",
            spreadPositions: select.spreadPositions, state: &state)
        read.limit = request.limit
        read.offset = request.offset
        return read
    }

    /// The rows a read counts (exactly, or by the planner's estimate): the same FROM and WHERE.
    static func counted(_ read: ReadPlan, select: Projection) -> ReadPlan {
        ReadPlan(table: read.table, from: read.from, select: select, conditions: read.conditions, denyAll: read.denyAll)
    }

    /// The rows a write returned as its answer: `(SELECT <select list> FROM pgrst_source WHERE
    /// <!inner> GROUP BY … ORDER BY …)`, shaped by `select` and in `order`, the embeds' rows
    /// those of the write's returned rows. The embedded rows are read in the statement's
    /// snapshot: as PostgREST answers, a DELETE's cascaded children are still there, and an
    /// INSERT's new rows are not yet visible to its embeds.
    private func returnedRows(_ table: SchemaCache.Table, _ request: ApiRequest, caller: Caller) throws(RESTError) -> ReadPlan {
        var state = EmbedState(caller: caller, request: request, isWrite: true)
        let select = try selectPlan(request.select, table: table, realName: table.name, path: "", qualifier: "pgrst_source", state: &state)
        // PostgREST names a write's own rows `pgrst_source` in PGRST118.
        let order = try relatedOrders(
            request.order, items: request.select, table: table, realName: table.name, origin: "pgrst_source", path: "",
            parentQualifier: "pgrst_source", spreadPositions: select.spreadPositions, state: &state)
        return ReadPlan(
            table: table, from: .source, qualifier: "pgrst_source", select: .fields(select.fields), conditions: select.inner,
            grouping: select.grouping, order: order)
    }

    /// PATCH and DELETE with `limit` (PostgREST's limited update/delete): the first rows in
    /// `order`, `rel(col)` terms included, chosen by their `ctid`.
    private func limitedRows(_ table: SchemaCache.Table, _ request: ApiRequest, scope: Scope, caller: Caller) throws(RESTError) -> ReadPlan? {
        guard let limit = request.limit, request.action == .update || request.action == .delete else { return nil }
        var state = EmbedState(caller: caller, request: request, isWrite: true)
        let order = try relatedOrders(
            request.order, items: request.select, table: table, realName: table.name, origin: "pgrst_source", path: "", state: &state)
        return ReadPlan(
            table: table, from: .table(table.qualifiedName), select: .ctid, conditions: scope.conditions.map { .condition($0) },
            denyAll: scope.denyAll, order: order, limit: limit, offset: request.offset)
    }

    static func isSameOwnerFilter(_ condition: Condition, column: String, user: String) -> Bool {
        guard case .filter(let filter) = condition, filter.column == column, filter.jsonPath.isEmpty, filter.quantifier == nil, filter.op == .eq,
            case .value(let value) = filter.operand
        else { return false }
        return value.lowercased() == user
    }
}
