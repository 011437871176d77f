import HTTP
import Identity
import Postgres

/// Settings of the REST layer, resolved once by the app.
public struct RESTConfig: Sendable {
    /// Owner column of each table whose rows belong to one user (enforced in Swift before SQL,
    /// and by RLS underneath), given by the application.
    public var ownership: OwnershipPolicy
    /// The ownership middleware; switched off only by tests that show RLS alone holds.
    public var enforceOwnership = true
    /// Roles a request may run as; another `role` claim is refused (403 42501) before any SQL.
    public var allowedRoles: Set<String> = ["anon", "authenticated", "service_role"]
    /// How transactions end and whether `Prefer: tx=` may change it (PostgREST's `db-tx-end`).
    public var transactionEnd = TransactionEnd.commit
    /// Who may read the OpenAPI document at the root.
    public var openAPIAccess = OpenAPIAccess.serviceRole
    /// PostgREST's `db-aggregates-enabled`: `count()`, `sum()`, … in `select` (off: PGRST123).
    public var aggregatesEnabled = false
    /// Called once for each request that failed because of the database or the connection
    /// (an answer ≥ 500). The app logs and counts it here: the cause is reported once, where it
    /// is mapped.
    public var onServerError: (@Sendable (ServerErrorReport) -> Void)?
    public init(ownership: OwnershipPolicy) {
        self.ownership = ownership
    }

    var policy: OwnershipPolicy { ownership }
}

/// A request answered ≥ 500 because of the database: what may be logged about it. The statement
/// is named by the request's method and resource (`POST /rpc/fn`), never by its SQL or values.
public struct ServerErrorReport: Sendable {
    public let requestID: String
    public let statement: String
    /// PostgreSQL's SQLSTATE; nil when the connection failed or the client refused the query.
    public let sqlState: String?
    /// `server`, `connection` or `client`.
    public let kind: String
    /// The full error, message and details included: not for logs others read.
    public let error: PostgresError
}

/// PostgREST's `db-tx-end`. The default commits and ignores `Prefer: tx`: with an override any
/// caller could try a write and roll it back (a free oracle for throttled functions).
public enum TransactionEnd: String, Sendable, CaseIterable {
    case commit
    case commitAllowOverride = "commit-allow-override"
    case rollback
    case rollbackAllowOverride = "rollback-allow-override"

    var allowsOverride: Bool { self == .commitAllowOverride || self == .rollbackAllowOverride }
    var rollsBack: Bool { self == .rollback || self == .rollbackAllowOverride }
}

/// The OpenAPI document at `GET /rest/v1/`. Supabase's gateways answer it to the service role
/// only (it lists every table, column and function); `all` restores PostgREST's answer to any
/// caller.
public enum OpenAPIAccess: String, Sendable, CaseIterable {
    case serviceRole = "service_role"
    case all
}

/// PostgREST's dialect over the pool: parse → plan → SQL → one round trip → render
/// (PostgREST's App.hs). Only `execute` does I/O.
public final class RESTService: Sendable {
    let pool: Pool
    let schema: SchemaCacheStore
    let config: RESTConfig
    /// PostgREST's settings in force (replaced when the configuration is reloaded).
    public let settings: SettingsStore
    /// Where reads go when hot standbys are configured (`ReadRouting.swift`); nil: the primary.
    let reads: (any ReadRouting)?
    /// Plans of repeated reads (`PlanCache.swift`).
    let plans = PlanCache()

    public init(
        pool: Pool, schema: SchemaCacheStore, config: RESTConfig, settings: SettingsStore = SettingsStore(PostgRESTSettings()),
        reads: (any ReadRouting)? = nil
    ) {
        self.pool = pool
        self.schema = schema
        self.config = config
        self.settings = settings
        self.reads = reads
    }

    /// Serves `resource` (the path after `/rest/v1`, e.g. `/children`, `/rpc/fn`, `/`; or a bare
    /// table path such as `/children`) for `caller`. Never throws: errors render as PostgREST's.
    public func respond(to request: HTTPRequest, resource: String, caller: Caller) -> HTTPResponse {
        let (settings, generation) = self.settings.settingsAndGeneration
        var timing = ServerTiming(enabled: settings.serverTimingEnabled)
        do {
            let plan = try cachedPlan(request, resource: resource, caller: caller, settings: settings, settingsGeneration: generation)
            timing.mark("plan")
            if case .describe = plan.action {
                guard caller.isServiceRole || config.openAPIAccess == .all else {
                    return .json(.forbidden, #"{"message":"You cannot consume this service"}"#)
                }
                let document = OpenAPI.document(caller.isServiceRole ? schema.cache : try privileged(schema.cache, caller: caller))
                var headers = HTTPHeaders()
                headers.add("Content-Type", ResponseRenderer.contentType(.openAPI))
                return HTTPResponse(status: .ok, headers: headers, body: plan.request.isHeadOnly ? [] : Array(document.utf8))
            }
            let result = try execute(plan, caller: caller, context: RequestContext(request, resource: resource), settings: settings)
            timing.mark("transaction")
            var response = ResponseRenderer.render(plan, result)
            timing.mark("response")
            timing.write(into: &response)
            return response
        } catch {
            return failure(error, request, resource: resource, settings: settings)
        }
    }

    /// The pure stages: parse and plan (with the ownership check).
    func plan(_ request: HTTPRequest, resource: String, caller: Caller) throws(RESTError) -> ActionPlan {
        try Self.plan(request, resource: resource, caller: caller, cache: schema.cache, config: config, settings: settings.settings)
    }

    /// The whole request path short of I/O: parse, ownership, plan and SQL, then the response
    /// rendered from a result the caller makes up (`pageTotal` rows, `total` counted). What the
    /// request-path fuzz target drives; nothing here may trap, whatever the request.
    public static func dryRun(
        _ request: HTTPRequest, resource: String, caller: Caller, cache: SchemaCache, config: RESTConfig,
        pageTotal: Int, total: Int?
    ) -> (statement: SQL?, response: HTTPResponse) {
        do {
            let plan = try plan(request, resource: resource, caller: caller, cache: cache, config: config)
            let result = MainResult(total: total, pageTotal: pageTotal, body: pageTotal == 0 ? "[]" : "[{}]", inserted: nil)
            return (plan.statement, ResponseRenderer.render(plan, result))
        } catch {
            return (nil, error.response(for: request))
        }
    }

    static func plan(
        _ request: HTTPRequest, resource: String, caller: Caller, cache: SchemaCache, config: RESTConfig, settings: PostgRESTSettings = PostgRESTSettings()
    ) throws(RESTError) -> ActionPlan {
        guard config.allowedRoles.contains(caller.role) else {
            throw .database(
                PostgresError(kind: .server, message: "permission denied to set role \"\(caller.role)\"", sqlState: "42501"),
                authenticated: caller.role != "anon")
        }
        var api = try ApiRequest.parse(
            method: request.method, resource: resource, query: request.query,
            headers: request.headers, body: request.body)
        if !config.transactionEnd.allowsOverride { api.preferences.transaction = nil }
        // The plan media type only with `db-plan-enabled`, as PostgREST (406 otherwise).
        if api.explain != nil, !settings.planEnabled { throw .notAcceptable(api.accept ?? "") }
        // `db-max-rows`: reads and function calls answer at most that many rows.
        if let maxRows = settings.maxRows, api.isRead || api.action.isCall { api.limit = min(api.limit ?? maxRows, maxRows) }
        var planner = Planner(cache: cache, policy: config.policy, ownershipEnabled: config.enforceOwnership)
        planner.rollbackByDefault = config.transactionEnd.rollsBack
        planner.aggregatesEnabled = config.aggregatesEnabled
        var plan = try planner.plan(api, caller: caller)
        if let explain = api.explain {
            // The plan is the answer: nothing to decide; a write that EXPLAIN ANALYZE runs is
            // rolled back.
            plan.mustDecide = false
            if explain.options.contains("analyze") && !plan.readOnly { plan.rollback = true }
        }
        return plan
    }

    // MARK: execution (the only I/O)

    /// What of the schema `caller`'s role holds a privilege on (PostgREST's openapi-mode
    /// follow-privileges): tables with any of SELECT/INSERT/UPDATE/DELETE, functions it may EXECUTE.
    func privileged(_ cache: SchemaCache, caller: Caller) throws(RESTError) -> SchemaCache {
        let query: SQL = """
            SELECT 't', c.relname::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
              AND pg_catalog.has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE')
            UNION ALL
            SELECT 'f', p.proname::text FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'public' AND pg_catalog.has_function_privilege(p.oid, 'EXECUTE')
            """
        do {
            let rows = try pool.withConnection { try $0.pipeline([Self.setup(caller: caller, readOnly: true), query])[1] }
            var tables = Set<String>()
            var functions = Set<String>()
            for row in 0..<rows.count {
                guard let name = rows[row, 1] else { continue }
                if rows[row, 0] == "t" { tables.insert(name) } else { functions.insert(name) }
            }
            return SchemaCache(
                tables: cache.tables.values.filter { tables.contains($0.name) },
                functions: cache.functions.values.flatMap { $0 }.filter { functions.contains($0.name) })
        } catch let error as PostgresError {
            throw .database(error, authenticated: caller.role != "anon")
        } catch {
            throw .database(PostgresError(kind: .client, message: "\(error)"), authenticated: caller.role != "anon")
        }
    }

    /// Runs a plan on a pooled connection (a blocking round trip). See `exchange` for what is
    /// sent. When the result decides the outcome (object Accept on a write, max-affected strict)
    /// the statement runs inside BEGIN and the COMMIT or ROLLBACK follows in a second round trip.
    func execute(
        _ plan: ActionPlan, caller: Caller, context: RequestContext? = nil, settings: PostgRESTSettings = PostgRESTSettings()
    ) throws(RESTError) -> MainResult {
        guard let statement = plan.statement else { return MainResult(total: nil, pageTotal: 0, body: nil, inserted: nil) }
        return try routedExecute(plan, statement: statement, caller: caller, context: context, settings: settings)
    }

    /// `execute` on the connections of `pool` (the primary's, or a standby's for a routed read).
    func execute(
        _ plan: ActionPlan, statement: SQL, caller: Caller, context: RequestContext?, settings: PostgRESTSettings, on pool: Pool
    ) throws(RESTError) -> MainResult {
        do {
            return try pool.withConnection { connection throws -> MainResult in
                guard plan.mustDecide else {
                    let exchange = Self.exchange(plan, statement: statement, caller: caller, context: context, settings: settings)
                    return try Self.checked(plan, exchange.interpret(try connection.pipeline(exchange.statements)), caller: caller)
                }
                let preamble = Self.preamble(plan, caller: caller, context: context, settings: settings)
                let statusQuery = Self.statusQuery(plan)
                let results = try connection.pipeline(["BEGIN"] + preamble + [statement] + statusQuery)
                let main = 1 + preamble.count
                let result = Self.mainResult(results[main], status: statusQuery.isEmpty ? nil : results[main + 1])
                let failure = Self.decide(plan, result)
                _ = try connection.pipeline([failure == nil && !plan.rollback ? "COMMIT" : "ROLLBACK"])
                if let failure { throw failure }
                return try Self.checked(plan, result, caller: caller)
            }
        } catch {
            throw Self.restError(error, caller: caller)
        }
    }

    /// Serves a request on the event loop: plans it, sends its one exchange on a pipelined
    /// connection and replies when the results arrive, without blocking the thread. Returns false
    /// (having replied nothing) for what needs a worker: the OpenAPI document, plans that must
    /// decide between COMMIT and ROLLBACK or roll back, or no pipelined connection free.
    public func respond(
        to request: HTTPRequest, resource: String, caller: Caller, pipeline: PipelineClient,
        reply: @escaping (HTTPResponse) -> Void
    ) -> Bool {
        let (settings, generation) = self.settings.settingsAndGeneration
        var timing = ServerTiming(enabled: settings.serverTimingEnabled)
        let plan: ActionPlan
        do {
            plan = try cachedPlan(request, resource: resource, caller: caller, settings: settings, settingsGeneration: generation)
            timing.mark("plan")
        } catch {
            reply(failure(error, request, resource: resource, settings: settings))
            return true
        }
        guard !plan.action.isDescribe, !plan.mustDecide, !plan.rollback else { return false }
        guard let statement = plan.statement else {
            reply(ResponseRenderer.render(plan, MainResult(total: nil, pageTotal: 0, body: nil, inserted: nil)))
            return true
        }
        let exchange = Self.exchange(plan, statement: statement, caller: caller, context: RequestContext(request, resource: resource), settings: settings)
        return routedSubmit(plan, exchange, caller: caller, method: request.method.rawValue, primary: pipeline) { [self] outcome in
            do {
                let results = try outcome.get()
                timing.mark("transaction")
                var response = ResponseRenderer.render(plan, try Self.checked(plan, exchange.interpret(results), caller: caller))
                timing.mark("response")
                timing.write(into: &response)
                reply(response)
            } catch {
                reply(failure(Self.restError(error, caller: caller), request, resource: resource, settings: settings))
            }
        }
    }

    /// An error's response; a database failure (≥ 500) is reported once, here.
    private func failure(_ error: RESTError, _ request: HTTPRequest, resource: String, settings: PostgRESTSettings) -> HTTPResponse {
        if case .database(let cause, _) = error, error.status.code >= 500 {
            config.onServerError?(
                ServerErrorReport(
                    requestID: request.id, statement: "\(request.method.rawValue) \(resource)", sqlState: cause.sqlState, kind: "\(cause.kind)",
                    error: cause))
        }
        return settings.minimalErrors ? error.minimalResponse(for: request) : error.response(for: request)
    }

    static func restError(_ error: any Error, caller: Caller) -> RESTError {
        switch error {
        case let error as RESTError: return error
        case let error as PostgresError: return .database(error, authenticated: caller.role != "anon")
        default: return .database(PostgresError(kind: .client, message: "\(error)"), authenticated: caller.role != "anon")
        }
    }

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
            var explained = media.prefix
            explained.append(statement)
            let statements = plan.rollback ? ["BEGIN"] + preamble + [explained, "ROLLBACK"] : preamble + [explained]
            return Exchange(statements: statements) { results in
                let output = results[first]
                let body = media.json ? output[0, 0] ?? "[]" : (0..<output.count).compactMap { output[$0, 0] }.joined(separator: "\n")
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
            if !explain.isEmpty { result.total = plannedRows(results[first + 1 + statusQuery.count]) }
            return result
        }
    }

    /// What precedes a plan's statement: the setup (with `app.settings.*` and the search path when
    /// configured), then `db-pre-request`'s function when there is one, in the same transaction.
    static func preamble(_ plan: ActionPlan, caller: Caller, context: RequestContext?, settings: PostgRESTSettings) -> [SQL] {
        var setup = setup(caller: caller, readOnly: plan.readOnly, timezone: plan.request.preferences.timezone, context: context)
        for (name, value) in settings.appSettings { setup.append(SQL(", set_config(\(name), \(value), true)")) }
        if let extra = settings.extraSearchPath {
            let path = (["public"] + extra).map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: ", ")
            setup.append(SQL(", set_config('search_path', \(path), true)"))
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
    public static func setup(caller: Caller, readOnly: Bool, timezone: String? = nil, context: RequestContext? = nil) -> SQL {
        // One literal per shape (not fragments appended): this runs for every request, and an
        // appended fragment's placeholders would be renumbered by scanning its text.
        var sql: SQL
        if let context {
            sql = """
                SELECT set_config('request.jwt.claims', \(caller.claimsJSON), true), set_config('role', \(caller.role), true), \
                set_config('request.method', \(context.method), true), set_config('request.path', \(context.path), true), \
                set_config('request.headers', \(context.headersJSON), true), set_config('request.cookies', \(context.cookiesJSON), true)
                """
        } else {
            sql = "SELECT set_config('request.jwt.claims', \(caller.claimsJSON), true), set_config('role', \(caller.role), true)"
        }
        if readOnly { sql.append(", set_config('transaction_read_only', 'on', true)") }
        // `Prefer: timezone=…`: an unknown zone fails here (22023), before the statement runs.
        if let timezone { sql.append(SQL(", set_config('timezone', \(timezone), true)")) }
        return sql
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

/// What PostgREST tells SQL about the HTTP request (its `request.*` settings): the method, the
/// path under `/rest/v1`, the headers (names lower-cased, the last of a repeated one, without
/// `Cookie`) and the cookies, each header and cookie as a JSON object member.
public struct RequestContext: Sendable, Equatable {
    public let method: String
    public let path: String
    public let headersJSON: String
    public let cookiesJSON: String

    public init(method: String, path: String, headersJSON: String, cookiesJSON: String) {
        self.method = method
        self.path = path
        self.headersJSON = headersJSON
        self.cookiesJSON = cookiesJSON
    }

    init(_ request: HTTPRequest, resource: String) {
        var headers: [(String, String)] = []
        var cookies: [(String, String)] = []
        for field in request.headers {
            let name = field.name.lowercased()
            if name == "cookie" {
                // `a=1; b=2` (Web.Cookie's parseCookies: split at `;`, then at the first `=`).
                for item in field.value.split(separator: ";") {
                    let pair = item.drop { $0 == " " }
                    guard !pair.isEmpty else { continue }
                    let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    cookies.append((String(parts[0]), parts.count > 1 ? String(parts[1]) : ""))
                }
            } else {
                headers.append((name, field.value))
            }
        }
        self.init(
            method: request.method.rawValue, path: resource.isEmpty ? "/" : resource,
            headersJSON: Self.object(headers), cookiesJSON: Self.object(cookies))
    }

    /// A JSON object of string members; a repeated name keeps its last value (PostgREST builds a map).
    static func object(_ members: [(String, String)]) -> String {
        var out = "{"
        var seen = Set<String>()
        var first = true
        for (name, value) in members.reversed() where seen.insert(name).inserted {
            if !first { out += "," }
            first = false
            appendJSONString(name, to: &out)
            out += ":"
            appendJSONString(value, to: &out)
        }
        return out + "}"
    }

    /// A header value seldom needs escaping: copied whole when it doesn't (this runs for every
    /// request, on every header).
    static func appendJSONString(_ text: String, to out: inout String) {
        if text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out += jsonString(text)
        } else {
            out += "\""
            out += text
            out += "\""
        }
    }
}
