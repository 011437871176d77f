import Foundation
import Postgres
import TestSupport
import Testing

/// The stages every request passes, in their order: request id and CORS, metrics, the gateway's
/// apikey rule, Auth's API-version header, then Auth's providers and budgets before a handler.
@Suite("Request pipeline: stages in order", .serialized)
struct PipelineTests {
    @Test func aRefusedAPIKeyNeverReachesAuthAndIsCountedOnce() throws {
        let server = try TestServer()
        let http = server.client()
        let admin = try Connection(conninfo: server.databaseURL)
        let email = "gateway-\(UUID().uuidString.lowercased())@example.com"
        let body = #"{"email":"\#(email)","password":"Secret-pass-1"}"#
        let version = ("X-Supabase-Api-Version", "2024-01-01")

        let missing = try http.request("POST", "/auth/v1/signup", headers: [version, ("X-Request-Id", "no-key-1")], body: body)
        #expect(missing.status == 401)
        #expect(missing.text == #"{"message":"No API key found in request","hint":"No `apikey` request header or url param was found."}"#)
        #expect(missing.header("X-Request-Id") == "no-key-1")
        // Auth's stages come after the gateway's: its refusal carries no API version.
        #expect(missing.header("X-Supabase-Api-Version") == nil)
        let wrong = try http.request("POST", "/auth/v1/signup", headers: [version, ("apikey", "not-a-key")], body: body)
        #expect(wrong.status == 401)
        #expect(wrong.text == #"{"message":"Invalid API key","hint":"Double check your Supabase `anon` or `service_role` API key."}"#)

        // Auth never saw them: no budget spent, no user.
        let spent = { try admin.query("SELECT coalesce(sum(hits), 0) FROM auth.rate_limits WHERE key = \("signin:email:" + email)").scalar }
        #expect(try spent() == "0")
        #expect(try admin.query("SELECT count(*) FROM auth.users WHERE email = \(email)").scalar == "0")

        let accepted = try http.request("POST", "/auth/v1/signup", headers: server.headers(), body: body)
        #expect(accepted.status == 200)
        #expect(accepted.header("X-Supabase-Api-Version") == "2024-01-01")
        #expect(try spent() == "1")

        let metrics = try http.request("GET", "/metrics").text
        #expect(metrics.contains(#"onboard_http_requests_total{route="/auth/v1/signup",method="POST",status="401"} 2"# + "\n"))
        #expect(metrics.contains(#"onboard_http_requests_total{route="/auth/v1/signup",method="POST",status="200"} 1"# + "\n"))
    }

    /// A refused request spends no budget: the providers are checked before the rate limit,
    /// and the rate limit before the handler.
    @Test func aDisabledProviderIsRefusedBeforeABudgetIsSpent() throws {
        let server = try TestServer { $0.auth.emailEnabled = false }
        let http = server.client()
        let admin = try Connection(conninfo: server.databaseURL)
        let recover = try http.request("POST", "/auth/v1/recover", headers: server.headers(), body: #"{"email":"someone@example.com"}"#)
        #expect(recover.status == 400)
        #expect(recover.header("x-sb-error-code") == "email_provider_disabled")
        #expect(try admin.query("SELECT count(*) FROM auth.rate_limits WHERE key LIKE 'otp:%'").scalar == "0")
    }

    @Test func preflightsAreAnsweredBeforeMetricsAndInlineRESTIsCountedOnce() throws {
        let server = try TestServer()
        let http = server.client()
        let user = try server.signUp()
        let preflight = try http.request(
            "OPTIONS", "/rest/v1/children", headers: [("Origin", "https://app.example"), ("Access-Control-Request-Method", "GET")])
        #expect(preflight.status == 204)
        #expect(preflight.header("X-Request-Id") != nil)
        for _ in 0..<3 {
            let read = try http.request("GET", "/rest/v1/children?select=*", headers: server.headers(user.token) + [("Origin", "https://app.example")])
            #expect(read.status == 200)
            #expect(read.header("Access-Control-Allow-Origin") != nil)
            #expect(read.header("X-Request-Id") != nil)
        }
        let metrics = try http.request("GET", "/metrics").text
        #expect(metrics.contains(#"onboard_http_requests_total{route="/rest/v1/children",method="GET",status="200"} 3"# + "\n"))
        #expect(!metrics.contains(#"method="OPTIONS""#))
    }
}
