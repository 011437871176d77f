import Analytics
import Auth
import HTTP
import Identity
import Logging
import Migrations
import Postgres
import REST
import Realtime
import Storage

enum Routes {
    static func make(
        config: ServerConfig, pool: Pool, adminPool: Pool, rest: RESTService, auth: AuthService, realtime: RealtimeService, storage: StorageService,
        analytics: AnalyticsService, metrics: Metrics, migrator: Migrator, readiness: @escaping @Sendable () -> Readiness, logger: Logger
    ) -> Router {
        var router = Router(logger: logger, errorStyle: Gateway.errorStyle)
        // Liveness: 200 while the database answers, else 503 with a fixed body (anyone may ask:
        // the error's text, with host names and socket paths, goes to the log only).
        router.add(.get, "/health") { _ in
            do {
                _ = try pool.withConnection { try $0.query("SELECT 1") }
                return .json(.ok, #"{"status":"ok","database":"ok"}"#)
            } catch {
                logger.error("health: the database does not answer", metadata: ["error": "\(logText(error))"])
                return .json(.serviceUnavailable, #"{"status":"unavailable"}"#)
            }
        }
        // Readiness: the database answers and every migration on disk is applied unchanged. The
        // database's error text only for the service role.
        router.add(.get, "/ready") { request in
            let state = readiness()
            return .json(state.ready ? .ok : .serviceUnavailable, isServiceRole(request, config: config) ? state.json : state.publicJSON)
        }
        router.add(.get, "/metrics") { _ in
            var headers = HTTPHeaders()
            headers.add("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return HTTPResponse(status: .ok, headers: headers, body: Array(metrics.render().utf8))
        }

        // PostgREST: /rest/v1/…, and the owned tables' bare paths (`/children`), which the apps
        // also use.
        let restHandler: Handler = { request in
            let resource = restResource(request.path, config: config) ?? request.path
            return rest.respond(to: request, resource: resource, caller: try restCaller(request, config: config, audience: rest.settings.settings.jwtAudience))
        }
        for method in restMethods {
            router.add(method, "/rest/v1", restHandler)
            router.add(method, "/rest/v1/*", restHandler)
            for table in config.ownership.ownedTables { router.add(method, "/" + table, restHandler) }
        }

        // GoTrue: /auth/v1/…, behind the gateway's apikey rule (`APIKeyStage`), then Auth's own
        // stages. The bearer on /signup and /token is ignored (clients send stale ones).
        let authStages: [any Middleware] = [APIKeyStage(keys: config.keys, prefix: "/auth/v1", isOpen: AuthRequest.isOpenRoute)] + AuthService.stages
        for method in [HTTPMethod.get, .post, .put, .patch, .delete] {
            router.add(method, "/auth/v1/*", through: authStages) { request in
                auth.respond(to: request, route: String(request.path.dropFirst("/auth/v1".count)))
            }
        }

        // Supabase Realtime (postgres_changes): Kong maps /realtime/v1/* to Realtime's /socket/*.
        router.add(.get, "/realtime/v1/websocket") { request in realtime.upgrade(request) }
        // Realtime's BroadcastController: messages sent without a socket.
        router.add(.post, "/realtime/v1/api/broadcast") { request in realtime.broadcastOverHTTP(request) }
        router.add(.post, "/realtime/v1/api/broadcast/*") { request in realtime.broadcastOneOverHTTP(request) }

        // Supabase Storage: /storage/v1/… (its own credentials and error shape).
        storage.register(&router)
        // Product analytics: PostHog's capture and flags protocols, and the flags' admin API.
        analytics.register(&router)

        // The operators' dashboard (404 unless configured); its own sessions, never API keys.
        Dashboard.register(&router, config: config, pool: adminPool, metrics: metrics, migrator: migrator, logger: logger)
        return router
    }

    static let restMethods: [HTTPMethod] = [.get, .post, .patch, .put, .delete]

    /// The application's stages of every request, after the server's request id and CORS, on
    /// the worker path and the inline path alike: metrics, then (with standbys) the record of
    /// Auth writes that sends their user's next reads to the primary.
    static func stages(config: ServerConfig, metrics: Metrics, readReplicas: ReadReplicas?) -> [any Middleware] {
        [MetricsStage(metrics: metrics)] + (readReplicas.map { [AuthWritesStage(readReplicas: $0, config: config)] } ?? [])
    }

    /// The PostgREST resource a path names (`/rest/v1/children` → `/children`; an owned table's
    /// bare path is its own resource), or nil when the path is not PostgREST's.
    static func restResource(_ path: String, config: ServerConfig) -> String? {
        if path == "/rest/v1" || path.hasPrefix("/rest/v1/") { return String(path.dropFirst("/rest/v1".count)) }
        if path.first == "/", config.ownership.ownedTables.contains(where: { $0.utf8.elementsEqual(path.utf8.dropFirst()) }) { return path }
        return nil
    }

    /// The REST caller; `audience`: PostgREST's `jwt-aud` in force.
    static func restCaller(_ request: HTTPRequest, config: ServerConfig, audience: String?) throws(RESTError) -> Caller {
        let authorization = request.headers["Authorization"]
        let bearer = Credentials.bearerToken(authorization)
        let caller: Caller
        do {
            caller = try Credentials.resolve(apikey: Gateway.apiKey(request), bearer: bearer, keys: config.keys, audience: audience)
        } catch {
            throw restError(error)
        }
        // `Bearer` with no token: PostgREST's PGRST301 (after the apikey, which the gateway checks first).
        if bearer == nil, RESTError.isEmptyBearer(authorization) { throw .emptyToken }
        return caller
    }

    /// The REST routes answered on the I/O thread over the pipelined connections (the same
    /// routing, credentials and answers as `restHandler`; the server's stages run around it as
    /// around the router); anything else, or a plan that needs a worker, is declined.
    static func inlineREST(config: ServerConfig, rest: RESTService, pipeline: PipelineClient, reads: PipelineClient?) -> InlineResponder {
        { request, reply in
            let method = request.method == .head ? .get : request.method
            guard restMethods.contains(method), let resource = restResource(request.path, config: config) else { return false }
            let caller = try restCaller(request, config: config, audience: rest.settings.settings.jwtAudience)
            return rest.respond(to: request, resource: resource, caller: caller, pipeline: pipeline, reads: reads, reply: reply)
        }
    }

    /// Whether the request carries the service role's key (or a secret key), as `apikey` or as bearer.
    static func isServiceRole(_ request: HTTPRequest, config: ServerConfig) -> Bool {
        let bearer = Credentials.bearerToken(request.headers["Authorization"])
        return [Gateway.apiKey(request), bearer].contains { $0.flatMap(config.keys.role(ofKey:))?.isServiceRole ?? false }
    }

    static func restError(_ error: CredentialError) -> RESTError {
        switch error {
        case .noAPIKey: return .noAPIKey
        case .invalidAPIKey: return .invalidAPIKey
        case .token(let jwt): return .jwt(jwt)
        }
    }
}
