import Foundation
import Postgres
import TestSupport
import Testing

/// How values are represented, as PostgREST does it, on fixture domains, tables and functions of
/// the test's own (created here, not in migrations/): domain representations (a domain's implicit
/// casts to and from json and text, applied to output, filters and bodies).
@Suite("PostgREST fidelity: representations", .serialized)
struct FidelityRepresentationTests {
    let server: TestServer
    let admin: Connection

    init() throws {
        server = try TestServer()
        admin = try Connection(conninfo: server.databaseURL)
        // PostgREST's own fixtures (test/spec/fixtures/schema.sql): `fx_color` is an integer
        // written `#RRGGBB`, with json and text parsers; `fx_isodate` has no text parser.
        try admin.execute("""
            CREATE DOMAIN public.fx_color AS integer CHECK (VALUE >= 0 AND VALUE <= 16777215);
            CREATE FUNCTION public.fx_color(text) RETURNS public.fx_color LANGUAGE sql IMMUTABLE AS $$
              SELECT (('x' || lpad((CASE WHEN substring($1, 1, 1) = '#' THEN substring($1, 2) ELSE $1 END), 8, '0'))::bit(32)::int)::public.fx_color $$;
            CREATE FUNCTION public.fx_color(json) RETURNS public.fx_color LANGUAGE sql IMMUTABLE AS $$ SELECT public.fx_color($1 #>> '{}') $$;
            CREATE FUNCTION public.fx_color_json(public.fx_color) RETURNS json LANGUAGE sql IMMUTABLE AS $$
              SELECT CASE WHEN $1 IS NULL THEN to_json(''::text) ELSE to_json('#' || lpad(upper(to_hex($1)), 6, '0')) END $$;
            CREATE CAST (public.fx_color AS json) WITH FUNCTION public.fx_color_json(public.fx_color) AS IMPLICIT;
            CREATE CAST (json AS public.fx_color) WITH FUNCTION public.fx_color(json) AS IMPLICIT;
            CREATE CAST (text AS public.fx_color) WITH FUNCTION public.fx_color(text) AS IMPLICIT;

            CREATE DOMAIN public.fx_isodate AS timestamp with time zone;
            CREATE FUNCTION public.fx_isodate(json) RETURNS public.fx_isodate LANGUAGE sql IMMUTABLE AS $$
              SELECT (replace($1 #>> '{}', 'Z', '+00:00')::timestamptz)::public.fx_isodate $$;
            CREATE FUNCTION public.fx_isodate_json(public.fx_isodate) RETURNS json LANGUAGE sql IMMUTABLE AS $$
              SELECT to_json(replace(to_json($1::timestamptz AT TIME ZONE 'UTC')#>>'{}', '+00:00', '') || 'Z') $$;
            CREATE CAST (public.fx_isodate AS json) WITH FUNCTION public.fx_isodate_json(public.fx_isodate) AS IMPLICIT;
            CREATE CAST (json AS public.fx_isodate) WITH FUNCTION public.fx_isodate(json) AS IMPLICIT;

            CREATE TABLE public.fx_todos (id bigint PRIMARY KEY, name text, label_color public.fx_color DEFAULT 0,
                                          due_at public.fx_isodate DEFAULT '2018-01-01'::date);
            INSERT INTO public.fx_todos VALUES (1, 'Report', 0, '2018-01-02'), (2, 'Essay', 256, '2018-01-03'),
                                               (3, 'Algebra', 123456, '2018-01-01 14:12:34.123456+00'), (4, 'Opus Magnum', NULL, NULL);
            CREATE TABLE public.fx_todo_pairs (id bigint PRIMARY KEY, first_id bigint REFERENCES public.fx_todos(id),
                                               second_id bigint REFERENCES public.fx_todos(id), name text);
            INSERT INTO public.fx_todo_pairs VALUES (1, 2, 3, 'school related'), (2, 1, 3, 'do these first');
            CREATE FUNCTION public.fx_todos_before(before bigint) RETURNS SETOF public.fx_todos LANGUAGE sql STABLE AS $$
              SELECT * FROM public.fx_todos WHERE id < before ORDER BY id $$;
            GRANT ALL ON public.fx_todos, public.fx_todo_pairs TO service_role;
            """)
        // The server may not listen for reloads yet when the first NOTIFY goes out (it starts
        // listening just after it serves): ask again until the schema cache has the fixtures.
        let http = server.client()
        let headers = server.headers(server.serviceKey)
        #expect(eventually {
            try? admin.execute("NOTIFY pgrst, 'reload schema'")
            return (try? http.request("GET", "/rest/v1/fx_todos?select=id&limit=1", headers: headers).status) == 200
        })
    }

    func get(_ target: String, _ extra: [(String, String)] = []) throws -> TestResponse {
        try server.client().request("GET", target, headers: server.headers(server.serviceKey, extra))
    }

    func send(_ method: String, _ target: String, _ body: String, _ extra: [(String, String)] = []) throws -> TestResponse {
        try server.client().request(method, target, headers: server.headers(server.serviceKey, extra), body: body)
    }

    /// The body's JSON re-serialised compactly with sorted keys.
    func compact(_ response: TestResponse) -> String {
        guard let value = response.json, let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) else {
            return response.text
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// A value as stored, read past the API.
    func stored(_ sql: String) throws -> String? {
        try admin.query(SQL(unsafeSQL: sql, binds: [])).scalar
    }

    // MARK: domain representations

    @Test func selectedColumnsAreWrittenThroughTheDomainsJSONCast() throws {
        #expect(compact(try get("/rest/v1/fx_todos?select=id,label_color&id=lt.4&order=id")) == ##"[{"id":1,"label_color":"#000000"},{"id":2,"label_color":"#000100"},{"id":3,"label_color":"#01E240"}]"##)
        #expect(compact(try get("/rest/v1/fx_todos?select=id,label_color,due_at&id=lt.3&order=id")) == ##"[{"due_at":"2018-01-02T00:00:00Z","id":1,"label_color":"#000000"},{"due_at":"2018-01-03T00:00:00Z","id":2,"label_color":"#000100"}]"##)
        // Renamed, and a cast on top of the representation.
        #expect(compact(try get("/rest/v1/fx_todos?select=id,clr:label_color&id=eq.2")) == ##"[{"clr":"#000100","id":2}]"##)
        #expect(compact(try get("/rest/v1/fx_todos?select=id,clr:label_color::text&id=eq.2")) == ##"[{"clr":"\"#000100\"","id":2}]"##)
        // A null is whatever the function makes of it.
        #expect(compact(try get("/rest/v1/fx_todos?select=id,label_color,due_at&id=eq.4")) == ##"[{"due_at":null,"id":4,"label_color":""}]"##)
        // `*`, explicit or implied, expands to every column, each through its representation.
        let star = ##"[{"due_at":"2018-01-03T00:00:00Z","id":2,"label_color":"#000100","name":"Essay"}]"##
        #expect(compact(try get("/rest/v1/fx_todos?select=*&id=eq.2")) == star)
        #expect(compact(try get("/rest/v1/fx_todos?id=eq.2")) == star)
        let csv = try get("/rest/v1/fx_todos?id=eq.2", [("Accept", "text/csv")])
        #expect(csv.text == "id,name,label_color,due_at\n2,Essay,\"\"\"#000100\"\"\",\"\"\"2018-01-03T00:00:00Z\"\"\"", "\(csv.text)")
        // Through an embed, a spread and a function's rows of the table's type.
        let embedded = try get("/rest/v1/fx_todo_pairs?select=id,first:fx_todos!fx_todo_pairs_first_id_fkey(label_color,due_at)&order=id")
        #expect(compact(embedded) == ##"[{"first":{"due_at":"2018-01-03T00:00:00Z","label_color":"#000100"},"id":1},{"first":{"due_at":"2018-01-02T00:00:00Z","label_color":"#000000"},"id":2}]"##, "\(embedded.text)")
        let starEmbed = try get("/rest/v1/fx_todo_pairs?select=id,second:fx_todos!fx_todo_pairs_second_id_fkey(*)&id=eq.1")
        #expect(compact(starEmbed) == ##"[{"id":1,"second":{"due_at":"2018-01-01T14:12:34.123456Z","id":3,"label_color":"#01E240","name":"Algebra"}}]"##, "\(starEmbed.text)")
        let spread = try get("/rest/v1/fx_todo_pairs?select=id,...fx_todos!fx_todo_pairs_first_id_fkey(label_color)&id=eq.1")
        #expect(compact(spread) == ##"[{"id":1,"label_color":"#000100"}]"##, "\(spread.text)")
        #expect(compact(try get("/rest/v1/rpc/fx_todos_before?before=3")) == ##"[{"due_at":"2018-01-02T00:00:00Z","id":1,"label_color":"#000000","name":"Report"},{"due_at":"2018-01-03T00:00:00Z","id":2,"label_color":"#000100","name":"Essay"}]"##)
        #expect(compact(try get("/rest/v1/rpc/fx_todos_before?before=3&select=label_color&label_color=eq.000100")) == ##"[{"label_color":"#000100"}]"##)
    }

    @Test func filterValuesAreReadThroughTheDomainsTextCast() throws {
        #expect(compact(try get("/rest/v1/fx_todos?select=id&label_color=eq.000100")) == ##"[{"id":2}]"##)
        #expect(compact(try get("/rest/v1/fx_todos?select=id&label_color=eq.%23000100")) == ##"[{"id":2}]"##)
        #expect(compact(try get("/rest/v1/fx_todos?select=id&label_color=gt.000100&order=id")) == ##"[{"id":3}]"##)
        #expect(compact(try get("/rest/v1/fx_todos?select=id&label_color=in.(000100,01E240)&order=id")) == ##"[{"id":2},{"id":3}]"##)
        #expect(compact(try get("/rest/v1/fx_todos?select=id&label_color=not.in.(000000,01E240)&order=id")) == ##"[{"id":2}]"##)
        #expect(compact(try get("/rest/v1/fx_todos?select=id&label_color=eq(any).{000100,01E240}&order=id")) == ##"[{"id":2},{"id":3}]"##)
        #expect(compact(try get("/rest/v1/fx_todos?select=id&or=(label_color.eq.01E240,id.eq.1)&order=id")) == ##"[{"id":1},{"id":3}]"##)
        // On an embed's filter.
        let embedded = try get("/rest/v1/fx_todo_pairs?select=id,fx_todos!fx_todo_pairs_first_id_fkey(label_color)&fx_todos.label_color=neq.000100&order=id")
        #expect(compact(embedded) == ##"[{"fx_todos":null,"id":1},{"fx_todos":{"label_color":"#000000"},"id":2}]"##, "\(embedded.text)")
        // No text cast: the value is the base type's text (the json parser is not tried).
        let noParser = try get("/rest/v1/fx_todos?select=id&due_at=eq.Z")
        #expect(noParser.status == 400 && noParser.jsonObject?["code"] as? String == "22007", "\(noParser.text)")
        #expect(noParser.jsonObject?["message"] as? String == ##"invalid input syntax for type timestamp with time zone: "Z""##)
        #expect(compact(try get("/rest/v1/fx_todos?select=id&due_at=eq.2018-01-03T00:00:00%2B00:00")) == ##"[{"id":2}]"##)
        // Patterns are not parsed: PostgreSQL has no ILIKE for the domain (PostgREST's answer).
        let pattern = try get("/rest/v1/fx_todos?select=id&label_color=ilike.*100")
        #expect(pattern.status == 404 && pattern.jsonObject?["code"] as? String == "42883", "\(pattern.status) \(pattern.text)")
    }

    @Test func bodyValuesAreReadThroughTheDomainsJSONCast() throws {
        let inserted = try send("POST", "/rest/v1/fx_todos?select=id,label_color,due_at", ##"{"id":5,"name":"party","label_color":"#001100","due_at":"2018-01-03T11:00:00Z"}"##,
                                [("Prefer", "return=representation")])
        #expect(inserted.status == 201 && compact(inserted) == ##"[{"due_at":"2018-01-03T11:00:00Z","id":5,"label_color":"#001100"}]"##, "\(inserted.text)")
        #expect(try stored("SELECT label_color::int::text FROM public.fx_todos WHERE id = 5") == "4352")
        // Several rows, `columns=` (a key it leaves out is not parsed), `missing=default`.
        let bulk = try send("POST", "/rest/v1/fx_todos?columns=id,label_color&select=id,name,label_color,due_at",
                            ##"[{"id":6,"label_color":"#000001","due_at":"not parsed"},{"id":7,"label_color":"FF0000","name":"ignored"}]"##,
                            [("Prefer", "return=representation")])
        #expect(compact(bulk) == ##"[{"due_at":"2018-01-01T00:00:00Z","id":6,"label_color":"#000001","name":null},{"due_at":"2018-01-01T00:00:00Z","id":7,"label_color":"#FF0000","name":null}]"##, "\(bulk.text)")
        let defaults = try send("POST", "/rest/v1/fx_todos?columns=id,label_color&select=id,label_color", ##"{"id":8}"##,
                                [("Prefer", "return=representation,missing=default")])
        #expect(compact(defaults) == ##"[{"id":8,"label_color":"#000000"}]"##, "\(defaults.text)")
        // PATCH, and an upsert's update.
        let patched = try send("PATCH", "/rest/v1/fx_todos?id=eq.5&select=label_color", ##"{"label_color":"#00000A"}"##, [("Prefer", "return=representation")])
        #expect(compact(patched) == ##"[{"label_color":"#00000A"}]"##, "\(patched.text)")
        #expect(try stored("SELECT label_color::int::text FROM public.fx_todos WHERE id = 5") == "10")
        let upserted = try send("POST", "/rest/v1/fx_todos?select=id,label_color", ##"{"id":5,"label_color":"#0000FF"}"##,
                                [("Prefer", "return=representation,resolution=merge-duplicates")])
        #expect(compact(upserted) == ##"[{"id":5,"label_color":"#0000FF"}]"##, "\(upserted.text)")
        // A value the parser refuses is the database's error.
        let invalid = try send("POST", "/rest/v1/fx_todos", ##"{"id":9,"label_color":"#GGGGGG"}"##)
        #expect(invalid.status == 400, "\(invalid.status) \(invalid.text)")
        _ = try send("DELETE", "/rest/v1/fx_todos?id=gte.5", "")
    }
}
