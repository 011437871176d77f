import Auth
import Foundation
import Postgres
import TestSupport
import Testing

/// GoTrue's custom access token hook as a PostgreSQL function: its claims in every token issued
/// (sign-up, password sign-in, refresh, anonymous), each way it can fail answered as GoTrue
/// answers it, and a refused token leaving no user and no session behind.
@Suite("Auth: the custom access token hook", .serialized)
struct AuthHookTests {
    let server: TestServer
    let database: Connection

    init() throws {
        server = try TestServer {
            $0.auth.hooks.customAccessToken = try? AuthHook(uri: "pg-functions://postgres/public/access_token_hook")
            $0.auth.hooks.timeoutMilliseconds = 300
        }
        database = try Connection(conninfo: server.databaseURL)
    }

    /// Replaces the hook function's body (plpgsql, `event` in, jsonb out).
    func hook(_ body: String) throws {
        try database.execute(
            unsafeSQL: "CREATE OR REPLACE FUNCTION public.access_token_hook(event jsonb) RETURNS jsonb LANGUAGE plpgsql AS $hook$ BEGIN \(body) END $hook$")
    }

    func signUp(_ email: String) throws -> TestResponse {
        try server.post("/auth/v1/signup", #"{"email":"\#(email)","password":"Secret-pass-1"}"#)
    }

    func count(_ sql: SQL) throws -> String? { try database.query(sql).scalar }

    @Test func theHooksClaimsAreInEveryTokenIssued() throws {
        try hook(
            """
            RETURN jsonb_build_object('claims', (event->'claims')
              || jsonb_build_object('onboarding', 'started', 'method', event->>'authentication_method', 'hook_user', event->>'user_id',
                                    'hook_name', event->'metadata'->>'name'));
            """)
        let email = TestServer.email("hook")
        let signUp = try signUp(email)
        #expect(signUp.status == 200, "\(signUp.text)")
        let session = try #require(signUp.jsonObject)
        let claims = try TestServer.claims(try #require(session["access_token"] as? String))
        let userID = try #require((session["user"] as? [String: Any])?["id"] as? String)
        #expect(claims["onboarding"] as? String == "started")
        #expect(claims["method"] as? String == "password")
        #expect(claims["hook_user"] as? String == userID)
        #expect(claims["hook_name"] as? String == "customize-access-token")
        #expect(claims["sub"] as? String == userID)

        let refreshed = try server.post("/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"\#(session["refresh_token"] as? String ?? "")"}"#)
        #expect(TestServer.claimsOf(refreshed)?["method"] as? String == "token_refresh")
        let signIn = try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"Secret-pass-1"}"#)
        #expect(TestServer.claimsOf(signIn)?["method"] as? String == "password")
        let anonymous = try server.post("/auth/v1/signup", "{}")
        #expect(TestServer.claimsOf(anonymous)?["method"] as? String == "anonymous")
        // The token with the hook's claims is one REST accepts.
        let token = try #require(signIn.jsonObject?["access_token"] as? String)
        let read = try server.get("/rest/v1/user_profiles?select=*", token: token)
        #expect(read.status == 200, "\(read.text)")
        // Four tokens, four calls, each counted.
        let metrics = try server.client().request("GET", "/metrics").text
        #expect(metrics.contains(#"onboard_auth_hook_calls_total{hook="customize-access-token",result="ok"} 4"#), "\(metrics)")
    }

    @Test(arguments: [
        // The hook refuses with its own status and message.
        (#"RETURN '{"error":{"http_code":403,"message":"Sign-ups from this domain are closed"}}';"#, 403, "unknown", "Sign-ups from this domain are closed"),
        // Without a status: 500.
        (#"RETURN '{"error":{"message":"nope"}}';"#, 500, "unexpected_failure", "nope"),
        // The function fails, or runs past the hook timeout.
        ("RAISE EXCEPTION 'broken hook';", 500, "unexpected_failure", "Error running hook URI: pg-functions://postgres/public/access_token_hook"),
        ("PERFORM pg_sleep(5); RETURN event;", 500, "unexpected_failure", "Error running hook URI: pg-functions://postgres/public/access_token_hook"),
        // The answer is not what GoTrue reads.
        ("RETURN '{}';", 500, "unexpected_failure", "output claims field is missing"),
        (#"RETURN '{"claims":"x"}';"#, 500, "unexpected_failure", "Error unmarshaling JSON output."),
        ("RETURN '[1]';", 500, "unexpected_failure", "Error unmarshaling JSON output."),
        (
            "RETURN NULL;", 500, "unexpected_failure",
            "output claims do not conform to the expected schema: \n- (root): Invalid type. Expected: object, given: null\n"
        ),
        (
            "RETURN jsonb_build_object('claims', (event->'claims') - 'aud' - 'role');", 500, "unexpected_failure",
            "output claims do not conform to the expected schema: \n- (root): aud is required\n- (root): role is required\n"
        ),
        (
            "RETURN jsonb_build_object('claims', (event->'claims') || '{\"exp\":\"soon\",\"iat\":1.5,\"amr\":[7]}');", 500, "unexpected_failure",
            "output claims do not conform to the expected schema: \n- exp: Invalid type. Expected: integer, given: string\n- iat: Invalid type. Expected: integer, given: number\n- amr.0: Must validate at least one schema (anyOf)\n"
        )
    ])
    func aFailingHookIssuesNoTokenAndLeavesNothingBehind(body: String, status: Int, code: String, message: String) throws {
        // A user who signed up before the hook failed, for the sign-in's side.
        try hook("RETURN event;")
        let email = TestServer.email("before")
        #expect(try signUp(email).status == 200)
        let sessionsBefore = try count("SELECT count(*) FROM auth.sessions s JOIN auth.users u ON u.id = s.user_id WHERE u.email = \(email)")

        try hook(body)
        let refused = TestServer.email("refused")
        let signUp = try signUp(refused)
        #expect(signUp.status == status, "\(signUp.text)")
        #expect(signUp.jsonObject?["code"] as? String == code)
        #expect(signUp.jsonObject?["message"] as? String == message)
        #expect(signUp.jsonObject?["access_token"] == nil)
        #expect(try count("SELECT count(*) FROM auth.users WHERE email = \(refused)") == "0")

        let signIn = try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"Secret-pass-1"}"#)
        #expect(signIn.status == status)
        #expect(signIn.jsonObject?["message"] as? String == message)
        #expect(try count("SELECT count(*) FROM auth.sessions s JOIN auth.users u ON u.id = s.user_id WHERE u.email = \(email)") == sessionsBefore)
    }
}

extension TestServer {
    /// The claims of a session answer's access token; nil when it has none.
    static func claimsOf(_ response: TestResponse) -> [String: Any]? {
        guard let token = response.jsonObject?["access_token"] as? String else { return nil }
        return try? claims(token)
    }
}
