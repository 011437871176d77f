import Foundation
import Identity
import TestSupport
import Testing

/// Every REST operation supabase-py sends (read, insert, upsert, update, delete, RPC, counts), over HTTP
/// against the real database, with statuses, headers and whole bodies.
@Suite("REST operations as supabase-py sends them", .serialized)
struct OperationsTests {
    let server: TestServer

    init() throws { server = try TestServer() }

    func child(
        _ user: String, _ name: String, age: String = "null", birthday: String = "null", goals: String = "[]", topics: String = "[]",
        talkative: Int = 5, temperament: String = "null"
    ) -> String {
        #"{"id":"<uuid>","user_id":"\#(user)","name":"\#(name)","age":\#(age),"temperament":\#(temperament),"birthday":\#(birthday),"goals":\#(goals),"topics":\#(topics),"temperament_talkative":\#(talkative),"temperament_sensitivity":5,"temperament_accountability":5,"created_at":"<ts>","updated_at":"<ts>"}"#
    }

    func profile(_ id: String, _ state: String, current: String = "null") -> String {
        #"{"id":"\#(id)","onboarding_state":"\#(state)","current_child_id":\#(current),"created_at":"<ts>","updated_at":"<ts>","onboarding_completed_at":null}"#
    }

    @Test func profileOperations() throws {
        let user = try server.signUp()
        let http = server.client()
        let keep: Set<String> = [user.id]
        // select("*").eq("id", x).single()
        let single = try http.request(
            "GET", "/rest/v1/user_profiles?select=%2A&id=eq.\(user.id)", headers: Wire.py(server, user.token, [("Accept", "application/vnd.pgrst.object+json")])
        )
        #expect(single.status == 200)
        #expect(single.header("Content-Type") == "application/vnd.pgrst.object+json; charset=utf-8")
        #expect(single.header("Content-Range") == "0-0/*")
        Wire.expectBody(single, profile(user.id, "NOT_STARTED"), keepIDs: keep)
        // maybe_single(): an array; upper-case UUIDs (supabase-swift) work too.
        let maybe = try http.request("GET", "/rest/v1/user_profiles?select=%2A&id=eq.\(user.id.uppercased())", headers: Wire.py(server, user.token))
        #expect(maybe.status == 200)
        Wire.expectBody(maybe, "[\(profile(user.id, "NOT_STARTED"))]", keepIDs: keep)
        // update(...).eq("id", x): representation, then minimal.
        let patched = try http.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: Wire.py(server, user.token, [("Prefer", "return=representation")]),
            body: #"{"onboarding_state":"CHILD_INFO"}"#)
        #expect(patched.status == 200 && patched.header("Content-Range") == "0-0/*")
        Wire.expectBody(patched, "[\(profile(user.id, "CHILD_INFO"))]", keepIDs: keep)
        let minimal = try http.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: Wire.py(server, user.token, [("Prefer", "return=minimal")]),
            body: #"{"onboarding_state":"REVIEW"}"#)
        #expect(minimal.status == 204 && minimal.body.isEmpty && minimal.header("Content-Type") == nil)
        // upsert(row, on_conflict="id"): the profile exists, so it only merges → 200.
        let upsert = try http.request(
            "POST", "/rest/v1/user_profiles?on_conflict=id",
            headers: Wire.py(server, user.token, [("Prefer", "return=representation,resolution=merge-duplicates")]),
            body: #"{"id":"\#(user.id)","onboarding_state":"TOPICS"}"#)
        #expect(upsert.status == 200)
        #expect(upsert.header("Preference-Applied") == "resolution=merge-duplicates, return=representation")
        Wire.expectBody(upsert, "[\(profile(user.id, "TOPICS"))]", keepIDs: keep)
        // PUT on the primary key.
        let put = try http.request(
            "PUT", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: Wire.py(server, user.token, [("Prefer", "return=representation")]),
            body: #"{"id":"\#(user.id.uppercased())","onboarding_state":"GOALS"}"#)
        #expect(put.status == 200)
        Wire.expectBody(put, "[\(profile(user.id, "GOALS"))]", keepIDs: keep)
        // update with no matching row: 200 [].
        let nothing = try http.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.00000000-0000-4000-8000-000000000000",
            headers: Wire.py(server, user.token, [("Prefer", "return=representation")]), body: #"{"onboarding_state":"GOALS"}"#)
        #expect(nothing.status == 200 && nothing.text == "[]" && nothing.header("Content-Range") == "*/*")
    }

    @Test func childOperations() throws {
        let user = try server.signUp()
        let http = server.client()
        let keep: Set<String> = [user.id]
        let maya =
            #"{"user_id":"\#(user.id)","name":"Maya","age":6,"temperament":"shy","birthday":"2019-05-14","goals":["patience","sharing"],"topics":["feelings","school"],"temperament_talkative":7,"temperament_sensitivity":3,"temperament_accountability":9}"#
        // insert(row).execute(): 201 [row]
        let inserted = try http.request("POST", "/rest/v1/children", headers: Wire.py(server, user.token, [("Prefer", "return=representation")]), body: maya)
        #expect(inserted.status == 201 && inserted.header("Content-Range") == "*/*")
        Wire.expectBody(
            inserted,
            #"[{"id":"<uuid>","user_id":"\#(user.id)","name":"Maya","age":6,"temperament":"shy","birthday":"2019-05-14","goals":["patience","sharing"],"topics":["feelings","school"],"temperament_talkative":7,"temperament_sensitivity":3,"temperament_accountability":9,"created_at":"<ts>","updated_at":"<ts>"}]"#,
            keepIDs: keep)
        // insert(row).select("*").single(): 201 object (upper-case owner, as supabase-swift writes it)
        let single = try http.request(
            "POST", "/rest/v1/children?select=%2A",
            headers: Wire.py(server, user.token, [("Prefer", "return=representation"), ("Accept", "application/vnd.pgrst.object+json")]),
            body: #"{"user_id":"\#(user.id.uppercased())","name":"Leo","goals":["a b"]}"#)
        #expect(single.status == 201)
        Wire.expectBody(single, child(user.id, "Leo", goals: #"["a b"]"#), keepIDs: keep)
        // insert([r1, r2]) with columns=: a missing key is NULL (not the default).
        let bulk = try http.request(
            "POST", "/rest/v1/children?columns=%22user_id%22%2C%22age%22%2C%22name%22",
            headers: Wire.py(server, user.token, [("Prefer", "return=representation")]),
            body: #"[{"user_id":"\#(user.id)","name":"A"},{"user_id":"\#(user.id)","name":"B","age":3}]"#)
        #expect(bulk.status == 201)
        Wire.expectBody(bulk, "[\(child(user.id, "A")),\(child(user.id, "B", age: "3"))]", keepIDs: keep)
        // ... and with missing=default the column default applies.
        let defaults = try http.request(
            "POST", "/rest/v1/children?columns=%22user_id%22%2C%22name%22%2C%22temperament_talkative%22",
            headers: Wire.py(server, user.token, [("Prefer", "return=representation,missing=default")]),
            body: #"[{"user_id":"\#(user.id)","name":"C"}]"#)
        #expect(defaults.status == 201 && defaults.header("Preference-Applied") == "missing=default, return=representation")
        Wire.expectBody(defaults, "[\(child(user.id, "C"))]", keepIDs: keep)

        // select(...).eq().in_().order().limit()
        let filtered = try http.request(
            "GET",
            "/rest/v1/children?select=name%2Cage%2Cgoals&user_id=eq.\(user.id)&name=in.%28Maya%2C%22A%2C+comma%22%2CLeo%2CA%29&order=age.desc.nullslast%2Cname.asc&limit=10",
            headers: Wire.py(server, user.token))
        #expect(filtered.status == 200 && filtered.header("Content-Range") == "0-2/*")
        Wire.expectBody(
            filtered, #"[{"name":"Maya","age":6,"goals":["patience","sharing"]},{"name":"A","age":null,"goals":[]},{"name":"Leo","age":null,"goals":["a b"]}]"#)
        // is_ / neq / gte / cs / not_
        let mixed = try http.request(
            "GET", "/rest/v1/children?select=name&temperament=is.null&name=neq.x&age=gte.2&goals=cs.%7B%7D&birthday=not.is.null",
            headers: Wire.py(server, user.token))
        #expect(mixed.text == "[]")
        let contains = try http.request("GET", "/rest/v1/children?select=name&goals=cs.%7Bpatience%2C%22sharing%22%7D", headers: Wire.py(server, user.token))
        Wire.expectBody(contains, #"[{"name":"Maya"}]"#)
        let orTree = try http.request(
            "GET", "/rest/v1/children?select=name&or=(name.eq.Leo,and(age.gte.6,goals.cs.%7Bpatience%7D))&order=name", headers: Wire.py(server, user.token))
        Wire.expectBody(orTree, #"[{"name":"Leo"},{"name":"Maya"}]"#)
        // select("*", count="exact"): 200 with everything, 206 for a partial page.
        let counted = try http.request("GET", "/rest/v1/children?select=name&order=name", headers: Wire.py(server, user.token, [("Prefer", "count=exact")]))
        #expect(counted.status == 200 && counted.header("Content-Range") == "0-4/5")
        let page = try http.request(
            "GET", "/rest/v1/children?select=name&order=name&limit=2&offset=1", headers: Wire.py(server, user.token, [("Prefer", "count=exact")]))
        #expect(page.status == 206 && page.header("Content-Range") == "1-2/5")
        Wire.expectBody(page, #"[{"name":"B"},{"name":"C"}]"#)
        let ranged = try http.request(
            "GET", "/rest/v1/children?select=name&order=name", headers: Wire.py(server, user.token, [("Range", "0-1"), ("Range-Unit", "items")]))
        #expect(ranged.status == 200 && ranged.header("Content-Range") == "0-1/*")
        Wire.expectBody(ranged, #"[{"name":"A"},{"name":"B"}]"#)
        // head=True: HEAD, no body, the count in Content-Range.
        let head = try http.request(
            "HEAD", "/rest/v1/children?select=%2A&user_id=eq.\(user.id)", headers: Wire.py(server, user.token, [("Prefer", "count=exact")]))
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Range") == "0-4/5")
        let empty = try http.request("GET", "/rest/v1/children?select=name&name=eq.nobody", headers: Wire.py(server, user.token, [("Prefer", "count=exact")]))
        #expect(empty.status == 200 && empty.header("Content-Range") == "*/0" && empty.text == "[]")
        // CSV, aliases and casts.
        let csv = try http.request(
            "GET", "/rest/v1/children?select=name,age&name=in.(Maya,A)&order=name", headers: Wire.py(server, user.token, [("Accept", "text/csv")]))
        #expect(csv.status == 200 && csv.header("Content-Type") == "text/csv; charset=utf-8")
        #expect(csv.text == "name,age\nA,\nMaya,6")
        let alias = try http.request("GET", "/rest/v1/children?select=kid:name,age::text&name=eq.Maya", headers: Wire.py(server, user.token))
        Wire.expectBody(alias, #"[{"kid":"Maya","age":"6"}]"#)

        // update(vals).eq("id", x) and delete().eq("id", x)
        let mayaID = try #require((inserted.jsonArray?.first?["id"] as? String))
        let updated = try http.request(
            "PATCH", "/rest/v1/children?id=eq.\(mayaID)", headers: Wire.py(server, user.token, [("Prefer", "return=representation")]),
            body: #"{"temperament_talkative":8}"#)
        #expect(updated.status == 200)
        #expect(updated.jsonArray?.first?["temperament_talkative"] as? Int == 8 && updated.jsonArray?.first?["id"] as? String == mayaID)
        let deleted = try http.request(
            "DELETE", "/rest/v1/children?id=eq.\(mayaID)", headers: Wire.py(server, user.token, [("Prefer", "return=representation")]), body: "{}")
        #expect(deleted.status == 200 && deleted.header("Content-Range") == "*/*")
        #expect(deleted.jsonArray?.count == 1 && deleted.jsonArray?.first?["name"] as? String == "Maya")
        let deletedMinimal = try http.request(
            "DELETE", "/rest/v1/children?name=eq.A", headers: Wire.py(server, user.token, [("Prefer", "return=minimal,count=exact")]), body: "{}")
        #expect(deletedMinimal.status == 204 && deletedMinimal.header("Content-Range") == "*/1" && deletedMinimal.body.isEmpty)
    }

    @Test func rpcOperations() throws {
        let user = try server.signUp(data: #"{"full_name":"Ada Lovelace"}"#)
        let http = server.client()
        let expected =
            #"{"user_id":"\#(user.id)","email":"\#(try email(of: user.token))","display_name":"Ada Lovelace","onboarding_state":"NOT_STARTED","current_child_id":null}"#
        let post = try http.request("POST", "/rest/v1/rpc/get_user_with_profile", headers: Wire.py(server, user.token), body: #"{"p_user_id":"\#(user.id)"}"#)
        #expect(post.status == 200)
        Wire.expectBody(post, "[\(expected)]")
        let single = try http.request(
            "POST", "/rest/v1/rpc/get_user_with_profile", headers: Wire.py(server, user.token, [("Accept", "application/vnd.pgrst.object+json")]),
            body: #"{"p_user_id":"\#(user.id)"}"#)
        #expect(single.status == 200)
        Wire.expectBody(single, expected)
        let get = try http.request("GET", "/rest/v1/rpc/get_user_with_profile?p_user_id=\(user.id)", headers: Wire.py(server, user.token))
        #expect(get.status == 200)
        Wire.expectBody(get, "[\(expected)]")
        // complete_onboarding(): one row → an object; its P0001 errors are 400 with the server's fields.
        let incomplete = try http.request("POST", "/rest/v1/rpc/complete_onboarding", headers: Wire.py(server, user.token), body: "{}")
        #expect(incomplete.status == 400)
        #expect(
            incomplete.text
                == #"{"code":"P0001","details":"no_children","hint":"Add a child first.","message":"Add at least one child before completing onboarding"}"#)
        _ = try http.request(
            "POST", "/rest/v1/children", headers: Wire.py(server, user.token),
            body: #"{"user_id":"\#(user.id)","name":"Kid","goals":["g"],"topics":["a","b","c"]}"#)
        let complete = try http.request("POST", "/rest/v1/rpc/complete_onboarding", headers: Wire.py(server, user.token), body: "{}")
        #expect(complete.status == 200)
        #expect((complete.jsonObject?["onboarding_state"] as? String) == "COMPLETE")
        // A GET on a volatile function runs read-only: PostgREST's 405.
        let readOnly = try http.request("GET", "/rest/v1/rpc/complete_onboarding", headers: Wire.py(server, user.token))
        #expect(readOnly.status == 405 && readOnly.jsonObject?["code"] as? String == "25006")
        // Unknown function / arguments: PGRST202, with PostgREST's hint of the closest parameters.
        let unknown = try http.request("POST", "/rest/v1/rpc/get_user_with_profile", headers: Wire.py(server, user.token), body: #"{"user":"x"}"#)
        #expect(unknown.status == 404)
        #expect(
            unknown.text
                == #"{"code":"PGRST202","details":"Searched for the function public.get_user_with_profile with parameter user or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.","hint":"Perhaps you meant to call the function public.get_user_with_profile(p_user_id)","message":"Could not find the function public.get_user_with_profile(user) in the schema cache"}"#
        )
        // delete_account(): void → 204, and the account's rows are gone.
        let gone = try http.request("POST", "/rest/v1/rpc/delete_account", headers: Wire.py(server, user.token), body: "{}")
        #expect(gone.status == 204 && gone.body.isEmpty)
    }

    func email(of token: String) throws -> String {
        let payload = String(token.split(separator: ".")[1])
        var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let claims = try JSONSerialization.jsonObject(with: Data(base64Encoded: base64)!) as? [String: Any]
        return claims?["email"] as? String ?? ""
    }

    @Test func transactionPreferences() throws {
        // By default (PostgREST's db-tx-end = commit) `Prefer: tx` is ignored: the write stays.
        // (REVIEW, not COMPLETE: entering COMPLETE needs a child that passes the completion checks.)
        let ignored = try server.signUp()
        let committed = try server.client().request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(ignored.id)", headers: Wire.py(server, ignored.token, [("Prefer", "return=representation, tx=rollback")]),
            body: #"{"onboarding_state":"REVIEW"}"#)
        #expect(committed.status == 200 && committed.header("Preference-Applied") == "return=representation")
        let kept = try server.client().request("GET", "/rest/v1/user_profiles?select=onboarding_state", headers: Wire.py(server, ignored.token))
        Wire.expectBody(kept, #"[{"onboarding_state":"REVIEW"}]"#)

        let server = try TestServer { $0.postgrest.transactionEnd = .commitAllowOverride }
        let user = try server.signUp()
        let http = server.client()
        // tx=rollback where overrides are allowed: the answer shows the change, the database keeps nothing.
        let rolled = try http.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: Wire.py(server, user.token, [("Prefer", "return=representation, tx=rollback")]),
            body: #"{"onboarding_state":"REVIEW"}"#)
        #expect(rolled.status == 200 && rolled.header("Preference-Applied") == "return=representation, tx=rollback")
        #expect(rolled.jsonArray?.first?["onboarding_state"] as? String == "REVIEW")
        let after = try http.request("GET", "/rest/v1/user_profiles?select=onboarding_state", headers: Wire.py(server, user.token))
        Wire.expectBody(after, #"[{"onboarding_state":"NOT_STARTED"}]"#)
        // The object Accept on a write that touches 2 rows: 406 and nothing changes.
        for name in ["x", "y"] {
            _ = try http.request("POST", "/rest/v1/children", headers: Wire.py(server, user.token), body: #"{"user_id":"\#(user.id)","name":"\#(name)"}"#)
        }
        let notSingle = try http.request(
            "PATCH", "/rest/v1/children",
            headers: Wire.py(server, user.token, [("Prefer", "return=representation"), ("Accept", "application/vnd.pgrst.object+json")]), body: #"{"age":9}"#)
        #expect(notSingle.status == 406)
        #expect(
            notSingle.text
                == #"{"code":"PGRST116","details":"The result contains 2 rows","hint":null,"message":"Cannot coerce the result to a single JSON object"}"#)
        // max-affected with handling=strict: 400 PGRST124, rolled back.
        let tooMany = try http.request(
            "DELETE", "/rest/v1/children", headers: Wire.py(server, user.token, [("Prefer", "handling=strict, max-affected=1")]), body: "{}")
        #expect(tooMany.status == 400)
        #expect(
            tooMany.text
                == #"{"code":"PGRST124","details":"The query affects 2 rows","hint":null,"message":"Query result exceeds max-affected preference constraint"}"#)
        let kids = try http.request("GET", "/rest/v1/children?select=name,age&order=name", headers: Wire.py(server, user.token))
        Wire.expectBody(kids, #"[{"name":"x","age":null},{"name":"y","age":null}]"#)
        // A single row with the object Accept commits.
        let one = try http.request(
            "PATCH", "/rest/v1/children?name=eq.x",
            headers: Wire.py(server, user.token, [("Prefer", "return=representation"), ("Accept", "application/vnd.pgrst.object+json")]), body: #"{"age":4}"#)
        #expect(one.status == 200 && one.jsonObject?["age"] as? Int == 4)
        Wire.expectBody(try http.request("GET", "/rest/v1/children?select=age&name=eq.x", headers: Wire.py(server, user.token)), #"[{"age":4}]"#)
    }

    @Test func errorsAsPostgRESTRendersThem() throws {
        let user = try server.signUp()
        let http = server.client()
        func post(_ body: String) throws -> TestResponse {
            try http.request("POST", "/rest/v1/children", headers: Wire.py(server, user.token), body: body)
        }
        let check = try post(#"{"user_id":"\#(user.id)","name":"x","temperament_talkative":11}"#)
        #expect(check.status == 400 && check.jsonObject?["code"] as? String == "23514")
        #expect(check.jsonObject?["message"] as? String == #"new row for relation "children" violates check constraint "valid_temperament_talkative""#)
        #expect(check.header("Proxy-Status") == "PostgREST; error=23514")
        let notNull = try post(#"{"user_id":"\#(user.id)","age":3}"#)
        #expect(
            notNull.status == 400
                && notNull.jsonObject?["message"] as? String == #"null value in column "name" of relation "children" violates not-null constraint"#)
        let badUUID = try http.request("GET", "/rest/v1/children?id=eq.nope", headers: Wire.py(server, user.token))
        #expect(
            badUUID.status == 400 && badUUID.text == #"{"code":"22P02","details":null,"hint":null,"message":"invalid input syntax for type uuid: \"nope\""}"#)
        let fk = try http.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: Wire.py(server, user.token),
            body: #"{"current_child_id":"00000000-0000-4000-8000-000000000000"}"#)
        #expect(fk.status == 409 && fk.jsonObject?["code"] as? String == "23503")
        let badState = try http.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)", headers: Wire.py(server, user.token), body: #"{"onboarding_state":"NOPE"}"#)
        #expect(badState.status == 400 && badState.jsonObject?["code"] as? String == "23514")

        let table = try http.request("GET", "/rest/v1/chilren", headers: Wire.py(server, user.token))
        #expect(table.status == 404)
        #expect(
            table.text
                == #"{"code":"PGRST205","details":null,"hint":"Perhaps you meant the table 'public.children'","message":"Could not find the table 'public.chilren' in the schema cache"}"#
        )
        let column = try http.request("GET", "/rest/v1/children?select=nope", headers: Wire.py(server, user.token))
        #expect(column.status == 400 && column.text == #"{"code":"42703","details":null,"hint":null,"message":"column children.nope does not exist"}"#)
        let grammar = try http.request("GET", "/rest/v1/children?age=xx.1", headers: Wire.py(server, user.token))
        #expect(grammar.status == 400)
        #expect(
            grammar.text
                == #"{"code":"PGRST100","details":"unexpected \"x\" expecting \"not\" or operator (eq, gt, ...)","hint":null,"message":"\"failed to parse filter (xx.1)\" (line 1, column 1)"}"#
        )
        let json = try post("{nope")
        #expect(json.status == 400 && json.text == #"{"code":"PGRST102","details":null,"hint":null,"message":"Empty or invalid json"}"#)
        let schema = try http.request("GET", "/rest/v1/children", headers: Wire.py(server, user.token, [("Accept-Profile", "auth")]))
        #expect(schema.status == 406 && schema.jsonObject?["code"] as? String == "PGRST106")
        let accept = try http.request("GET", "/rest/v1/children", headers: Wire.py(server, user.token, [("Accept", "text/html")]))
        #expect(accept.status == 406 && accept.jsonObject?["code"] as? String == "PGRST107")
        let none = try http.request(
            "GET", "/rest/v1/children?select=%2A&id=eq.00000000-0000-4000-8000-000000000000",
            headers: Wire.py(server, user.token, [("Accept", "application/vnd.pgrst.object+json")]))
        #expect(none.status == 406)
        #expect(
            none.text == #"{"code":"PGRST116","details":"The result contains 0 rows","hint":null,"message":"Cannot coerce the result to a single JSON object"}"#
        )
        let headNone = try http.request(
            "HEAD", "/rest/v1/children?id=eq.00000000-0000-4000-8000-000000000000",
            headers: Wire.py(server, user.token, [("Accept", "application/vnd.pgrst.object+json")]))
        #expect(headNone.status == 406 && headNone.body.isEmpty && headNone.header("Proxy-Status") == "PostgREST; error=PGRST116")
    }

    @Test func credentialErrors() throws {
        let http = server.client()
        let noKey = try http.request("GET", "/rest/v1/children", headers: [("Accept", "*/*")])
        #expect(noKey.status == 401)
        #expect(noKey.jsonObject?["message"] as? String == "No API key found in request")
        #expect(noKey.jsonObject?["hint"] as? String == "No `apikey` request header or url param was found.")
        let now = Int(Date().timeIntervalSince1970)
        let expired = Wire.token(
            server, claims: ["sub": UUID().uuidString.lowercased(), "role": "authenticated", "aud": "authenticated", "exp": now - 3600, "iat": now - 7200])
        let old = try http.request("GET", "/rest/v1/children", headers: Wire.py(server, expired))
        #expect(old.status == 401 && old.jsonObject?["code"] as? String == "PGRST303")
        #expect(old.header("WWW-Authenticate") == #"Bearer error="invalid_token", error_description="JWT expired""#)
        let forged = try http.request("GET", "/rest/v1/children", headers: Wire.py(server, "a.b.c"))
        #expect(forged.status == 401 && forged.jsonObject?["code"] as? String == "PGRST301")
        // A token asking for a role the API doesn't expose is refused before any SQL.
        let superuser = Wire.token(server, claims: ["role": "postgres", "exp": now + 600])
        let escalate = try http.request("GET", "/rest/v1/children", headers: Wire.py(server, superuser))
        #expect(escalate.status == 403 && escalate.jsonObject?["code"] as? String == "42501")
    }

    @Test func openAPIAndBarePaths() throws {
        let user = try server.signUp()
        let http = server.client()
        // The document is the service role's (Supabase's gateways answer others 403).
        for token in [user.token, server.anonKey] {
            let refused = try http.request("GET", "/rest/v1/", headers: Wire.py(server, token))
            #expect(refused.status == 403 && refused.text == #"{"message":"You cannot consume this service"}"#)
        }
        let root = try http.request("GET", "/rest/v1/", headers: Wire.py(server, server.serviceKey))
        #expect(root.status == 200)
        let document = try #require(root.jsonObject)
        #expect(document["swagger"] as? String == "2.0")
        let paths = try #require(document["paths"] as? [String: Any])
        #expect(paths["/children"] != nil && paths["/user_profiles"] != nil && paths["/rpc/get_user_with_profile"] != nil)
        let definitions = try #require(document["definitions"] as? [String: Any])
        let children = try #require((definitions["children"] as? [String: Any])?["properties"] as? [String: Any])
        #expect(children["goals"] != nil && children["user_id"] != nil)
        // OPENAPI_ACCESS=all: PostgREST's follow-privileges listing, so anon sees what anon may use.
        let open = try TestServer { $0.openAPIAccess = .all }
        let anonDocument = try open.client().request("GET", "/rest/v1/", headers: Wire.py(open, nil))
        #expect(anonDocument.status == 200)
        let anonPaths = try #require(anonDocument.jsonObject?["paths"] as? [String: Any])
        #expect(anonPaths["/children"] != nil)  // anon holds privileges; RLS shows it no rows
        for hidden in ["/rpc/join_family", "/rpc/get_family", "/rpc/new_invite_code", "/family_join_failures", "/rpc/shares_family_with", "/rpc/my_family_id"] {
            #expect(anonPaths[hidden] == nil, "\(hidden) listed to anon")
        }
        let userPaths = try #require(
            try open.client().request("GET", "/rest/v1/", headers: Wire.py(open, try open.signUp().token)).jsonObject?["paths"] as? [String: Any])
        #expect(userPaths["/rpc/join_family"] != nil && userPaths["/rpc/new_invite_code"] == nil && userPaths["/rpc/owns_family_of"] == nil)
        let bare = try http.request("GET", "/children?select=name", headers: Wire.py(server, user.token))
        #expect(bare.status == 200 && bare.text == "[]")
        let bareProfile = try http.request("GET", "/user_profiles?select=onboarding_state", headers: Wire.py(server, user.token))
        Wire.expectBody(bareProfile, #"[{"onboarding_state":"NOT_STARTED"}]"#)
    }
}
