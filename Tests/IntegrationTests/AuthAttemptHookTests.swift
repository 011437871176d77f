import Auth
import Foundation
import Identity
import Postgres
import TestSupport
import Testing

/// GoTrue's password and MFA verification attempt hooks and its before-user-created hook, as
/// PostgreSQL functions: what they are told, and what a rejection does (GoTrue's status, code and
/// message; sessions ended; no user created).
@Suite("Auth: attempt and user-creation hooks", .serialized)
struct AuthAttemptHookTests {
    let server: TestServer
    let database: Connection

    init() throws {
        server = try TestServer {
            $0.auth.hooks.passwordVerificationAttempt = try? AuthHook(uri: "pg-functions://postgres/public/password_hook")
            $0.auth.hooks.mfaVerificationAttempt = try? AuthHook(uri: "pg-functions://postgres/public/mfa_hook")
            $0.auth.hooks.beforeUserCreated = try? AuthHook(uri: "pg-functions://postgres/public/before_user_hook")
        }
        database = try Connection(conninfo: server.databaseURL)
        try database.execute("CREATE TABLE IF NOT EXISTS public.hook_calls (hook text, event jsonb)")
        for name in ["password_hook", "mfa_hook", "before_user_hook"] { try hook(name, "RETURN '{}';") }
    }

    /// Replaces a hook function's body (plpgsql, `event` in, jsonb out); every call is recorded
    /// in `hook_calls` first.
    func hook(_ name: String, _ body: String) throws {
        try database.execute(
            unsafeSQL: """
                CREATE OR REPLACE FUNCTION public.\(name)(event jsonb) RETURNS jsonb LANGUAGE plpgsql AS $hook$
                BEGIN INSERT INTO public.hook_calls VALUES ('\(name)', event); \(body) END $hook$
                """)
    }

    func calls(_ name: String, user: String) throws -> [[String: Any]] {
        let texts = try database.query("SELECT event::text FROM public.hook_calls WHERE hook = \(name) AND event->>'user_id' = \(user)").map { $0.string(0) }
        return texts.compactMap { $0.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } }
    }

    func sessions(_ user: String) throws -> String? {
        try database.query("SELECT count(*) FROM auth.sessions WHERE user_id = \(user)::uuid").scalar
    }

    func signIn(_ email: String, _ password: String) throws -> TestResponse {
        try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"\#(password)"}"#)
    }

    @Test func thePasswordHookIsToldEachAttemptAndMayRejectAndEndTheSessions() throws {
        let email = TestServer.email("pw")
        let user = try server.signUp(email: email)
        #expect(try signIn(email, "wrong-password").status == 400)
        #expect(try signIn(email, "Secret-pass-1").status == 200)
        let told = try calls("password_hook", user: user.id)
        #expect(told.map { $0["valid"] as? Bool } == [false, true])
        #expect((told.first?["metadata"] as? [String: Any])?["name"] as? String == "password-verification")
        #expect(try sessions(user.id) == "2")

        try hook("password_hook", #"RETURN '{"decision":"reject","message":"Locked after too many attempts","should_logout_user":true}';"#)
        let rejected = try signIn(email, "Secret-pass-1")
        #expect(rejected.status == 400)
        #expect(rejected.text == #"{"code":"invalid_credentials","message":"Locked after too many attempts"}"#)
        #expect(try sessions(user.id) == "0")
        #expect(try server.get("/auth/v1/user", token: user.token).status == 403, "the ended session's token is refused")

        try hook("password_hook", #"RETURN '{"decision":"reject"}';"#)
        #expect(try signIn(email, "Secret-pass-1").jsonObject?["message"] as? String == "Further password verification attempts will be rejected.")
        try hook("password_hook", #"RETURN '{"decision":"continue"}';"#)
        #expect(try signIn(email, "Secret-pass-1").status == 200)
        #expect(try signIn(email, "wrong-password").status == 400)
    }

    @Test func theMFAHookIsToldEachCodeAndARejectionEndsEverySession() throws {
        let user = try server.signUp(email: TestServer.email("mfa-hook"))
        let enrolled = try #require(try server.post("/auth/v1/factors", #"{"factor_type":"totp"}"#, token: user.token).jsonObject)
        let factor = try #require(enrolled["id"] as? String)
        let secretText = try #require((enrolled["totp"] as? [String: Any])?["secret"] as? String)
        let secret = try #require(Base32.decode(secretText))
        func verify(_ code: String) throws -> TestResponse {
            let challenge = try server.post("/auth/v1/factors/\(factor)/challenge", "{}", token: user.token)
            let id = try #require(challenge.jsonObject?["id"] as? String)
            return try server.post("/auth/v1/factors/\(factor)/verify", #"{"challenge_id":"\#(id)","code":"\#(code)"}"#, token: user.token)
        }
        #expect(try verify("000000").status == 422)
        let told = try calls("mfa_hook", user: user.id)
        #expect(told.count == 1 && told.first?["valid"] as? Bool == false && told.first?["factor_id"] as? String == factor)
        #expect(told.first?["factor_type"] as? String == "totp")

        try hook("mfa_hook", #"RETURN jsonb_build_object('decision', 'reject', 'message', 'Too many codes');"#)
        let code = TOTP.code(secret: secret, counter: TOTP.step(at: Date().timeIntervalSince1970))
        let rejected = try verify(code)
        #expect(rejected.status == 403)
        #expect(rejected.text == #"{"code":"mfa_verification_rejected","message":"Too many codes"}"#)
        #expect(try sessions(user.id) == "0")
    }

    @Test func theBeforeUserCreatedHookMayRefuseASignUpAndNothingIsCreated() throws {
        try hook(
            "before_user_hook",
            #"""
            IF event->'user'->>'email' LIKE '%@blocked.example' THEN
              RETURN '{"error":{"http_code":403,"message":"Sign-ups from this domain are closed"}}';
            END IF;
            RETURN '{}';
            """#)
        let blocked = "someone-\(UUID().uuidString.prefix(8).lowercased())@blocked.example"
        for (path, body) in [
            ("/auth/v1/signup", #"{"email":"\#(blocked)","password":"Secret-pass-1"}"#), ("/auth/v1/otp", #"{"email":"\#(blocked)"}"#)
        ] {
            let refused = try server.post(path, body)
            #expect(refused.status == 403, "\(path)")
            #expect(refused.text == #"{"code":"unknown","message":"Sign-ups from this domain are closed"}"#, "\(path)")
        }
        #expect(try database.query("SELECT count(*) FROM auth.users WHERE email = \(blocked)").scalar == "0")
        let invite = try server.service.post("/auth/v1/invite", #"{"email":"\#(blocked)"}"#)
        #expect(invite.status == 403)
        #expect(try database.query("SELECT count(*) FROM auth.users WHERE email = \(blocked)").scalar == "0")

        let allowed = try server.signUp(email: TestServer.email("allowed"))
        let anonymous = try server.post("/auth/v1/signup", "{}")
        #expect(anonymous.status == 200)
        let seen = try database.query("SELECT event->'user'->>'id', event->'metadata'->>'name' FROM public.hook_calls WHERE hook = 'before_user_hook'")
        #expect(seen.contains { $0.string(0) == allowed.id && $0.string(1) == "before-user-created" })
    }
}
