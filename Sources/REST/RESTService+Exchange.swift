import Identity
import Postgres

/// One round trip of a plan: what is sent before and after its statement and how the results
/// are read (PostgREST's App.hs / Query.hs around the main statement).
extension RESTService {
    /// One round trip's statements and how to read their results.
    struct Exchange {
        let statements: [SQL]
        let interpret: ([QueryResult]) -> MainResult
    }

    /// A plan's single round trip: the claims and role (and read-only for GET/HEAD) first, then
    /// the statement, then what a function chose as status and headers, then the planner's
    /// estimate when `count=planned`; all before one Sync, so one implicit transaction. A plan
    /// that rolls back wraps them in BEGIN … ROLLBACK.
    static func exchange(
        _ plan: ActionPlan, statement: SQL, caller: Caller, context: RequestContext?, settings: PostgRESTSettings = PostgRESTSettings()
    ) -> Exchange {
        let preamble = preamble(plan, caller: caller, context: context, settings: settings)
        let first = (plan.rollback ? 1 : 0) + preamble.count
        // `Accept: application/vnd.pgrst.plan…`: EXPLAIN's output (one JSON document, or the
        // text's lines) is the body.
        if let media = plan.request.explain {
            var explained = QueryWriter.explainPrefix(media)
            explained.append(statement)
            let statements = plan.rollback ? ["BEGIN"] + preamble + [explained, "ROLLBACK"] : preamble + [explained]
            return Exchange(statements: statements) { results in
                let output = results[first]
                // Each row followed by a newline, as PostgREST's `unlines`.
                let body = (0..<output.count).compactMap { output[$0, 0] }.map { $0 + "\n" }.joined()
                return MainResult(total: nil, pageTotal: 1, body: body, inserted: nil)
            }
        }
        let statusQuery = statusQuery(plan)
        let explain: [SQL] = plan.plannedCount.map { [$0] } ?? []
        let statements: [SQL] =
            plan.rollback
            ? ["BEGIN"] + preamble + [statement] + statusQuery + explain + ["ROLLBACK"]
            : preamble + [statement] + statusQuery + explain
        return Exchange(statements: statements) { results in
            var result = mainResult(results[first], status: statusQuery.isEmpty ? nil : results[first + 1])
            if !explain.isEmpty {
                let planned = plannedRows(results[first + 1 + statusQuery.count])
                result.total = estimatedTotal(exact: result.total, planned: planned, beyond: plan.estimatedBeyond)
            }
            return result
        }
    }

    /// The total of a counted read: the planner's estimate (`count=planned`), or with
    /// `count=estimated` under `db-max-rows` the exact count up to that limit and, beyond it,
    /// the larger of the count and the estimate.
    static func estimatedTotal(exact: Int?, planned: Int?, beyond limit: Int?) -> Int? {
        guard let limit else { return planned }
        guard let exact, exact > limit, let planned else { return exact }
        return max(exact, planned)
    }

    /// What precedes a plan's statement: the setup (with `app.settings.*` and the search path when
    /// configured), then `db-pre-request`'s function when there is one, in the same transaction.
    static func preamble(_ plan: ActionPlan, caller: Caller, context: RequestContext?, settings: PostgRESTSettings) -> [SQL] {
        var setup = setup(caller: caller, readOnly: plan.readOnly, timezone: plan.request.preferences.timezone, context: context)
        for (name, value) in settings.appSettings { setup.append(SQL(", set_config(\(name), \(value), true) IS NULL")) }
        // The request's schema first (PostgREST's search path), then `db-extra-search-path`; left
        // as it is for `public` alone.
        let schema = plan.request.schema
        if settings.extraSearchPath != nil || schema != "public" {
            let path = ([schema] + (settings.extraSearchPath ?? [])).map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(
                separator: ", ")
            setup.append(SQL(", set_config('search_path', \(path), true) IS NULL"))
        }
        return [setup] + (settings.preRequest.map { [$0.call] } ?? [])
    }

    /// A function may choose the status (`set_config('response.status', '404', true)`) and
    /// headers; they are read in the same transaction, right after the call.
    static func statusQuery(_ plan: ActionPlan) -> [SQL] {
        guard plan.readsResponseSettings else { return [] }
        return ["SELECT current_setting('response.status', true), current_setting('response.headers', true)"]
    }

    /// A PUT writes exactly one row; none means the row exists and is not the caller's (the
    /// upsert's ownership condition held it back): PostgreSQL's RLS answer, 42501.
    static func checked(_ plan: ActionPlan, _ result: MainResult, caller: Caller) throws(RESTError) -> MainResult {
        if let error = result.settingsError { throw error }
        if plan.action == .singleUpsert, result.pageTotal == 0 {
            throw RESTError.ownership(table: plan.resource, authenticated: caller.role != "anon")
        }
        return result
    }

    /// PostgREST's failNotSingular / failExceedsMaxAffectedPref: a reason to roll back, if any.
    static func decide(_ plan: ActionPlan, _ result: MainResult) -> RESTError? {
        if plan.request.singleObject && result.pageTotal != 1 { return .singularity(rows: result.pageTotal) }
        let preferences = plan.request.preferences
        if let max = preferences.maxAffected, preferences.handling == .strict, result.pageTotal > max {
            return .tooManyAffected(result.pageTotal)
        }
        return nil
    }

    /// The first statement of every request: claims and role as binds. The claims are set for
    /// anonymous requests too (a pooled connection that once set `request.jwt.claims` locally
    /// reads it as '' afterwards, not NULL), and the role switch precedes the statement. A REST
    /// request also sets what PostgREST gives every function and policy to read: `request.method`,
    /// `request.path`, `request.headers` and `request.cookies` (JSON objects), in the same
    /// statement. Realtime's re-reads start the same way (without a request).
    ///
    /// `request.jwt.claim.sub` holds the token's `sub` ('' without one): Supabase's `auth.uid()`
    /// reads it before parsing `request.jwt.claims`, which RLS policies otherwise do for every row
    /// they check (4% of PostgreSQL's time on a read).
    public static func setup(caller: Caller, readOnly: Bool, timezone: String? = nil, context: RequestContext? = nil) -> SQL {
        // One literal per shape, its text written once: this runs for every request.
        var sql: SQL
        if let context {
            sql = (readOnly ? requestReadSetup : requestSetup).with(binds: [
                caller.claimsJSON, caller.subject ?? "", caller.role, context.method, context.path, context.headersJSON, context.cookiesJSON
            ])
        } else {
            sql = (readOnly ? callerReadSetup : callerSetup).with(binds: [caller.claimsJSON, caller.subject ?? "", caller.role])
        }
        // `Prefer: timezone=…`: an unknown zone fails here (22023), before the statement runs.
        if let timezone { sql.append(SQL(", set_config('timezone', \(timezone), true) IS NULL")) }
        return sql
    }

    private static let requestSetup = setupShape(context: true, readOnly: false)
    private static let requestReadSetup = setupShape(context: true, readOnly: true)
    private static let callerSetup = setupShape(context: false, readOnly: false)
    private static let callerReadSetup = setupShape(context: false, readOnly: true)

    /// `setup`'s statement with NULL for every value (`with(binds:)` puts them in).
    private static func setupShape(context: Bool, readOnly: Bool) -> SQL {
        let value: String? = nil
        var sql: SQL
        // `set_config` answers the value it set; `IS NULL` makes each answer one byte instead of
        // the claims and headers sent back (nobody reads them).
        if context {
            sql = """
                SELECT set_config('request.jwt.claims', \(value), true) IS NULL, set_config('request.jwt.claim.sub', \(value), true) IS NULL, \
                set_config('role', \(value), true) IS NULL, \
                set_config('request.method', \(value), true) IS NULL, set_config('request.path', \(value), true) IS NULL, \
                set_config('request.headers', \(value), true) IS NULL, set_config('request.cookies', \(value), true) IS NULL
                """
        } else {
            sql = """
                SELECT set_config('request.jwt.claims', \(value), true) IS NULL, set_config('request.jwt.claim.sub', \(value), true) IS NULL, \
                set_config('role', \(value), true) IS NULL
                """
        }
        if readOnly { sql.append(", set_config('transaction_read_only', 'on', true) IS NULL") }
        return sql.finished()
    }

    /// The planner's row estimate from `EXPLAIN (FORMAT JSON)`: `[{"Plan": {"Plan Rows": n, …}}]`.
    static func plannedRows(_ result: QueryResult) -> Int? {
        guard let text = result.scalar, let json = JSONValue.parse(Array(text.utf8)), case .array(let plans) = json,
            case .object(let members)? = plans.first, case .object(let plan)? = members.first(where: { $0.key == "Plan" })?.value,
            case .number(let rows)? = plan.first(where: { $0.key == "Plan Rows" })?.value
        else { return nil }
        return Double(rows).flatMap { $0.isFinite ? Int(min(max($0, 0), 1e15)) : nil }
    }

    static func mainResult(_ result: QueryResult, status: QueryResult? = nil) -> MainResult {
        let statusText = status.flatMap { $0.count > 0 ? $0[0, 0] : nil }.flatMap { $0.isEmpty ? nil : $0 }
        let headersText = status.flatMap { $0.count > 0 && $0.columns.count > 1 ? $0[0, 1] : nil }.flatMap { $0.isEmpty ? nil : $0 }
        let chosen = statusText.flatMap { Int($0) }.flatMap { (100...599).contains($0) ? $0 : nil }
        let headers = headersText.map { Self.responseHeaders($0) } ?? []
        var settingsError: RESTError?
        if statusText != nil && chosen == nil { settingsError = .invalidResponseStatus }
        if headers == nil { settingsError = .invalidResponseHeaders }
        guard result.count > 0, result.columns.count >= 4 else {
            return MainResult(
                total: nil, pageTotal: 0, body: nil, inserted: nil, status: chosen, headers: headers ?? [], settingsError: settingsError)
        }
        return MainResult(
            total: result[0, 0].flatMap { Int($0) }, pageTotal: result[0, 1].flatMap { Int($0) } ?? 0,
            body: result[0, 2], inserted: result[0, 3].flatMap { Int($0) }, status: chosen, headers: headers ?? [], settingsError: settingsError)
    }

    /// `response.headers` as PostgREST reads it: a JSON array of one-member objects with string
    /// values, `[{"Cache-Control": "no-cache"}, …]`; nil for anything else (PGRST111).
    static func responseHeaders(_ text: String) -> [(String, String)]? {
        guard case .array(let items)? = JSONValue.parse(Array(text.utf8)) else { return nil }
        var headers: [(String, String)] = []
        for item in items {
            guard case .object(let members) = item, members.count == 1, case .string(let value) = members[0].value, !members[0].key.isEmpty else {
                return nil
            }
            headers.append((members[0].key, value))
        }
        return headers
    }
}
