import Foundation
import Postgres
import TestSupport
import Testing

/// Functions as PostgREST runs them, on fixture functions of the test's own (created here, not in
/// migrations/): overloads, `params=single-object`, a single unnamed parameter, variadic
/// parameters, the request's settings, computed fields; and `return=headers-only`.
@Suite("PostgREST fidelity: functions", .serialized)
struct FidelityFunctionTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
        try server.installFixtures(
            """
            CREATE FUNCTION public.fx_over(a integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'one ' || a $$;
            CREATE FUNCTION public.fx_over(a integer, b integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'two ' || (a + b) $$;
            CREATE FUNCTION public.fx_over(c text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'text ' || c $$;
            CREATE FUNCTION public.fx_over() RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'none' $$;
            CREATE FUNCTION public.fx_same(a integer) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'integer' $$;
            CREATE FUNCTION public.fx_same(a text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'text' $$;
            CREATE FUNCTION public.fx_mult(param json) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT (param->>'x')::int * (param->>'y')::int $$;
            CREATE FUNCTION public.fx_echo(doc jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$ SELECT doc $$;
            CREATE FUNCTION public.fx_raw(json) RETURNS json LANGUAGE sql IMMUTABLE AS $$ SELECT json_build_object('got', $1) $$;
            CREATE FUNCTION public.fx_raw(x integer, y integer) RETURNS json LANGUAGE sql IMMUTABLE AS $$ SELECT json_build_object('sum', x + y) $$;
            CREATE FUNCTION public.fx_raw_text(text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'got ' || $1 $$;
            CREATE FUNCTION public.fx_raw_xml(xml) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT (xpath('/a/text()', $1))[1]::text $$;
            CREATE FUNCTION public.fx_raw_bytes(bytea) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT get_byte($1, 0) + get_byte($1, length($1) - 1) * 1000 $$;
            CREATE FUNCTION public.fx_two_unnamed(text, text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT $1 || $2 $$;
            CREATE FUNCTION public.fx_variadic(VARIADIC v text[] DEFAULT '{}') RETURNS text[] LANGUAGE sql IMMUTABLE AS $$ SELECT v $$;
            CREATE FUNCTION public.fx_request() RETURNS json LANGUAGE sql STABLE AS $$
                SELECT json_build_object('method', current_setting('request.method', true), 'path', current_setting('request.path', true),
                                         'headers', current_setting('request.headers', true)::json, 'cookies', current_setting('request.cookies', true)::json) $$;
            CREATE FUNCTION public.fx_subject() RETURNS json LANGUAGE sql STABLE AS $$
                SELECT json_build_object('sub', current_setting('request.jwt.claim.sub', true), 'uid', auth.uid()) $$;
            GRANT EXECUTE ON FUNCTION public.fx_subject() TO anon, authenticated, service_role;
            CREATE TABLE public.fx_people (id int PRIMARY KEY, first text, last text);
            INSERT INTO public.fx_people VALUES (1, 'Ada', 'Lovelace'), (2, 'John', 'Doe'), (3, 'Jane', 'Doe');
            CREATE TABLE public.fx_pets (id int PRIMARY KEY, person_id int REFERENCES public.fx_people, name text);
            INSERT INTO public.fx_pets VALUES (1, 2, 'Rex');
            GRANT ALL ON public.fx_people, public.fx_pets TO service_role;
            CREATE FUNCTION public.fx_full_name(public.fx_people) RETURNS text LANGUAGE sql STABLE AS $$ SELECT $1.first || ' ' || $1.last $$;
            CREATE FUNCTION public.fx_initials(p public.fx_people) RETURNS text LANGUAGE sql STABLE AS $$ SELECT left(p.first, 1) || left(p.last, 1) $$;
            CREATE FUNCTION public.fx_doe() RETURNS SETOF public.fx_people LANGUAGE sql STABLE AS $$ SELECT * FROM public.fx_people WHERE last = 'Doe' $$;
            CREATE FUNCTION public.fx_guc(status text, headers text) RETURNS integer LANGUAGE sql AS $$
                SELECT 1 FROM (SELECT set_config('response.status', status, true), set_config('response.headers', headers, true)) s $$;
            CREATE FUNCTION public.fx_numbers() RETURNS SETOF integer LANGUAGE sql STABLE AS $$ SELECT generate_series(1, 5) $$;
            CREATE TABLE public.fx_calls (n serial PRIMARY KEY);
            GRANT ALL ON public.fx_calls, public.fx_calls_n_seq TO service_role;
            CREATE FUNCTION public.fx_tick() RETURNS SETOF integer LANGUAGE sql VOLATILE AS $$ INSERT INTO public.fx_calls DEFAULT VALUES RETURNING n $$;
            CREATE FUNCTION public.fx_greet(name text, VARIADIC v text[]) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'Hello, ' || name || ' (' || cardinality(v) || ')' $$;
            """, probe: "/rest/v1/rpc/fx_request")
    }

    // MARK: overloads

    @Test func theOverloadWhoseParametersTheArgumentsNameIsCalled() throws {
        #expect(try server.service.get("/rest/v1/rpc/fx_over?a=1").text == #""one 1""#)
        #expect(try server.service.get("/rest/v1/rpc/fx_over?a=1&b=2").text == #""two 3""#)
        #expect(try server.service.get("/rest/v1/rpc/fx_over").text == #""none""#)
        #expect(try server.service.post("/rest/v1/rpc/fx_over", #"{"c":"x"}"#).text == #""text x""#)
        #expect(try server.service.post("/rest/v1/rpc/fx_over", #"{"a":4,"b":5}"#).text == #""two 9""#)
        #expect(try server.service.post("/rest/v1/rpc/fx_over", "a=7", headers: [("Content-Type", "application/x-www-form-urlencoded")]).text == #""one 7""#)
    }

    @Test func overloadsTheArgumentsCannotChooseBetweenAre300PGRST203() throws {
        let ambiguous = try server.service.get("/rest/v1/rpc/fx_same?a=1")
        #expect(ambiguous.status == 300)
        #expect(
            ambiguous.text
                == #"{"code":"PGRST203","details":null,"hint":"Try renaming the parameters or the function itself in the database so function overloading can be resolved","message":"Could not choose the best candidate function between: public.fx_same(a => integer), public.fx_same(a => text)"}"#
        )
    }

    @Test func noOverloadForTheArgumentsIsPGRST202WithPostgRESTsHint() throws {
        let wrong = try server.service.get("/rest/v1/rpc/fx_over?wrong_arg=value")
        #expect(wrong.status == 404)
        #expect(
            wrong.text
                == #"{"code":"PGRST202","details":"Searched for the function public.fx_over with parameter wrong_arg, but no matches were found in the schema cache.","hint":null,"message":"Could not find the function public.fx_over(wrong_arg) in the schema cache"}"#
        )
        let close = try server.service.get("/rest/v1/rpc/fx_over?b=2&a=1&wrong_arg=value")
        #expect(close.status == 404)
        #expect(
            close.text
                == #"{"code":"PGRST202","details":"Searched for the function public.fx_over with parameters a, b, wrong_arg, but no matches were found in the schema cache.","hint":"Perhaps you meant to call the function public.fx_over(a, b)","message":"Could not find the function public.fx_over(a, b, wrong_arg) in the schema cache"}"#
        )
        // A POSTed JSON body may also have meant a single unnamed json parameter.
        let posted = try server.service.post("/rest/v1/rpc/fx_over", #"{"d":1}"#)
        #expect(
            posted.jsonObject?["details"] as? String
                == "Searched for the function public.fx_over with parameter d or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache."
        )
        // A function with two unnamed parameters cannot be called at all (PostgREST leaves it out).
        #expect(try server.service.post("/rest/v1/rpc/fx_two_unnamed", "{}").status == 404)
    }

    // MARK: the body as the one argument

    @Test func paramsSingleObjectPassesTheWholeBody() throws {
        let multiplied = try server.service.post("/rest/v1/rpc/fx_mult", #"{"x":4,"y":2}"#, headers: [("Prefer", "params=single-object")])
        #expect(multiplied.status == 200 && multiplied.text == "8", "\(multiplied.status) \(multiplied.text)")
        #expect(multiplied.header("Preference-Applied") == "params=single-object")
        // Without the preference, x and y are argument names fx_mult lacks.
        #expect(try server.service.post("/rest/v1/rpc/fx_mult", #"{"x":4,"y":2}"#).status == 404)
        let array = try server.service.post("/rest/v1/rpc/fx_echo", #"[{"a":1},{"a":2}]"#, headers: [("Prefer", "params=single-object")])
        #expect(array.compactJSON == #"[{"a":1},{"a":2}]"#, "\(array.text)")
        let form = try server.service.post(
            "/rest/v1/rpc/fx_echo", "p=1&q=two", headers: [("Prefer", "params=single-object"), ("Content-Type", "application/x-www-form-urlencoded")])
        #expect(form.compactJSON == #"{"p":"1","q":"two"}"#, "\(form.text)")
        let query = try server.service.get("/rest/v1/rpc/fx_echo?p1=1&p2=text", headers: [("Prefer", "params=single-object")])
        #expect(query.compactJSON == #"{"p1":"1","p2":"text"}"#, "\(query.text)")
        let none = try server.service.post("/rest/v1/rpc/fx_over", "{}", headers: [("Prefer", "params=single-object")])
        #expect(none.status == 404)
        #expect(
            none.text
                == #"{"code":"PGRST202","details":"Searched for the function public.fx_over with a single json/jsonb parameter, but no matches were found in the schema cache.","hint":null,"message":"Could not find the function public.fx_over in the schema cache"}"#
        )
    }

    @Test func aSingleUnnamedParameterTakesTheRawBody() throws {
        // JSON: the overload whose names fit first, the unnamed json one otherwise.
        #expect(try server.service.post("/rest/v1/rpc/fx_raw", #"{"x":1,"y":2}"#).compactJSON == #"{"sum":3}"#)
        #expect(try server.service.post("/rest/v1/rpc/fx_raw", #"{"z":[1,2]}"#).compactJSON == #"{"got":{"z":[1,2]}}"#)
        #expect(try server.service.post("/rest/v1/rpc/fx_raw_text", "plain words", headers: [("Content-Type", "text/plain")]).text == #""got plain words""#)
        #expect(try server.service.post("/rest/v1/rpc/fx_raw_xml", "<a>inside</a>", headers: [("Content-Type", "text/xml")]).text == #""inside""#)
        var bytes = server.headers(server.serviceKey)
        bytes.removeAll { $0.0.lowercased() == "content-type" }
        bytes.append(("Content-Type", "application/octet-stream"))
        let binary = try server.client().request("POST", "/rest/v1/rpc/fx_raw_bytes", headers: bytes, bodyBytes: [0x07, 0x00, 0xFF, 0x02])
        #expect(binary.text == "2007", "\(binary.text)")
        // No unnamed text parameter: PostgREST names what it searched for, without a hint.
        let missing = try server.service.post("/rest/v1/rpc/fx_over", "words", headers: [("Content-Type", "text/plain")])
        #expect(missing.status == 404)
        #expect(
            missing.text
                == #"{"code":"PGRST202","details":"Searched for the function public.fx_over with a single unnamed text parameter, but no matches were found in the schema cache.","hint":null,"message":"Could not find the function public.fx_over in the schema cache"}"#
        )
    }

    // MARK: an array of objects

    @Test func anArrayOfObjectsCallsTheFunctionWithTheFirstObject() throws {
        // PostgREST (since 11, without `params=multiple-objects`): the overload the objects' keys
        // choose, called once, with the first object.
        let first = try server.service.post("/rest/v1/rpc/fx_over", #"[{"a":1,"b":2},{"a":4,"b":6},{"a":100,"b":200}]"#)
        #expect(first.status == 200 && first.text == #""two 3""#, "\(first.status) \(first.text)")
        #expect(try server.service.post("/rest/v1/rpc/fx_raw", #"[{"x":1,"y":2},{"x":3,"y":4}]"#).text == #"{"sum" : 3}"#)
        let rows = try server.service.post("/rest/v1/rpc/fx_doe?select=first&order=first", #"[{}, {}]"#)
        #expect(rows.compactJSON == #"[{"first":"Jane"},{"first":"John"}]"#, "\(rows.text)")
        // The objects' keys must be the same (PGRST102).
        let mixed = try server.service.post("/rest/v1/rpc/fx_over", #"[{"a":1},{"b":2}]"#)
        #expect(
            mixed.status == 400 && mixed.jsonObject?["code"] as? String == "PGRST102"
                && mixed.jsonObject?["message"] as? String == "All object keys must match", "\(mixed.text)")
        // An empty array: a function without parameters is called; one with parameters is not
        // (there is no first object), so it answers no value.
        #expect(try server.service.post("/rest/v1/rpc/fx_over", "[]").text == #""none""#)
        let notCalled = try server.service.post("/rest/v1/rpc/fx_variadic", "[]")
        #expect(notCalled.status == 200 && notCalled.text == "null", "\(notCalled.status) \(notCalled.text)")
        // `params=multiple-objects` is no preference any more: ignored, or refused when strict.
        let ignored = try server.service.post("/rest/v1/rpc/fx_over", #"[{"a":1},{"a":2}]"#, headers: [("Prefer", "params=multiple-objects")])
        #expect(ignored.text == #""one 1""# && ignored.header("Preference-Applied") == nil, "\(ignored.text)")
        let strict = try server.service.post("/rest/v1/rpc/fx_over", #"[{"a":1},{"a":2}]"#, headers: [("Prefer", "handling=strict, params=multiple-objects")])
        #expect(strict.status == 400 && strict.jsonObject?["code"] as? String == "PGRST122", "\(strict.text)")
    }

    // MARK: variadic

    @Test func variadicParametersTakeAnArrayOrRepeatedParameters() throws {
        #expect(try server.service.post("/rest/v1/rpc/fx_variadic", #"{"v":["hi","hello","there"]}"#).compactJSON == #"["hi","hello","there"]"#)
        #expect(try server.service.get("/rest/v1/rpc/fx_variadic").compactJSON == "[]")
        #expect(try server.service.get("/rest/v1/rpc/fx_variadic?v=hi").compactJSON == #"["hi"]"#)
        #expect(try server.service.get("/rest/v1/rpc/fx_variadic?v=hi&v=there").compactJSON == #"["hi","there"]"#)
        let form = try server.service.post("/rest/v1/rpc/fx_variadic", "v=hi&v=there", headers: [("Content-Type", "application/x-www-form-urlencoded")])
        #expect(form.compactJSON == #"["hi","there"]"#, "\(form.text)")
        // A repeated parameter that is not variadic: the last value.
        #expect(try server.service.get("/rest/v1/rpc/fx_greet?name=ignored&name=world&v=a&v=b").text == #""Hello, world (2)""#)
    }

    // MARK: the request's settings

    @Test func functionsReadTheRequestsMethodPathHeadersAndCookies() throws {
        let read = try server.service.get("/rest/v1/rpc/fx_request", headers: [("X-Custom", "one"), ("Cookie", "session=abc; theme=dark"), ("X-Custom", "two")])
        let object = try #require(read.jsonObject, "\(read.text)")
        #expect(object["method"] as? String == "GET" && object["path"] as? String == "/rpc/fx_request")
        let headers = try #require(object["headers"] as? [String: Any])
        #expect(headers["x-custom"] as? String == "two")  // lower-cased; the last of a repeated one
        #expect(
            headers["apikey"] as? String == server.anonKey && headers["authorization"] as? String == "Bearer \(server.serviceKey)" && headers["cookie"] == nil)
        #expect(object["cookies"] as? [String: String] == ["session": "abc", "theme": "dark"])
        let posted = try server.service.post("/rest/v1/rpc/fx_request", "{}")
        #expect(posted.jsonObject?["method"] as? String == "POST" && posted.jsonObject?["cookies"] as? [String: String] == [:], "\(posted.text)")
    }

    /// `request.jwt.claim.sub` is the token's `sub` ('' without one), and `auth.uid()` agrees.
    @Test func theTokensSubjectIsSetForAuthUID() throws {
        let user = try server.signUp()
        let mine = try server.caller(user.token).get("/rest/v1/rpc/fx_subject")
        #expect(mine.jsonObject?["sub"] as? String == user.id && mine.jsonObject?["uid"] as? String == user.id, "\(mine.text)")
        let service = try server.service.get("/rest/v1/rpc/fx_subject")
        #expect(service.jsonObject?["sub"] as? String == "" && service.jsonObject?["uid"] is NSNull, "\(service.text)")
    }

    // MARK: computed fields

    @Test func computedFieldsInSelectFiltersAndOrder() throws {
        let read = try server.service.get("/rest/v1/fx_people?select=id,fx_full_name,fx_initials&fx_full_name=like.*Doe&order=fx_full_name.desc")
        #expect(
            read.compactJSON == #"[{"fx_full_name":"John Doe","fx_initials":"JD","id":2},{"fx_full_name":"Jane Doe","fx_initials":"JD","id":3}]"#,
            "\(read.text)")
        // `*` is the columns only; an alias and a cast apply as to a column.
        let star = try server.service.get("/rest/v1/fx_people?select=*,name:fx_full_name&id=eq.1")
        #expect(star.compactJSON == #"[{"first":"Ada","id":1,"last":"Lovelace","name":"Ada Lovelace"}]"#, "\(star.text)")
        // On a write's returned rows, on a function's rows and in an embed.
        let patched = try server.service.request(
            "PATCH", "/rest/v1/fx_people?id=eq.1&select=fx_full_name", headers: [("Prefer", "return=representation")], body: #"{"last":"King"}"#)
        #expect(patched.compactJSON == #"[{"fx_full_name":"Ada King"}]"#, "\(patched.text)")
        let rows = try server.service.get("/rest/v1/rpc/fx_doe?select=fx_initials,fx_full_name&fx_full_name=eq.Jane%20Doe")
        #expect(rows.compactJSON == #"[{"fx_full_name":"Jane Doe","fx_initials":"JD"}]"#, "\(rows.text)")
        let embedded = try server.service.get("/rest/v1/fx_pets?select=name,fx_people(fx_full_name)")
        #expect(embedded.compactJSON == #"[{"fx_people":{"fx_full_name":"John Doe"},"name":"Rex"}]"#, "\(embedded.text)")
        let spread = try server.service.get("/rest/v1/fx_pets?select=name,...fx_people(who:fx_full_name)")
        #expect(spread.compactJSON == #"[{"name":"Rex","who":"John Doe"}]"#, "\(spread.text)")
        // Not a column to write, and an unknown name is still 42703.
        let written = try server.service.request("PATCH", "/rest/v1/fx_people?id=eq.1", body: #"{"fx_full_name":"x"}"#)
        #expect(written.status == 400 && written.jsonObject?["code"] as? String == "PGRST204")
        #expect(try server.service.get("/rest/v1/fx_people?select=fx_nope").status == 400)
        // A function of one unnamed row parameter is a computed field, not an RPC (PostgREST's rule).
        #expect(try server.service.post("/rest/v1/rpc/fx_full_name", "{}").status == 404)
    }

    // MARK: counts and PUT bodies

    /// `Prefer: count=exact` on a function's rows: the total of every row, the page as limited,
    /// for GET, HEAD and POST; a volatile function still runs once.
    @Test func callsCountTheirRows() throws {
        let counted = [("Prefer", "count=exact")]
        let rows = try server.service.get("/rest/v1/rpc/fx_doe?select=id&order=id", headers: counted)
        #expect(rows.header("Content-Range") == "0-1/2" && rows.compactJSON == #"[{"id":2},{"id":3}]"#, "\(rows.text)")
        let page = try server.service.get("/rest/v1/rpc/fx_numbers?limit=2&offset=1", headers: counted)
        #expect(page.header("Content-Range") == "1-2/5" && page.compactJSON == "[2,3]", "\(page.header("Content-Range") ?? "") \(page.text)")
        let head = try server.service.request("HEAD", "/rest/v1/rpc/fx_numbers?limit=1", headers: counted)
        #expect(head.header("Content-Range") == "0-0/5" && head.text.isEmpty)
        #expect(try server.service.get("/rest/v1/rpc/fx_numbers").header("Content-Range") == "0-4/*")
        let ticked = try server.service.post("/rest/v1/rpc/fx_tick", "{}", headers: counted)
        #expect(ticked.header("Content-Range") == "0-0/1", "\(ticked.header("Content-Range") ?? "")")
        let admin = try Connection(conninfo: server.databaseURL)
        #expect(try admin.query("SELECT count(*) FROM public.fx_calls").scalar == "1")
    }

    /// PUT takes a one-element array as its row; other arrays match no URL (PGRST115), after the
    /// filters (PGRST105) and limit (PGRST114) checks, as PostgREST orders them.
    @Test func putTakesAOneElementArray() throws {
        func put(_ target: String, _ body: String) throws -> TestResponse {
            try server.service.request("PUT", target, headers: [("Prefer", "return=representation")], body: body)
        }
        let one = try put("/rest/v1/fx_people?id=eq.7", #"[{"id":7,"first":"Grace","last":"Hopper"}]"#)
        #expect(one.status == 201 && one.compactJSON == #"[{"first":"Grace","id":7,"last":"Hopper"}]"#, "\(one.status) \(one.text)")
        for body in [#"[{"id":8,"first":"A","last":"B"},{"id":9,"first":"C","last":"D"}]"#, "[]"] {
            let many = try put("/rest/v1/fx_people?id=eq.8", body)
            #expect(many.status == 400 && many.jsonObject?["code"] as? String == "PGRST115", "\(many.text)")
        }
        #expect(try put("/rest/v1/fx_people?first=eq.A", #"[{"id":8},{"id":9}]"#).jsonObject?["code"] as? String == "PGRST105")
        #expect(try put("/rest/v1/fx_people?id=eq.8&limit=1", #"[{"id":8}]"#).jsonObject?["code"] as? String == "PGRST114")
        #expect(try server.service.get("/rest/v1/fx_people?id=in.(8,9)").text == "[]")
    }

    /// What a function sets as `response.status` and `response.headers` must be what PostgREST
    /// reads: otherwise 500 PGRST112 / PGRST111 instead of ignoring it.
    @Test func responseSettingsOfTheWrongShapeAreErrors() throws {
        func call(_ status: String, _ headers: String) throws -> TestResponse {
            try server.service.post("/rest/v1/rpc/fx_guc", JSONSerialization.jsonString(["status": status, "headers": headers]))
        }
        let good = try call("201", #"[{"X-One":"1"},{"X-Two":"2"}]"#)
        #expect(good.status == 201 && good.header("X-One") == "1" && good.header("X-Two") == "2", "\(good.status) \(good.text)")
        #expect(try call("", "").status == 200)
        for headers in [#"{"X-One":"1"}"#, #"[{"X-One":"1","X-Two":"2"}]"#, #"[{"X-One":1}]"#, "not json"] {
            let bad = try call("", headers)
            #expect(bad.status == 500 && bad.jsonObject?["code"] as? String == "PGRST111", "\(headers): \(bad.text)")
        }
        for status in ["abc", "99", "600"] {
            let bad = try call(status, "")
            #expect(bad.status == 500 && bad.jsonObject?["code"] as? String == "PGRST112", "\(status): \(bad.text)")
        }
        // PostgREST's RangeSpec and AndOrParamsSpec: a negative offset is no offset, a negative
        // limit an unsatisfiable range, a limit or offset that is no integer is ignored, and
        // what follows a logic tree is ignored.
        let noOffset = try server.service.get("/rest/v1/fx_people?select=id&id=lte.3&order=id&offset=-4")
        #expect(noOffset.compactJSON == #"[{"id":1},{"id":2},{"id":3}]"#, "\(noOffset.text)")
        let negative = try server.service.get("/rest/v1/fx_people?select=id&limit=-1")
        #expect(negative.status == 416 && negative.jsonObject?["details"] as? String == "Limit should be greater than or equal to zero.", "\(negative.text)")
        #expect(negative.jsonObject?["code"] as? String == "PGRST103" && negative.jsonObject?["message"] as? String == "Requested range not satisfiable")
        #expect(try server.service.get("/rest/v1/fx_people?select=id&id=lte.3&order=id&limit=ten&offset=x").compactJSON == #"[{"id":1},{"id":2},{"id":3}]"#)
        #expect(try server.service.get("/rest/v1/fx_people?and=(id.eq.1,id.neq.2))&select=id").compactJSON == #"[{"id":1}]"#)
        #expect(try server.service.get("/rest/v1/fx_people?or=(id.eq.1,id.eq.2)))x&select=id&order=id").compactJSON == #"[{"id":1},{"id":2}]"#)
    }
}

extension JSONSerialization {
    static func jsonString(_ object: [String: String]) throws -> String {
        String(decoding: try data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
