import Foundation
import Postgres
import REST
import TestSupport
import Testing

/// `db-schemas` (PostgREST's MultipleSchemaSpec, on its fixtures: schemas `v1`, `v2` and
/// `SPECIAL "@/\#~_-`, each with its own tables, functions and media handlers): the schema chosen
/// per request by `Accept-Profile` / `Content-Profile`, echoed in `Content-Profile`, PGRST106 for
/// another; from the environment, from the database and reloaded by `NOTIFY pgrst, 'reload config'`.
@Suite("Multiple schemas", .serialized)
struct MultipleSchemaTests {
    static let special = "SPECIAL \"@/\\#~_-"
    static let spec = ["v1", "v2", special]

    /// PostgREST's fixtures of the three schemas (its `schema.sql` and `data.sql`), granted to the
    /// API roles.
    static let fixtures = ##"""
        CREATE SCHEMA v1;
        CREATE SCHEMA v2;
        CREATE SCHEMA "SPECIAL ""@/\#~_-";
        CREATE SCHEMA ms_types;
        CREATE DOMAIN ms_types."text/plain" AS text;
        CREATE TABLE v1.parents (id int PRIMARY KEY, name text);
        CREATE TABLE v1.children (id int PRIMARY KEY, name text, parent_id int, CONSTRAINT parent FOREIGN KEY (parent_id) REFERENCES v1.parents (id));
        CREATE FUNCTION v1.get_parents_below(id int) RETURNS SETOF v1.parents AS $$ SELECT * FROM v1.parents WHERE id < $1 $$ LANGUAGE sql;
        CREATE TABLE v2.parents (id int PRIMARY KEY, name text);
        CREATE TABLE v2.children (id int PRIMARY KEY, name text, parent_id int, CONSTRAINT parent FOREIGN KEY (parent_id) REFERENCES v2.parents (id));
        CREATE TABLE v2.another_table (id int PRIMARY KEY, another_value text);
        CREATE FUNCTION v2.get_parents_below(id int) RETURNS SETOF v2.parents AS $$ SELECT * FROM v2.parents WHERE id < $1 $$ LANGUAGE sql;
        CREATE FUNCTION v2.get_plain_text() RETURNS ms_types."text/plain" AS $$ SELECT 'plain'::ms_types."text/plain" $$ LANGUAGE sql;
        CREATE DOMAIN v2."text/special" AS text;
        CREATE FUNCTION v2.get_special_text() RETURNS v2."text/special" AS $$ SELECT 'special'::v2."text/special" $$ LANGUAGE sql;
        CREATE FUNCTION v2.special_trans(state v2."text/special", next v2.another_table) RETURNS v2."text/special"
            AS $$ SELECT 'special'::v2."text/special" $$ LANGUAGE sql;
        CREATE AGGREGATE v2.special_agg (v2.another_table) (initcond = '', stype = v2."text/special", sfunc = v2.special_trans);
        CREATE FUNCTION v2.plain_trans(state ms_types."text/plain", next v2.another_table) RETURNS ms_types."text/plain"
            AS $$ SELECT 'plain'::ms_types."text/plain" $$ LANGUAGE sql;
        CREATE AGGREGATE v2.plain_agg (v2.another_table) (initcond = '', stype = ms_types."text/plain", sfunc = v2.plain_trans);
        CREATE TABLE "SPECIAL ""@/\#~_-".languages (id int PRIMARY KEY, name text);
        CREATE TABLE "SPECIAL ""@/\#~_-".names (id int PRIMARY KEY, name text, language_id int REFERENCES "SPECIAL ""@/\#~_-".languages (id));
        CREATE FUNCTION "SPECIAL ""@/\#~_-".computed_languages("SPECIAL ""@/\#~_-".names) RETURNS SETOF "SPECIAL ""@/\#~_-".languages ROWS 1
            AS $$ SELECT * FROM "SPECIAL ""@/\#~_-".languages WHERE id = $1.language_id $$ LANGUAGE sql;
        INSERT INTO v1.parents VALUES (1, 'parent v1-1'), (2, 'parent v1-2');
        INSERT INTO v1.children VALUES (1, 'child v1-1', 1), (2, 'child v1-2', 2);
        INSERT INTO v2.parents VALUES (3, 'parent v2-3'), (4, 'parent v2-4');
        INSERT INTO v2.children VALUES (1, 'child v2-3', 3);
        INSERT INTO v2.another_table VALUES (5, 'value 5'), (6, 'value 6');
        INSERT INTO "SPECIAL ""@/\#~_-".languages VALUES (1, 'English'), (2, 'Spanish');
        INSERT INTO "SPECIAL ""@/\#~_-".names VALUES (1, 'John', 1), (2, 'Mary', 1), (3, 'José', 2);
        DO $$ DECLARE s text; BEGIN
            FOREACH s IN ARRAY ARRAY['v1', 'v2', 'SPECIAL "@/\#~_-', 'ms_types'] LOOP
                EXECUTE format('GRANT USAGE ON SCHEMA %I TO anon, authenticated, service_role', s);
                EXECUTE format('GRANT ALL ON ALL TABLES IN SCHEMA %I TO anon, authenticated, service_role', s);
                EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA %I TO anon, authenticated, service_role', s);
            END LOOP;
        END $$;
        """##

    /// A server with `schemas` from the environment over the fixtures, once its cache has them.
    static func server(_ schemas: [String]? = spec) throws -> (TestServer, Connection) {
        let server = try TestServer { config in if let schemas { config.postgrest.schemas = schemas } }
        let admin = try Connection(conninfo: server.databaseURL)
        try admin.execute(unsafeSQL: fixtures)
        if let schemas {
            let http = server.client()
            let probe = [("Accept-Profile", schemas.first { $0 != "public" } ?? "public")]
            #expect(
                eventually {
                    try? admin.execute("NOTIFY pgrst, 'reload schema'")
                    return (try? http.request("GET", "/rest/v1/parents", headers: server.headers(nil, probe)).status) == 200
                })
        }
        return (server, admin)
    }

    /// The response's JSON equals `expected`'s (key order aside).
    static func same(_ response: TestResponse, _ expected: String) -> Bool {
        guard let actual = response.json as? NSObject,
            let wanted = try? JSONSerialization.jsonObject(with: Data(expected.utf8), options: [.fragmentsAllowed]) as? NSObject
        else { return false }
        return actual == wanted
    }

    /// PGRST106's body for `schema` when `exposed` are.
    static func invalid(_ exposed: [String], _ schema: String = "unknown") -> String {
        "{\"message\":\"Invalid schema: \(schema)\",\"code\":\"PGRST106\",\"details\":null,\"hint\":"
            + String(
                decoding: try! JSONSerialization.data(
                    withJSONObject: "Only the following schemas are exposed: " + exposed.joined(separator: ", "), options: [.fragmentsAllowed]), as: UTF8.self)
            + "}"
    }

    @Test func readingTablesOnDifferentSchemas() throws {
        let (server, _) = try Self.server()
        let http = server.client()
        func get(_ path: String, _ profile: String?, _ extra: [(String, String)] = []) throws -> TestResponse {
            try http.request("GET", "/rest/v1" + path, headers: server.headers(nil, (profile.map { [("Accept-Profile", $0)] } ?? []) + extra))
        }
        let v1Parents = #"[{"id":1,"name":"parent v1-1"},{"id":2,"name":"parent v1-2"}]"#
        for profile in [nil, "v1"] {
            let read = try get("/parents", profile)
            #expect(read.status == 200 && Self.same(read, v1Parents) && read.header("Content-Profile") == "v1", "\(read.text)")
        }
        let v2 = try get("/parents", "v2")
        #expect(Self.same(v2, #"[{"id":3,"name":"parent v2-3"},{"id":4,"name":"parent v2-4"}]"#) && v2.header("Content-Profile") == "v2")
        let another = try get("/another_table", "v2")
        #expect(Self.same(another, #"[{"id":5,"another_value":"value 5"},{"id":6,"another_value":"value 6"}]"#) && another.header("Content-Profile") == "v2")
        let missing = try get("/another_table", "v1")
        #expect(missing.status == 404, "\(missing.text)")
        #expect(
            Self.same(missing, #"{"code":"PGRST205","details":null,"hint":null,"message":"Could not find the table 'v1.another_table' in the schema cache"}"#))
        let unknown = try get("/parents", "unknown")
        #expect(unknown.status == 406 && Self.same(unknown, Self.invalid(Self.spec)), "\(unknown.text)")
        #expect(unknown.header("Content-Profile") == nil)

        let names = try get("/names?select=id,name", Self.special)
        #expect(Self.same(names, #"[{"id":1,"name":"John"},{"id":2,"name":"Mary"},{"id":3,"name":"José"}]"#), "\(names.text)")
        #expect(names.header("Content-Profile") == Self.special)
        let embedded = try get("/names?select=name,languages(name)&id=in.(1,3)", Self.special)
        #expect(
            Self.same(embedded, #"[{"name":"John","languages":{"name":"English"}},{"name":"José","languages":{"name":"Spanish"}}]"#), "\(embedded.text)")
        let computed = try get("/names?select=name,computed_languages(name)&id=in.(1,3)", Self.special)
        #expect(
            Self.same(computed, #"[{"name":"John","computed_languages":{"name":"English"}},{"name":"José","computed_languages":{"name":"Spanish"}}]"#),
            "\(computed.text)")

        // Media handlers of the schema (a domain of another schema, or of the exposed one).
        let plain = try get("/another_table", "v2", [("Accept", "text/plain")])
        #expect(plain.status == 200 && plain.text == "plain" && plain.header("Content-Type") == "text/plain; charset=utf-8", "\(plain.text)")
        #expect(plain.header("Content-Profile") == "v2")
        let special = try get("/another_table", "v2", [("Accept", "text/special")])
        #expect(special.status == 200 && special.text == "special" && special.header("Content-Type") == "text/special", "\(special.text)")
        #expect(special.header("Content-Profile") == "v2")
    }

    @Test func writingTablesOnDifferentSchemas() throws {
        let (server, admin) = try Self.server()
        let http = server.client()
        func write(_ method: String, _ path: String, _ profile: String?, _ body: String) throws -> TestResponse {
            try http.request(
                method, "/rest/v1" + path,
                headers: server.headers(nil, [("Prefer", "return=representation")] + (profile.map { [("Content-Profile", $0)] } ?? [])), body: body)
        }
        let plain = try write("POST", "/children", nil, #"{"id": 0, "name": "child v1-1", "parent_id": 1}"#)
        #expect(plain.status == 201 && Self.same(plain, #"[{"id":0,"name":"child v1-1","parent_id":1}]"#) && plain.header("Content-Profile") == "v1")
        try admin.execute("DELETE FROM v1.children WHERE id = 0")
        let v1 = try write("POST", "/children?select=id,parent(*)", "v1", #"{"id": 0, "name": "child v1-2", "parent_id": 2}"#)
        #expect(v1.status == 201 && Self.same(v1, #"[{"id":0,"parent":{"id":2,"name":"parent v1-2"}}]"#) && v1.header("Content-Profile") == "v1", "\(v1.text)")
        let v2 = try write("POST", "/children?select=id,parent(*)", "v2", #"{"id": 0, "name": "child v2-3", "parent_id": 3}"#)
        #expect(v2.status == 201 && Self.same(v2, #"[{"id":0,"parent":{"id":3,"name":"parent v2-3"}}]"#) && v2.header("Content-Profile") == "v2", "\(v2.text)")
        let unknown = try write("POST", "/children", "unknown", #"{"name": "child 4", "parent_id": 4}"#)
        #expect(unknown.status == 406 && Self.same(unknown, Self.invalid(Self.spec)))

        let patched1 = try write("PATCH", "/children?select=name,parent(name)&id=eq.1", "v1", #"{"name": "child v1-1 updated"}"#)
        #expect(
            patched1.status == 200 && Self.same(patched1, #"[{"name":"child v1-1 updated","parent":{"name":"parent v1-1"}}]"#)
                && patched1.header("Content-Profile") == "v1", "\(patched1.text)")
        let patched2 = try write("PATCH", "/children?select=name,parent(name)&id=eq.1", "v2", #"{"name": "child v2-1 updated"}"#)
        #expect(
            patched2.status == 200 && Self.same(patched2, #"[{"name":"child v2-1 updated","parent":{"name":"parent v2-3"}}]"#)
                && patched2.header("Content-Profile") == "v2", "\(patched2.text)")
        let deleted = try write("DELETE", "/children?id=eq.1", "v2", "")
        #expect(
            deleted.status == 200 && Self.same(deleted, #"[{"id":1,"name":"child v2-1 updated","parent_id":3}]"#) && deleted.header("Content-Profile") == "v2")
        let put = try write("PUT", "/children?id=eq.111", "v2", #"[{"id": 111, "name": "child v2-111", "parent_id": null}]"#)
        #expect(
            put.status == 201 && Self.same(put, #"[{"id":111,"name":"child v2-111","parent_id":null}]"#) && put.header("Content-Profile") == "v2", "\(put.text)"
        )
        #expect(try admin.query("SELECT count(*) FROM v2.children WHERE id = 111").scalar == "1")
        #expect(try admin.query("SELECT count(*) FROM v1.children WHERE id = 111").scalar == "0")
    }

    @Test func callingFunctionsOnDifferentSchemas() throws {
        let (server, _) = try Self.server()
        let http = server.client()
        let plain = try http.request("GET", "/rest/v1/rpc/get_parents_below?id=6", headers: server.headers())
        #expect(Self.same(plain, #"[{"id":1,"name":"parent v1-1"},{"id":2,"name":"parent v1-2"}]"#) && plain.header("Content-Profile") == "v1", "\(plain.text)")
        let v1 = try http.request(
            "GET", "/rest/v1/rpc/get_parents_below?id=6&select=id,name,children(id,name)", headers: server.headers(nil, [("Accept-Profile", "v1")]))
        #expect(
            Self.same(
                v1,
                #"[{"id":1,"name":"parent v1-1","children":[{"id":1,"name":"child v1-1"}]},{"id":2,"name":"parent v1-2","children":[{"id":2,"name":"child v1-2"}]}]"#
            ) && v1.header("Content-Profile") == "v1", "\(v1.text)")
        let v2 = try http.request(
            "GET", "/rest/v1/rpc/get_parents_below?id=6&select=id,name,children(id,name)", headers: server.headers(nil, [("Accept-Profile", "v2")]))
        #expect(
            Self.same(v2, #"[{"id":3,"name":"parent v2-3","children":[{"id":1,"name":"child v2-3"}]},{"id":4,"name":"parent v2-4","children":[]}]"#)
                && v2.header("Content-Profile") == "v2", "\(v2.text)")
        let posted = try http.request(
            "POST", "/rest/v1/rpc/get_parents_below?select=id,name", headers: server.headers(nil, [("Content-Profile", "v2")]), body: #"{"id": "6"}"#)
        #expect(Self.same(posted, #"[{"id":3,"name":"parent v2-3"},{"id":4,"name":"parent v2-4"}]"#) && posted.header("Content-Profile") == "v2")
        let text = try http.request("GET", "/rest/v1/rpc/get_plain_text", headers: server.headers(nil, [("Accept-Profile", "v2"), ("Accept", "text/plain")]))
        #expect(text.status == 200 && text.text == "plain" && text.header("Content-Type") == "text/plain; charset=utf-8", "\(text.text)")
        #expect(text.header("Content-Profile") == "v2")
        let special = try http.request(
            "GET", "/rest/v1/rpc/get_special_text", headers: server.headers(nil, [("Accept-Profile", "v2"), ("Accept", "text/special")]))
        #expect(special.status == 200 && special.text == "special" && special.header("Content-Type") == "text/special", "\(special.text)")
        // A function of another schema is not there (PGRST202 names the schema).
        let missing = try http.request("GET", "/rest/v1/rpc/get_plain_text", headers: server.headers(nil, [("Accept-Profile", "v1")]))
        #expect(missing.status == 404 && (missing.jsonObject?["message"] as? String)?.hasPrefix("Could not find the function v1.get_plain_text") == true)
    }

    @Test func openAPIPerSchema() throws {
        let (server, _) = try Self.server()
        let http = server.client()
        func document(_ profile: String?) throws -> TestResponse {
            try http.request("GET", "/rest/v1/", headers: server.headers(server.serviceKey, profile.map { [("Accept-Profile", $0)] } ?? []))
        }
        func definitions(_ response: TestResponse) -> [String: Any] { response.jsonObject?["definitions"] as? [String: Any] ?? [:] }
        for profile in [nil, "v1"] {
            let v1 = try document(profile)
            #expect(v1.status == 200 && v1.header("Content-Profile") == "v1")
            let parents = try #require(definitions(v1)["parents"] as? [String: Any], "\(v1.text.prefix(300))")
            #expect((parents["properties"] as? [String: Any])?.keys.sorted() == ["id", "name"] && parents["required"] as? [String] == ["id"])
            #expect(definitions(v1)["another_table"] == nil && definitions(v1)["user_profiles"] == nil)
        }
        let v2 = try document("v2")
        #expect(v2.header("Content-Profile") == "v2" && definitions(v2)["parents"] != nil)
        let another = try #require(definitions(v2)["another_table"] as? [String: Any])
        #expect((another["properties"] as? [String: Any])?.keys.sorted() == ["another_value", "id"])
        let unknown = try document("unknown")
        #expect(unknown.status == 406 && Self.same(unknown, Self.invalid(Self.spec)))
    }

    /// `public` first (Supabase's setting): the default, and the app's own tables, ownership and
    /// the other schemas beside it.
    @Test func publicStaysTheDefault() throws {
        let (server, _) = try Self.server(["public", "v2"])
        let http = server.client()
        let user = try server.signUp()
        // The ownership rules hold for `public`'s tables, with or without a profile.
        for extra in [[], [("Accept-Profile", "public")]] {
            let own = try http.request("GET", "/rest/v1/user_profiles?select=id", headers: server.headers(user.token, extra))
            #expect(own.status == 200 && own.jsonArray?.compactMap { $0["id"] as? String } == [user.id], "\(own.text)")
            #expect(own.header("Content-Profile") == "public")
        }
        let v2 = try http.request("GET", "/rest/v1/parents?select=id", headers: server.headers(user.token, [("Accept-Profile", "v2")]))
        #expect(Self.same(v2, #"[{"id":3},{"id":4}]"#))
        let other = try http.request("GET", "/rest/v1/parents", headers: server.headers(user.token, [("Accept-Profile", "v1")]))
        #expect(other.status == 406 && Self.same(other, Self.invalid(["public", "v2"], "v1")))
        let notHere = try http.request("GET", "/rest/v1/parents", headers: server.headers(user.token))
        #expect(notHere.status == 404 && notHere.jsonObject?["code"] as? String == "PGRST205")
    }

    /// Only `public` (the default setting): no `Content-Profile` unless a profile names it, other
    /// schemas refused.
    @Test func onlyPublicByDefault() throws {
        let (server, _) = try Self.server(nil)
        let http = server.client()
        let user = try server.signUp()
        let plain = try http.request("GET", "/rest/v1/user_profiles?select=id", headers: server.headers(user.token))
        #expect(plain.status == 200 && plain.header("Content-Profile") == nil)
        let named = try http.request("GET", "/rest/v1/user_profiles?select=id", headers: server.headers(user.token, [("Accept-Profile", "public")]))
        #expect(named.status == 200 && named.header("Content-Profile") == "public")
        let refused = try http.request("GET", "/rest/v1/parents", headers: server.headers(user.token, [("Accept-Profile", "v2")]))
        #expect(refused.status == 406 && Self.same(refused, Self.invalid(["public"], "v2")))
    }

    /// `pgrst.db_schemas` set for the login role in the database: read on `reload config` (and
    /// the caches of the schemas it names loaded), removed again on the next; read at start too.
    @Test func fromTheDatabaseAndReloaded() throws {
        let (server, admin) = try Self.server(nil)
        let http = server.client()
        func v2() throws -> TestResponse {
            try http.request("GET", "/rest/v1/parents?select=id", headers: server.headers(nil, [("Accept-Profile", "v2")]))
        }
        #expect(try v2().status == 406)
        try PostgRESTSettingsTests.setInDatabase(admin, "db_schemas", "public, v2")
        // NOTIFY again until it is heard (the first may go out before the server listens).
        #expect(
            try eventually {
                try admin.execute("NOTIFY pgrst, 'reload config'")
                return Self.same(try v2(), #"[{"id":3},{"id":4}]"#)
            })
        #expect(try v2().header("Content-Profile") == "v2")
        #expect(try http.request("GET", "/rest/v1/parents", headers: server.headers()).jsonObject?["code"] as? String == "PGRST205")

        // A second server on the same database reads it at start.
        let restarted = try TestServer(databaseURL: server.databaseURL)
        let atStart = try restarted.client().request("GET", "/rest/v1/parents?select=id", headers: restarted.headers(nil, [("Accept-Profile", "v2")]))
        #expect(Self.same(atStart, #"[{"id":3},{"id":4}]"#), "\(atStart.text)")

        // The database's setting wins over the environment's; removed, the environment's again.
        try PostgRESTSettingsTests.setInDatabase(admin, "db_schemas", nil)
        #expect(
            try eventually {
                try admin.execute("NOTIFY pgrst, 'reload config'")
                return try v2().status == 406
            })
        #expect(try http.request("GET", "/rest/v1/user_profiles?select=id", headers: server.headers()).status == 200)
    }

    /// A table created in an exposed schema after the start is served after `reload schema`.
    @Test func schemaReloadReadsEveryExposedSchema() throws {
        let (server, admin) = try Self.server()
        let http = server.client()
        try admin.execute("CREATE TABLE v2.later (id int PRIMARY KEY); INSERT INTO v2.later VALUES (7); GRANT SELECT ON v2.later TO anon")
        #expect(
            eventually {
                try? admin.execute("NOTIFY pgrst, 'reload schema'")
                return (try? http.request("GET", "/rest/v1/later", headers: server.headers(nil, [("Accept-Profile", "v2")])).text) == #"[{"id":7}]"#
            })
    }
}
