import HTTP
import Identity
import Postgres

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
                let cache = schema.caches[plan.request.schema]
                let document = OpenAPI.document(caller.isServiceRole ? cache : try privileged(cache, caller: caller))
                var headers = HTTPHeaders()
                headers.add("Content-Type", ResponseRenderer.contentType(.openAPI))
                var response = HTTPResponse(status: .ok, headers: headers, body: plan.request.isHeadOnly ? [] : Array(document.utf8))
                Self.addProfile(plan, to: &response)
                return response
            }
            let result = try execute(plan, caller: caller, context: RequestContext(request, resource: resource), settings: settings)
            timing.mark("transaction")
            var response = ResponseRenderer.render(plan, result)
            Self.addProfile(plan, to: &response)
            timing.mark("response")
            timing.write(into: &response)
            return response
        } catch {
            return failure(error, request, resource: resource, minimalErrors: settings.minimalErrors)
        }
    }

    /// The pure stages: parse and plan (with the ownership check).
    func plan(_ request: HTTPRequest, resource: String, caller: Caller) throws(RESTError) -> ActionPlan {
        try Self.plan(request, resource: resource, caller: caller, caches: schema.caches, config: config, settings: settings.settings)
    }

    /// PostgREST's `Content-Profile` beside the `Content-Type` of an answer whose schema was
    /// negotiated (a profile header, or several exposed schemas).
    static func addProfile(_ plan: ActionPlan, to response: inout HTTPResponse) {
        guard plan.request.negotiatedByProfile, response.headers["content-type"] != nil else { return }
        response.headers.replace("Content-Profile", plan.request.schema)
    }

    /// The whole request path short of I/O: parse, ownership, plan and SQL, then the response
    /// rendered from a result the caller makes up (`pageTotal` rows, `total` counted). What the
    /// request-path fuzz target drives; nothing here may trap, whatever the request.
    public static func dryRun(
        _ request: HTTPRequest, resource: String, caller: Caller, cache: SchemaCache, config: RESTConfig,
        settings: PostgRESTSettings = PostgRESTSettings(), pageTotal: Int, total: Int?
    ) -> (statement: SQL?, response: HTTPResponse) {
        do {
            let plan = try plan(request, resource: resource, caller: caller, cache: cache, config: config, settings: settings)
            let result = MainResult(total: total, pageTotal: pageTotal, body: pageTotal == 0 ? "[]" : "[{}]", inserted: nil)
            return (plan.statement, ResponseRenderer.render(plan, result))
        } catch {
            return (nil, error.response(for: request))
        }
    }

    static func plan(
        _ request: HTTPRequest, resource: String, caller: Caller, cache: SchemaCache, config: RESTConfig, settings: PostgRESTSettings = PostgRESTSettings()
    ) throws(RESTError) -> ActionPlan {
        try plan(request, resource: resource, caller: caller, caches: SchemaCaches([cache]), config: config, settings: settings)
    }

    /// Parse and plan against the cache of the schema the request negotiated (`db-schemas`).
    static func plan(
        _ request: HTTPRequest, resource: String, caller: Caller, caches: SchemaCaches, config: RESTConfig, settings: PostgRESTSettings
    ) throws(RESTError) -> ActionPlan {
        guard config.allowedRoles.contains(caller.role) else {
            throw .database(
                PostgresError(kind: .server, message: "permission denied to set role \"\(caller.role)\"", sqlState: "42501"),
                authenticated: caller.role != "anon")
        }
        var api = try ApiRequest.parse(
            method: request.method, resource: resource, query: request.query,
            headers: request.headers, body: request.body, schemas: settings.schemas)
        let transactionEnd = settings.transactionEnd
        if !transactionEnd.allowsOverride { api.preferences.transaction = nil }
        // The plan media type only with `db-plan-enabled`, as PostgREST (406 otherwise).
        if api.explain != nil, !settings.planEnabled { throw .notAcceptable(api.accept ?? "") }
        // `db-max-rows`: reads and function calls answer at most that many rows.
        if let maxRows = settings.maxRows, api.isRead || api.action.isCall { api.limit = min(api.limit ?? maxRows, maxRows) }
        // The ownership rules name tables of `public`; another schema's tables are RLS's alone.
        let policy = api.schema == "public" ? config.policy : OwnershipPolicy(ownerColumns: [:])
        var planner = Planner(cache: caches[api.schema], policy: policy, ownershipEnabled: config.enforceOwnership)
        planner.rollbackByDefault = transactionEnd.rollsBack
        planner.aggregatesEnabled = config.aggregatesEnabled
        planner.maxRows = settings.maxRows
        var plan: ActionPlan
        do {
            plan = try planner.plan(api, caller: caller)
        } catch {
            throw error.inSchema(api.schema)
        }
        if let explain = api.explain {
            // The plan is the answer: nothing to decide. A write (or volatile call) that EXPLAIN
            // ANALYZE runs is rolled back, so it is answered only where a client may roll back
            // anyway (`Prefer: tx=rollback` under an overridable `db-tx-end`): elsewhere it would
            // be a free try whose effects (a wrong-code count) vanish.
            plan.mustDecide = false
            if explain.options.contains("analyze") && !plan.readOnly {
                guard transactionEnd.allowsOverride else { throw .analyzeNeedsOverride(api.accept ?? "") }
                plan.rollback = true
            }
        }
        return plan
    }

    // MARK: execution (the only I/O)

    /// What of the schema `caller`'s role holds a privilege on (PostgREST's openapi-mode
    /// follow-privileges): tables with any of SELECT/INSERT/UPDATE/DELETE, functions it may EXECUTE.
    func privileged(_ cache: SchemaCache, caller: Caller) throws(RESTError) -> SchemaCache {
        let query: SQL = """
            SELECT true, c.relname::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = \(cache.schema) AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
              AND pg_catalog.has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE')
            UNION ALL
            SELECT false, p.proname::text FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = \(cache.schema) AND pg_catalog.has_function_privilege(p.oid, 'EXECUTE')
            """
        do {
            let rows = try pool.withConnection { try $0.pipeline([Self.setup(caller: caller, readOnly: true), query])[1] }
            var tables = Set<String>()
            var functions = Set<String>()
            for row in 0..<rows.count {
                guard let name = rows[row, 1] else { continue }
                if rows[row].bool(0) == true { tables.insert(name) } else { functions.insert(name) }
            }
            return SchemaCache(
                tables: cache.tables.values.filter { tables.contains($0.name) },
                functions: cache.functions.values.flatMap { $0 }.filter { functions.contains($0.name) }, schema: cache.schema)
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
    /// `reads`: the primary's connections for reads, when they have their own (see `routedSubmit`).
    public func respond(
        to request: HTTPRequest, resource: String, caller: Caller, pipeline: PipelineClient, reads: PipelineClient? = nil,
        reply: @escaping (HTTPResponse) -> Void
    ) -> Bool {
        let (settings, generation) = self.settings.settingsAndGeneration
        var timing = ServerTiming(enabled: settings.serverTimingEnabled)
        let plan: ActionPlan
        do {
            plan = try cachedPlan(request, resource: resource, caller: caller, settings: settings, settingsGeneration: generation)
            timing.mark("plan")
        } catch {
            reply(failure(error, request, resource: resource, minimalErrors: settings.minimalErrors))
            return true
        }
        guard !plan.action.isDescribe, !plan.mustDecide, !plan.rollback else { return false }
        guard let statement = plan.statement else {
            var response = ResponseRenderer.render(plan, MainResult(total: nil, pageTotal: 0, body: nil, inserted: nil))
            Self.addProfile(plan, to: &response)
            reply(response)
            return true
        }
        let exchange = Self.exchange(plan, statement: statement, caller: caller, context: RequestContext(request, resource: resource), settings: settings)
        let minimalErrors = settings.minimalErrors  // what the answer needs of the settings
        return routedSubmit(plan, exchange, caller: caller, method: request.method.rawValue, primary: pipeline, primaryReads: reads) { [self] outcome in
            do {
                let results = try outcome.get()
                timing.mark("transaction")
                var response = ResponseRenderer.render(plan, try Self.checked(plan, exchange.interpret(results), caller: caller))
                Self.addProfile(plan, to: &response)
                timing.mark("response")
                timing.write(into: &response)
                reply(response)
            } catch {
                reply(failure(Self.restError(error, caller: caller), request, resource: resource, minimalErrors: minimalErrors))
            }
        }
    }

    /// An error's response; a database failure (≥ 500) is reported once, here.
    private func failure(_ error: RESTError, _ request: HTTPRequest, resource: String, minimalErrors: Bool) -> HTTPResponse {
        if case .database(let cause, _) = error, error.status.code >= 500 {
            config.onServerError?(
                ServerErrorReport(
                    requestID: request.id, statement: "\(request.method.rawValue) \(resource)", sqlState: cause.sqlState, kind: "\(cause.kind)",
                    error: cause))
        }
        return minimalErrors ? error.minimalResponse(for: request) : error.response(for: request)
    }

    static func restError(_ error: any Error, caller: Caller) -> RESTError {
        switch error {
        case let error as RESTError: return error
        case let error as PostgresError: return .database(error, authenticated: caller.role != "anon")
        default: return .database(PostgresError(kind: .client, message: "\(error)"), authenticated: caller.role != "anon")
        }
    }
}
