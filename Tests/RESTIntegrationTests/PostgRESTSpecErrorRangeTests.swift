import Foundation
import TestSupport
import Testing

/// PostgREST's ErrorSpec (PGRST205's hint naming a table at least 75% similar), RangeSpec on a
/// function's rows (416 PGRST103 with its details and `Content-Range`) and RpcSpec's
/// `Set-Cookie` set twice by `response.headers`. Each case is the spec's request and answer.
@Suite("PostgREST spec cases: table hints, function ranges, headers", .serialized)
struct PostgRESTSpecErrorRangeTests {
    static let fixtures = ##"""
        CREATE TABLE spec.items (id bigserial PRIMARY KEY);
        INSERT INTO spec.items SELECT generate_series(1, 15);
        CREATE FUNCTION spec.getitemrange(min bigint, max bigint) RETURNS SETOF spec.items LANGUAGE sql STABLE
            AS $_$ SELECT * FROM spec.items WHERE id > $1 AND id <= $2 $_$;
        CREATE FUNCTION spec.set_cookie_twice() RETURNS void LANGUAGE sql AS $$
            SET LOCAL "response.headers" = '[{"Set-Cookie": "sessionid=38afes7a8; HttpOnly; Path=/"}, {"Set-Cookie": "id=a3fWa; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Secure; HttpOnly"}]';
        $$;
        GRANT SELECT ON ALL TABLES IN SCHEMA spec TO anon, authenticated, service_role;
        """##

    let server: TestServer

    init() throws {
        server = try TestServer { $0.postgrest.schemas = ["public", "spec"] }
        try server.installSpecFixtures(PostgRESTSpecTests.fixtures + Self.fixtures, profile: "spec", probe: "/items")
    }

    func get(_ path: String, _ extra: [(String, String)] = []) throws -> TestResponse {
        try server.client().request("GET", "/rest/v1" + path, headers: server.headers(nil, [("Accept-Profile", "spec")] + extra))
    }

    func expect(
        _ response: TestResponse, _ expected: String, status: Int, headers: [(String, String)] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let wanted = try JSONSerialization.jsonObject(with: Data(expected.utf8)) as? NSObject
        #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
        #expect((response.json as? NSObject) == wanted, "\(response.text)", sourceLocation: sourceLocation)
        for (name, value) in headers {
            #expect(response.header(name) == value, "\(name): \(response.text)", sourceLocation: sourceLocation)
        }
    }

    @Test func tableNotFoundHints() throws {
        // "show hint when similarity score is at least 75%"
        try expect(
            try get("/projectx"),
            #"{"code":"PGRST205","details":null,"hint":"Perhaps you meant the table 'spec.projects'","message":"Could not find the table 'spec.projectx' in the schema cache"}"#,
            status: 404)
        try expect(
            try get("/projecxx"),
            #"{"code":"PGRST205","details":null,"hint":"Perhaps you meant the table 'spec.projects'","message":"Could not find the table 'spec.projecxx' in the schema cache"}"#,
            status: 404)
        // "don't show hint when similarity score is less than 75%"
        try expect(
            try get("/projxxxx"), #"{"code":"PGRST205","details":null,"hint":null,"message":"Could not find the table 'spec.projxxxx' in the schema cache"}"#,
            status: 404)
    }

    @Test func functionRangesRefused() throws {
        let count = ("Prefer", "count=exact")
        // "refuses a range with nonzero start when there are no items"
        try expect(
            try get("/rpc/getitemrange?offset=1&min=2&max=2", [count]),
            #"{"message":"Requested range not satisfiable","code":"PGRST103","details":"An offset of 1 was requested, but there are only 0 rows.","hint":null}"#,
            status: 416, headers: [("Content-Range", "*/0"), ("Content-Length", "144")])
        // "refuses a range requesting start past last item"
        try expect(
            try get("/rpc/getitemrange?offset=100&min=0&max=15", [count]),
            #"{"message":"Requested range not satisfiable","code":"PGRST103","details":"An offset of 100 was requested, but there are only 15 rows.","hint":null}"#,
            status: 416, headers: [("Content-Range", "*/15")])
        // With range headers: "fails with 416 for offside range"
        try expect(
            try get("/rpc/getitemrange?min=2&max=2", [("Range-Unit", "items"), ("Range", "1-0")]),
            #"{"message":"Requested range not satisfiable","code":"PGRST103","details":"The lower boundary must be lower than or equal to the upper boundary in the Range header.","hint":null}"#,
            status: 416)
        try expect(
            try get("/rpc/getitemrange?min=2&max=2", [("Range-Unit", "items"), ("Range", "1-2"), count]),
            #"{"message":"Requested range not satisfiable","code":"PGRST103","details":"An offset of 1 was requested, but there are only 0 rows.","hint":null}"#,
            status: 416, headers: [("Content-Range", "*/0"), ("Content-Length", "144")])
        try expect(
            try get("/rpc/getitemrange?min=0&max=15", [("Range-Unit", "items"), ("Range", "100-199"), count]),
            #"{"message":"Requested range not satisfiable","code":"PGRST103","details":"An offset of 100 was requested, but there are only 15 rows.","hint":null}"#,
            status: 416, headers: [("Content-Range", "*/15")])
    }

    @Test func setCookieTwice() throws {
        // "can set the same http header twice"
        let response = try get("/rpc/set_cookie_twice")
        #expect(response.status == 204, "\(response.text)")
        #expect(response.header("Content-Type") == nil && response.header("Content-Length") == nil)
        #expect(
            response.headers.filter { $0.name.lowercased() == "set-cookie" }.map(\.value) == [
                "sessionid=38afes7a8; HttpOnly; Path=/", "id=a3fWa; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Secure; HttpOnly"
            ])
    }
}
