import Foundation
import Postgres
import REST
import TestSupport
import Testing

/// Resource embedding over the product's own foreign keys, with the ownership rule on every
/// embedded row: with both layers, with RLS alone and with the middleware alone. Aggregates,
/// spreads, many-to-many embeds, writes' embeds and related orders in the same three
/// configurations. The relationship shapes are `EmbeddingShapeTests`.
@Suite("Resource embedding", .serialized)
struct EmbeddingTests {
    enum Layers: String, CaseIterable, Sendable { case both, rlsOnly, middlewareOnly }

    /// `owners`: more owned tables (table → owner column) for the middleware.
    static func server(_ layers: Layers, owners: [String: String] = [:]) throws -> TestServer {
        let server = try TestServer {
            $0.enforceOwnership = layers != .rlsOnly
            $0.aggregatesEnabled = true
            $0.ownership.ownerColumns.merge(owners) { $1 }
        }
        if layers == .middlewareOnly {
            let admin = try Connection(conninfo: server.databaseURL)
            try admin.execute(
                """
                ALTER TABLE public.children DISABLE ROW LEVEL SECURITY; ALTER TABLE public.user_profiles DISABLE ROW LEVEL SECURITY;
                ALTER TABLE public.families DISABLE ROW LEVEL SECURITY; ALTER TABLE public.family_members DISABLE ROW LEVEL SECURITY
                """)
        }
        return server
    }

    @Test(arguments: Layers.allCases)
    func embedsFollowForeignKeysAndOwnership(_ layers: Layers) throws {
        let server = try Self.server(layers)
        let http = server.client()
        let a = try server.signUp(data: #"{"full_name":"Ada"}"#)
        let b = try server.signUp(data: #"{"full_name":"Ben"}"#)
        let c = try server.signUp()

        // Many-to-one through the composite key (current_child_id, id) → children (id, user_id).
        let child = try http.request(
            "POST", "/rest/v1/children", headers: server.headers(a.token, [("Prefer", "return=representation")]),
            body: #"{"user_id":"\#(a.id)","name":"Kid","age":4}"#)
        let childID = try #require(child.jsonArray?.first?["id"] as? String)
        _ = try http.request("PATCH", "/rest/v1/user_profiles?id=eq.\(a.id)", headers: server.headers(a.token), body: #"{"current_child_id":"\#(childID)"}"#)
        let profile = try server.get("/rest/v1/user_profiles?select=id,onboarding_state,children!current_child_id(name,age)", token: a.token)
        #expect(profile.status == 200, "\(profile.text)")
        #expect(profile.compactJSON == #"[{"children":{"age":4,"name":"Kid"},"id":"\#(a.id)","onboarding_state":"NOT_STARTED"}]"#, "\(profile.text)")
        // An alias names the embed.
        let aliased = try server.get("/rest/v1/user_profiles?select=current:children!current_child_id(name)", token: a.token)
        #expect(aliased.compactJSON == #"[{"current":{"name":"Kid"}}]"#, "\(aliased.text)")

        // One-to-many: a family with its members; B joins A's family, C stays outside.
        let created = try http.request("POST", "/rest/v1/rpc/create_family", headers: server.headers(a.token), body: #"{"name":"Fam"}"#)
        let code = try #require(created.jsonObject?["invite_code"] as? String)
        #expect(try http.request("POST", "/rest/v1/rpc/join_family", headers: server.headers(b.token), body: #"{"code":"\#(code)"}"#).status == 200)
        let family = try server.get("/rest/v1/families?select=name,family_members(role)&family_members.order=role.desc", token: b.token)
        #expect(family.compactJSON == #"[{"family_members":[{"role":"parent"},{"role":"owner"}],"name":"Fam"}]"#, "\(family.text)")
        // !inner with an embedded filter: the family only if it has a member matching.
        let owners = try server.get("/rest/v1/families?select=name,family_members!inner(role)&family_members.role=eq.owner", token: b.token)
        #expect(owners.compactJSON == #"[{"family_members":[{"role":"owner"}],"name":"Fam"}]"#, "\(owners.text)")
        let none = try server.get("/rest/v1/families?select=name,family_members!inner(role)&family_members.role=eq.nobody", token: b.token)
        #expect(none.text == "[]", "\(none.text)")

        // C sees nothing of it, however it embeds.
        for target in [
            "/rest/v1/families?select=*,family_members(*)", "/rest/v1/families?select=name,family_members!inner(user_id)",
            "/rest/v1/user_profiles?select=id,children!current_child_id(*)", "/rest/v1/family_members?select=*,families(*)"
        ] {
            let seen = try server.get(target, token: c.token)
            #expect(seen.status == 200, "\(layers) \(target): \(seen.text)")
            #expect(!seen.text.contains(a.id) && !seen.text.contains("Fam") && !seen.text.contains("Kid"), "\(layers) \(target): \(seen.text)")
        }
        // And the anon key nothing at all.
        let anonymous = try server.get("/rest/v1/families?select=*,family_members(*)", token: server.anonKey)
        #expect(anonymous.text == "[]" || anonymous.status == 401, "\(anonymous.status) \(anonymous.text)")
    }

    @Test(arguments: Layers.allCases)
    func aggregatesAndSpreadsCountOnlyWhatTheCallerMaySee(_ layers: Layers) throws {
        let server = try Self.server(layers)
        let http = server.client()
        let a = try server.signUp()
        let b = try server.signUp()
        let c = try server.signUp()
        var kid = ""
        for (name, age) in [("Kid", 4), ("Teen", 13)] {
            let child = try http.request(
                "POST", "/rest/v1/children", headers: server.headers(a.token, [("Prefer", "return=representation")]),
                body: #"{"user_id":"\#(a.id)","name":"\#(name)","age":\#(age)}"#)
            #expect(child.status == 201, "\(child.text)")
            if name == "Kid" { kid = try #require(child.jsonArray?.first?["id"] as? String) }
        }
        #expect(
            try http.request("POST", "/rest/v1/children", headers: server.headers(b.token), body: #"{"user_id":"\#(b.id)","name":"Bee","age":30}"#).status
                == 201)
        _ = try http.request("PATCH", "/rest/v1/user_profiles?id=eq.\(a.id)", headers: server.headers(a.token), body: #"{"current_child_id":"\#(kid)"}"#)

        // Before any family: each counts and sums their own children only; an outsider 0.
        #expect(try server.get("/rest/v1/children?select=count(),age.sum()", token: a.token).compactJSON == #"[{"count":2,"sum":17}]"#)
        #expect(try server.get("/rest/v1/children?select=count(),age.sum()", token: b.token).compactJSON == #"[{"count":1,"sum":30}]"#)
        #expect(
            try server.get("/rest/v1/children?select=count(),age.sum(),age.max()", token: c.token).compactJSON == #"[{"count":0,"max":null,"sum":null}]"#,
            "\(layers)")
        #expect(try server.get("/rest/v1/children?select=name,age.sum()&order=name", token: c.token).compactJSON == "[]")
        // An embedded count counts the embedded rows the caller may see: A's profile points at
        // Kid, which A sees and C does not (C's own children are none).
        #expect(
            try server.get("/rest/v1/children?select=name,user_profiles(count())&order=name", token: a.token).compactJSON
                == #"[{"name":"Kid","user_profiles":[{"count":1}]},{"name":"Teen","user_profiles":[{"count":0}]}]"#)
        #expect(
            try server.get("/rest/v1/user_profiles?select=id,children!current_child_id(age.sum())", token: c.token).compactJSON
                == #"[{"children":{"sum":null},"id":"\#(c.id)"}]"#, "\(layers)")

        // B joins A's family: B now reads A's children (and counts them), but still not A's
        // profile, so the embedded count of profiles pointing at Kid is 0 for B.
        let created = try http.request("POST", "/rest/v1/rpc/create_family", headers: server.headers(a.token), body: #"{"name":"Fam"}"#)
        let code = try #require(created.jsonObject?["invite_code"] as? String)
        #expect(try http.request("POST", "/rest/v1/rpc/join_family", headers: server.headers(b.token), body: #"{"code":"\#(code)"}"#).status == 200)
        #expect(try server.get("/rest/v1/children?select=count(),age.sum()", token: b.token).compactJSON == #"[{"count":3,"sum":47}]"#, "\(layers)")
        #expect(
            try server.get("/rest/v1/children?select=name,user_profiles(count())&name=eq.Kid", token: b.token).compactJSON
                == #"[{"name":"Kid","user_profiles":[{"count":0}]}]"#, "\(layers)")
        #expect(try server.get("/rest/v1/children?select=count(),age.sum()", token: c.token).compactJSON == #"[{"count":0,"sum":null}]"#, "\(layers)")
        // Family members per family, counted inside the embed: C sees no family at all.
        #expect(
            try server.get("/rest/v1/families?select=name,family_members(count())", token: b.token).compactJSON
                == #"[{"family_members":[{"count":2}],"name":"Fam"}]"#)
        #expect(try server.get("/rest/v1/families?select=name,family_members(count())", token: c.token).text == "[]")

        // Spread: A's current child merged into A's profile; nobody else reaches it.
        #expect(
            try server.get("/rest/v1/user_profiles?select=id,...children!current_child_id(child:name,age)", token: a.token).compactJSON
                == #"[{"age":4,"child":"Kid","id":"\#(a.id)"}]"#)
        for token in [b.token, c.token] {
            let spread = try server.get("/rest/v1/user_profiles?select=id,...children!current_child_id(child:name)", token: token)
            #expect(spread.status == 200 && !spread.text.contains("Kid") && !spread.text.contains(a.id), "\(layers): \(spread.text)")
            #expect(try server.get("/rest/v1/user_profiles?select=id,...children!current_child_id!inner(name)", token: token).text == "[]", "\(layers)")
        }
        #expect(try server.get("/rest/v1/family_members?select=role,...families(family:name)&order=role", token: c.token).compactJSON == "[]")
        #expect(
            try server.get("/rest/v1/family_members?select=role,...families(family:name)&order=role", token: b.token).compactJSON
                == #"[{"family":"Fam","role":"owner"},{"family":"Fam","role":"parent"}]"#)
        // Aggregates hoisted out of a spread count what the caller sees of both tables.
        #expect(
            try server.get("/rest/v1/family_members?select=...families(families:count()),members:count()", token: b.token).compactJSON
                == #"[{"families":2,"members":2}]"#)
        #expect(
            try server.get("/rest/v1/family_members?select=...families(families:count()),members:count()", token: c.token).compactJSON
                == #"[{"families":0,"members":0}]"#)
        let anonymous = try server.get("/rest/v1/children?select=count()", token: server.anonKey)
        #expect(anonymous.compactJSON == #"[{"count":0}]"# || anonymous.status == 401, "\(anonymous.status) \(anonymous.text)")
    }

    @Test(arguments: Layers.allCases)
    func manyToManyFollowsOwnershipOnBothTables(_ layers: Layers) throws {
        // Tags owned by users, linked to children through a junction whose rows have owners too.
        let server = try Self.server(layers, owners: ["fx_tags": "owner_id", "fx_child_tags": "owner_id"])
        let admin = try Connection(conninfo: server.databaseURL)
        try admin.execute(
            """
            CREATE TABLE public.fx_tags (id int PRIMARY KEY, owner_id uuid NOT NULL, label text NOT NULL);
            CREATE TABLE public.fx_child_tags (child_id uuid REFERENCES public.children (id) ON DELETE CASCADE,
                                               tag_id int REFERENCES public.fx_tags, owner_id uuid NOT NULL, PRIMARY KEY (child_id, tag_id));
            GRANT ALL ON public.fx_tags, public.fx_child_tags TO authenticated, service_role;
            ALTER TABLE public.fx_tags ENABLE ROW LEVEL SECURITY;
            ALTER TABLE public.fx_child_tags ENABLE ROW LEVEL SECURITY;
            CREATE POLICY own ON public.fx_tags USING (owner_id = auth.uid());
            CREATE POLICY own ON public.fx_child_tags USING (owner_id = auth.uid());
            """)
        if layers == .middlewareOnly {
            try admin.execute("ALTER TABLE public.fx_tags DISABLE ROW LEVEL SECURITY; ALTER TABLE public.fx_child_tags DISABLE ROW LEVEL SECURITY")
        }
        let http = server.client()
        #expect(
            eventually {
                try? admin.execute("NOTIFY pgrst, 'reload schema'")
                return (try? http.request("GET", "/rest/v1/fx_child_tags", headers: server.headers(server.serviceKey)).status) == 200
            })
        let a = try server.signUp()
        let c = try server.signUp()
        let child = try http.request(
            "POST", "/rest/v1/children", headers: server.headers(a.token, [("Prefer", "return=representation")]),
            body: #"{"user_id":"\#(a.id)","name":"Kid"}"#)
        let kid = try #require(child.jsonArray?.first?["id"] as? String)
        // A's tag, C's tag linked by A's junction row, and A's tag linked only by C's junction row.
        try admin.execute(
            unsafeSQL: """
                INSERT INTO public.fx_tags VALUES (1, '\(a.id)', 'mine'), (2, '\(c.id)', 'theirs'), (3, '\(a.id)', 'linked-by-them');
                INSERT INTO public.fx_child_tags VALUES ('\(kid)', 1, '\(a.id)'), ('\(kid)', 2, '\(a.id)'), ('\(kid)', 3, '\(c.id)');
                """)
        let service = try server.get("/rest/v1/children?select=name,fx_tags(label)&fx_tags.order=id", token: server.serviceKey)
        #expect(service.compactJSON == #"[{"fx_tags":[{"label":"mine"},{"label":"theirs"},{"label":"linked-by-them"}],"name":"Kid"}]"#, "\(service.text)")
        // A: only tags A may read, reached through junction rows A may read.
        #expect(
            try server.get("/rest/v1/children?select=name,fx_tags(label)", token: a.token).compactJSON == #"[{"fx_tags":[{"label":"mine"}],"name":"Kid"}]"#,
            "\(layers)")
        #expect(
            try server.get("/rest/v1/children?select=name,fx_tags(count())", token: a.token).compactJSON == #"[{"fx_tags":[{"count":1}],"name":"Kid"}]"#,
            "\(layers)")
        #expect(
            try server.get("/rest/v1/fx_tags?select=label,children(name)&order=id", token: a.token).compactJSON
                == #"[{"children":[{"name":"Kid"}],"label":"mine"},{"children":[],"label":"linked-by-them"}]"#, "\(layers)")
        // C: its tag, but not A's child through it; nothing through C's own junction row.
        #expect(
            try server.get("/rest/v1/fx_tags?select=label,children(name)", token: c.token).compactJSON == #"[{"children":[],"label":"theirs"}]"#, "\(layers)")
        #expect(try server.get("/rest/v1/fx_tags?select=label,children!inner(name)", token: c.token).text == "[]", "\(layers)")
        #expect(try server.get("/rest/v1/children?select=name,fx_tags(label)", token: c.token).text == "[]", "\(layers)")
    }

    /// A write's embeds reach only rows the caller could `GET`: the ownership rule (and RLS) on
    /// every embedded row, as on reads.
    @Test(arguments: Layers.allCases)
    func writesEmbedOnlyWhatTheCallerMayRead(_ layers: Layers) throws {
        let server = try Self.server(layers, owners: ["fx_notes": "owner_id"])
        let admin = try server.installFixtures(
            """
            CREATE TABLE public.fx_notes (id int PRIMARY KEY, owner_id uuid NOT NULL,
                                          child_id uuid NOT NULL REFERENCES public.children (id) ON DELETE CASCADE, body text);
            GRANT ALL ON public.fx_notes TO authenticated, service_role;
            ALTER TABLE public.fx_notes ENABLE ROW LEVEL SECURITY;
            CREATE POLICY own ON public.fx_notes USING (owner_id = auth.uid());
            -- A computed relationship: the note's child.
            CREATE FUNCTION public.fx_note_child(public.fx_notes) RETURNS SETOF public.children ROWS 1 LANGUAGE sql STABLE
                AS $$ SELECT * FROM public.children WHERE id = $1.child_id $$;
            """, probe: "/rest/v1/fx_notes")
        if layers == .middlewareOnly { try admin.execute("ALTER TABLE public.fx_notes DISABLE ROW LEVEL SECURITY") }
        let http = server.client()
        let a = try server.signUp()
        let c = try server.signUp()
        func send(_ method: String, _ target: String, _ token: String, _ body: String? = nil) throws -> TestResponse {
            try http.request(method, "/rest/v1/" + target, headers: server.headers(token, [("Prefer", "return=representation")]), body: body)
        }
        let child = try send("POST", "children?select=id,name,fx_notes(body)", a.token, #"{"user_id":"\#(a.id)","name":"Kid"}"#)
        let kid = try #require(child.jsonArray?.first?["id"] as? String, "\(layers): \(child.text)")
        #expect(child.compactJSON == #"[{"fx_notes":[],"id":"\#(kid)","name":"Kid"}]"#)
        // A's note and C's note on A's child.
        try admin.execute(unsafeSQL: "INSERT INTO public.fx_notes VALUES (1, '\(a.id)', '\(kid)', 'a-note'), (2, '\(c.id)', '\(kid)', 'c-note')")

        // A's update embeds A's note, not C's.
        let patched = try send("PATCH", "children?id=eq.\(kid)&select=name,fx_notes(body)", a.token, #"{"age":5}"#)
        #expect(patched.compactJSON == #"[{"fx_notes":[{"body":"a-note"}],"name":"Kid"}]"#, "\(layers): \(patched.text)")
        let mine = try send("POST", "fx_notes?select=body,children(name)", a.token, #"{"id":3,"owner_id":"\#(a.id)","child_id":"\#(kid)","body":"mine"}"#)
        #expect(mine.compactJSON == #"[{"body":"mine","children":{"name":"Kid"}}]"#, "\(layers): \(mine.text)")

        // C may write a note pointing at A's child, but its answer embeds nothing of A's.
        let sneaky = try send("POST", "fx_notes?select=body,children(name)", c.token, #"{"id":4,"owner_id":"\#(c.id)","child_id":"\#(kid)","body":"sneaky"}"#)
        #expect(sneaky.status == 201 && sneaky.compactJSON == #"[{"body":"sneaky","children":null}]"#, "\(layers): \(sneaky.text)")
        for target in [
            "fx_notes?id=eq.4&select=body,children(name,fx_notes(body))", "fx_notes?id=eq.4&select=body,...children(name)",
            "fx_notes?id=eq.4&select=body,children!inner(*)", "fx_notes?id=eq.4&select=*,children(count())"
        ] {
            let seen = try send("PATCH", target, c.token, #"{"body":"sneaky"}"#)
            #expect(seen.status == 200 && !seen.text.contains("Kid") && !seen.text.contains(a.id), "\(layers) \(target): \(seen.text)")
        }
        let spread = try send("PATCH", "fx_notes?id=eq.4&select=body,...children(name)", c.token, #"{"body":"sneaky"}"#)
        #expect(spread.compactJSON == #"[{"body":"sneaky","name":null}]"#, "\(layers): \(spread.text)")
        // Through a computed relationship too: the function's rows get the caller's read rule.
        let computed = try send("PATCH", "fx_notes?id=eq.4&select=body,fx_note_child(name)", c.token, #"{"body":"sneaky"}"#)
        #expect(computed.compactJSON == #"[{"body":"sneaky","fx_note_child":null}]"#, "\(layers): \(computed.text)")
        let owned = try send("GET", "fx_notes?id=eq.1&select=body,fx_note_child(name)", a.token)
        #expect(owned.compactJSON == #"[{"body":"a-note","fx_note_child":{"name":"Kid"}}]"#, "\(layers): \(owned.text)")

        // A deletes the child: the answer holds A's notes (which the cascade removes), never C's.
        let deleted = try send("DELETE", "children?id=eq.\(kid)&select=name,fx_notes(body)&fx_notes.order=id", a.token)
        #expect(deleted.compactJSON == #"[{"fx_notes":[{"body":"a-note"},{"body":"mine"}],"name":"Kid"}]"#, "\(layers): \(deleted.text)")
        #expect(try send("GET", "fx_notes", server.serviceKey).text == "[]")
    }

    /// An order by an embedded column reaches only rows the caller may read: a related row it may
    /// not read orders as NULL, so the order reveals nothing of it.
    @Test(arguments: Layers.allCases)
    func relatedOrderSeesOnlyWhatTheCallerMayRead(_ layers: Layers) throws {
        let server = try Self.server(layers, owners: ["fx_notes": "owner_id"])
        let admin = try server.installFixtures(
            """
            CREATE TABLE public.fx_notes (id int PRIMARY KEY, owner_id uuid NOT NULL, child_id uuid NOT NULL REFERENCES public.children (id), body text);
            GRANT ALL ON public.fx_notes TO authenticated, service_role;
            ALTER TABLE public.fx_notes ENABLE ROW LEVEL SECURITY;
            CREATE POLICY own ON public.fx_notes USING (owner_id = auth.uid());
            """, probe: "/rest/v1/fx_notes")
        if layers == .middlewareOnly { try admin.execute("ALTER TABLE public.fx_notes DISABLE ROW LEVEL SECURITY") }
        let http = server.client()
        let a = try server.signUp()
        let c = try server.signUp()
        var kids: [String] = []
        for name in ["Zed", "Amy"] {
            let child = try http.request(
                "POST", "/rest/v1/children", headers: server.headers(a.token, [("Prefer", "return=representation")]),
                body: #"{"user_id":"\#(a.id)","name":"\#(name)"}"#)
            kids.append(try #require(child.jsonArray?.first?["id"] as? String))
        }
        // Notes of both users on A's children: 1 and 3 on Zed, 2 and 4 on Amy.
        try admin.execute(
            unsafeSQL: """
                INSERT INTO public.fx_notes VALUES (1, '\(a.id)', '\(kids[0])', 'a1'), (2, '\(a.id)', '\(kids[1])', 'a2'),
                                                   (3, '\(c.id)', '\(kids[0])', 'c1'), (4, '\(c.id)', '\(kids[1])', 'c2')
                """)
        func ids(_ target: String, _ token: String) throws -> [Int] {
            let response = try http.request("GET", "/rest/v1/" + target, headers: server.headers(token))
            #expect(response.status == 200, "\(layers): \(response.text)")
            return response.jsonArray?.compactMap { $0["id"] as? Int } ?? []
        }
        #expect(try ids("fx_notes?select=id,children(name)&order=children(name),id", server.serviceKey) == [2, 4, 1, 3])
        #expect(try ids("fx_notes?select=id,children(name)&order=children(name),id", a.token) == [2, 1], "\(layers)")
        // C's notes point at children C may not read: ordered as NULL, so by id only (by the
        // children's names they would be [4, 3], then [3, 4]).
        #expect(try ids("fx_notes?select=id,children(name)&order=children(name),id", c.token) == [3, 4], "\(layers)")
        #expect(try ids("fx_notes?select=id,children(name)&order=children(name).desc,id.desc", c.token) == [4, 3], "\(layers)")
    }

}
