import Foundation
import Logging
import Postgres
import TestSupport
import Testing

@testable import App

/// The operators' dashboard at `/dashboard/`: who may use it. The numbers it shows are
/// `DashboardDataTests`.
@Suite("Dashboard", .serialized)
struct DashboardTests {
    static let password = "dashboard-test-password"

    static func server(password: String? = DashboardTests.password, serviceKey: Bool = false, clientHeader: String? = nil) throws -> TestServer {
        try TestServer { config in
            config.dashboard.password = password
            config.dashboard.serviceKeySignIn = serviceKey
            config.auth.rateLimitHeader = clientHeader
        }
    }

    /// Signs in with `secret`; returns the response and the session cookie (`name=value`).
    static func signIn(
        _ server: TestServer, _ secret: String, origin: String? = nil, headers extra: [(String, String)] = []
    ) throws -> (
        TestResponse, String?
    ) {
        try signIn(port: server.port, secret, origin: origin, headers: extra)
    }

    static func signIn(port: Int, _ secret: String, origin: String? = nil, headers extra: [(String, String)] = []) throws -> (TestResponse, String?) {
        var headers = [("Content-Type", "application/x-www-form-urlencoded")] + extra
        if let origin { headers.append(("Origin", origin)) }
        let body = "secret=" + (secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        let response = try TestHTTPClient(port: port).request("POST", "/dashboard/sign-in", headers: headers, body: body)
        let cookie = response.header("Set-Cookie")?.split(separator: ";").first.map(String.init)
        return (response, cookie)
    }

    /// A signed-in session: the cookie header and the CSRF token the page carries.
    static func session(_ server: TestServer) throws -> (cookie: (String, String), csrf: String) {
        let (response, cookie) = try signIn(server, password)
        guard response.status == 303, let cookie else { throw TestHTTPError.protocolError("sign-in failed: \(response.status)") }
        let page = try server.client().request("GET", "/dashboard/", headers: [("Cookie", cookie)])
        guard let range = page.text.range(of: #"<meta name="csrf-token" content=""#) else { throw TestHTTPError.protocolError("no CSRF token") }
        let csrf = page.text[range.upperBound...].prefix { $0 != "\"" }
        return (("Cookie", cookie), String(csrf))
    }

    static func userExists(_ server: TestServer, _ id: String) throws -> Bool {
        let admin = try Connection(conninfo: server.databaseURL)
        return try admin.query("SELECT 1 FROM auth.users WHERE id = \(id)::uuid").count == 1
    }

    @Test func offUnlessConfigured() throws {
        let server = try Self.server(password: nil)
        let http = server.client()
        for path in [
            "/dashboard/", "/dashboard/users", "/dashboard/api/onboarding", "/dashboard/api/operations", "/dashboard/dashboard.js", "/dashboard/events",
            "/dashboard/experiments", "/dashboard/api/metrics", "/dashboard/api/events", "/dashboard/api/experiments"
        ] {
            #expect(try http.request("GET", path).status == 404, "\(path)")
        }
        #expect(try Self.signIn(server, "").0.status == 404)
        // The service key is not a way in while key sign-in is off.
        #expect(try Self.signIn(server, server.serviceKey).0.status == 404)
    }

    @Test func everyPageAndAPIRefusesRequestsWithoutASession() throws {
        let server = try Self.server()
        let http = server.client()
        let user = try server.signUp()
        let paths = [
            "/dashboard/", "/dashboard/users", "/dashboard/operations", "/dashboard/dashboard.js", "/dashboard/api/onboarding",
            "/dashboard/api/onboarding/funnel.csv", "/dashboard/api/users", "/dashboard/api/users/\(user.id)", "/dashboard/api/operations",
            "/dashboard/events", "/dashboard/experiments", "/dashboard/api/metrics", "/dashboard/api/events", "/dashboard/api/experiments"
        ]
        let credentials: [[(String, String)]] = [
            [],
            server.headers(),  // the anon key as apikey and bearer
            server.headers(user.token),  // a signed-in user
            [("apikey", server.serviceKey), ("Authorization", "Bearer \(server.serviceKey)")],  // API keys are not sessions
            [("Cookie", "onboard_dashboard=v1.9999999999.00000000000000000000000000000000.forged")]
        ]
        for headers in credentials {
            for path in paths {
                let response = try http.request("GET", path, headers: headers)
                #expect(response.status == 401, "\(path) with \(headers.map(\.0))")
                #expect(response.header("Content-Security-Policy")?.contains("default-src 'self'") == true, "\(path)")
            }
            let delete = try http.request("DELETE", "/dashboard/api/users/\(user.id)", headers: headers)
            #expect(delete.status == 401)
        }
        #expect(try Self.userExists(server, user.id))
        // A page without a session is the sign-in form (no script), with the policy.
        let page = try http.request("GET", "/dashboard/")
        #expect(page.text.contains(#"<form method="post" action="/dashboard/sign-in">"#) && !page.text.contains("<script"))
        #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(try http.request("GET", "/dashboard/dashboard.css").status == 200)
    }

    @Test func signInWithThePasswordOnly() throws {
        let server = try Self.server()
        // Wrong password, the service key (key sign-in off), nothing: refused, no cookie.
        for secret in ["wrong-password", server.serviceKey, server.anonKey, ""] {
            let (response, cookie) = try Self.signIn(server, secret)
            #expect(response.status == 401 && cookie == nil, "\(secret.prefix(8))")
            #expect(response.text.contains("Wrong password or key."))
        }
        // A cross-site form post is refused before the password is looked at.
        let (crossSite, crossCookie) = try Self.signIn(server, Self.password, origin: "https://evil.example")
        #expect(crossSite.status == 403 && crossCookie == nil)
        let fetchSite = try server.client().request(
            "POST", "/dashboard/sign-in",
            headers: [
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Sec-Fetch-Site", "cross-site")
            ], body: "secret=\(Self.password)")
        #expect(fetchSite.status == 403 && fetchSite.header("Set-Cookie") == nil)

        let (response, cookie) = try Self.signIn(server, Self.password, origin: "http://127.0.0.1:\(server.port)")
        #expect(response.status == 303 && response.header("Location") == "/dashboard/")
        let setCookie = response.header("Set-Cookie") ?? ""
        #expect(
            setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/dashboard")
                && setCookie.contains("Max-Age=28800"))
        let http = server.client()
        let page = try http.request("GET", "/dashboard/", headers: [("Cookie", cookie!)])
        #expect(page.status == 200 && page.text.contains(#"<script src="/dashboard/dashboard.js" defer></script>"#))
        let policy = page.header("Content-Security-Policy") ?? ""
        #expect(policy.contains("default-src 'self'") && policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"))
        #expect(page.header("X-Frame-Options") == "DENY" && page.header("Cache-Control") == "no-store")
        let script = try http.request("GET", "/dashboard/dashboard.js", headers: [("Cookie", cookie!)])
        #expect(script.status == 200 && script.header("Content-Type")?.hasPrefix("text/javascript") == true)

        // A tampered cookie (a later expiry with the old signature) is no session.
        let parts = cookie!.dropFirst("onboard_dashboard=".count).split(separator: ".")
        let tampered = "onboard_dashboard=v1.\(Int(parts[1])! + 3600).\(parts[2]).\(parts[3])"
        #expect(try http.request("GET", "/dashboard/api/operations", headers: [("Cookie", tampered)]).status == 401)

        // The dashboard's cookie is nothing to /rest/v1: without a key it is still refused.
        #expect(try http.request("GET", "/rest/v1/children?select=*", headers: [("Cookie", cookie!)]).status == 401)
    }

    @Test func signInWithTheServiceRoleKeyWhenAllowed() throws {
        let server = try Self.server(password: nil, serviceKey: true)
        #expect(try Self.signIn(server, server.anonKey).0.status == 401)
        let (response, cookie) = try Self.signIn(server, server.serviceKey)
        #expect(response.status == 303 && cookie != nil)
        #expect(try server.client().request("GET", "/dashboard/api/operations", headers: [("Cookie", cookie!)]).status == 200)
    }

    @Test func failedSignInsAreThrottledPerClient() throws {
        let server = try Self.server()
        for _ in 0..<10 { #expect(try Self.signIn(server, "wrong-password").0.status == 401) }
        // Even the right password now waits for the window to pass, and is told how long.
        let throttled = try Self.signIn(server, Self.password).0
        #expect(throttled.status == 429)
        let retry = try #require(throttled.header("Retry-After").flatMap { Int($0) })
        #expect((1...300).contains(retry) && throttled.text.contains("wait \(retry) seconds"))
    }

    /// Behind a proxy every operator arrives from the proxy's address: the trusted header
    /// (`RATE_LIMIT_HEADER`) names the client, and the count is shared by every server.
    @Test func behindAProxyEachOperatorHasTheirOwnBudgetOnEveryServer() throws {
        let server = try Self.server(clientHeader: "X-Forwarded-For")
        let replica = try Self.replica(of: server)
        defer { replica.shutdown() }
        let first = [("X-Forwarded-For", "203.0.113.7")]
        for attempt in 0..<10 {
            let port = attempt.isMultiple(of: 2) ? server.port : replica.port
            #expect(try Self.signIn(port: port, "wrong-password", headers: first).0.status == 401)
        }
        #expect(try Self.signIn(server, Self.password, headers: first).0.status == 429)
        #expect(try Self.signIn(port: replica.port, Self.password, headers: first).0.status == 429)
        // Another operator behind the same proxy is not locked out.
        #expect(try Self.signIn(server, Self.password, headers: [("X-Forwarded-For", "198.51.100.2")]).0.status == 303)
    }

    /// A second server on the same database (a replica behind the load balancer).
    static func replica(of server: TestServer) throws -> Application {
        var config = server.application.config
        config.port = 0
        config.migrateOnStart = false
        return try Application.start(config, logger: Logger(label: "replica"))
    }

    /// Signing out on one server ends the session on every server sharing the database.
    @Test func signOutEndsTheSessionOnEveryServer() throws {
        let server = try Self.server()
        let replica = try Self.replica(of: server)
        defer { replica.shutdown() }
        let (cookie, csrf) = try Self.session(server)
        let onReplica = TestHTTPClient(port: replica.port)
        #expect(try onReplica.request("GET", "/dashboard/api/operations", headers: [cookie]).status == 200)
        let form = [cookie, ("Content-Type", "application/x-www-form-urlencoded")]
        #expect(try server.client().request("POST", "/dashboard/sign-out", headers: form, body: "csrf_token=\(csrf)").status == 303)
        #expect(try onReplica.request("GET", "/dashboard/api/operations", headers: [cookie]).status == 401)
    }

    @Test func signOutNeedsTheCSRFTokenAndEndsTheSession() throws {
        let server = try Self.server()
        let (cookie, csrf) = try Self.session(server)
        let http = server.client()
        let form = [cookie, ("Content-Type", "application/x-www-form-urlencoded")]
        #expect(try http.request("POST", "/dashboard/sign-out", headers: form, body: "").status == 403)
        #expect(try http.request("GET", "/dashboard/api/operations", headers: [cookie]).status == 200)
        let out = try http.request("POST", "/dashboard/sign-out", headers: form, body: "csrf_token=\(csrf)")
        #expect(out.status == 303 && out.header("Set-Cookie")?.contains("Max-Age=0") == true)
        // The old cookie, replayed, is refused.
        #expect(try http.request("GET", "/dashboard/api/operations", headers: [cookie]).status == 401)
    }

}
