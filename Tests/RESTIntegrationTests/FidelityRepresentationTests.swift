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
        // PostgREST's own fixtures (test/spec/fixtures/schema.sql): `fx_color` is an integer
        // written `#RRGGBB`, with json and text parsers; `fx_isodate` has no text parser.
        admin = try Connection(conninfo: server.databaseURL)
        try admin.execute(
            """
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
        // Media type handlers (PostgREST's CustomMediaSpec fixtures): domains named for media
        // types, functions returning them, aggregates over a table's rows or any rows.
        let server = self.server
        try server.installFixtures(
            #"""
            CREATE DOMAIN public."text/plain" AS text;
            CREATE DOMAIN public."text/xml" AS xml;
            CREATE DOMAIN public."application/octet-stream" AS bytea;
            CREATE DOMAIN public."*/*" AS bytea;
            CREATE DOMAIN public."text/tab-separated-values" AS text;
            CREATE DOMAIN public."text/x-count" AS text;
            CREATE FUNCTION public.fx_welcome() RETURNS "text/plain" LANGUAGE sql AS $$ SELECT 'Welcome to PostgREST'::"text/plain" $$;
            CREATE FUNCTION public.fx_welcome_twice() RETURNS SETOF "text/plain" LANGUAGE sql AS $$ SELECT 'Welcome' UNION ALL SELECT 'twice' $$;
            CREATE FUNCTION public.fx_xml() RETURNS "text/xml" LANGUAGE sql AS $$ SELECT '<my-xml-tag/>'::"text/xml" $$;
            CREATE FUNCTION public.fx_bytes() RETURNS "application/octet-stream" LANGUAGE sql AS $$ SELECT '\x00ff410a'::bytea::"application/octet-stream" $$;
            CREATE FUNCTION public.fx_any() RETURNS "*/*" LANGUAGE sql AS $$ SELECT 'any'::bytea::"*/*" $$;
            CREATE FUNCTION public.fx_some_mt() RETURNS "*/*" LANGUAGE plpgsql AS $$
            DECLARE accept text := current_setting('request.headers', true)::json->>'accept';
            BEGIN
              CASE accept
                WHEN 'app/chico' THEN
                  PERFORM set_config('response.headers', json_build_array(json_build_object('Content-Type', accept))::text, true);
                  RETURN 'chico'::bytea;
                WHEN '*/*' THEN
                  PERFORM set_config('response.headers', json_build_array(json_build_object('Content-Type', 'app/groucho'))::text, true);
                  RETURN 'groucho'::bytea;
                ELSE RAISE SQLSTATE 'PT406' USING MESSAGE = 'Not Acceptable';
              END CASE;
            END $$;

            CREATE TABLE public.fx_projects (id int PRIMARY KEY, name text, client_id int);
            INSERT INTO public.fx_projects VALUES (1, 'Windows 7', 1), (2, 'Windows 10', 1), (3, 'IOS', 2);
            CREATE FUNCTION public.fx_tsv_trans(state text, next public.fx_projects) RETURNS "text/tab-separated-values" LANGUAGE sql AS $$
              SELECT (state || next.id::text || E'\t' || next.name || E'\t' || coalesce(next.client_id::text, '') || E'\n')::"text/tab-separated-values" $$;
            CREATE FUNCTION public.fx_tsv_final(data "text/tab-separated-values") RETURNS "text/tab-separated-values" LANGUAGE sql AS $$
              SELECT (E'id\tname\tclient_id\n' || data)::"text/tab-separated-values" $$;
            CREATE AGGREGATE public.fx_tsv_agg(public.fx_projects) (initcond = '', stype = "text/tab-separated-values", sfunc = public.fx_tsv_trans, finalfunc = public.fx_tsv_final);

            CREATE TABLE public.fx_notes (id int PRIMARY KEY, line text);
            INSERT INTO public.fx_notes VALUES (1, 'first'), (2, 'second'), (3, 'third');
            CREATE FUNCTION public.fx_lines_trans(state "text/plain", next public.fx_notes) RETURNS "text/plain" LANGUAGE sql AS $$
              SELECT (state || next.line || E'\n')::"text/plain" $$;
            CREATE AGGREGATE public.fx_lines_agg(public.fx_notes) (initcond = '', stype = "text/plain", sfunc = public.fx_lines_trans);
            CREATE FUNCTION public.fx_notes_from(first int) RETURNS SETOF public.fx_notes LANGUAGE sql STABLE AS $$ SELECT * FROM public.fx_notes WHERE id >= first ORDER BY id $$;

            CREATE TABLE public.fx_numbers AS SELECT x::int AS val FROM generate_series(1, 10) x;
            CREATE FUNCTION public.fx_some_trans(state "*/*", next public.fx_numbers) RETURNS "*/*" LANGUAGE sql AS $$
              SELECT (state || E'\n'::bytea || next.val::text::bytea)::"*/*" $$;
            CREATE FUNCTION public.fx_some_final(data "*/*") RETURNS "*/*" LANGUAGE plpgsql AS $$
            DECLARE accept text := current_setting('request.headers', true)::json->>'accept';
            BEGIN
              IF accept = 'magic/number' THEN
                PERFORM set_config('response.headers', json_build_array(json_build_object('Content-Type', accept))::text, true);
                RETURN ('magic'::bytea || data)::"*/*";
              END IF;
              RETURN ('anything'::bytea || data)::"*/*";
            END $$;
            CREATE AGGREGATE public.fx_some_agg(public.fx_numbers) (initcond = '', stype = "*/*", sfunc = public.fx_some_trans, finalfunc = public.fx_some_final);

            CREATE FUNCTION public.fx_count_trans(state "text/x-count", next anyelement) RETURNS "text/x-count" LANGUAGE sql AS $$
              SELECT ((coalesce(nullif(state, ''), '0')::int + 1)::text)::"text/x-count" $$;
            CREATE AGGREGATE public.fx_count_agg(anyelement) (initcond = '', stype = "text/x-count", sfunc = public.fx_count_trans);
            CREATE DOMAIN public."application/json" AS json;
            CREATE TABLE public.fx_overridden (id int);
            INSERT INTO public.fx_overridden VALUES (1);
            CREATE FUNCTION public.fx_ov_trans(state "application/json", next public.fx_overridden) RETURNS "application/json" LANGUAGE sql AS $$ SELECT state $$;
            CREATE AGGREGATE public.fx_ov_agg(public.fx_overridden) (initcond = '{"overridden": "true"}', stype = "application/json", sfunc = public.fx_ov_trans);
            GRANT ALL ON public.fx_projects, public.fx_notes, public.fx_numbers, public.fx_overridden TO service_role;
            """#
        ) {
            guard try server.get("/rest/v1/fx_todos?select=id&limit=1", token: server.serviceKey).status == 200 else { return false }
            return try server.get("/rest/v1/rpc/fx_welcome", token: server.serviceKey, headers: [("Accept", "text/plain")]).status == 200
        }
    }

    /// A value as stored, read past the API.
    func stored(_ sql: String) throws -> String? {
        try admin.query(SQL(unsafeSQL: sql)).scalar
    }

    // MARK: domain representations

    @Test func selectedColumnsAreWrittenThroughTheDomainsJSONCast() throws {
        #expect(
            try server.service.get("/rest/v1/fx_todos?select=id,label_color&id=lt.4&order=id").compactJSON
                == ##"[{"id":1,"label_color":"#000000"},{"id":2,"label_color":"#000100"},{"id":3,"label_color":"#01E240"}]"##)
        #expect(
            try server.service.get("/rest/v1/fx_todos?select=id,label_color,due_at&id=lt.3&order=id").compactJSON
                == ##"[{"due_at":"2018-01-02T00:00:00Z","id":1,"label_color":"#000000"},{"due_at":"2018-01-03T00:00:00Z","id":2,"label_color":"#000100"}]"##)
        // Renamed, and a cast on top of the representation.
        #expect(try server.service.get("/rest/v1/fx_todos?select=id,clr:label_color&id=eq.2").compactJSON == ##"[{"clr":"#000100","id":2}]"##)
        #expect(try server.service.get("/rest/v1/fx_todos?select=id,clr:label_color::text&id=eq.2").compactJSON == ##"[{"clr":"\"#000100\"","id":2}]"##)
        // A null is whatever the function makes of it.
        #expect(try server.service.get("/rest/v1/fx_todos?select=id,label_color,due_at&id=eq.4").compactJSON == ##"[{"due_at":null,"id":4,"label_color":""}]"##)
        // `*`, explicit or implied, expands to every column, each through its representation.
        let star = ##"[{"due_at":"2018-01-03T00:00:00Z","id":2,"label_color":"#000100","name":"Essay"}]"##
        #expect(try server.service.get("/rest/v1/fx_todos?select=*&id=eq.2").compactJSON == star)
        #expect(try server.service.get("/rest/v1/fx_todos?id=eq.2").compactJSON == star)
        let csv = try server.service.get("/rest/v1/fx_todos?id=eq.2", headers: [("Accept", "text/csv")])
        #expect(csv.text == "id,name,label_color,due_at\n2,Essay,\"\"\"#000100\"\"\",\"\"\"2018-01-03T00:00:00Z\"\"\"", "\(csv.text)")
        // Through an embed, a spread and a function's rows of the table's type.
        let embedded = try server.service.get("/rest/v1/fx_todo_pairs?select=id,first:fx_todos!fx_todo_pairs_first_id_fkey(label_color,due_at)&order=id")
        #expect(
            embedded.compactJSON
                == ##"[{"first":{"due_at":"2018-01-03T00:00:00Z","label_color":"#000100"},"id":1},{"first":{"due_at":"2018-01-02T00:00:00Z","label_color":"#000000"},"id":2}]"##,
            "\(embedded.text)")
        let starEmbed = try server.service.get("/rest/v1/fx_todo_pairs?select=id,second:fx_todos!fx_todo_pairs_second_id_fkey(*)&id=eq.1")
        #expect(
            starEmbed.compactJSON == ##"[{"id":1,"second":{"due_at":"2018-01-01T14:12:34.123456Z","id":3,"label_color":"#01E240","name":"Algebra"}}]"##,
            "\(starEmbed.text)")
        let spread = try server.service.get("/rest/v1/fx_todo_pairs?select=id,...fx_todos!fx_todo_pairs_first_id_fkey(label_color)&id=eq.1")
        #expect(spread.compactJSON == ##"[{"id":1,"label_color":"#000100"}]"##, "\(spread.text)")
        #expect(
            try server.service.get("/rest/v1/rpc/fx_todos_before?before=3").compactJSON
                == ##"[{"due_at":"2018-01-02T00:00:00Z","id":1,"label_color":"#000000","name":"Report"},{"due_at":"2018-01-03T00:00:00Z","id":2,"label_color":"#000100","name":"Essay"}]"##
        )
        #expect(
            try server.service.get("/rest/v1/rpc/fx_todos_before?before=3&select=label_color&label_color=eq.000100").compactJSON
                == ##"[{"label_color":"#000100"}]"##)
    }

    @Test func filterValuesAreReadThroughTheDomainsTextCast() throws {
        #expect(try server.service.get("/rest/v1/fx_todos?select=id&label_color=eq.000100").compactJSON == ##"[{"id":2}]"##)
        #expect(try server.service.get("/rest/v1/fx_todos?select=id&label_color=eq.%23000100").compactJSON == ##"[{"id":2}]"##)
        #expect(try server.service.get("/rest/v1/fx_todos?select=id&label_color=gt.000100&order=id").compactJSON == ##"[{"id":3}]"##)
        #expect(try server.service.get("/rest/v1/fx_todos?select=id&label_color=in.(000100,01E240)&order=id").compactJSON == ##"[{"id":2},{"id":3}]"##)
        #expect(try server.service.get("/rest/v1/fx_todos?select=id&label_color=not.in.(000000,01E240)&order=id").compactJSON == ##"[{"id":2}]"##)
        #expect(try server.service.get("/rest/v1/fx_todos?select=id&label_color=eq(any).{000100,01E240}&order=id").compactJSON == ##"[{"id":2},{"id":3}]"##)
        #expect(try server.service.get("/rest/v1/fx_todos?select=id&or=(label_color.eq.01E240,id.eq.1)&order=id").compactJSON == ##"[{"id":1},{"id":3}]"##)
        // On an embed's filter.
        let embedded = try server.service.get(
            "/rest/v1/fx_todo_pairs?select=id,fx_todos!fx_todo_pairs_first_id_fkey(label_color)&fx_todos.label_color=neq.000100&order=id")
        #expect(embedded.compactJSON == ##"[{"fx_todos":null,"id":1},{"fx_todos":{"label_color":"#000000"},"id":2}]"##, "\(embedded.text)")
        // No text cast: the value is the base type's text (the json parser is not tried).
        let noParser = try server.service.get("/rest/v1/fx_todos?select=id&due_at=eq.Z")
        #expect(noParser.status == 400 && noParser.jsonObject?["code"] as? String == "22007", "\(noParser.text)")
        #expect(noParser.jsonObject?["message"] as? String == ##"invalid input syntax for type timestamp with time zone: "Z""##)
        #expect(try server.service.get("/rest/v1/fx_todos?select=id&due_at=eq.2018-01-03T00:00:00%2B00:00").compactJSON == ##"[{"id":2}]"##)
        // Patterns are not parsed: PostgreSQL has no ILIKE for the domain (PostgREST's answer).
        let pattern = try server.service.get("/rest/v1/fx_todos?select=id&label_color=ilike.*100")
        #expect(pattern.status == 404 && pattern.jsonObject?["code"] as? String == "42883", "\(pattern.status) \(pattern.text)")
    }

    @Test func bodyValuesAreReadThroughTheDomainsJSONCast() throws {
        let inserted = try server.service.request(
            "POST", "/rest/v1/fx_todos?select=id,label_color,due_at", headers: [("Prefer", "return=representation")],
            body: ##"{"id":5,"name":"party","label_color":"#001100","due_at":"2018-01-03T11:00:00Z"}"##)
        #expect(inserted.status == 201 && inserted.compactJSON == ##"[{"due_at":"2018-01-03T11:00:00Z","id":5,"label_color":"#001100"}]"##, "\(inserted.text)")
        #expect(try stored("SELECT label_color::int::text FROM public.fx_todos WHERE id = 5") == "4352")
        // Several rows, `columns=` (a key it leaves out is not parsed), `missing=default`.
        let bulk = try server.service.request(
            "POST", "/rest/v1/fx_todos?columns=id,label_color&select=id,name,label_color,due_at", headers: [("Prefer", "return=representation")],
            body: ##"[{"id":6,"label_color":"#000001","due_at":"not parsed"},{"id":7,"label_color":"FF0000","name":"ignored"}]"##)
        #expect(
            bulk.compactJSON
                == ##"[{"due_at":"2018-01-01T00:00:00Z","id":6,"label_color":"#000001","name":null},{"due_at":"2018-01-01T00:00:00Z","id":7,"label_color":"#FF0000","name":null}]"##,
            "\(bulk.text)")
        let defaults = try server.service.request(
            "POST", "/rest/v1/fx_todos?columns=id,label_color&select=id,label_color", headers: [("Prefer", "return=representation,missing=default")],
            body: ##"{"id":8}"##)
        #expect(defaults.compactJSON == ##"[{"id":8,"label_color":"#000000"}]"##, "\(defaults.text)")
        // PATCH, and an upsert's update.
        let patched = try server.service.request(
            "PATCH", "/rest/v1/fx_todos?id=eq.5&select=label_color", headers: [("Prefer", "return=representation")], body: ##"{"label_color":"#00000A"}"##)
        #expect(patched.compactJSON == ##"[{"label_color":"#00000A"}]"##, "\(patched.text)")
        #expect(try stored("SELECT label_color::int::text FROM public.fx_todos WHERE id = 5") == "10")
        let upserted = try server.service.request(
            "POST", "/rest/v1/fx_todos?select=id,label_color", headers: [("Prefer", "return=representation,resolution=merge-duplicates")],
            body: ##"{"id":5,"label_color":"#0000FF"}"##)
        #expect(upserted.compactJSON == ##"[{"id":5,"label_color":"#0000FF"}]"##, "\(upserted.text)")
        // A value the parser refuses is the database's error.
        let invalid = try server.service.request("POST", "/rest/v1/fx_todos", body: ##"{"id":9,"label_color":"#GGGGGG"}"##)
        #expect(invalid.status == 400, "\(invalid.status) \(invalid.text)")
        _ = try server.service.request("DELETE", "/rest/v1/fx_todos?id=gte.5", body: "")
    }

    // MARK: media type handlers

    @Test func functionsReturningAMediaTypesDomainAnswerItRaw() throws {
        let plain = try server.service.get("/rest/v1/rpc/fx_welcome", headers: [("Accept", "text/plain")])
        #expect(plain.status == 200 && plain.text == "Welcome to PostgREST", "\(plain.status) \(plain.text)")
        #expect(plain.header("Content-Type") == "text/plain; charset=utf-8")
        // POST too; and JSON when JSON is asked for (the domain is only for its own media type).
        let posted = try server.service.request("POST", "/rest/v1/rpc/fx_welcome", headers: [("Accept", "text/plain")], body: "{}")
        #expect(posted.text == "Welcome to PostgREST" && posted.header("Content-Type") == "text/plain; charset=utf-8")
        let json = try server.service.get("/rest/v1/rpc/fx_welcome")
        #expect(json.text == ##""Welcome to PostgREST""## && json.header("Content-Type") == "application/json; charset=utf-8", "\(json.text)")
        let xml = try server.service.get("/rest/v1/rpc/fx_xml", headers: [("Accept", "text/xml")])
        #expect(xml.text == "<my-xml-tag/>" && xml.header("Content-Type") == "text/xml; charset=utf-8", "\(xml.text)")
        let bytes = try server.service.get("/rest/v1/rpc/fx_bytes", headers: [("Accept", "application/octet-stream")])
        #expect(bytes.body == [0x00, 0xFF, 0x41, 0x0A] && bytes.header("Content-Type") == "application/octet-stream", "\(bytes.body)")
        // `"*/*"`: any Accept, answered as application/octet-stream.
        for accept in ["*/*", "app/bingo", "application/json"] {
            let any = try server.service.get("/rest/v1/rpc/fx_any", headers: [("Accept", accept)])
            #expect(any.text == "any" && any.header("Content-Type") == "application/octet-stream", "\(accept): \(any.text)")
        }
        // The function may name the type itself (response.headers), or refuse (PT406).
        let chosen = try server.service.get("/rest/v1/rpc/fx_some_mt", headers: [("Accept", "app/chico")])
        #expect(chosen.text == "chico" && chosen.header("Content-Type") == "app/chico", "\(chosen.text)")
        let groucho = try server.service.get("/rest/v1/rpc/fx_some_mt", headers: [("Accept", "*/*")])
        #expect(groucho.text == "groucho" && groucho.header("Content-Type") == "app/groucho")
        #expect(try server.service.get("/rest/v1/rpc/fx_some_mt", headers: [("Accept", "text/csv")]).status == 406)
    }

    @Test func withoutAHandlerTheMediaTypeIs406PGRST107() throws {
        let other = try server.service.get("/rest/v1/rpc/fx_welcome", headers: [("Accept", "text/xml")])
        #expect(other.status == 406)
        #expect(other.text == ##"{"code":"PGRST107","details":null,"hint":null,"message":"None of these media types are available: text/xml"}"##)
        // A set of the domain's values has no handler (PostgREST's: only single values).
        #expect(try server.service.get("/rest/v1/rpc/fx_welcome_twice", headers: [("Accept", "text/plain")]).status == 406)
        #expect(try server.service.get("/rest/v1/fx_projects", headers: [("Accept", "text/plain")]).status == 406)
        let undefined = try server.service.get("/rest/v1/fx_notes", headers: [("Accept", "undefined")])
        #expect(undefined.status == 406 && undefined.jsonObject?["message"] as? String == "None of these media types are available: undefined")
        // A table's own handler takes its whole rows: any other select is 406.
        #expect(try server.service.get("/rest/v1/fx_projects?select=id", headers: [("Accept", "text/tab-separated-values")]).status == 406)
        #expect(try server.service.request("PATCH", "/rest/v1/fx_projects?id=eq.0", headers: [("Accept", "text/plain")], body: #"{"name":"x"}"#).status == 406)
    }

    @Test func aggregatesAnswerATablesRowsInTheirMediaType() throws {
        let tsv = try server.service.get("/rest/v1/fx_projects?id=in.(1,2)&order=id", headers: [("Accept", "text/tab-separated-values")])
        #expect(tsv.status == 200 && tsv.text == "id\tname\tclient_id\n1\tWindows 7\t1\n2\tWindows 10\t1\n", "\(tsv.status) \(tsv.text)")
        #expect(tsv.header("Content-Type") == "text/tab-separated-values" && tsv.header("Content-Range") == "0-1/*")
        let plain = try server.service.get("/rest/v1/fx_notes?order=id", headers: [("Accept", "text/plain")])
        #expect(plain.text == "first\nsecond\nthird\n" && plain.header("Content-Type") == "text/plain; charset=utf-8", "\(plain.text)")
        let limited = try server.service.get("/rest/v1/fx_notes?order=id.desc&limit=2&select=*", headers: [("Accept", "text/plain")])
        #expect(limited.text == "third\nsecond\n", "\(limited.text)")
        // A function's rows of the table's type, through the table's handler.
        let rows = try server.service.get("/rest/v1/rpc/fx_notes_from?first=2", headers: [("Accept", "text/plain")])
        #expect(rows.text == "second\nthird\n" && rows.header("Content-Type") == "text/plain; charset=utf-8", "\(rows.text)")
        // Preferred in Accept's order, JSON when it comes first.
        #expect(
            try server.service.get("/rest/v1/fx_notes?id=eq.1", headers: [("Accept", "application/json, text/plain")]).text == ##"[{"id":1,"line":"first"}]"##)
        #expect(try server.service.get("/rest/v1/fx_notes?id=eq.1", headers: [("Accept", "text/html, text/plain, application/json")]).text == "first\n")
        // By `q`, then the more specific (http-types' order, as PostgREST).
        #expect(
            try server.service.get("/rest/v1/fx_notes?id=eq.1", headers: [("Accept", "text/plain;q=0.5, application/json")]).text
                == ##"[{"id":1,"line":"first"}]"##)
        #expect(try server.service.get("/rest/v1/fx_notes?id=eq.1", headers: [("Accept", "*/*, text/plain")]).text == "first\n")
        // A table's own `application/json` handler overrides the built-in one, for it only.
        let overridden = try server.service.get("/rest/v1/fx_overridden", headers: [("Accept", "application/json")])
        #expect(overridden.text == ##"{"overridden": "true"}"## && overridden.header("Content-Type") == "application/json; charset=utf-8", "\(overridden.text)")
        #expect(try server.service.get("/rest/v1/fx_overridden?select=id", headers: [("Accept", "application/json")]).text == ##"[{"id":1}]"##)
        // The vendored types are never overridden.
        let object = try server.service.get("/rest/v1/fx_notes?id=eq.1", headers: [("Accept", "application/vnd.pgrst.object+json")])
        #expect(object.text == ##"{"id":1,"line":"first"}"##)
        // A `"*/*"` handler answers every Accept; its final function chooses the type.
        let any = try server.service.get("/rest/v1/fx_numbers?val=eq.1", headers: [("Accept", "*/*")])
        #expect(any.text == "anything\n1" && any.header("Content-Type") == "application/octet-stream", "\(any.text)")
        let magic = try server.service.get("/rest/v1/fx_numbers?val=eq.2", headers: [("Accept", "magic/number")])
        #expect(magic.text == "magic\n2" && magic.header("Content-Type") == "magic/number", "\(magic.text)")
        // An aggregate over anyelement serves any table's rows.
        let counted = try server.service.get("/rest/v1/fx_projects?client_id=eq.1", headers: [("Accept", "text/x-count")])
        #expect(counted.text == "2" && counted.header("Content-Type") == "text/x-count", "\(counted.text)")
        let countedRows = try server.service.get("/rest/v1/fx_todos?select=id", headers: [("Accept", "text/x-count")])
        #expect(countedRows.text == "4", "\(countedRows.text)")
    }

    @Test func aWritesRepresentationGoesThroughTheTablesHandler() throws {
        let inserted = try server.service.request(
            "POST", "/rest/v1/fx_notes", headers: [("Accept", "text/plain"), ("Prefer", "return=representation")],
            body: #"[{"id":10,"line":"tenth"},{"id":11,"line":"eleventh"}]"#)
        #expect(inserted.status == 201 && inserted.text == "tenth\neleventh\n", "\(inserted.status) \(inserted.text)")
        #expect(inserted.header("Content-Type") == "text/plain; charset=utf-8")
        let patched = try server.service.request(
            "PATCH", "/rest/v1/fx_notes?id=eq.10", headers: [("Accept", "text/plain"), ("Prefer", "return=representation")], body: #"{"line":"TENTH"}"#)
        #expect(patched.status == 200 && patched.text == "TENTH\n", "\(patched.status) \(patched.text)")
        // Without a representation there is no body to hand it: the write is answered as usual.
        let minimal = try server.service.request("PATCH", "/rest/v1/fx_notes?id=eq.11", headers: [("Accept", "text/plain")], body: #"{"line":"ELEVENTH"}"#)
        #expect(minimal.status == 204 && minimal.body.isEmpty, "\(minimal.status) \(minimal.text)")
        let deleted = try server.service.request(
            "DELETE", "/rest/v1/fx_notes?id=eq.11", headers: [("Accept", "text/plain"), ("Prefer", "return=representation")], body: "")
        #expect(deleted.status == 200 && deleted.text == "ELEVENTH\n", "\(deleted.status) \(deleted.text)")
        _ = try server.service.request("DELETE", "/rest/v1/fx_notes?id=gte.10", body: "")
        // A select other than `*` has no handler of the table's.
        let narrowed = try server.service.request(
            "POST", "/rest/v1/fx_notes?select=id", headers: [("Accept", "text/plain"), ("Prefer", "return=representation")], body: #"{"id":12,"line":"x"}"#)
        #expect(narrowed.status == 406, "\(narrowed.status) \(narrowed.text)")
    }
}
