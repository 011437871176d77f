import Foundation
import HTTP
import Identity
import Postgres
import Testing

@testable import REST

/// RESTError → status + whole body; SQLSTATE → status (PostgREST's Error.hs); rendering of
/// statuses and Content-Range (Response.hs, RangeQuery.hs).
@Suite struct ErrorTests {
    static let sqlStates: [(String, Bool, Int)] = [
        ("23503", true, 409), ("23505", true, 409), ("23502", true, 400), ("23514", true, 400), ("22P02", true, 400),
        ("22007", true, 400), ("22001", true, 400), ("42501", true, 403), ("42501", false, 401), ("42883", true, 404),
        ("42P01", true, 404), ("P0001", true, 400), ("PT418", true, 418), ("PT999", true, 500), ("40001", true, 500),
        ("57014", true, 500), ("25006", true, 405), ("08006", true, 503), ("53300", true, 503), ("53400", true, 500),
        ("28P01", true, 403), ("0P000", true, 403), ("P0002", true, 500), ("XX000", true, 500), ("42703", true, 400),
        ("21000", true, 500), ("57P01", true, 503)
    ]

    @Test(arguments: sqlStates)
    func sqlStateMapsToStatus(_ state: String, _ authenticated: Bool, _ status: Int) {
        #expect(RESTError.status(for: PostgresError(kind: .server, message: "m", sqlState: state), authenticated: authenticated).code == status)
    }

    static let bodies: [(RESTError, Int, String)] = [
        (
            .singularity(rows: 0), 406,
            #"{"code":"PGRST116","details":"The result contains 0 rows","hint":null,"message":"Cannot coerce the result to a single JSON object"}"#
        ),
        (
            .singularity(rows: 2), 406,
            #"{"code":"PGRST116","details":"The result contains 2 rows","hint":null,"message":"Cannot coerce the result to a single JSON object"}"#
        ),
        (
            .unknownTable("chilren", hint: "children"), 404,
            #"{"code":"PGRST205","details":null,"hint":"Perhaps you meant the table 'public.children'","message":"Could not find the table 'public.chilren' in the schema cache"}"#
        ),
        (
            .unknownTable("x", hint: nil), 404,
            #"{"code":"PGRST205","details":null,"hint":null,"message":"Could not find the table 'public.x' in the schema cache"}"#
        ),
        (
            .unknownColumn(column: "nope", table: "children"), 400,
            #"{"code":"42703","details":null,"hint":null,"message":"column children.nope does not exist"}"#
        ),
        (
            .unknownFunction(name: "f", arguments: ["a", "b"], hint: nil), 404,
            #"{"code":"PGRST202","details":"Searched for the function public.f with parameters a, b or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.","hint":null,"message":"Could not find the function public.f(a, b) in the schema cache"}"#
        ),
        (
            .unknownFunction(name: "f", arguments: [], hint: "g"), 404,
            #"{"code":"PGRST202","details":"Searched for the function public.f without parameters or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.","hint":"Perhaps you meant to call the function public.g","message":"Could not find the function public.f without parameters in the schema cache"}"#
        ),
        (
            .unknownBodyColumn(column: "x", table: "children"), 400,
            #"{"code":"PGRST204","details":null,"hint":null,"message":"Could not find the 'x' column of 'children' in the schema cache"}"#
        ),
        (.invalidBody("Empty or invalid json"), 400, #"{"code":"PGRST102","details":null,"hint":null,"message":"Empty or invalid json"}"#),
        (.noAPIKey, 401, #"{"code":null,"details":null,"hint":"No `apikey` request header or url param was found.","message":"No API key found in request"}"#),
        (.jwt(.expired), 401, #"{"code":"PGRST303","details":null,"hint":null,"message":"JWT expired"}"#),
        // PostgREST's (jose's) words for each way a token fails.
        (
            .jwt(.badSignature), 401,
            #"{"code":"PGRST301","details":"None of the keys was able to decode the JWT","hint":null,"message":"No suitable key or wrong key type"}"#
        ),
        (
            .jwt(.unsupportedAlgorithm("none")), 401,
            #"{"code":"PGRST301","details":"JWT is unsecured but expected 'alg' was not 'none'","hint":null,"message":"Wrong or unsupported encoding algorithm"}"#
        ),
        (
            .jwt(.malformed("Expected 3 parts in JWT; got 2")), 401,
            #"{"code":"PGRST301","details":null,"hint":null,"message":"Expected 3 parts in JWT; got 2"}"#
        ),
        (.jwt(.malformed("JWT header has no alg")), 401, #"{"code":"PGRST301","details":null,"hint":null,"message":"JWT cryptographic operation failed"}"#),
        (.jwt(.notYetValid), 401, #"{"code":"PGRST303","details":null,"hint":null,"message":"JWT not yet valid"}"#),
        (
            .jwt(.claims("The JWT 'exp' claim must be a number")), 401,
            #"{"code":"PGRST303","details":null,"hint":null,"message":"The JWT 'exp' claim must be a number"}"#
        ),
        (
            .ownership(table: "children", authenticated: true), 403,
            #"{"code":"42501","details":null,"hint":null,"message":"new row violates row-level security policy for table \"children\""}"#
        ),
        (
            .ownership(table: "children", authenticated: false), 401,
            #"{"code":"42501","details":null,"hint":null,"message":"new row violates row-level security policy for table \"children\""}"#
        ),
        (
            .tooManyAffected(3), 400,
            #"{"code":"PGRST124","details":"The query affects 3 rows","hint":null,"message":"Query result exceeds max-affected preference constraint"}"#
        ),
        (
            .invalidRange(.outOfBounds(offset: 10, total: 3)), 416,
            #"{"code":"PGRST103","details":"An offset of 10 was requested, but there are only 3 rows.","hint":null,"message":"Requested range not satisfiable"}"#
        ),
        (.notAcceptable("text/html"), 406, #"{"code":"PGRST107","details":null,"hint":null,"message":"None of these media types are available: text/html"}"#),
        (
            .invalidPreferences(["a=b"]), 400,
            #"{"code":"PGRST122","details":"Invalid preferences: a=b","hint":null,"message":"Invalid preferences given with handling=strict"}"#
        )
    ]

    @Test(arguments: bodies)
    func rendersPostgRESTBodies(_ error: RESTError, _ status: Int, _ body: String) {
        let response = error.response(for: HTTPRequest(method: .get, target: "/rest/v1/children"))
        #expect(response.status.code == status)
        #expect(String(decoding: response.body, as: UTF8.self) == body)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        if let code = error.fields.code { #expect(response.headers["Proxy-Status"] == "PostgREST; error=\(code)") }
    }

    @Test func databaseErrorsCarryTheServerFields() {
        var error = PostgresError(kind: .server, message: #"new row for relation "children" violates check constraint "valid_birthday""#, sqlState: "23514")
        error.detail = "Failing row contains (…)."
        let rendered = RESTError.database(error, authenticated: true)
        #expect(rendered.status.code == 400)
        #expect(
            rendered.body
                == #"{"code":"23514","details":"Failing row contains (…).","hint":null,"message":"new row for relation \"children\" violates check constraint \"valid_birthday\""}"#
        )
        let lost = RESTError.database(PostgresError(kind: .connection, message: "server closed the connection"), authenticated: true)
        #expect(lost.status.code == 503 && lost.fields.code == "PGRST000")
    }

    @Test func authHeaders() {
        let expired = RESTError.jwt(.expired).response(for: HTTPRequest(method: .get, target: "/"))
        #expect(expired.headers["WWW-Authenticate"] == #"Bearer error="invalid_token", error_description="JWT expired""#)
        let anon = RESTError.database(PostgresError(kind: .server, message: "permission denied for table children", sqlState: "42501"), authenticated: false)
            .response(for: HTTPRequest(method: .get, target: "/"))
        #expect(anon.status.code == 401 && anon.headers["WWW-Authenticate"] == "Bearer")
        // HEAD: no body; the code is in Proxy-Status.
        let head = RESTError.singularity(rows: 0).response(for: HTTPRequest(method: .head, target: "/"))
        #expect(head.body.isEmpty && head.headers["Proxy-Status"] == "PostgREST; error=PGRST116")
    }
}

@Suite struct ResponseTests {
    static let ranges: [(Int, Int, Int?, Int, String)] = [
        // offset, page rows, total → status, Content-Range
        (0, 2, nil, 200, "0-1/*"),
        (0, 0, nil, 200, "*/*"),
        (0, 3, 3, 200, "0-2/3"),
        (0, 2, 3, 206, "0-1/3"),
        (0, 0, 0, 200, "*/0"),
        (2, 1, 3, 206, "2-2/3"),
        (5, 0, 3, 416, "*/3")
    ]

    @Test(arguments: ranges)
    func rangeStatus(_ offset: Int, _ rows: Int, _ total: Int?, _ status: Int, _ header: String) {
        let (computed, range) = ResponseRenderer.rangeStatusHeader(offset: offset, pageTotal: rows, total: total)
        #expect(computed.code == status && range == header)
    }

    static func render(_ method: String, _ target: String, headers: [(String, String)] = [], body: String? = nil, result: MainResult) throws -> HTTPResponse {
        ResponseRenderer.render(try Fixture.plan(method, target, headers: headers, body: body, caller: .serviceRole), result)
    }

    static let row = #"[{"id":"x"}]"#

    @Test func readStatuses() throws {
        let ok = try Self.render("GET", "/rest/v1/children", result: MainResult(total: nil, pageTotal: 1, body: Self.row))
        #expect(ok.status.code == 200 && ok.headers["Content-Range"] == "0-0/*" && String(decoding: ok.body, as: UTF8.self) == Self.row)
        #expect(ok.headers["Content-Type"] == "application/json; charset=utf-8")
        let partial = try Self.render(
            "GET", "/rest/v1/children?limit=1", headers: [("Prefer", "count=exact")], result: MainResult(total: 3, pageTotal: 1, body: Self.row))
        #expect(partial.status.code == 206 && partial.headers["Content-Range"] == "0-0/3" && partial.headers["Preference-Applied"] == "count=exact")
        let head = try Self.render(
            "HEAD", "/rest/v1/children", headers: [("Prefer", "count=exact")], result: MainResult(total: 1, pageTotal: 1, body: Self.row))
        #expect(head.status.code == 200 && head.body.isEmpty && head.headers["Content-Range"] == "0-0/1")
        let none = try Self.render(
            "GET", "/rest/v1/children", headers: [("Accept", "application/vnd.pgrst.object+json")], result: MainResult(total: nil, pageTotal: 0, body: ""))
        #expect(none.status.code == 406 && String(decoding: none.body, as: UTF8.self).contains("The result contains 0 rows"))
        let one = try Self.render(
            "GET", "/rest/v1/children", headers: [("Accept", "application/vnd.pgrst.object+json")],
            result: MainResult(total: nil, pageTotal: 1, body: #"{"id":"x"}"#))
        #expect(one.status.code == 200 && one.headers["Content-Type"] == "application/vnd.pgrst.object+json; charset=utf-8")
        let outOfRange = try Self.render(
            "GET", "/rest/v1/children?offset=5", headers: [("Prefer", "count=exact")], result: MainResult(total: 3, pageTotal: 0, body: "[]"))
        #expect(outOfRange.status.code == 416)
    }

    static let writes: [(String, String, String, String?, MainResult, Int, String, Bool)] = [
        // method, target, Prefer, body, result → status, Content-Range, has body
        ("POST", "/rest/v1/children", "return=representation", #"{"name":"a"}"#, MainResult(total: nil, pageTotal: 1, body: row), 201, "*/*", true),
        ("POST", "/rest/v1/children", "", #"{"name":"a"}"#, MainResult(total: nil, pageTotal: 1, body: row), 201, "*/*", false),
        ("POST", "/rest/v1/children", "return=minimal,count=exact", #"{"name":"a"}"#, MainResult(total: nil, pageTotal: 1, body: row), 201, "*/1", false),
        (
            "POST", "/rest/v1/user_profiles?on_conflict=id", "return=representation,resolution=merge-duplicates", #"{"id":"a"}"#,
            MainResult(total: nil, pageTotal: 1, body: row, inserted: 0), 200, "*/*", true
        ),
        (
            "POST", "/rest/v1/user_profiles?on_conflict=id", "return=representation,resolution=merge-duplicates", #"{"id":"a"}"#,
            MainResult(total: nil, pageTotal: 1, body: row, inserted: 1), 201, "*/*", true
        ),
        (
            "POST", "/rest/v1/user_profiles", "resolution=ignore-duplicates", #"{"id":"a"}"#, MainResult(total: nil, pageTotal: 0, body: "[]", inserted: nil),
            201, "*/*", false
        ),
        ("PATCH", "/rest/v1/children?id=eq.1", "return=representation", #"{"name":"a"}"#, MainResult(total: nil, pageTotal: 1, body: row), 200, "0-0/*", true),
        ("PATCH", "/rest/v1/children?id=eq.1", "return=representation", #"{"name":"a"}"#, MainResult(total: nil, pageTotal: 0, body: "[]"), 200, "*/*", true),
        ("PATCH", "/rest/v1/children?id=eq.1", "return=minimal", #"{"name":"a"}"#, MainResult(total: nil, pageTotal: 1, body: row), 204, "0-0/*", false),
        ("PATCH", "/rest/v1/children?id=eq.1", "count=exact", #"{"name":"a"}"#, MainResult(total: nil, pageTotal: 2, body: row), 204, "0-1/2", false),
        ("DELETE", "/rest/v1/children?id=eq.1", "return=representation", "{}", MainResult(total: nil, pageTotal: 1, body: row), 200, "*/*", true),
        ("DELETE", "/rest/v1/children?id=eq.1", "return=minimal,count=exact", "{}", MainResult(total: nil, pageTotal: 1, body: row), 204, "*/1", false),
        (
            "PUT", "/rest/v1/user_profiles?id=eq.a", "return=representation", #"{"id":"a"}"#, MainResult(total: nil, pageTotal: 1, body: row, inserted: 1), 201,
            "", true
        ),
        (
            "PUT", "/rest/v1/user_profiles?id=eq.a", "return=representation", #"{"id":"a"}"#, MainResult(total: nil, pageTotal: 1, body: row, inserted: 0), 200,
            "", true
        )
    ]

    @Test(arguments: writes)
    func writeStatuses(
        _ method: String, _ target: String, _ prefer: String, _ body: String?, _ result: MainResult, _ status: Int, _ range: String, _ hasBody: Bool
    ) throws {
        let response = try Self.render(method, target, headers: prefer.isEmpty ? [] : [("Prefer", prefer)], body: body, result: result)
        #expect(response.status.code == status)
        if range.isEmpty { #expect(response.headers["Content-Range"] == nil) } else { #expect(response.headers["Content-Range"] == range) }
        #expect(response.body.isEmpty == !hasBody)
        #expect((response.headers["Content-Type"] != nil) == hasBody)
    }

    @Test func preferenceApplied() throws {
        let insert = try Self.render(
            "POST", "/rest/v1/user_profiles?on_conflict=id",
            headers: [("Prefer", "count=exact, return=representation,resolution=merge-duplicates, missing=default, tx=commit")],
            body: #"{"id":"a"}"#, result: MainResult(total: nil, pageTotal: 1, body: Self.row, inserted: 1))
        #expect(insert.headers["Preference-Applied"] == "resolution=merge-duplicates, missing=default, return=representation, count=exact, tx=commit")
        let update = try Self.render(
            "PATCH", "/rest/v1/children?id=eq.1", headers: [("Prefer", "handling=strict, max-affected=2, return=minimal")],
            body: #"{"name":"a"}"#, result: MainResult(total: nil, pageTotal: 1, body: Self.row))
        #expect(update.headers["Preference-Applied"] == "return=minimal, handling=strict, max-affected=2")
        let read = try Self.render(
            "GET", "/rest/v1/children", headers: [("Prefer", "return=representation")], result: MainResult(total: nil, pageTotal: 0, body: "[]"))
        #expect(read.headers["Preference-Applied"] == nil)
    }

    @Test func callStatuses() throws {
        let void = try Self.render("POST", "/rest/v1/rpc/delete_account", result: MainResult(total: nil, pageTotal: 1, body: nil))
        #expect(void.status.code == 204 && void.body.isEmpty)
        let rows = try Self.render(
            "POST", "/rest/v1/rpc/get_user_with_profile", body: #"{"p_user_id":"x"}"#, result: MainResult(total: nil, pageTotal: 1, body: Self.row))
        #expect(rows.status.code == 200 && String(decoding: rows.body, as: UTF8.self) == Self.row && rows.headers["Content-Range"] == "0-0/*")
    }

    @Test func decisionsRollBack() throws {
        let single = try Fixture.plan(
            "POST", "/rest/v1/children", headers: [("Accept", "application/vnd.pgrst.object+json")], body: #"[{"name":"a"},{"name":"b"}]"#, caller: .serviceRole
        )
        #expect(RESTService.decide(single, MainResult(total: nil, pageTotal: 2, body: "")) == .singularity(rows: 2))
        #expect(RESTService.decide(single, MainResult(total: nil, pageTotal: 1, body: "")) == nil)
        let strict = try Fixture.plan("DELETE", "/rest/v1/children", headers: [("Prefer", "handling=strict, max-affected=1")], caller: .serviceRole)
        #expect(strict.mustDecide)
        #expect(RESTService.decide(strict, MainResult(total: nil, pageTotal: 2, body: "")) == .tooManyAffected(2))
        let lenient = try Fixture.plan("DELETE", "/rest/v1/children", headers: [("Prefer", "max-affected=1")], caller: .serviceRole)
        #expect(!lenient.mustDecide)
        let rollback = try Fixture.plan("PATCH", "/rest/v1/children", headers: [("Prefer", "tx=rollback")], body: #"{"name":"x"}"#, caller: .serviceRole)
        #expect(rollback.rollback && !rollback.mustDecide)
    }

    @Test func setupStatementBindsClaimsAndRole() {
        let write = RESTService.setup(caller: Fixture.user, readOnly: false)
        #expect(write.text == "SELECT set_config('request.jwt.claims', $1, true), set_config('role', $2, true)")
        #expect(write.binds == [Fixture.user.claimsJSON, "authenticated"])
        let read = RESTService.setup(caller: .anon, readOnly: true)
        #expect(read.text.hasSuffix("set_config('transaction_read_only', 'on', true)"))
        #expect(read.binds == [#"{"role":"anon"}"#, "anon"])
        // A REST request's own settings, in the same statement.
        let context = RequestContext(method: "GET", path: "/children", headersJSON: #"{"accept":"*/*"}"#, cookiesJSON: "{}")
        let request = RESTService.setup(caller: .anon, readOnly: true, context: context)
        #expect(
            request.text == "SELECT set_config('request.jwt.claims', $1, true), set_config('role', $2, true), "
                + "set_config('request.method', $3, true), set_config('request.path', $4, true), set_config('request.headers', $5, true), "
                + "set_config('request.cookies', $6, true), set_config('transaction_read_only', 'on', true)")
        #expect(request.binds == [#"{"role":"anon"}"#, "anon", "GET", "/children", #"{"accept":"*/*"}"#, "{}"])
        #expect(RequestContext.object([("a", "1"), ("b", "x\"y"), ("a", "2")]) == #"{"a":"2","b":"x\"y"}"#)
    }
}

/// The ownership middleware as a pure decision, before any SQL.
@Suite struct OwnershipTests {
    static let me = Fixture.userID.uuidString  // upper-case, as supabase-swift sends it
    static let anonUser = Caller(role: "authenticated", claimsJSON: "{}", userID: nil, sessionID: nil, isAnonymousUser: false)

    static let refused: [(String, String, String?, String, Bool)] = [
        // method, target, body → table, authenticated
        ("POST", "/rest/v1/children", #"{"user_id":"\#(Fixture.otherID)","name":"x"}"#, "children", true),
        ("POST", "/rest/v1/children", #"{"user_id":null,"name":"x"}"#, "children", true),
        ("POST", "/rest/v1/children", #"[{"user_id":"\#(me)","name":"x"},{"user_id":"\#(Fixture.otherID)","name":"y"}]"#, "children", true),
        // With `columns=` naming the owner, a row without it is NULL (no `missing=default`).
        ("POST", "/rest/v1/children?columns=%22user_id%22,%22name%22", #"[{"user_id":"\#(me)","name":"x"},{"name":"y"}]"#, "children", true),
        ("POST", "/rest/v1/user_profiles?on_conflict=id", #"{"id":"\#(Fixture.otherID)"}"#, "user_profiles", true),
        ("PATCH", "/rest/v1/children?id=eq.1", #"{"user_id":"\#(Fixture.otherID)"}"#, "children", true),
        ("PATCH", "/rest/v1/user_profiles?id=eq.1", #"{"id":"\#(Fixture.otherID)"}"#, "user_profiles", true),
        ("PUT", "/rest/v1/user_profiles?id=eq.\(Fixture.otherID)", #"{"id":"\#(Fixture.otherID)"}"#, "user_profiles", true)
    ]

    @Test(arguments: refused)
    func refusesWritesForAnotherOwner(_ method: String, _ target: String, _ body: String?, _ table: String, _ authenticated: Bool) {
        #expect(throws: RESTError.ownership(table: table, authenticated: authenticated)) {
            try Fixture.plan(method, target, body: body)
        }
    }

    @Test func acceptsOwnRowsInAnyCase() throws {
        for body in [#"{"user_id":"\#(Self.me)","name":"x"}"#, #"{"user_id":"\#(Self.me.lowercased())","name":"x"}"#] {
            #expect(throws: Never.self) { try Fixture.plan("POST", "/rest/v1/children", body: body) }
        }
        #expect(throws: Never.self) { try Fixture.plan("PATCH", "/rest/v1/children?id=eq.1", body: #"{"user_id":"\#(Self.me)","name":"y"}"#) }
    }

    /// A body (or `columns=`) that does not write the owner column leaves it to its default
    /// (`children.user_id` defaults to `auth.uid()`); RLS refuses a default that is not the caller.
    @Test func leavesAMissingOwnerToItsDefault() throws {
        for (target, body) in [
            ("/rest/v1/children", #"{"name":"x"}"#),
            ("/rest/v1/children", #"[{"name":"x"},{"name":"y"}]"#),
            ("/rest/v1/children?columns=%22name%22", #"{"user_id":"\#(Self.me)","name":"x"}"#)
        ] {
            let insert = try #require(try Fixture.plan("POST", target, body: body).statement)
            #expect(insert.text.contains(#"INSERT INTO "public"."children" ("name")"#), "\(target) \(body): \(insert.text)")
        }
        // With `missing=default`, a row without the owner takes the default too.
        #expect(throws: Never.self) {
            try Fixture.plan(
                "POST", "/rest/v1/children?columns=%22user_id%22,%22name%22", headers: [("Prefer", "missing=default")],
                body: #"[{"user_id":"\#(Self.me)","name":"x"},{"name":"y"}]"#)
        }
    }

    @Test func anonymousAndUserlessCallers() throws {
        #expect(throws: RESTError.ownership(table: "children", authenticated: false)) {
            try Fixture.plan("POST", "/rest/v1/children", body: #"{"name":"x"}"#, caller: .anon)
        }
        #expect(throws: RESTError.ownership(table: "children", authenticated: false)) {
            try Fixture.plan("DELETE", "/rest/v1/children", caller: .anon)
        }
        #expect(throws: RESTError.ownership(table: "user_profiles", authenticated: true)) {
            try Fixture.plan("PATCH", "/rest/v1/user_profiles", body: "{}", caller: Self.anonUser)
        }
        let read = try #require(try Fixture.plan("GET", "/rest/v1/children?name=eq.x", caller: .anon).statement)
        #expect(read.text.contains(#"WHERE "children"."name" = $1 AND false)"#))
        let bare = try #require(try Fixture.plan("GET", "/rest/v1/children", caller: .anon).statement)
        #expect(bare.text.contains(" WHERE false)"))
    }

    @Test func serviceRoleAndMiddlewareOffAreUnrestricted() throws {
        let service = try #require(try Fixture.plan("GET", "/rest/v1/children", caller: .serviceRole).statement)
        #expect(!service.text.contains("WHERE"))
        #expect(throws: Never.self) {
            try Fixture.plan("POST", "/rest/v1/children", body: #"{"user_id":"\#(Fixture.otherID)","name":"x"}"#, caller: .serviceRole)
        }
        let off = try #require(try Fixture.plan("GET", "/rest/v1/children", ownership: false).statement)
        #expect(!off.text.contains("WHERE"))
        #expect(throws: Never.self) { try Fixture.plan("POST", "/rest/v1/children", body: #"{"user_id":"\#(Fixture.otherID)","name":"x"}"#, ownership: false) }
    }

    @Test func policyIsData() throws {
        let families = OwnershipPolicy(ownerColumns: ["children": "user_id", "families": "owner_id"])
        let table = SchemaCache.Table(name: "families", columns: [.init(name: "id", type: "uuid"), .init(name: "owner_id", type: "uuid")], primaryKey: ["id"])
        let cache = SchemaCache(tables: [table], functions: [])
        let api = try Fixture.request("GET", "/rest/v1/families")
        let plan = try Planner(cache: cache, policy: families, ownershipEnabled: true).plan(api, caller: Fixture.user)
        #expect(plan.statement?.text.contains(#"WHERE "families"."owner_id" = $1"#) == true)
        #expect(plan.statement?.binds == [Fixture.userID.uuidString.lowercased()])
    }
}

@Test func uuidTextIsCanonicalLowerCase() {
    for text in ["07E706D2-C4DC-46E3-B64E-2B12FD23CAC5", "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF"] {
        #expect(lowercaseUUIDString(UUID(uuidString: text)!) == text.lowercased())
    }
}

@Test func anEmptyBearerIsTheBearerSchemeWithNothingAfterIt() {
    for header in ["Bearer", "Bearer ", "bEaReR\t", "  Bearer  "] { #expect(RESTError.isEmptyBearer(header), "\(header)") }
    for header in [nil, "", "Bearer x", "Bearerx", "Basic ", "Bear"] as [String?] { #expect(!RESTError.isEmptyBearer(header), "\(header ?? "nil")") }
    #expect(RESTError.emptyToken.status == .unauthorized)
    #expect(RESTError.emptyToken.body == #"{"code":"PGRST301","details":null,"hint":null,"message":"Empty JWT is sent in Authorization header"}"#)
}
