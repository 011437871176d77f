import App
import Foundation
import Identity
import Logging
import TestSupport
import Testing

/// GoTrue's dialect over HTTP against the real database: every endpoint and error the clients
/// meet, token claims, rotation and reuse detection, the anonymous upgrade, logout scopes, admin.
@Suite("Auth over HTTP", .serialized)
struct AuthTests {
    let server: TestServer

    init() throws { server = try TestServer { $0.auth.refreshReuseInterval = 1 } }

    @Test func signUpAnswersAFullSessionWithGoTruesClaims() throws {
        let address = TestServer.email("u")
        let response = try server.post("/auth/v1/signup", #"{"email":"\#(address.uppercased())","password":"Secret-pass-1","data":{"full_name":"Ann"}}"#)
        #expect(response.status == 200)
        let session = try #require(response.jsonObject)
        #expect(session["token_type"] as? String == "bearer")
        #expect(session["expires_in"] as? Int == 3600)
        #expect((session["refresh_token"] as? String)?.count ?? 0 >= 22)
        let user = try #require(session["user"] as? [String: Any])
        #expect(user["email"] as? String == address)
        #expect(user["aud"] as? String == "authenticated" && user["role"] as? String == "authenticated")
        #expect(user["email_confirmed_at"] is String)
        #expect((user["user_metadata"] as? [String: Any])?["full_name"] as? String == "Ann")
        #expect((user["app_metadata"] as? [String: Any])?["provider"] as? String == "email")
        #expect(user["is_anonymous"] as? Bool == false)
        #expect((user["identities"] as? [[String: Any]])?.first?["provider"] as? String == "email")
        let token = try TestServer.claims(try #require(session["access_token"] as? String))
        for key in ["sub", "role", "aud", "exp", "iat", "email", "phone", "app_metadata", "user_metadata", "aal", "amr", "session_id", "is_anonymous"] {
            #expect(token[key] != nil, "claim \(key)")
        }
        #expect(token["sub"] as? String == user["id"] as? String)
        #expect(token["role"] as? String == "authenticated" && token["aal"] as? String == "aal1")
        #expect(response.header("X-Supabase-Api-Version") == "2024-01-01")
    }

    @Test func signUpErrors() throws {
        let address = TestServer.email("u")
        _ = try server.signUp(email: address)
        let taken = try server.post("/auth/v1/signup", #"{"email":"\#(address)","password":"Secret-pass-1"}"#)
        #expect(taken.status == 422)
        #expect(taken.text == #"{"code":"user_already_exists","message":"User already registered"}"#)
        #expect(taken.header("x-sb-error-code") == "user_already_exists")
        let weak = try server.post("/auth/v1/signup", #"{"email":"\#(TestServer.email("u"))","password":"123"}"#)
        #expect(weak.status == 422)
        #expect((weak.jsonObject?["weak_password"] as? [String: Any])?["reasons"] as? [String] == ["length"])
        #expect(weak.jsonObject?["code"] as? String == "weak_password")
        let invalid = try server.post("/auth/v1/signup", #"{"email":"not-an-email","password":"Secret-pass-1"}"#)
        #expect(invalid.status == 400 && invalid.jsonObject?["code"] as? String == "validation_failed")
        let broken = try server.post("/auth/v1/signup", #"{"email":"#)
        #expect(broken.status == 400 && broken.jsonObject?["code"] as? String == "validation_failed")
        // Without the API-version header GoTrue answers in its legacy shape.
        let legacy = try server.client().request(
            "POST", "/auth/v1/signup", headers: server.headers().filter { $0.0 != "X-Supabase-Api-Version" },
            body: #"{"email":"\#(address)","password":"Secret-pass-1"}"#)
        #expect(legacy.text == #"{"code":422,"error_code":"user_already_exists","msg":"User already registered"}"#)
        // Nothing half-written: still exactly one user with that e-mail.
        let admin = try server.service.get("/auth/v1/admin/users?per_page=1000")
        let users = try #require(admin.jsonObject?["users"] as? [[String: Any]])
        #expect(users.filter { $0["email"] as? String == address }.count == 1)
    }

    /// The answers to bodies that are not JSON objects, hold a NUL, or give a field of another
    /// type: exact texts, and for a body with several problems, which one is answered (the
    /// body's JSON first, then NUL anywhere in it, then the fields in the order each endpoint
    /// reads them). A repeated key counts with its last value; 0 and 1 pass as booleans.
    @Test func malformedBodiesAnswerExactly() throws {
        func failure(_ message: String) -> String { #"{"code":"validation_failed","message":"\#(message)"}"# }
        let unknown = TestServer.email("u")
        let cases: [(method: String, path: String, body: String, status: Int, text: String)] = [
            ("POST", "/auth/v1/signup", #"{"email":"#, 400, failure("Could not read request body: invalid JSON")),
            ("POST", "/auth/v1/signup", #"[{"email":"a@example.com"}]"#, 400, failure("Could not read request body: invalid JSON")),
            ("POST", "/auth/v1/signup", #""a@example.com""#, 400, failure("Could not read request body: invalid JSON")),
            ("POST", "/auth/v1/signup", #"{"email":1e999}"#, 400, failure("Could not read request body: invalid JSON")),
            ("POST", "/auth/v1/signup", #"{"email":5}"#, 400, failure("Could not read request body: email must be a string")),
            ("POST", "/auth/v1/signup", #"{"password":6,"email":5}"#, 400, failure("Could not read request body: email must be a string")),
            ("POST", "/auth/v1/signup", #"{"email":"a@example.com","email":5}"#, 400, failure("Could not read request body: email must be a string")),
            (
                "POST", "/auth/v1/signup", #"{"email":5,"unused":{"deep":["\u0000"]}}"#, 400,
                failure("Could not read request body: strings must not contain NUL characters")
            ),
            (
                "POST", "/auth/v1/signup", #"{"email":"a@example.com","password":"x","data":[1]}"#, 400,
                failure("Could not read request body: data must be an object")
            ),
            ("POST", "/auth/v1/signup", #"{"email":"a@example.com","phone":{}}"#, 400, failure("Could not read request body: phone must be a string")),
            (
                "POST", "/auth/v1/signup", #"{"email":"a@example.com","code_challenge":true}"#, 400,
                failure("Could not read request body: code_challenge must be a string")
            ),
            (
                "POST", "/auth/v1/otp", #"{"email":"\#(unknown)","create_user":"no"}"#, 400,
                failure("Could not read request body: create_user must be a boolean")
            ),
            ("POST", "/auth/v1/otp", #"{"email":"\#(unknown)","create_user":2}"#, 400, failure("Could not read request body: create_user must be a boolean")),
            (
                "POST", "/auth/v1/otp", #"{"email":"\#(unknown)","phone":"+15550100","create_user":"no"}"#, 400,
                failure("Only an email address or phone number should be provided")
            ),
            ("POST", "/auth/v1/otp", #"{"email":"\#(unknown)","create_user":0}"#, 422, #"{"code":"otp_disabled","message":"Signups not allowed for otp"}"#),
            ("POST", "/auth/v1/otp", #"{"email":"\#(unknown)","data":"x"}"#, 400, failure("Could not read request body: data must be an object")),
            ("POST", "/auth/v1/recover", #"{"email":["a@example.com"]}"#, 400, failure("Could not read request body: email must be a string")),
            ("POST", "/auth/v1/resend", #"{"type":"signup","email":true}"#, 400, failure("Could not read request body: email must be a string")),
            ("POST", "/auth/v1/resend", #"{"type":7,"email":true}"#, 400, failure("Could not read request body: type must be a string")),
            ("POST", "/auth/v1/verify", #"{"type":5}"#, 400, failure("Could not read request body: type must be a string")),
            ("POST", "/auth/v1/verify", #"{"type":"email","token":1}"#, 400, failure("Could not read request body: token must be a string")),
            (
                "POST", "/auth/v1/verify", #"{"type":"email","token_hash":"abc","redirect_to":5}"#, 400,
                failure("Could not read request body: redirect_to must be a string")
            ),
            (
                "POST", "/auth/v1/token?grant_type=password", #"{"email":"a@example.com","password":5}"#, 400,
                failure("Could not read request body: password must be a string")
            ),
            (
                "POST", "/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":5}"#, 400,
                failure("Could not read request body: refresh_token must be a string")
            ),
            (
                "POST", "/auth/v1/token?grant_type=id_token", #"{"id_token":"x","provider":false}"#, 400,
                failure("Could not read request body: provider must be a string")
            ),
            (
                "POST", "/auth/v1/token?grant_type=pkce", #"{"auth_code":"x","code_verifier":null}"#, 400,
                failure("invalid request: both auth code and code verifier should be non-empty")
            ),
            (
                "POST", "/auth/v1/token?grant_type=pkce", #"{"auth_code":[],"code_verifier":"y"}"#, 400,
                failure("Could not read request body: auth_code must be a string")
            ),
            ("PUT", "/auth/v1/user", #"{"data":"x"}"#, 400, failure("Could not read request body: data must be an object")),
            ("PUT", "/auth/v1/user", #"{"email":"a@example.com","nonce":5}"#, 400, failure("Could not read request body: nonce must be a string")),
            (
                "POST", "/auth/v1/admin/users", #"{"email":"a@example.com","email_confirm":"yes"}"#, 400,
                failure("Could not read request body: email_confirm must be a boolean")
            ),
            (
                "PUT", "/auth/v1/admin/users/\(UUID().uuidString)", #"{"user_metadata":5}"#, 400,
                failure("Could not read request body: user_metadata must be an object")
            ),
            (
                "PUT", "/auth/v1/admin/users/\(UUID().uuidString)", #"{"data":null,"user_metadata":5}"#, 400,
                failure("Could not read request body: user_metadata must be an object")
            )
        ]
        // The signed-in user's and the admin's endpoints check the caller first (GoTrue's
        // middleware runs before its handler reads the body), so these bodies come with one.
        let user = try server.signUp()
        for item in cases {
            let token = item.path.hasPrefix("/auth/v1/admin") ? server.serviceKey : item.path == "/auth/v1/user" ? user.token : nil
            let response = try server.request(item.method, item.path, token: token, body: item.body)
            #expect(response.status == item.status, "\(item.method) \(item.path) \(item.body)")
            #expect(response.text == item.text, "\(item.method) \(item.path) \(item.body)")
        }
        // Without one, the caller is what is wrong.
        let anonymous = try server.request("PUT", "/auth/v1/user", body: #"{"data":"x"}"#)
        #expect(anonymous.status == 403)
        #expect(anonymous.jsonObject?["code"] as? String == "bad_jwt")
        let notAdmin = try server.request("POST", "/auth/v1/admin/users", token: user.token, body: #"{"email_confirm":"yes"}"#)
        #expect(notAdmin.status == 403)
        #expect(notAdmin.text == #"{"code":"not_admin","message":"User not allowed"}"#)
        // The legacy shape, without the API-version header.
        let legacy = try server.client().request(
            "POST", "/auth/v1/signup", headers: server.headers().filter { $0.0 != "X-Supabase-Api-Version" }, body: #"{"email":5}"#)
        #expect(legacy.status == 400)
        #expect(legacy.text == #"{"code":400,"error_code":"validation_failed","msg":"Could not read request body: email must be a string"}"#)
    }

    @Test func passwordSignInAnswersUnknownAndWrongAlike() throws {
        let address = TestServer.email("u")
        let user = try server.signUp(email: address)
        let ok = try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(address)","password":"Secret-pass-1"}"#, token: "stale.bearer.token")
        #expect(ok.status == 200)
        let session = try #require(ok.jsonObject)
        #expect((session["user"] as? [String: Any])?["id"] as? String == user.id)
        #expect(try TestServer.claims(session["access_token"] as! String)["session_id"] as? String != TestServer.claims(user.token)["session_id"] as? String)
        let wrong = try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(address)","password":"nope-nope"}"#)
        let unknown = try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(TestServer.email("u"))","password":"nope-nope"}"#)
        #expect(wrong.status == 400 && unknown.status == 400)
        #expect(wrong.text == unknown.text)
        #expect(wrong.text == #"{"code":"invalid_credentials","message":"Invalid login credentials"}"#)
        // GoTrue's answer for a grant it does not know.
        let grant = try server.post("/auth/v1/token?grant_type=magic", "{}")
        #expect(grant.status == 400 && grant.text == #"{"code":"invalid_credentials","message":"unsupported_grant_type"}"#, "\(grant.text)")
    }

    @Test func refreshRotatesAndReuseRevokesTheSession() throws {
        let user = try server.signUp()
        let first = try server.post("/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"\#(user.refresh)"}"#)
        #expect(first.status == 200)
        let rotated = try #require(first.jsonObject?["refresh_token"] as? String)
        #expect(rotated != user.refresh)
        let newToken = try #require(first.jsonObject?["access_token"] as? String)
        #expect(try TestServer.claims(newToken)["session_id"] as? String == TestServer.claims(user.token)["session_id"] as? String)
        #expect(try server.get("/auth/v1/user", token: newToken).status == 200)

        // Within the reuse interval, a concurrent refresh with the old token still gets a child.
        let concurrent = try server.post("/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"\#(user.refresh)"}"#)
        #expect(concurrent.status == 200)
        // After it, the old token is treated as stolen: refused, and the whole session revoked.
        Thread.sleep(forTimeInterval: 1.3)
        let reused = try server.post("/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"\#(user.refresh)"}"#)
        #expect(reused.status == 400 && reused.jsonObject?["code"] as? String == "refresh_token_already_used")
        let afterRevoke = try server.post("/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"\#(rotated)"}"#)
        #expect(afterRevoke.status == 400 && afterRevoke.jsonObject?["code"] as? String == "refresh_token_not_found")
        let user403 = try server.get("/auth/v1/user", token: newToken)
        #expect(user403.status == 403 && user403.jsonObject?["code"] as? String == "session_not_found")

        let unknown = try server.post("/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"no-such-token"}"#)
        #expect(unknown.status == 400)
        #expect(unknown.text == #"{"code":"refresh_token_not_found","message":"Invalid Refresh Token: Refresh Token Not Found"}"#)
    }

    @Test func userEndpointAuthorisation() throws {
        let http = server.client()
        let none = try http.request("GET", "/auth/v1/user", headers: [("apikey", server.anonKey), ("X-Supabase-Api-Version", "2024-01-01")])
        #expect(none.status == 401 && none.jsonObject?["code"] as? String == "no_authorization")
        let bad = try http.request("GET", "/auth/v1/user", headers: server.headers("eyJhbGciOiJIUzI1NiJ9.e30.bad"))
        #expect(bad.status == 403 && bad.jsonObject?["code"] as? String == "bad_jwt")
        let forged = JWT.signHS256(
            claims: ["sub": UUID().uuidString, "role": "authenticated", "exp": Int(Date().timeIntervalSince1970) + 60],
            secret: Array("another-secret-another-secret-123".utf8))
        #expect(try http.request("GET", "/auth/v1/user", headers: server.headers(forged)).status == 403)
        let wrongKey = try http.request("GET", "/auth/v1/user", headers: [("apikey", "wrong"), ("Authorization", "Bearer x")])
        #expect(wrongKey.status == 401)
    }

    @Test func updateUserMergesMetadataAndChangesThePassword() throws {
        let address = TestServer.email("u")
        let user = try server.signUp(email: address, data: #"{"full_name":"Ann","theme":"dark"}"#)
        let http = server.client()
        let updated = try http.request("PUT", "/auth/v1/user", headers: server.headers(user.token), body: #"{"data":{"theme":null,"locale":"fr"}}"#)
        #expect(updated.status == 200)
        let metadata = try #require(updated.jsonObject?["user_metadata"] as? [String: Any])
        #expect(metadata["full_name"] as? String == "Ann" && metadata["locale"] as? String == "fr" && metadata["theme"] == nil)
        let changed = try http.request("PUT", "/auth/v1/user", headers: server.headers(user.token), body: #"{"password":"Another-pass-2"}"#)
        #expect(changed.status == 200)
        #expect(try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(address)","password":"Secret-pass-1"}"#).status == 400)
        #expect(try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(address)","password":"Another-pass-2"}"#).status == 200)
        let weak = try http.request("PUT", "/auth/v1/user", headers: server.headers(user.token), body: #"{"password":"1"}"#)
        #expect(weak.status == 422)
    }

    @Test func anonymousUserUpgradesInPlaceKeepingItsRows() throws {
        let anonymous = try server.post("/auth/v1/signup", #"{"data":{"full_name":"Guest"}}"#)
        #expect(anonymous.status == 200)
        let session = try #require(anonymous.jsonObject)
        let token = try #require(session["access_token"] as? String)
        let user = try #require(session["user"] as? [String: Any])
        let id = try #require(user["id"] as? String)
        #expect(user["is_anonymous"] as? Bool == true && user["email"] as? String ?? "" == "")
        #expect(try TestServer.claims(token)["is_anonymous"] as? Bool == true)
        #expect(try TestServer.claims(token)["role"] as? String == "authenticated")
        let http = server.client()
        let child = try http.request(
            "POST", "/rest/v1/children", headers: server.headers(token, [("Prefer", "return=representation")]), body: #"{"user_id":"\#(id)","name":"Kid"}"#)
        #expect(child.status == 201)

        let taken = TestServer.email("u")
        _ = try server.signUp(email: taken)
        let conflict = try http.request("PUT", "/auth/v1/user", headers: server.headers(token), body: #"{"email":"\#(taken)","password":"Secret-pass-1"}"#)
        #expect(conflict.status == 422 && conflict.jsonObject?["code"] as? String == "email_exists")

        let address = TestServer.email("u")
        let upgraded = try http.request("PUT", "/auth/v1/user", headers: server.headers(token), body: #"{"email":"\#(address)","password":"Secret-pass-1"}"#)
        #expect(upgraded.status == 200)
        #expect(upgraded.jsonObject?["id"] as? String == id)
        #expect(upgraded.jsonObject?["is_anonymous"] as? Bool == false)
        #expect(upgraded.jsonObject?["email"] as? String == address)
        #expect((upgraded.jsonObject?["user_metadata"] as? [String: Any])?["full_name"] as? String == "Guest")
        let signIn = try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(address)","password":"Secret-pass-1"}"#)
        #expect(signIn.status == 200)
        let newToken = try #require(signIn.jsonObject?["access_token"] as? String)
        #expect(try TestServer.claims(newToken)["sub"] as? String == id && TestServer.claims(newToken)["is_anonymous"] as? Bool == false)
        let rows = try http.request("GET", "/rest/v1/children?select=name", headers: server.headers(newToken))
        #expect(rows.text == #"[{"name":"Kid"}]"#)
    }

    @Test func logoutScopes() throws {
        let address = TestServer.email("u")
        let first = try server.signUp(email: address)
        func signIn() throws -> (token: String, refresh: String) {
            let response = try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(address)","password":"Secret-pass-1"}"#)
            return (response.jsonObject!["access_token"] as! String, response.jsonObject!["refresh_token"] as! String)
        }
        let second = try signIn()
        let third = try signIn()
        let http = server.client()
        func status(_ token: String) throws -> Int { try http.request("GET", "/auth/v1/user", headers: server.headers(token)).status }

        #expect(try server.post("/auth/v1/logout?scope=local", "", token: second.token).status == 204)
        #expect(try status(second.token) == 403 && status(first.token) == 200 && status(third.token) == 200)
        #expect(try server.post("/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"\#(second.refresh)"}"#).status == 400)
        #expect(try server.post("/auth/v1/logout?scope=others", "", token: third.token).status == 204)
        #expect(try status(first.token) == 403 && status(third.token) == 200)
        let fourth = try signIn()
        #expect(try server.post("/auth/v1/logout", "", token: fourth.token).status == 204)  // global by default
        #expect(try status(third.token) == 403 && status(fourth.token) == 403)
        #expect(try server.post("/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"\#(third.refresh)"}"#).status == 400)
        #expect(try server.post("/auth/v1/logout", "").status == 403)  // the anon key is not a user's session
    }

    @Test func settingsHealthAndAdmin() throws {
        let http = server.client()
        let settings = try http.request("GET", "/auth/v1/settings", headers: server.headers())
        #expect(settings.status == 200)
        #expect((settings.jsonObject?["external"] as? [String: Any])?["email"] as? Bool == true)
        #expect(try http.request("GET", "/auth/v1/health", headers: server.headers()).status == 200)

        let user = try server.signUp()
        let refused = try http.request("GET", "/auth/v1/admin/users", headers: server.headers(user.token))
        #expect(refused.status == 403 && refused.jsonObject?["code"] as? String == "not_admin")
        let admin = server.headers(server.serviceKey)
        let address = TestServer.email("u")
        let created = try http.request(
            "POST", "/auth/v1/admin/users", headers: admin,
            body: #"{"email":"\#(address)","password":"Secret-pass-1","email_confirm":true,"user_metadata":{"full_name":"Ops"}}"#)
        #expect(created.status == 200)
        let id = try #require(created.jsonObject?["id"] as? String)
        #expect(try http.request("GET", "/auth/v1/admin/users/\(id)", headers: admin).jsonObject?["email"] as? String == address)
        let put = try http.request("PUT", "/auth/v1/admin/users/\(id)", headers: admin, body: #"{"user_metadata":{"full_name":"Ops 2"}}"#)
        #expect((put.jsonObject?["user_metadata"] as? [String: Any])?["full_name"] as? String == "Ops 2")
        #expect(try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(address)","password":"Secret-pass-1"}"#).status == 200)
        #expect(try http.request("DELETE", "/auth/v1/admin/users/\(id)", headers: admin).status == 200)
        #expect(try http.request("GET", "/auth/v1/admin/users/\(id)", headers: admin).status == 404)
        #expect(try http.request("GET", "/auth/v1/admin/users/not-a-uuid", headers: admin).status == 404)
    }

    @Test func aDeletedOrLoggedOutUsersTokenIsGoTrues403() throws {
        let http = server.client()
        let gone = try server.signUp()
        let deleted = try http.request("POST", "/rest/v1/rpc/delete_account", headers: server.headers(gone.token), body: "{}")
        #expect([200, 204].contains(deleted.status), "\(deleted.text)")
        for (method, path, body) in [("GET", "/auth/v1/user", nil), ("PUT", "/auth/v1/user", #"{"data":{"a":1}}"#), ("POST", "/auth/v1/logout", "")]
            as [(String, String, String?)]
        {
            let response = try http.request(method, path, headers: server.headers(gone.token), body: body)
            #expect(response.status == 403, "\(method) \(path): \(response.status)")
            #expect(response.text == #"{"code":"user_not_found","message":"User from sub claim in JWT does not exist"}"#, "\(response.text)")
        }
        let admin = try http.request("GET", "/auth/v1/admin/users/\(gone.id)", headers: server.headers(server.serviceKey))
        #expect(admin.status == 404 && admin.jsonObject?["message"] as? String == "User not found")
        let out = try server.signUp()
        #expect(try http.request("POST", "/auth/v1/logout?scope=local", headers: server.headers(out.token), body: "").status == 204)
        let after = try http.request("GET", "/auth/v1/user", headers: server.headers(out.token))
        #expect(after.status == 403 && after.text == #"{"code":"session_not_found","message":"Session from session_id claim in JWT does not exist"}"#)
    }
}
