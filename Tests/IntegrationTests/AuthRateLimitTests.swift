import App
import Foundation
import Identity
import Logging
import TestSupport
import Testing

/// GoTrue's rate limits over HTTP, each on a server of its own: sign-up and token budgets, the
/// refresh budget shared by servers on one database, and the client named by a proxy's header.
@Suite("Auth over HTTP: rate limits", .serialized)
struct AuthRateLimitTests {
    @Test func signUpAndTokenAreRateLimited() throws {
        let limited = try TestServer { $0.auth.signInLimit.hits = 3 }
        let http = limited.client()
        var statuses: [Int] = []
        for _ in 0..<4 {
            statuses.append(
                try http.request(
                    "POST", "/auth/v1/token?grant_type=password", headers: limited.headers(),
                    body: #"{"email":"x@example.com","password":"whatever"}"#
                ).status)
        }
        #expect(statuses == [400, 400, 400, 429])
        let last = try http.request(
            "POST", "/auth/v1/signup", headers: limited.headers(), body: #"{"email":"\#(TestServer.email("u"))","password":"Secret-pass-1"}"#)
        #expect(last.status == 429 && last.jsonObject?["code"] as? String == "over_request_rate_limit")
        // Retry-After: the seconds until the window (5 minutes, begun with the first request) ends.
        let retry = try #require(last.header("Retry-After").flatMap { Int($0) }, "\(last.headers)")
        #expect((290...300).contains(retry))
    }

    @Test func refreshHasItsOwnBudgetAndTheBudgetIsShared() throws {
        let limited = try TestServer {
            $0.auth.signInLimit.hits = 2
            $0.auth.refreshLimit.hits = 3
        }
        let user = try limited.signUp()  // one sign-in hit
        let http = limited.client()
        // Refreshes do not spend the sign-in budget, and stop at their own.
        var refresh = user.refresh
        var statuses: [Int] = []
        for _ in 0..<4 {
            let response = try http.request(
                "POST", "/auth/v1/token?grant_type=refresh_token", headers: limited.headers(), body: #"{"refresh_token":"\#(refresh)"}"#)
            statuses.append(response.status)
            if let next = response.jsonObject?["refresh_token"] as? String { refresh = next }
        }
        #expect(statuses == [200, 200, 200, 429])
        let signIn = try http.request(
            "POST", "/auth/v1/token?grant_type=password", headers: limited.headers(), body: #"{"email":"x@example.com","password":"whatever"}"#)
        #expect(signIn.status == 400)
        // The counters live in the database: a second server on it (a replica) shares them.
        var replicaConfig = limited.application.config
        replicaConfig.port = 0
        replicaConfig.migrateOnStart = false
        let replica = try Application.start(replicaConfig, logger: Logger(label: "replica"))
        defer { replica.shutdown() }
        let third = try TestHTTPClient(port: replica.port).request(
            "POST", "/auth/v1/token?grant_type=password", headers: limited.headers(),
            body: #"{"email":"y@example.com","password":"whatever"}"#)
        #expect(third.status == 429 && third.jsonObject?["code"] as? String == "over_request_rate_limit")
    }

    @Test func behindAProxyTheConfiguredHeaderNamesTheClient() throws {
        let proxied = try TestServer {
            $0.auth.signInLimit.hits = 1
            $0.auth.rateLimitHeader = "X-Forwarded-For"
        }
        let http = proxied.client()
        func signIn(_ forwarded: String) throws -> Int {
            try http.request(
                "POST", "/auth/v1/token?grant_type=password", headers: proxied.headers(nil, [("X-Forwarded-For", forwarded)]),
                body: #"{"email":"\#(TestServer.email("u"))","password":"whatever"}"#
            ).status
        }
        // Two clients behind the same proxy: each has its own budget (the last hop is the one
        // the proxy appended; what the client wrote before it does not count).
        #expect(try signIn("203.0.113.7") == 400)
        #expect(try signIn("198.51.100.9") == 400)
        #expect(try signIn("10.0.0.1, 203.0.113.7") == 429)
        // Without the setting the header is ignored: the TCP peer is the client.
        let unproxied = try TestServer { $0.auth.signInLimit.hits = 1 }
        func direct(_ forwarded: String) throws -> Int {
            try unproxied.client().request(
                "POST", "/auth/v1/token?grant_type=password", headers: unproxied.headers(nil, [("X-Forwarded-For", forwarded)]),
                body: #"{"email":"\#(TestServer.email("u"))","password":"whatever"}"#
            ).status
        }
        #expect(try direct("203.0.113.7") == 400)
        #expect(try direct("198.51.100.9") == 429)
    }
}
