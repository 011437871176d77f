import Foundation
import HTTP
import Identity
import Postgres
import Testing

@testable import REST

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
        #expect(
            write.text
                == "SELECT set_config('request.jwt.claims', $1, true) IS NULL, set_config('request.jwt.claim.sub', $2, true) IS NULL, "
                + "set_config('role', $3, true) IS NULL")
        #expect(write.binds == [Fixture.user.claimsJSON, Fixture.user.subject, "authenticated"])
        let read = RESTService.setup(caller: .anon, readOnly: true)
        #expect(read.text.hasSuffix("set_config('transaction_read_only', 'on', true) IS NULL"))
        #expect(read.binds == [#"{"role":"anon"}"#, "", "anon"])
        // A REST request's own settings, in the same statement.
        let context = RequestContext(method: "GET", path: "/children", headersJSON: #"{"accept":"*/*"}"#, cookiesJSON: "{}")
        let request = RESTService.setup(caller: .anon, readOnly: true, context: context)
        #expect(
            request.text
                == "SELECT set_config('request.jwt.claims', $1, true) IS NULL, set_config('request.jwt.claim.sub', $2, true) IS NULL, "
                + "set_config('role', $3, true) IS NULL, "
                + "set_config('request.method', $4, true) IS NULL, set_config('request.path', $5, true) IS NULL, "
                + "set_config('request.headers', $6, true) IS NULL, set_config('request.cookies', $7, true) IS NULL, "
                + "set_config('transaction_read_only', 'on', true) IS NULL")
        #expect(request.binds == [#"{"role":"anon"}"#, "", "anon", "GET", "/children", #"{"accept":"*/*"}"#, "{}"])
        #expect(RequestContext.object([("a", "1"), ("b", "x\"y"), ("a", "2")]) == #"{"a":"2","b":"x\"y"}"#)
    }
}
