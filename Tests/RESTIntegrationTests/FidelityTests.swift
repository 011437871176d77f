import Foundation
import Identity
import Postgres
import TestSupport
import Testing

/// Answers that were wrong while the status was right, checked against PostgREST's behaviour on
/// fixture tables of the test's own (created here, not in migrations/, so the product schema
/// stays clean), as the service role.
@Suite("PostgREST fidelity on fixture tables", .serialized)
struct FidelityTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
        try server.installFixtures(
            """
            CREATE TABLE public.fx_ranges (id int PRIMARY KEY, r int4range);
            INSERT INTO public.fx_ranges VALUES (1, '[1,3)'), (2, '[5,8)'), (3, '[10,20)');
            CREATE TABLE public.fx_docs (id int PRIMARY KEY, body text, meta jsonb);
            INSERT INTO public.fx_docs VALUES (1, 'The cats are sleeping', '{"title": "Fat cats"}'), (2, 'A dog barks', '{"title": "Dogs"}');
            CREATE DOMAIN public.fx_positive AS integer DEFAULT 7 CHECK (VALUE > 0);
            CREATE TABLE public.fx_items (id int PRIMARY KEY, name text NOT NULL DEFAULT 'unnamed', qty public.fx_positive,
                                          at timestamptz NOT NULL DEFAULT '2025-01-01 12:00:00+00', note text);
            INSERT INTO public.fx_items (id, name, qty, note) VALUES (1, 'a', 1, NULL), (2, 'b', 2, 'two'), (3, 'c', 3, NULL);
            CREATE FUNCTION public.fx_search(min integer) RETURNS SETOF public.fx_items LANGUAGE sql STABLE
                AS $$ SELECT * FROM public.fx_items WHERE id >= min ORDER BY id $$;
            CREATE TABLE public.fx_many (id int PRIMARY KEY, name text);
            INSERT INTO public.fx_many SELECT i, 'n' || i FROM generate_series(1, 1000) i;
            ANALYZE public.fx_many;
            CREATE FUNCTION public.fx_char(c char(7), b bit(3)) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT c::text || '/' || b::text $$;
            CREATE FUNCTION public.fx_refuse() RETURNS void LANGUAGE plpgsql AS $$ BEGIN
                RAISE SQLSTATE 'PGRST' USING MESSAGE = '{"code":"123","message":"Payment Required","details":"Quota exceeded","hint":"Upgrade your plan"}',
                    DETAIL = '{"status":402,"headers":{"X-Powered-By":"Nerd Rage"}}';
            END $$;
            CREATE FUNCTION public.fx_headers() RETURNS text LANGUAGE plpgsql AS $$ BEGIN
                PERFORM set_config('response.headers', '[{"Cache-Control": "max-age=60"}, {"X-Total": "7"}]', true);
                RETURN 'ok';
            END $$;
            CREATE FUNCTION public.fx_json(j jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$ SELECT j $$;
            CREATE TABLE public.fx_pairs (k text, n int, note text, PRIMARY KEY (k, n));
            GRANT ALL ON public.fx_pairs TO service_role;
            CREATE TABLE public.fx_inbox (id serial PRIMARY KEY, message text);
            REVOKE ALL ON public.fx_inbox FROM anon, authenticated;
            GRANT INSERT ON public.fx_inbox TO authenticated;
            GRANT USAGE ON SEQUENCE public.fx_inbox_id_seq TO authenticated;
            GRANT ALL ON public.fx_ranges, public.fx_docs, public.fx_items, public.fx_many TO anon, authenticated, service_role;
            """, probe: "/rest/v1/rpc/fx_search?min=1")
    }

    @Test func rangeOperatorsNxrAndNxlAsPostgREST() throws {
        // nxr: does not extend to the right of [4,9) (&<); nxl: does not extend to its left (&>).
        #expect(try server.service.get("/rest/v1/fx_ranges?select=id&r=nxr.[4,9)&order=id").compactJSON == #"[{"id":1},{"id":2}]"#)
        #expect(try server.service.get("/rest/v1/fx_ranges?select=id&r=nxl.[4,9)&order=id").compactJSON == #"[{"id":2},{"id":3}]"#)
    }

    @Test func fullTextSearchUsesTheLanguageAndSearchesJSON() throws {
        // English stems "cats" to "cat"; the simple configuration does not.
        #expect(try server.service.get("/rest/v1/fx_docs?select=id&body=fts(english).cat").compactJSON == #"[{"id":1}]"#)
        #expect(try server.service.get("/rest/v1/fx_docs?select=id&body=fts(simple).cat").compactJSON == "[]")
        let json = try server.service.get("/rest/v1/fx_docs?select=id&meta=fts(english).cat")
        #expect(json.status == 200 && json.compactJSON == #"[{"id":1}]"#, "\(json.text)")
    }

    @Test func functionResultsTakeSelectFiltersOrderAndLimit() throws {
        #expect(try server.service.get("/rest/v1/rpc/fx_search?min=2&select=id").compactJSON == #"[{"id":2},{"id":3}]"#)
        #expect(try server.service.get("/rest/v1/rpc/fx_search?min=1&select=id,name&id=gt.1&name=neq.c").compactJSON == #"[{"id":2,"name":"b"}]"#)
        #expect(try server.service.get("/rest/v1/rpc/fx_search?min=1&select=id&order=id.desc&limit=1").compactJSON == #"[{"id":3}]"#)
        let posted = try server.service.post("/rest/v1/rpc/fx_search?select=name&id=eq.2", #"{"min":1}"#)
        #expect(posted.compactJSON == #"[{"name":"b"}]"#)
        let unknown = try server.service.get("/rest/v1/rpc/fx_search?min=1&select=nope")
        #expect(unknown.status == 400 && unknown.jsonObject?["code"] as? String == "42703")
    }

    @Test func patchWithMissingDefaultWritesDefaultsAndHonoursOrderAndLimit() throws {
        let http = server.client()
        // `columns=` with a column the body lacks: its default (the column's; the domain's for qty).
        let patched = try http.request(
            "PATCH", "/rest/v1/fx_items?id=eq.1&columns=name,qty,note",
            headers: server.headers(server.serviceKey, [("Prefer", "return=representation, missing=default")]),
            body: #"{"note":"n"}"#)
        #expect(patched.status == 200, "\(patched.text)")
        #expect(patched.jsonArray?.first?["name"] as? String == "unnamed" && patched.jsonArray?.first?["qty"] as? Int == 7)
        // order + limit: only the last row by id changes.
        let limited = try http.request(
            "PATCH", "/rest/v1/fx_items?order=id.desc&limit=1", headers: server.headers(server.serviceKey, [("Prefer", "return=representation")]),
            body: #"{"note":"last"}"#)
        #expect(limited.jsonArray?.map { $0["id"] as? Int } == [3], "\(limited.text)")
        #expect(try server.service.get("/rest/v1/fx_items?select=id&note=eq.last").compactJSON == #"[{"id":3}]"#)
        let deleted = try http.request(
            "DELETE", "/rest/v1/fx_ranges?order=id.asc&limit=2", headers: server.headers(server.serviceKey, [("Prefer", "return=representation")]))
        #expect(deleted.jsonArray?.map { $0["id"] as? Int } == [1, 2])
    }

    @Test func timezonePreferenceRendersTimestampsInThatZone() throws {
        let local = try server.service.get("/rest/v1/fx_items?select=at&id=eq.2", headers: [("Prefer", "timezone=America/Los_Angeles")])
        #expect(local.compactJSON == #"[{"at":"2025-01-01T04:00:00-08:00"}]"#, "\(local.text)")
        #expect(local.header("Preference-Applied") == "timezone=America/Los_Angeles")
        #expect(try server.service.get("/rest/v1/fx_items?select=at&id=eq.2").compactJSON == #"[{"at":"2025-01-01T12:00:00+00:00"}]"#)
        let invalid = try server.service.get("/rest/v1/fx_items?select=at", headers: [("Prefer", "timezone=Mars/Olympus_Mons")])
        #expect(invalid.status == 400, "\(invalid.text)")
    }

    @Test func plannedCountIsThePlannersEstimate() throws {
        // A pattern the planner cannot know well: its estimate, not the exact count, is the total.
        let admin = try Connection(conninfo: server.databaseURL)
        let plan = try #require(try admin.query("EXPLAIN (FORMAT JSON) SELECT 1 FROM public.fx_many WHERE name LIKE '%7%'").scalar)
        let estimate = try #require(
            plan.range(of: #""Plan Rows": (\d+)"#, options: .regularExpression).map { String(plan[$0]).split(separator: " ").last.map(String.init) ?? "" })
        let exact = try #require(try admin.query("SELECT count(*) FROM public.fx_many WHERE name LIKE '%7%'").scalar)
        #expect(estimate != exact, "the fixture should make the planner guess")
        let planned = try server.service.get("/rest/v1/fx_many?select=id&name=like.*7*&limit=5", headers: [("Prefer", "count=planned")])
        #expect(planned.header("Content-Range") == "0-4/\(estimate)", "\(planned.header("Content-Range") ?? "none")")
        #expect(planned.status == 206 && planned.header("Preference-Applied") == "count=planned")
        let counted = try server.service.get("/rest/v1/fx_many?select=id&name=like.*7*&limit=5", headers: [("Prefer", "count=exact")])
        #expect(counted.header("Content-Range") == "0-4/\(exact)")
    }

    @Test func functionArgumentsKeepTheirLengthAndTheirJSONType() throws {
        let http = server.client()
        let padded = try http.request("POST", "/rest/v1/rpc/fx_char", headers: server.headers(server.serviceKey), body: #"{"c":"abcdefg","b":"101"}"#)
        #expect(padded.text == #""abcdefg/101""#, "\(padded.text)")
        // A JSON string that looks like an object is still a string.
        let string = try http.request("POST", "/rest/v1/rpc/fx_json", headers: server.headers(server.serviceKey), body: #"{"j":"{\"a\":1}"}"#)
        #expect(string.text == #""{\"a\": 1}""# || string.text == #""{\"a\":1}""#, "\(string.text)")
        let object = try http.request("POST", "/rest/v1/rpc/fx_json", headers: server.headers(server.serviceKey), body: #"{"j":{"a":1}}"#)
        #expect(object.compactJSON == #"{"a":1}"#, "\(object.text)")
    }

    @Test func anyAndAllModifiers() throws {
        #expect(try server.service.get("/rest/v1/fx_items?select=id&name=like(any).{a*,c*}&order=id").compactJSON == #"[{"id":1},{"id":3}]"#)
        #expect(try server.service.get("/rest/v1/fx_items?select=id&id=gt(all).{0,1}&order=id").compactJSON == #"[{"id":2},{"id":3}]"#)
        #expect(try server.service.get("/rest/v1/fx_items?select=id&id=eq(any).{2,3}&order=id").compactJSON == #"[{"id":2},{"id":3}]"#)
        #expect(try server.service.get("/rest/v1/fx_items?select=id&or=(name.like(any).{b*},id.eq.1)&order=id").compactJSON == #"[{"id":1},{"id":2}]"#)
        let bad = try server.service.get("/rest/v1/fx_items?name=like(some).{a}")
        #expect(bad.status == 400 && bad.jsonObject?["code"] as? String == "PGRST100")
    }

    @Test func formBodiesAreObjectsOfTextValues() throws {
        let http = server.client()
        var headers = server.headers(server.serviceKey, [("Prefer", "return=representation")])
        headers.removeAll { $0.0 == "Content-Type" }
        headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        let created = try http.request("POST", "/rest/v1/fx_items", headers: headers, body: "id=9&name=from+a+form&qty=4&note=caf%C3%A9")
        #expect(created.status == 201, "\(created.text)")
        #expect(created.jsonArray?.first?["name"] as? String == "from a form" && created.jsonArray?.first?["qty"] as? Int == 4)
        #expect(created.jsonArray?.first?["note"] as? String == "café")
        let called = try http.request("POST", "/rest/v1/rpc/fx_char", headers: headers, body: "c=abc&b=1")
        #expect(called.text == #""abc/1""#, "\(called.text)")  // bpchar to text drops the padding
    }

    @Test func bodiesOfATypeNothingReadsAreRefusedAndWriteNothing() throws {
        let http = server.client()
        func send(_ method: String, _ path: String, _ contentType: String, _ body: String) throws -> TestResponse {
            var headers = server.headers(server.serviceKey, [("Prefer", "return=representation")])
            headers.removeAll { $0.0 == "Content-Type" }
            headers.append(("Content-Type", contentType))
            return try http.request(method, path, headers: headers, body: body)
        }
        // A table's rows come as JSON, a form or CSV: text (what a browser's fetch sends for a
        // string body) and unknown types are PostgREST's 400 PGRST102, the type without its
        // parameters named.
        for (contentType, named) in [
            ("text/plain;charset=UTF-8", "text/plain"), ("image/png", "image/png"), ("application/vnd.pgrst.object+json", "application/vnd.pgrst.object+json")
        ] {
            let refused = try send("POST", "/rest/v1/fx_pairs", contentType, #"{"k":"content-type","n":1}"#)
            #expect(refused.status == 400, "\(contentType): \(refused.text)")
            #expect(refused.jsonObject?["code"] as? String == "PGRST102")
            #expect(refused.jsonObject?["message"] as? String == "Content-Type not acceptable: \(named)", "\(refused.text)")
        }
        let patched = try send("PATCH", "/rest/v1/fx_pairs?k=eq.content-type", "text/xml", "<a/>")
        #expect(patched.status == 400 && patched.jsonObject?["message"] as? String == "Content-Type not acceptable: text/xml", "\(patched.text)")
        #expect(try server.service.get("/rest/v1/fx_pairs?k=eq.content-type").text == "[]")
        // A function takes text, XML and bytes as its single unnamed parameter; nothing else.
        let called = try send("POST", "/rest/v1/rpc/fx_char", "image/png", "c=abc&b=1")
        #expect(called.status == 400 && called.jsonObject?["message"] as? String == "Content-Type not acceptable: image/png", "\(called.text)")
        // JSON with parameters (what supabase-swift sends) is JSON.
        let json = try send("POST", "/rest/v1/fx_pairs", "application/json;charset=UTF-8", #"{"k":"content-type","n":2}"#)
        #expect(json.status == 201, "\(json.text)")
        #expect(try server.service.get("/rest/v1/fx_pairs?k=eq.content-type&select=n").compactJSON == #"[{"n":2}]"#)
    }

    @Test func bulkInsertFromCSV() throws {
        var headers = server.headers(server.serviceKey, [("Prefer", "return=representation")])
        headers.removeAll { $0.0 == "Content-Type" }
        headers.append(("Content-Type", "text/csv"))
        let csv = "id,name,note,qty\r\n20,\"Doe, J\",,5\r\n21,\"say \"\"hi\"\"\",NULL,6\r\n"
        let created = try server.client().request("POST", "/rest/v1/fx_items?select=id,name,note,qty", headers: headers, body: csv)
        #expect(created.status == 201, "\(created.text)")
        #expect(created.compactJSON == #"[{"id":20,"name":"Doe, J","note":"","qty":5},{"id":21,"name":"say \"hi\"","note":null,"qty":6}]"#, "\(created.text)")
        let ragged = try server.client().request("POST", "/rest/v1/fx_items", headers: headers, body: "id,name\n22\n")
        #expect(ragged.status == 400 && ragged.jsonObject?["code"] as? String == "PGRST102")
    }

    @Test func aFunctionRaisingPGRSTChoosesTheWholeAnswer() throws {
        let refused = try server.service.post("/rest/v1/rpc/fx_refuse", "{}")
        #expect(refused.status == 402 && refused.header("X-Powered-By") == "Nerd Rage", "\(refused.status) \(refused.text)")
        #expect(refused.compactJSON == #"{"code":"123","details":"Quota exceeded","hint":"Upgrade your plan","message":"Payment Required"}"#)
    }

    @Test func aFunctionSetsResponseHeaders() throws {
        let answered = try server.service.post("/rest/v1/rpc/fx_headers", "{}")
        #expect(answered.status == 200 && answered.header("Cache-Control") == "max-age=60" && answered.header("X-Total") == "7", "\(answered.text)")
    }

    @Test func aRoleThatMayOnlyInsertInsertsWithReturnMinimal() throws {
        let user = try server.signUp()
        let http = server.client()
        let posted = try http.request("POST", "/rest/v1/fx_inbox", headers: server.headers(user.token), body: #"{"message":"hello"}"#)
        #expect(posted.status == 201, "\(posted.text)")
        // Reading it back is what the role may not do.
        let representation = try http.request(
            "POST", "/rest/v1/fx_inbox", headers: server.headers(user.token, [("Prefer", "return=representation")]), body: #"{"message":"again"}"#)
        #expect(representation.status == 403 && representation.jsonObject?["code"] as? String == "42501")
        let admin = try Connection(conninfo: server.databaseURL)
        #expect(try admin.query("SELECT string_agg(message, ',') FROM public.fx_inbox").scalar == "hello")
    }

    @Test func anOffsetPastTheEndIs416WithTheCount() throws {
        let past = try server.service.get("/rest/v1/fx_items?select=id&offset=10", headers: [("Prefer", "count=exact")])
        #expect(past.status == 416 && past.header("Content-Range") == "*/3", "\(past.status) \(past.header("Content-Range") ?? "none")")
    }

    @Test func arrayWithNullsStripped() throws {
        let stripped = try server.service.get(
            "/rest/v1/fx_items?select=id,note&id=lte.2&order=id", headers: [("Accept", "application/vnd.pgrst.array+json;nulls=stripped")])
        #expect(stripped.compactJSON == #"[{"id":1},{"id":2,"note":"two"}]"#, "\(stripped.text)")
        #expect(stripped.header("Content-Type") == "application/vnd.pgrst.array+json;nulls=stripped; charset=utf-8")
    }

    @Test func headersOnlyInsertsAnswerTheRowsLocation() throws {
        let http = server.client()
        let prefer = server.headers(server.serviceKey, [("Prefer", "return=headers-only")])
        let created = try http.request("POST", "/rest/v1/fx_items", headers: prefer, body: #"{"id":30,"name":"thirty"}"#)
        #expect(created.status == 201 && created.header("Location") == "/fx_items?id=eq.30", "\(created.status) \(created.header("Location") ?? "none")")
        #expect(created.body.isEmpty && created.header("Content-Type") == nil && created.header("Preference-Applied") == "return=headers-only")
        // A composite key, its values URL-encoded as PostgREST's.
        let pair = try http.request("POST", "/rest/v1/fx_pairs", headers: prefer, body: #"{"k":"a b&c","n":2}"#)
        #expect(pair.status == 201 && pair.header("Location") == "/fx_pairs?k=eq.a%20b%26c&n=eq.2", "\(pair.header("Location") ?? "none")")
        // Several rows: no one location.
        let bulk = try http.request("POST", "/rest/v1/fx_items", headers: prefer, body: #"[{"id":31},{"id":32}]"#)
        #expect(bulk.status == 201 && bulk.header("Location") == nil)
        #expect(try server.service.get("/rest/v1/fx_items?select=id&id=gte.30&order=id").compactJSON == #"[{"id":30},{"id":31},{"id":32}]"#)
    }

    @Test func badTokensAreRefusedInPostgRESTsWords() throws {
        func refused(_ token: String) throws -> TestResponse {
            try server.get("/rest/v1/fx_items", token: token)
        }
        func signed(_ header: String, _ payload: String, secret: String = TestServer.secret) -> String {
            let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
            return input + "." + Base64URL.encode(Crypto.hmacSHA256(key: Array(secret.utf8), data: Array(input.utf8)))
        }
        let wrongKey = try refused(signed(#"{"alg":"HS256","typ":"JWT"}"#, "{}", secret: "another-secret-of-at-least-thirty-two-chars"))
        #expect(wrongKey.status == 401)
        #expect(
            wrongKey.text
                == #"{"code":"PGRST301","details":"None of the keys was able to decode the JWT","hint":null,"message":"No suitable key or wrong key type"}"#)
        #expect(wrongKey.header("WWW-Authenticate") == #"Bearer error="invalid_token", error_description="No suitable key or wrong key type""#)
        let none = try refused("eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0.e30.yOBhlOIqn56T-4NvyEXCjfi3UmyQZ-BzXtePMO2NgRI")
        #expect(
            none.text
                == #"{"code":"PGRST301","details":"JWT is unsecured but expected 'alg' was not 'none'","hint":null,"message":"Wrong or unsupported encoding algorithm"}"#
        )
        let parts = try refused("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.bm90IGFuIG9iamVjdA")
        #expect(parts.text == #"{"code":"PGRST301","details":null,"hint":null,"message":"Expected 3 parts in JWT; got 2"}"#)
        let random = try refused("quifquirndsjagnrgniur.fonvoienqhhdj.iuqvnvhojah")
        #expect(random.text == #"{"code":"PGRST301","details":null,"hint":null,"message":"JWT cryptographic operation failed"}"#)
        let notNumber = try refused(signed(#"{"alg":"HS256","typ":"JWT"}"#, #"{"exp":"invalid","role":"authenticated"}"#))
        #expect(notNumber.text == #"{"code":"PGRST303","details":null,"hint":null,"message":"The JWT 'exp' claim must be a number"}"#)
        let future = try refused(signed(#"{"alg":"HS256","typ":"JWT"}"#, #"{"nbf":\#(Int(Date().timeIntervalSince1970) + 35),"role":"authenticated"}"#))
        #expect(future.status == 401 && future.text == #"{"code":"PGRST303","details":null,"hint":null,"message":"JWT not yet valid"}"#)
    }

    @Test func anEmptyBearerIsRefusedAsPostgRESTDoes() throws {
        func request(_ authorization: String, apikey: Bool = true) throws -> TestResponse {
            var headers = [("Authorization", authorization)]
            if apikey { headers.append(("apikey", server.anonKey)) }
            return try server.client().request("GET", "/rest/v1/fx_items?select=id&limit=1", headers: headers)
        }
        for authorization in ["Bearer ", "bearer", "Bearer \t "] {
            let empty = try request(authorization)
            #expect(empty.status == 401, "\(authorization): \(empty.status)")
            #expect(empty.text == #"{"code":"PGRST301","details":null,"hint":null,"message":"Empty JWT is sent in Authorization header"}"#)
            #expect(empty.header("WWW-Authenticate") == #"Bearer error="invalid_token", error_description="Empty JWT is sent in Authorization header""#)
        }
        // The apikey is checked first (the gateway's answer); another scheme is no token at all.
        #expect(try request("Bearer ", apikey: false).jsonObject?["message"] as? String == "No API key found in request")
        #expect(try request("Basic YTpi").status == 200)
        #expect(try request("Bearer \(server.anonKey)").status == 200)
    }
}
