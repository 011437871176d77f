import Auth
import Dispatch
import HTTP
import Identity
import Logging
import Migrations
import Postgres
import REST
import Realtime

enum Routes {
    static func make(
        config: ServerConfig, pool: Pool, rest: RESTService, auth: AuthService, realtime: RealtimeService, metrics: Metrics,
        migrator: Migrator, readiness: @escaping @Sendable () -> Readiness, logger: Logger
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

        // GoTrue: /auth/v1/…. As Supabase's gateway: every route needs one of our keys as
        // `apikey`, except the links opened from e-mails and OAuth redirects. The bearer on
        // /signup and /token is ignored (clients send stale ones).
        let authHandler: Handler = { request in
            let route = String(request.path.dropFirst("/auth/v1".count))
            if !AuthRequest.isOpenRoute(route) {
                guard let key = apiKey(request), !key.isEmpty else {
                    return .json(.unauthorized, #"{"message":"No API key found in request","hint":"No `apikey` request header or url param was found."}"#)
                }
                guard config.keys.role(ofKey: key) != nil else {
                    return .json(.unauthorized, #"{"message":"Invalid API key","hint":"Double check your Supabase `anon` or `service_role` API key."}"#)
                }
            }
            return auth.respond(to: request, route: route)
        }
        for method in [HTTPMethod.get, .post, .put, .delete] {
            router.add(method, "/auth/v1/*", authHandler)
        }

        // Supabase Realtime (postgres_changes): Kong maps /realtime/v1/* to Realtime's /socket/*.
        router.add(.get, "/realtime/v1/websocket") { request in realtime.upgrade(request) }
        // Realtime's BroadcastController: messages sent without a socket.
        router.add(.post, "/realtime/v1/api/broadcast") { request in realtime.broadcastOverHTTP(request) }
        router.add(.post, "/realtime/v1/api/broadcast/*") { request in realtime.broadcastOneOverHTTP(request) }

        // The operators' dashboard (404 unless configured); its own sessions, never API keys.
        Dashboard.register(&router, config: config, pool: pool, metrics: metrics, migrator: migrator, logger: logger)
        return router
    }

    static let restMethods: [HTTPMethod] = [.get, .post, .patch, .put, .delete]

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
            caller = try Credentials.resolve(apikey: apiKey(request), bearer: bearer, keys: config.keys, audience: audience)
        } catch {
            throw restError(error)
        }
        // `Bearer` with no token: PostgREST's PGRST301 (after the apikey, which the gateway checks first).
        if bearer == nil, RESTError.isEmptyBearer(authorization) { throw .emptyToken }
        return caller
    }

    /// The REST routes answered on the I/O thread over the pipelined connections (the same
    /// routing, credentials and answers as `restHandler`); anything else, or a plan that needs
    /// a worker, is declined.
    static func inlineREST(config: ServerConfig, rest: RESTService, pipeline: PipelineClient, metrics: Metrics) -> InlineResponder {
        { request, reply in
            let method = request.method == .head ? .get : request.method
            guard restMethods.contains(method), let resource = restResource(request.path, config: config) else { return false }
            let started = DispatchTime.now().uptimeNanoseconds
            let recorded: (HTTPResponse) -> Void = { response in
                metrics.record(request, response, since: started)
                reply(response)
            }
            let caller: Caller
            do throws(RESTError) {
                caller = try restCaller(request, config: config, audience: rest.settings.settings.jwtAudience)
            } catch {
                recorded(error.response(for: request))
                return true
            }
            return rest.respond(to: request, resource: resource, caller: caller, pipeline: pipeline, reply: recorded)
        }
    }

    /// Whether the request carries the service role's key (or a secret key), as `apikey` or as bearer.
    static func isServiceRole(_ request: HTTPRequest, config: ServerConfig) -> Bool {
        let bearer = Credentials.bearerToken(request.headers["Authorization"])
        return [apiKey(request), bearer].contains { $0.flatMap(config.keys.role(ofKey:))?.isServiceRole ?? false }
    }

    /// The `apikey` header (any case) or query parameter, as Supabase's gateway accepts it.
    static func apiKey(_ request: HTTPRequest) -> String? {
        request.headers["apikey"] ?? request.queryValue("apikey")
    }

    static func restError(_ error: CredentialError) -> RESTError {
        switch error {
        case .noAPIKey: return .noAPIKey
        case .invalidAPIKey: return .invalidAPIKey
        case .token(let jwt): return .jwt(jwt)
        }
    }
}
