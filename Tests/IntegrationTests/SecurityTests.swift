import Foundation
import Postgres
import TestSupport
import Testing

/// What an attacker holding only the public anon key tries: numbers that overflow, NUL bytes,
/// passwords bcrypt cannot hold, throttles walked around, and the gateway's rules. Each case
/// goes over a real socket to the real server and database.
@Suite("Security: requests an attacker sends", .serialized)
struct SecurityTests {
    let server: TestServer

    init() throws { server = try TestServer() }

    func expectAlive(_ context: String) throws {
        let health = try server.client().request("GET", "/health")
        #expect(health.status == 200, "server died after \(context)")
    }

    @Test func numbersThatOverflowAreAnsweredNotTrapped() throws {
        let user = try server.signUp()
        let http = server.client()
        let max = "9223372036854775807"
        for path in ["/rest/v1/children", "/children"] {
            let range = try http.request("GET", path, headers: server.headers(user.token, [("Range", "0-\(max)")]))
            #expect(range.status == 200 && range.text == "[]", "\(range.status) \(range.text)")
            try expectAlive("Range 0-\(max) on \(path)")
            let offset = try http.request("GET", "\(path)?offset=\(max)", headers: server.headers(user.token, [("Range", "1-")]))
            #expect(offset.status == 200, "\(offset.status) \(offset.text)")
            try expectAlive("offset=\(max) with Range 1- on \(path)")
            let counted = try http.request(
                "GET", "\(path)?offset=\(max)", headers: server.headers(user.token, [("Range", "\(max)-"), ("Prefer", "count=exact")]))
            #expect(counted.status == 416, "\(counted.status) \(counted.text)")
            try expectAlive("a counted read at offset \(max)")
        }
        // PostgREST's integers are unbounded: a limit past this one's is no limit.
        let overLong = try http.request("GET", "/rest/v1/children?limit=99999999999999999999", headers: server.headers(user.token))
        #expect(overLong.status == 200 && overLong.text == "[]", "\(overLong.status) \(overLong.text)")
        for query in ["page=\(max)", "page=\(max)&per_page=\(max)", "page=-\(max)&per_page=-1"] {
            let page = try http.request("GET", "/auth/v1/admin/users?\(query)", headers: server.headers(server.serviceKey))
            // A negative number is not an unsigned one: GoTrue's 400 "Bad Pagination Parameters".
            #expect(page.status == (query.contains("-") ? 400 : 200), "\(query): \(page.status) \(page.text)")
            try expectAlive("admin users \(query)")
        }
    }

    @Test func malformedAcceptHeadersAreAnsweredNotTrapped() throws {
        // Found by the request-path fuzz target: an Accept part with nothing before `;`.
        let http = server.client()
        for (path, accept) in [("/rest/v1/", ";"), ("/rest/v1/children", "application/json, ;"), ("/children", ";;,;")] {
            let response = try http.request("GET", path, headers: server.headers(server.serviceKey, [("Accept", accept)]))
            #expect([200, 406].contains(response.status), "\(path) Accept \(accept): \(response.status)")
            try expectAlive("Accept: \(accept) on \(path)")
        }
    }

    @Test func nulBytesAreRefusedBeforeTheyCutAString() throws {
        let http = server.client()
        // A password of NUL + 32 characters must not become the empty password.
        let email = "nul-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let nulPassword = try http.request(
            "POST", "/auth/v1/signup", headers: server.headers(),
            body: #"{"email":"\#(email)","password":"\u0000\#(String(repeating: "a", count: 32))"}"#)
        #expect(nulPassword.status == 400 && nulPassword.jsonObject?["code"] as? String == "validation_failed", "\(nulPassword.text)")
        let empty = try http.request("POST", "/auth/v1/token?grant_type=password", headers: server.headers(), body: #"{"email":"\#(email)","password":""}"#)
        #expect(empty.status == 400 && empty.jsonObject?["code"] as? String != nil)

        // The victim's e-mail with a NUL suffix is not the victim.
        let victimEmail = "victim-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        _ = try server.signUp(email: victimEmail)
        let suffixed = try http.request(
            "POST", "/auth/v1/token?grant_type=password", headers: server.headers(),
            body: #"{"email":"\#(victimEmail)\u0000junk","password":"Secret-pass-1"}"#)
        #expect(suffixed.status == 400 && suffixed.jsonObject?["code"] as? String == "validation_failed", "\(suffixed.text)")

        // A filter value with a NUL is PostgreSQL's 22021, not a match on its prefix.
        let user = try server.signUp()
        _ = try http.request("POST", "/rest/v1/children", headers: server.headers(user.token), body: #"{"user_id":"\#(user.id)","name":"Kid Two"}"#)
        let filtered = try http.request("GET", "/rest/v1/children?name=eq.Kid%20Two%00garbage", headers: server.headers(user.token))
        #expect(filtered.status == 400 && filtered.jsonObject?["code"] as? String == "22021", "\(filtered.text)")
        let inList = try http.request("GET", "/rest/v1/children?or=(name.eq.Kid%20Two%00x)", headers: server.headers(user.token))
        #expect(inList.status == 400 && inList.jsonObject?["code"] as? String == "22021", "\(inList.text)")
        // In a header: the HTTP parser refuses it.
        let header = try http.request("GET", "/rest/v1/children", headers: server.headers(user.token, [("Prefer", "count=exact\u{0}x")]))
        #expect(header.status == 400)
        try expectAlive("NUL bytes")
    }

    @Test func passwordsBcryptCannotHoldAreRefused() throws {
        let http = server.client()
        let email = "long-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let prefix = String(repeating: "x", count: 72)
        // Over 72 bytes: bcrypt would ignore the rest, so any suffix would sign in.
        let long = try http.request("POST", "/auth/v1/signup", headers: server.headers(), body: #"{"email":"\#(email)","password":"\#(prefix)AAAAAAAA"}"#)
        #expect(long.status == 422 && long.jsonObject?["code"] as? String == "weak_password", "\(long.text)")
        // 72 bytes counted in UTF-8, not characters: 25 × "é€" is 125 bytes in 50 characters.
        let wide = try http.request(
            "POST", "/auth/v1/signup", headers: server.headers(),
            body: #"{"email":"\#(email)","password":"\#(String(repeating: "é€", count: 25))"}"#)
        #expect(wide.status == 422 && wide.jsonObject?["code"] as? String == "weak_password")
        // 512 bytes and more: libxcrypt refuses them outright; nothing may be stored.
        let huge = try http.request(
            "POST", "/auth/v1/signup", headers: server.headers(), body: #"{"email":"\#(email)","password":"\#(String(repeating: "y", count: 600))"}"#)
        #expect(huge.status == 422)
        let admin = server.headers(server.serviceKey)
        let created = try http.request("POST", "/auth/v1/admin/users", headers: admin, body: #"{"email":"\#(email)","password":"\#(prefix)A"}"#)
        #expect(created.status == 422 && created.jsonObject?["code"] as? String == "weak_password")
        let user = try server.signUp()
        let changed = try http.request("PUT", "/auth/v1/user", headers: server.headers(user.token), body: #"{"password":"\#(prefix)B"}"#)
        #expect(changed.status == 422 && changed.jsonObject?["code"] as? String == "weak_password")
        // Exactly 72 bytes is fine, and a longer one sharing its prefix does not sign in.
        let exact = try http.request("POST", "/auth/v1/signup", headers: server.headers(), body: #"{"email":"\#(email)","password":"\#(prefix)"}"#)
        #expect(exact.status == 200)
        let longer = try http.request(
            "POST", "/auth/v1/token?grant_type=password", headers: server.headers(), body: #"{"email":"\#(email)","password":"\#(prefix)BBBB"}"#)
        #expect(longer.status == 400 && longer.jsonObject?["code"] as? String == "invalid_credentials")
        // Every stored hash is a real bcrypt hash.
        let database = try Connection(conninfo: server.databaseURL)
        let bad = try database.query(
            "SELECT count(*) FROM auth.users WHERE encrypted_password IS NOT NULL AND encrypted_password !~ '^\\$2[aby]\\$[0-9]{2}\\$.{53}$'")
        #expect(bad.scalar == "0")
    }

    @Test func invitationCodesCannotBeGuessedOutsideTheThrottle() throws {
        let http = server.client()
        let owner = try server.signUp()
        let guesser = try server.signUp()
        let created = try http.request("POST", "/rest/v1/rpc/create_family", headers: server.headers(owner.token), body: #"{"name":"Fam"}"#)
        let code = try #require(created.jsonObject?["invite_code"] as? String)
        // A read-only call answers the same whatever the code.
        let valid = try http.request("GET", "/rest/v1/rpc/join_family?code=\(code)", headers: server.headers(guesser.token))
        let invalid = try http.request("GET", "/rest/v1/rpc/join_family?code=AAAAA-BBBBB", headers: server.headers(guesser.token))
        #expect(valid.status == 405 && valid.status == invalid.status && valid.text == invalid.text, "\(valid.text) / \(invalid.text)")
        // tx=rollback is ignored by default: every wrong guess counts, the 11th is throttled.
        var statuses: [Int] = []
        for _ in 0..<11 {
            statuses.append(
                try http.request(
                    "POST", "/rest/v1/rpc/join_family", headers: server.headers(guesser.token, [("Prefer", "tx=rollback")]),
                    body: #"{"code":"AAAAA-BBBBB"}"#
                ).status)
        }
        #expect(statuses == Array(repeating: 404, count: 10) + [429], "\(statuses)")
        // And the right code with tx=rollback really joins (it is not a dry run).
        let other = try server.signUp()
        let joined = try http.request(
            "POST", "/rest/v1/rpc/join_family", headers: server.headers(other.token, [("Prefer", "tx=rollback")]), body: #"{"code":"\#(code)"}"#)
        #expect(joined.status == 200 && joined.header("Preference-Applied") == nil)
        let family = try http.request("POST", "/rest/v1/rpc/get_family", headers: server.headers(other.token), body: "{}")
        #expect(family.jsonObject?["name"] as? String == "Fam")
    }

    @Test func replacingAnotherUsersRowIsRefused() throws {
        let http = server.client()
        let a = try server.signUp()
        let b = try server.signUp()
        let child = try http.request(
            "POST", "/rest/v1/children", headers: server.headers(a.token, [("Prefer", "return=representation")]),
            body: #"{"user_id":"\#(a.id)","name":"A's kid"}"#)
        let id = try #require(child.jsonArray?.first?["id"] as? String)
        let put = try http.request(
            "PUT", "/rest/v1/children?id=eq.\(id)", headers: server.headers(b.token),
            body: #"{"id":"\#(id)","user_id":"\#(b.id)","name":"taken"}"#)
        #expect(put.status == 403 && put.jsonObject?["code"] as? String == "42501", "\(put.status) \(put.text)")
        let kept = try http.request("GET", "/rest/v1/children?select=name", headers: server.headers(a.token))
        #expect(kept.text == #"[{"name":"A's kid"}]"#)
        // The owner's own PUT still replaces.
        let own = try http.request(
            "PUT", "/rest/v1/children?id=eq.\(id)", headers: server.headers(a.token), body: #"{"id":"\#(id)","user_id":"\#(a.id)","name":"renamed"}"#)
        #expect([200, 204].contains(own.status), "\(own.text)")
    }

    @Test func theGatewayWantsAnAPIKeyOnAuth() throws {
        let http = server.client()
        for (method, path) in [
            ("POST", "/auth/v1/signup"), ("POST", "/auth/v1/token?grant_type=password"), ("GET", "/auth/v1/settings"),
            ("GET", "/auth/v1/user"), ("GET", "/auth/v1/health")
        ] {
            let response = try http.request(method, path, headers: [("Content-Type", "application/json")], body: method == "POST" ? "{}" : nil)
            #expect(response.status == 401 && response.jsonObject?["message"] as? String == "No API key found in request", "\(path): \(response.text)")
        }
        let wrong = try http.request("POST", "/auth/v1/signup", headers: [("apikey", "nope")], body: "{}")
        #expect(wrong.status == 401 && wrong.jsonObject?["message"] as? String == "Invalid API key")
        // The links opened from e-mails pass without one (an unknown token redirects to SITE_URL
        // with GoTrue's error).
        let verify = try http.request("GET", "/auth/v1/verify?token=x&type=signup")
        #expect(verify.status == 303 && verify.header("Location")?.contains("error_code=otp_expired") == true)
        // The key in the query string is accepted, as the gateway does.
        let query = try http.request("GET", "/auth/v1/settings?apikey=\(server.anonKey)")
        #expect(query.status == 200)
    }
}
