import Foundation
import TestSupport
import Testing

/// PostgREST's QueryLimitedSpec (`db-max-rows` 2): every level of a read is cut to two rows (the
/// top level, to-many embeds, to-one embeds, which take their `offset` too), `count=estimated`
/// is exact up to the limit and the planner's estimate beyond it, and writes are not cut.
@Suite("PostgREST spec cases: db-max-rows", .serialized)
struct PostgRESTSpecMaxRowsTests {
    /// What QueryLimitedSpec reads besides `PostgRESTSpecTests`'s fixtures (PostgREST's
    /// `schema.sql` and `data.sql`, moved from `test` to `spec`), with its writes granted to `anon`.
    static let fixtures = ##"""
        CREATE TABLE spec.items (id bigserial PRIMARY KEY);
        INSERT INTO spec.items SELECT generate_series(1, 15);
        CREATE OR REPLACE FUNCTION spec.getallprojects() RETURNS SETOF spec.projects LANGUAGE sql
            AS $_$ SELECT * FROM spec.projects; $_$ ROWS 2019;
        CREATE FUNCTION spec.get_projects_above(id int) RETURNS SETOF spec.projects LANGUAGE sql
            AS $_$ SELECT * FROM spec.projects WHERE id > $1; $_$ ROWS 1;
        CREATE VIEW spec.getallprojects_view AS SELECT * FROM spec.getallprojects();
        CREATE VIEW spec.get_projects_above_view AS SELECT * FROM spec.get_projects_above(1);
        CREATE TABLE spec.employees (
            first_name text, last_name text, salary money, company text, occupation text, PRIMARY KEY (first_name, last_name));
        INSERT INTO spec.employees VALUES
            ('Frances M.', 'Roe', '24000', 'One-Up Realty', 'Author'),
            ('Daniel B.', 'Lyon', '36000', 'Dubrow''s Cafeteria', 'Packer'),
            ('Edwin S.', 'Smith', '48000', 'Pro Garden Management', 'Marine biologist');
        GRANT SELECT ON ALL TABLES IN SCHEMA spec TO anon, authenticated, service_role;
        GRANT INSERT ON spec.projects TO anon;
        GRANT UPDATE, DELETE ON spec.employees TO anon;
        """##

    let server: TestServer

    init() throws {
        server = try TestServer {
            $0.postgrest.schemas = ["public", "spec"]
            $0.postgrest.maxRows = 2
        }
        try server.installSpecFixtures(PostgRESTSpecTests.fixtures + Self.fixtures, profile: "spec", probe: "/get_projects_above_view")
    }

    /// `method path` in `spec` with `extra` headers.
    func request(_ method: String, _ path: String, _ extra: [(String, String)] = [], body: String? = nil) throws -> TestResponse {
        let profile = ["GET", "HEAD"].contains(method) ? "Accept-Profile" : "Content-Profile"
        return try server.client().request(method, "/rest/v1" + path, headers: server.headers(nil, [(profile, "spec")] + extra), body: body)
    }

    /// The status, `Content-Range` and JSON body the spec expects.
    func expect(
        _ response: TestResponse, _ expected: String?, status: Int = 200, range: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.header("Content-Range") == range, "\(response.text)", sourceLocation: sourceLocation)
        if let expected {
            let wanted = try JSONSerialization.jsonObject(with: Data(expected.utf8)) as? NSObject
            #expect((response.json as? NSObject) == wanted, "\(response.text)", sourceLocation: sourceLocation)
        }
    }

    @Test func readsAreCutOnEveryLevel() throws {
        // "restricts results"
        try expect(try request("GET", "/items?order=id"), #"[{"id":1},{"id":2}]"#, range: "0-1/*")
        // "respects additional client limiting"
        try expect(try request("GET", "/items", [("Range-Unit", "items"), ("Range", "0-0")]), #"[{"id":1}]"#, range: "0-0/*")
        // "works on all levels"
        try expect(
            try request("GET", "/users?select=id,tasks(id)&order=id.asc&tasks.order=id.asc"),
            #"[{"id":1,"tasks":[{"id":1},{"id":2}]},{"id":2,"tasks":[{"id":5},{"id":6}]}]"#, range: "0-1/*")
        // "succeeds in getting parent embeds despite the limit, see #647"
        try expect(
            try request("GET", "/tasks?select=id,project:projects(id)&id=gt.5"), #"[{"id":6,"project":{"id":3}},{"id":7,"project":{"id":4}}]"#,
            range: "0-1/*")
        // "can offset the parent embed, being consistent with the other embed types"
        try expect(
            try request("GET", "/tasks?select=id,project:projects(id)&id=gt.5&project.offset=1"),
            #"[{"id":6,"project":null},{"id":7,"project":null}]"#, range: "0-1/*")
        // "should work with limit 0"
        try expect(try request("GET", "/items?limit=0"), "[]", range: "*/*")
    }

    @Test func estimatedCounts() throws {
        // "uses the query planner guess when query rows > maxRows"
        let planned = try request("HEAD", "/getallprojects_view", [("Prefer", "count=estimated")])
        try expect(planned, nil, status: 206, range: "0-1/2019")
        #expect(planned.header("Content-Type") == "application/json; charset=utf-8")
        // "gives exact count when query rows <= maxRows"
        try expect(try request("HEAD", "/getallprojects_view?id=lt.3", [("Prefer", "count=estimated")]), nil, range: "0-1/2")
        // "only uses the query planner guess if it's indeed greater than the exact count"
        try expect(try request("HEAD", "/get_projects_above_view", [("Prefer", "count=estimated")]), nil, status: 206, range: "0-1/3")
    }

    @Test func writesAreNotCut() throws {
        // "doesn't affect insertions"
        let inserted = try request(
            "POST", "/projects?select=id,name", [("Prefer", "return=representation")],
            body: #"[{"id":6,"name":"BeOS"},{"id":7,"name":"PopOS"},{"id":8,"name":"HaikuOS"}]"#)
        #expect(inserted.status == 201, "\(inserted.text)")
        #expect(
            (inserted.json as? NSObject)
                == (try JSONSerialization.jsonObject(with: Data(#"[{"id":6,"name":"BeOS"},{"id":7,"name":"PopOS"},{"id":8,"name":"HaikuOS"}]"#.utf8))
                    as? NSObject),
            "\(inserted.text)")
        // "doesn't affect updates(2 rows would be modified if it did)"
        let updated = try request(
            "PATCH", "/employees?select=first_name,last_name,occupation&order=last_name", [("Prefer", "return=representation")],
            body: #"[{"occupation": "Barista"}]"#)
        #expect(updated.status == 200, "\(updated.text)")
        #expect(
            (updated.json as? NSObject)
                == (try JSONSerialization.jsonObject(
                    with: Data(
                        #"[{"first_name":"Daniel B.","last_name":"Lyon","occupation":"Barista"},{"first_name":"Frances M.","last_name":"Roe","occupation":"Barista"},{"first_name":"Edwin S.","last_name":"Smith","occupation":"Barista"}]"#
                            .utf8)) as? NSObject),
            "\(updated.text)")
        // "doesn't affect deletions"
        let deleted = try request("DELETE", "/employees?select=first_name,last_name&order=last_name", [("Prefer", "return=representation")])
        #expect(deleted.status == 200, "\(deleted.text)")
        #expect(
            (deleted.json as? NSObject)
                == (try JSONSerialization.jsonObject(
                    with: Data(
                        #"[{"first_name":"Daniel B.","last_name":"Lyon"},{"first_name":"Frances M.","last_name":"Roe"},{"first_name":"Edwin S.","last_name":"Smith"}]"#
                            .utf8)) as? NSObject),
            "\(deleted.text)")
    }
}
