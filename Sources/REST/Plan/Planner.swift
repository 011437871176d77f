import Identity
import Postgres

/// A request checked against the schema cache and turned into SQL (PostgREST's `Plan` and
/// `Query` stages). Pure: the executor runs `statement`, the renderer reads its one result row
/// (`total`, `page_total`, `body`, `inserted`), and Swift never decodes the rows themselves.
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

    func planTable(_ table: SchemaCache.Table, _ request: ApiRequest, ownership: OwnershipDecision, caller: Caller) throws(RESTError) -> ActionPlan {
        var request = request
        // A media handler of the table (for its whole rows) or of any rows may answer `Accept`
        // (negotiated before the request's names are checked, as PostgREST).
        let negotiated = try negotiateMedia(
            request, relation: table.name, rowType: table.qualifiedName,
            defaultSelect: request.select.count == 1 && request.select[0].isStar, scalar: false)
        if case .custom = negotiated, !request.isRead, request.preferences.returning != .representation {
            // A write without a representation has no body to hand a handler (PostgREST's NoAgg).
        } else {
            request.media = negotiated
        }
        request.select = Self.legacyCounts(request.select, of: table)
        let builder = QueryBuilder(table: table)
        var conditions = request.conditions
        var owner: (column: String, user: String)? = nil
        var denyAll = false
        switch ownership {
        case .unrestricted: break
        case .nothing: denyAll = true
        case .owner(let column, let user):
            owner = (column, user)
            // Skip the duplicate when the client already filters on exactly its own id.
            if !conditions.contains(where: { Self.isSameOwnerFilter($0, column: column, user: user) }) {
                conditions.append(.filter(Filter(column: column, op: .eq, operand: .value(user))))
            }
        case .scoped(let scope, let upsertOwner):
            owner = upsertOwner
            // A filter on exactly the caller's own id already keeps inside any family scope.
            var redundant = false
            if case .family(let column, let user, _, _) = scope {
                redundant = conditions.contains(where: { Self.isSameOwnerFilter($0, column: column, user: user) })
            }
            if !redundant { conditions.append(.scope(scope)) }
        }
        // Validate every name before any SQL is written.
        try builder.validate(conditions)
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
        let media = request.media
        let mutation = !request.isRead
        // A write's rows with their embeds: `pgrst_source` read back through the read's select
        // (PostgREST's mutation read plan), the embedded rows narrowed by the caller's read rule
        // exactly as on a read. Built (and so checked) before any SQL, whatever `Prefer: return`.
        var embedded: SQL? = nil
        if mutation, embeds { embedded = try returnedWithEmbeds(table, request, caller: caller) }
        // PATCH/DELETE with `limit` choose their rows in `order`, `rel(col)` terms included.
        var limitedOrder: [Int: SQL] = [:]
        if mutation, request.limit != nil, embeds {
            var state = EmbedState(caller: caller, request: request, isWrite: true)
            limitedOrder = try relatedOrders(
                request.order, items: request.select, table: table, realName: table.name, origin: "pgrst_source", path: "", state: &state)
        }
        var plan = ActionPlan(
            request: request, statement: nil, readOnly: !mutation,
            mustDecide: mutation && (request.singleObject || (request.preferences.maxAffected != nil && request.preferences.handling == .strict)),
            rollback: request.preferences.transaction.map { $0 == .rollback } ?? rollbackByDefault, resource: table.name)
        // The statement is written front to back with binds numbered as they come: no fragment
        // is renumbered or copied (this stage was most of REST's CPU per request).
        var sql = SQLBuilder()
        sql.raw("WITH pgrst_source AS (")
        switch request.action {
        case .read:
            sql.raw("SELECT ")
            let grouping: [Int]
            var relatedOrder: [Int: SQL] = [:]
            if embeds {
                var state = EmbedState(caller: caller, request: request)
                let shape = try writeSelect(request.select, table: table, realName: table.name, path: "", state: &state, into: &sql)
                conditions += shape.inner
                grouping = shape.grouping
                relatedOrder = try relatedOrders(
                    request.order, items: request.select, table: table, realName: table.name, origin: table.name, path: "", state: &state)
            } else {
                grouping = builder.writeSelectList(request.select, qualifier: nil, into: &sql)
            }
            sql.raw(" FROM ")
            builder.writeQualified(into: &sql)
            builder.writeWhere(conditions, denyAll: denyAll, into: &sql)
            QueryBuilder.writeGroupBy(grouping, into: &sql)
            builder.writeOrder(request.order, related: relatedOrder, into: &sql)
            if let limit = request.limit {
                sql.raw(" LIMIT ")
                sql.bind(String(limit))
            }
            if request.offset > 0 {
                sql.raw(" OFFSET ")
                sql.bind(String(request.offset))
            }
            sql.raw(") ")
            if request.preferences.count == .planned {
                var explain = SQLBuilder()
                explain.raw("EXPLAIN (FORMAT JSON) SELECT 1 FROM ")
                builder.writeQualified(into: &explain)
                builder.writeWhere(conditions, denyAll: denyAll, into: &explain)
                plan.plannedCount = explain.sql
            }
            Self.writeAggregate(
                media: media, into: &sql,
                total: { sql in
                    if request.preferences.wantsCount && request.preferences.count != .planned {
                        sql.raw("(SELECT pg_catalog.count(*) FROM ")
                        builder.writeQualified(into: &sql)
                        builder.writeWhere(conditions, denyAll: denyAll, into: &sql)
                        sql.raw(")")
                    } else {
                        sql.raw("NULL::bigint")
                    }
                }, inserted: nil, from: { $0.raw("pgrst_source") })

        case .insert, .singleUpsert:
            guard table.insertable else { throw .unsupportedMethod("POST") }
            guard let payload = request.payload else { throw .invalidBody("Empty or invalid json") }
            // Sorted: the statement text (and its prepared statement) must not depend on key order.
            let keys = (request.columns ?? payload.keys).sorted()
            for key in keys where table.column(key) == nil {
                throw .unknownBodyColumn(column: key, table: table.name)
            }
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
            sql.raw("INSERT INTO ")
            builder.writeQualified(into: &sql)
            if keys.isEmpty {
                // `{}` or `[{}, …]`: every column takes its default, once per element.
                if payload.isArray {
                    sql.raw(" SELECT FROM json_array_elements(")
                    sql.bind(payload.raw)
                    sql.raw("::json)")
                } else {
                    sql.raw(" DEFAULT VALUES")
                }
            } else {
                sql.raw(" (")
                builder.writeColumnList(keys, into: &sql)
                sql.raw(") ")
                builder.writeJSONRows(payload: payload, keys: keys, applyDefaults: request.preferences.missing == .default, into: &sql)
            }
            if let conflict, !conflict.isEmpty {
                sql.raw(" ON CONFLICT (")
                builder.writeColumnList(conflict, into: &sql)
                sql.raw(") ")
                if !merge || keys.isEmpty {
                    sql.raw("DO NOTHING")
                } else {
                    sql.raw("DO UPDATE SET ")
                    for (index, key) in keys.enumerated() {
                        if index > 0 { sql.raw(", ") }
                        let name = builder.quoted(key)
                        sql.raw(name)
                        sql.raw(" = EXCLUDED.")
                        sql.raw(name)
                    }
                    if let owner {
                        // An upsert may not take over another user's row.
                        sql.raw(" WHERE ")
                        builder.writeColumn(owner.column, into: &sql)
                        sql.raw(" = ")
                        sql.bind(owner.user)
                    }
                }
            }
            let countsInserted = upsert && merge
            // `return=headers-only`: the primary key is read back for the `Location` header.
            let location = request.preferences.returning == .headersOnly && !isPut ? table.primaryKey : []
            // Without a representation nothing of the rows is read back: `RETURNING 1` needs no
            // SELECT privilege, so a role that may only INSERT can still insert (PostgREST's
            // return=minimal). The rows are still counted.
            let minimal = request.preferences.returning != .representation && !countsInserted && location.isEmpty
            sql.raw(" RETURNING ")
            if minimal {
                sql.raw("1")
            } else if !location.isEmpty {
                plan.locationKeys = location
                builder.writeColumnList(location, into: &sql)
            } else {
                builder.writeQualified(into: &sql)
                sql.raw(".*")
            }
            if countsInserted { sql.raw(", (xmax::text = '0') AS pgrst_inserted") }
            sql.raw(") ")
            Self.writeAggregate(
                media: media, into: &sql, total: { $0.raw("NULL::bigint") },
                inserted: countsInserted ? "(SELECT pg_catalog.count(*) FILTER (WHERE pgrst_inserted) FROM pgrst_source)" : nil,
                from: { sql in
                    if minimal || !location.isEmpty {
                        sql.raw("pgrst_source")
                    } else {
                        Self.writeReturned(builder, request, embedded: embedded, into: &sql)
                    }
                },
                body: location.isEmpty
                    ? nil
                    : { sql in
                        // Each row's key values as JSON (PostgREST reads them through row_to_json).
                        sql.raw("coalesce(json_agg(json_build_array(")
                        for (index, key) in location.enumerated() {
                            if index > 0 { sql.raw(", ") }
                            sql.raw("to_json(_postgrest_t.")
                            sql.raw(builder.quoted(key))
                            sql.raw(")")
                        }
                        sql.raw(")), '[]')::text")
                    })

        case .update:
            guard let payload = request.payload else { throw .invalidBody("Empty or invalid json") }
            // Sorted: the statement text (and its prepared statement) must not depend on key order.
            let keys = (request.columns ?? payload.keys).sorted()
            for key in keys where table.column(key) == nil {
                throw .unknownBodyColumn(column: key, table: table.name)
            }
            if keys.isEmpty {
                // PostgREST: nothing to set, nothing updated (and no invalid `SET` with no columns).
                sql.raw("SELECT ")
                builder.writeQualified(into: &sql)
                sql.raw(".* FROM ")
                builder.writeQualified(into: &sql)
                sql.raw(" WHERE false")
            } else {
                sql.raw("UPDATE ")
                builder.writeQualified(into: &sql)
                sql.raw(" SET ")
                // With `columns=` and `Prefer: missing=default`, a listed column the body lacks
                // takes its default (the column's, else its domain's), as PostgREST does.
                let present = Set(payload.keys)
                for (index, key) in keys.enumerated() {
                    if index > 0 { sql.raw(", ") }
                    let name = builder.quoted(key)
                    sql.raw(name)
                    if request.preferences.missing == .default && !present.contains(key) {
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
                builder.writeWhere(conditions, denyAll: denyAll, into: &sql)
                builder.writeLimitedRows(
                    conditions, denyAll: denyAll, order: request.order, related: limitedOrder, limit: request.limit, offset: request.offset,
                    into: &sql)
                sql.raw(" RETURNING ")
                builder.writeQualified(into: &sql)
                sql.raw(".*")
            }
            sql.raw(") ")
            Self.writeAggregate(
                media: media, into: &sql, total: { $0.raw("NULL::bigint") }, inserted: nil,
                from: { Self.writeReturned(builder, request, embedded: embedded, into: &$0) })

        case .delete:
            sql.raw("DELETE FROM ")
            builder.writeQualified(into: &sql)
            builder.writeWhere(conditions, denyAll: denyAll, into: &sql)
            builder.writeLimitedRows(
                conditions, denyAll: denyAll, order: request.order, related: limitedOrder, limit: request.limit, offset: request.offset,
                into: &sql)
            sql.raw(" RETURNING ")
            builder.writeQualified(into: &sql)
            sql.raw(".*) ")
            Self.writeAggregate(
                media: media, into: &sql, total: { $0.raw("NULL::bigint") }, inserted: nil,
                from: { Self.writeReturned(builder, request, embedded: embedded, into: &$0) })

        case .call, .describe:
            throw .unsupportedMethod("?")
        }
        plan.statement = sql.sql
        return plan
    }

    /// The rows a write returned as its answer: shaped by `select` and in `order`; with embeds,
    /// the select list `returnedWithEmbeds` built; without a representation, the rows as they
    /// are (nothing embedded is read for a body no one sees, as PostgREST's `SELECT * FROM
    /// pgrst_source`).
    static func writeReturned(_ builder: QueryBuilder, _ request: ApiRequest, embedded: SQL?, into sql: inout SQLBuilder) {
        guard let embedded else {
            builder.writeReturned(request.select, order: request.order, into: &sql)
            return
        }
        if request.preferences.returning == .representation {
            sql.append(embedded)
        } else {
            sql.raw("pgrst_source")
        }
    }

    /// `(SELECT <select list with embeds> FROM pgrst_source WHERE <!inner> GROUP BY … ORDER BY …)`:
    /// a write's returned rows as the parent rows of its embeds. The embedded rows are read in the
    /// statement's snapshot: as PostgREST answers, a DELETE's cascaded children are still there,
    /// and an INSERT's new rows are not yet visible to its embeds.
    func returnedWithEmbeds(_ table: SchemaCache.Table, _ request: ApiRequest, caller: Caller) throws(RESTError) -> SQL {
        let builder = QueryBuilder(table: table)
        var state = EmbedState(caller: caller, request: request, isWrite: true)
        var sql = SQLBuilder()
        sql.raw("(SELECT ")
        let shape = try writeSelect(request.select, table: table, realName: table.name, path: "", qualifier: "pgrst_source", state: &state, into: &sql)
        // PostgREST names a write's own rows `pgrst_source` in PGRST118.
        let related = try relatedOrders(
            request.order, items: request.select, table: table, realName: table.name, origin: "pgrst_source", path: "",
            parentQualifier: "pgrst_source", state: &state)
        sql.raw(" FROM pgrst_source")
        builder.writeWhere(shape.inner, denyAll: false, into: &sql)
        QueryBuilder.writeGroupBy(shape.grouping, into: &sql)
        builder.writeOrder(request.order, qualifier: "pgrst_source", related: related, into: &sql)
        sql.raw(")")
        return sql.sql
    }

    static func isSameOwnerFilter(_ condition: Condition, column: String, user: String) -> Bool {
        guard case .filter(let filter) = condition, filter.column == column, filter.jsonPath.isEmpty, filter.quantifier == nil, filter.op == .eq,
            case .value(let value) = filter.operand
        else { return false }
        return value.lowercased() == user
    }

    /// PUT (PostgREST's PGRST105/PGRST115): filters are exactly `pk=eq.v`, and the body agrees.
    private func checkPut(_ table: SchemaCache.Table, _ request: ApiRequest, payload: Payload) throws(RESTError) {
        guard !table.primaryKey.isEmpty else { throw .invalidFilters }
        if request.limit != nil || request.offset != 0 { throw .putLimitNotAllowed }
        var values: [String: String] = [:]
        for condition in request.conditions {
            guard case .filter(let filter) = condition, filter.op == .eq, filter.jsonPath.isEmpty, filter.quantifier == nil,
                case .value(let value) = filter.operand, table.primaryKey.contains(filter.column), values[filter.column] == nil
            else { throw .invalidFilters }
            values[filter.column] = value
        }
        guard Set(values.keys) == Set(table.primaryKey) else { throw .invalidFilters }
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

    // MARK: the final SELECT

    /// PostgREST's outer query: `total`, `page_total`, `body` (built by PostgreSQL) and
    /// `inserted`, over the rows of `from`.
    static func aggregate(media: ApiRequest.Media, total: SQL, inserted: SQL, from: SQL, nullForEmptyObject: Bool = false) -> SQL {
        var sql = SQLBuilder()
        writeAggregate(
            media: media, into: &sql, total: { $0.append(total) }, inserted: nil, insertedSQL: inserted,
            from: { $0.append(from) }, nullForEmptyObject: nullForEmptyObject)
        return sql.sql
    }

    static func writeAggregate(
        media: ApiRequest.Media, into sql: inout SQLBuilder, total: (inout SQLBuilder) -> Void,
        inserted: String?, insertedSQL: SQL? = nil, from: (inout SQLBuilder) -> Void,
        nullForEmptyObject: Bool = false, body: ((inout SQLBuilder) -> Void)? = nil
    ) {
        sql.raw("SELECT ")
        total(&sql)
        sql.raw(" AS total, pg_catalog.count(_postgrest_t) AS page_total, ")
        switch media {
        case _ where body != nil:
            body?(&sql)
        case .json, .openAPI:
            sql.raw("coalesce(json_agg(_postgrest_t), '[]')::text")
        case .strippedArray:
            sql.raw("coalesce(json_agg(json_strip_nulls(row_to_json(_postgrest_t))), '[]')::text")
        case .singleObject(let strip):
            let object = strip ? "json_strip_nulls(json_agg(_postgrest_t) -> 0)" : "(json_agg(_postgrest_t) -> 0)"
            sql.raw("coalesce(\(object)::text, \(nullForEmptyObject ? "'null'" : "''"))")
        case .custom(let custom):
            sql.raw(customBody(custom))
        case .csv:
            // Header from the first row's keys, then each row's record text without its
            // parentheses (PostgREST's asCsvF).
            sql.raw("(SELECT coalesce(string_agg(a.k, ','), '') FROM (SELECT json_object_keys(r)::text AS k FROM (SELECT row_to_json(hh) AS r FROM ")
            from(&sql)
            sql.raw(" AS hh LIMIT 1) s) a) || chr(10) || coalesce(string_agg(substring(_postgrest_t::text, 2, length(_postgrest_t::text) - 2), chr(10)), '')")
        }
        sql.raw(" AS body, ")
        if let insertedSQL { sql.append(insertedSQL) } else { sql.raw(inserted ?? "NULL::bigint") }
        sql.raw(" AS inserted FROM ")
        from(&sql)
        sql.raw(" _postgrest_t")
    }
}
