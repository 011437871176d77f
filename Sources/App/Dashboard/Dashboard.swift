import Auth
import Foundation
import HTTP
import Identity
import Logging
import Migrations
import Postgres

/// The operators' dashboard at `/dashboard/`: onboarding analytics, users, operations. Pages and
/// APIs answer only a signed-in session (a signed cookie, see `DashboardAccess`); API keys and
/// user tokens are not sessions. Off (404) unless a way to sign in is configured.
enum Dashboard {
    /// Every dashboard response: a strict Content-Security-Policy (no inline script or style,
    /// nothing from elsewhere), no framing, no sniffing, no caching, no referrer to other sites.
    static func secured(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.replace(
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
        response.headers.replace("X-Frame-Options", "DENY")
        response.headers.replace("X-Content-Type-Options", "nosniff")
        response.headers.replace("Referrer-Policy", "same-origin")
        response.headers.replace("Cache-Control", "no-store")
        return response
    }

    static func html(_ status: HTTPStatus, _ text: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        headers.replace("Content-Type", "text/html; charset=utf-8")
        return secured(HTTPResponse(status: status, headers: headers, body: Array(text.utf8)))
    }

    static func asset(_ type: String, _ text: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", type)
        return secured(HTTPResponse(status: .ok, headers: headers, body: Array(text.utf8)))
    }

    static func redirect(_ location: String, cookie: String? = nil) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Location", location)
        if let cookie { headers.add("Set-Cookie", cookie) }
        return secured(HTTPResponse(status: .seeOther, headers: headers))
    }

    static let pages = [
        "onboarding": "/dashboard", "events": "/dashboard/events", "experiments": "/dashboard/experiments", "users": "/dashboard/users",
        "operations": "/dashboard/operations"
    ]

    static func register(_ router: inout Router, config: ServerConfig, pool: Pool, metrics: Metrics, migrator: Migrator, logger: Logger) {
        let routes = Routes(config: config, access: DashboardAccess(config: config.dashboard, keys: config.keys, pool: pool))
        registerPages(&router, routes)
        registerSignIn(&router, routes, logger: logger)
        registerOnboarding(&router, routes, pool: pool)
        registerProduct(&router, routes, pool: pool)
        registerUsers(&router, routes, pool: pool, logger: logger)
        registerOperations(&router, routes, pool: pool, metrics: metrics, migrator: migrator)
    }

    /// What the dashboard's routes share: the sessions, whether the dashboard is on, the sign-in page.
    struct Routes: Sendable {
        let config: ServerConfig
        let access: DashboardAccess
        let enabled: Bool

        init(config: ServerConfig, access: DashboardAccess) {
            self.config = config
            self.access = access
            self.enabled = config.dashboard.isEnabled
        }

        func signInPage(_ status: HTTPStatus, _ message: String?) -> HTTPResponse {
            html(
                status,
                DashboardAssets.signInPage(
                    message: message, password: config.dashboard.password != nil,
                    serviceKey: config.dashboard.serviceKeySignIn))
        }

        /// A page or API of a signed-in session; 404 while the dashboard is off, 401 without a session.
        func route(
            _ router: inout Router, _ method: HTTPMethod, _ path: String, page: Bool = false,
            _ handler: @escaping @Sendable (HTTPRequest, DashboardAccess.Session) throws -> HTTPResponse
        ) {
            router.add(method, path) { request in
                guard enabled else { return .error(.notFound, "Not Found") }
                guard let session = try access.session(request) else {
                    return page ? signInPage(.unauthorized, nil) : secured(.error(.unauthorized, "sign in to the dashboard first"))
                }
                return secured(try handler(request, session))
            }
        }
    }

    /// The pages and their stylesheet and script.
    static func registerPages(_ router: inout Router, _ routes: Routes) {
        let config = routes.config
        let enabled = routes.enabled
        for (name, path) in pages {
            routes.route(&router, .get, path, page: true) { _, session in
                html(.ok, DashboardAssets.shell(page: name, csrfToken: session.csrfToken, stepLabels: config.dashboard.stepLabels))
            }
        }
        router.add(.get, "/dashboard/dashboard.css") { _ in
            enabled ? asset("text/css; charset=utf-8", DashboardAssets.css) : .error(.notFound, "Not Found")
        }
        routes.route(&router, .get, "/dashboard/dashboard.js") { _, _ in asset("text/javascript; charset=utf-8", DashboardAssets.javascript) }
    }

    /// Signing in (a password or the service-role key) and out.
    static func registerSignIn(_ router: inout Router, _ routes: Routes, logger: Logger) {
        let config = routes.config
        let access = routes.access
        let enabled = routes.enabled
        router.add(.post, "/dashboard/sign-in") { request in
            guard enabled else { return .error(.notFound, "Not Found") }
            guard !DashboardAccess.isCrossOrigin(request) else { return secured(.error(.forbidden, "cross-origin sign-in refused")) }
            let secret = DashboardAccess.formValue(request, "secret") ?? ""
            let client = AuthService.clientAddress(request, trustedHeader: config.auth.rateLimitHeader)
            switch try access.signIn(secret: secret, client: client) {
            case .accepted:
                let (cookie, _) = access.newSession()
                logger.notice("dashboard sign-in", metadata: ["client": "\(client)"])
                return redirect("/dashboard/", cookie: access.setCookie(cookie, secure: DashboardAccess.isSecure(request)))
            case .refused:
                logger.warning("dashboard sign-in refused", metadata: ["client": "\(client)"])
                return routes.signInPage(.unauthorized, "Wrong password or key.")
            case .throttled(let seconds):
                var page = routes.signInPage(.tooManyRequests, "Too many failed sign-ins: wait \(seconds) seconds.")
                page.headers.add("Retry-After", String(seconds))
                return page
            }
        }
        routes.route(&router, .post, "/dashboard/sign-out") { request, session in
            guard access.hasCSRFToken(request, session: session) else { throw DashboardError(.forbidden, "missing or wrong CSRF token") }
            try access.revoke(session)
            return redirect("/dashboard/", cookie: DashboardAccess.clearCookie(secure: DashboardAccess.isSecure(request)))
        }
    }

    /// Onboarding analytics: every table as JSON, or one as CSV.
    static func registerOnboarding(_ router: inout Router, _ routes: Routes, pool: Pool) {
        routes.route(&router, .get, "/dashboard/api/onboarding") { request, _ in
            let query = try DashboardAnalytics.Query(request)
            let tables = try DashboardAnalytics.load(DashboardAnalytics.tables, query, pool: pool)
            let body = tables.map { jsonString($0.0) + ":" + $0.1.json }.joined(separator: ",")
            return .json(.ok, #"{"cohort":\#(jsonString(query.cohort)),"stuck_hours":\#(query.stuckHours),"tables":{\#(body)}}"#)
        }
        routes.route(&router, .get, "/dashboard/api/onboarding/:file") { request, _ in
            let file = request.pathParameters["file"] ?? ""
            guard file.hasSuffix(".csv"), DashboardAnalytics.tables.contains(String(file.dropLast(4))) else {
                throw DashboardError(.notFound, "no such table; one of: " + DashboardAnalytics.tables.map { $0 + ".csv" }.joined(separator: ", "))
            }
            let name = String(file.dropLast(4))
            let table = try DashboardAnalytics.load([name], try DashboardAnalytics.Query(request), pool: pool)[0].1
            var headers = HTTPHeaders()
            headers.add("Content-Type", "text/csv; charset=utf-8")
            headers.add("Content-Disposition", "attachment; filename=\"onboarding-\(name).csv\"")
            return HTTPResponse(status: .ok, headers: headers, body: Array(table.csv.utf8))
        }
    }

    /// Product analytics: the success metrics, events, experiments (each one JSON object).
    static func registerProduct(_ router: inout Router, _ routes: Routes, pool: Pool) {
        routes.route(&router, .get, "/dashboard/api/metrics") { request, _ in
            let query = try DashboardAnalytics.Query(request)
            try DashboardAnalytics.checkWindow(query)
            let text = try DashboardProduct.read(pool) { try $0.query(DashboardMetrics.numbers(query)).scalar } ?? "{}"
            let numbers = JSON.parse(Array(text.utf8)) ?? .object([:])
            return .json(.ok, JSON.object(["metrics": DashboardMetrics.cards(numbers), "from": numbers["from"] ?? .null, "to": numbers["to"] ?? .null]).text)
        }
        routes.route(&router, .get, "/dashboard/api/events") { request, _ in
            let query = try DashboardProduct.EventsQuery(request)
            try DashboardAnalytics.checkWindow(query.window)
            return .json(.ok, try DashboardProduct.read(pool) { try $0.query(DashboardProduct.events(query)).scalar } ?? "{}")
        }
        routes.route(&router, .get, "/dashboard/api/experiments") { request, _ in
            let (goal, days) = try DashboardProduct.goal(request)
            return .json(.ok, try DashboardProduct.read(pool) { try DashboardProduct.experiments($0, goal: goal, days: days) })
        }
    }

    /// Users: search, one user, delete (with the session's CSRF token).
    static func registerUsers(_ router: inout Router, _ routes: Routes, pool: Pool, logger: Logger) {
        let access = routes.access
        routes.route(&router, .get, "/dashboard/api/users") { request, _ in
            let text = (request.queryValue("q") ?? "").trimmingCharacters(in: .whitespaces)
            guard text.utf8.count <= 320 else { throw DashboardError(.badRequest, "the search text is too long") }
            let json = try pool.withConnection { try $0.query(Onboarding.userSearch(text)).scalar } ?? "[]"
            return .json(.ok, json)
        }
        routes.route(&router, .get, "/dashboard/api/users/:id") { request, _ in
            let id = try userID(request)
            guard let json = try pool.withConnection({ try $0.query(Onboarding.userDetail(id)).scalar }) else {
                throw DashboardError(.notFound, "no such user")
            }
            return .json(.ok, json)
        }
        routes.route(&router, .delete, "/dashboard/api/users/:id") { request, session in
            guard access.hasCSRFToken(request, session: session) else { throw DashboardError(.forbidden, "missing or wrong CSRF token") }
            let id = try userID(request)
            // The admin API's statement (DELETE /auth/v1/admin/users/{id}): the user's rows go
            // with it by ON DELETE CASCADE.
            let deleted = try pool.withConnection { try $0.query("DELETE FROM auth.users WHERE id = \(id)::uuid RETURNING id::text").scalar }
            guard deleted != nil else { throw DashboardError(.notFound, "no such user") }
            logger.notice("dashboard deleted a user", metadata: ["user": "\(id)", "client": "\(request.remoteAddress)"])
            return .json(.ok, #"{"deleted":\#(jsonString(id))}"#)
        }
    }

    /// Operations: migrations, the pool, requests by route, Realtime.
    static func registerOperations(_ router: inout Router, _ routes: Routes, pool: Pool, metrics: Metrics, migrator: Migrator) {
        routes.route(&router, .get, "/dashboard/api/operations") { _, _ in
            let migrations: String
            do {
                let states = try pool.withConnection { try migrator.status($0) }
                migrations =
                    "["
                    + states.map { state in
                        #"{"version":\#(jsonString(state.version)),"name":\#(jsonString(state.name)),"status":\#(jsonString(state.kind.rawValue)),"applied_at":\#(state.appliedAt.map(jsonString) ?? "null"),"duration_ms":\#(state.durationMilliseconds.map(String.init) ?? "null")}"#
                    }.joined(separator: ",") + "]"
            } catch {
                migrations = #"{"error":\#(jsonString(logText(error)))}"#
            }
            return .json(.ok, #"{"migrations":\#(migrations),\#(metrics.dashboardJSON())}"#)
        }
    }

    static func userID(_ request: HTTPRequest) throws -> String {
        guard let id = request.pathParameters["id"].flatMap(UUID.init(uuidString:)) else { throw DashboardError(.badRequest, "not a user id") }
        return id.uuidString.lowercased()
    }
}
