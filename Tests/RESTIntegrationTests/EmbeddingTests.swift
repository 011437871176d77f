import Foundation
import Postgres
import TestSupport
import Testing

/// Resource embedding over the product's own foreign keys, with the ownership rule on every
/// embedded row: with both layers, with RLS alone and with the middleware alone.
@Suite("Resource embedding", .serialized)
struct EmbeddingTests {
    enum Layers: String, CaseIterable, Sendable { case both, rlsOnly, middlewareOnly }

    static func server(_ layers: Layers) throws -> TestServer {
        let server = try TestServer { $0.enforceOwnership = layers != .rlsOnly }
        if layers == .middlewareOnly {
            let admin = try Connection(conninfo: server.databaseURL)
            try admin.execute("""
                ALTER TABLE public.children DISABLE ROW LEVEL SECURITY; ALTER TABLE public.user_profiles DISABLE ROW LEVEL SECURITY;
                ALTER TABLE public.families DISABLE ROW LEVEL SECURITY; ALTER TABLE public.family_members DISABLE ROW LEVEL SECURITY
                """)
        }
        return server
    }

    /// The body's JSON re-serialised compactly with sorted keys.
    static func compact(_ response: TestResponse) -> String {
        guard let value = response.json, let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) else {
            return response.text
        }
        return String(decoding: data, as: UTF8.self)
    }

    @Test(arguments: Layers.allCases)
    func embedsFollowForeignKeysAndOwnership(_ layers: Layers) throws {
        let server = try Self.server(layers)
        let http = server.client()
        let a = try server.signUp(data: #"{"full_name":"Ada"}"#), b = try server.signUp(data: #"{"full_name":"Ben"}"#), c = try server.signUp()
        func get(_ target: String, _ token: String) throws -> TestResponse { try http.request("GET", target, headers: server.headers(token)) }

        // Many-to-one through the composite key (current_child_id, id) → children (id, user_id).
        let child = try http.request("POST", "/rest/v1/children", headers: server.headers(a.token, [("Prefer", "return=representation")]),
                                     body: #"{"user_id":"\#(a.id)","name":"Kid","age":4}"#)
        let childID = try #require(child.jsonArray?.first?["id"] as? String)
        _ = try http.request("PATCH", "/rest/v1/user_profiles?id=eq.\(a.id)", headers: server.headers(a.token), body: #"{"current_child_id":"\#(childID)"}"#)
        let profile = try get("/rest/v1/user_profiles?select=id,onboarding_state,children!current_child_id(name,age)", a.token)
        #expect(profile.status == 200, "\(profile.text)")
        #expect(Self.compact(profile) == #"[{"children":{"age":4,"name":"Kid"},"id":"\#(a.id)","onboarding_state":"NOT_STARTED"}]"#, "\(profile.text)")
        // An alias names the embed.
        let aliased = try get("/rest/v1/user_profiles?select=current:children!current_child_id(name)", a.token)
        #expect(Self.compact(aliased) == #"[{"current":{"name":"Kid"}}]"#, "\(aliased.text)")

        // One-to-many: a family with its members; B joins A's family, C stays outside.
        let created = try http.request("POST", "/rest/v1/rpc/create_family", headers: server.headers(a.token), body: #"{"name":"Fam"}"#)
        let code = try #require(created.jsonObject?["invite_code"] as? String)
        #expect(try http.request("POST", "/rest/v1/rpc/join_family", headers: server.headers(b.token), body: #"{"code":"\#(code)"}"#).status == 200)
        let family = try get("/rest/v1/families?select=name,family_members(role)&family_members.order=role.desc", b.token)
        #expect(Self.compact(family) == #"[{"family_members":[{"role":"parent"},{"role":"owner"}],"name":"Fam"}]"#, "\(family.text)")
        // !inner with an embedded filter: the family only if it has a member matching.
        let owners = try get("/rest/v1/families?select=name,family_members!inner(role)&family_members.role=eq.owner", b.token)
        #expect(Self.compact(owners) == #"[{"family_members":[{"role":"owner"}],"name":"Fam"}]"#, "\(owners.text)")
        let none = try get("/rest/v1/families?select=name,family_members!inner(role)&family_members.role=eq.nobody", b.token)
        #expect(none.text == "[]", "\(none.text)")

        // C sees nothing of it, however it embeds.
        for target in ["/rest/v1/families?select=*,family_members(*)", "/rest/v1/families?select=name,family_members!inner(user_id)",
                       "/rest/v1/user_profiles?select=id,children!current_child_id(*)", "/rest/v1/family_members?select=*,families(*)"] {
            let seen = try get(target, c.token)
            #expect(seen.status == 200, "\(layers) \(target): \(seen.text)")
            #expect(!seen.text.contains(a.id) && !seen.text.contains("Fam") && !seen.text.contains("Kid"), "\(layers) \(target): \(seen.text)")
        }
        // And the anon key nothing at all.
        let anonymous = try get("/rest/v1/families?select=*,family_members(*)", server.anonKey)
        #expect(anonymous.text == "[]" || anonymous.status == 401, "\(anonymous.status) \(anonymous.text)")
    }

    @Test func relationshipErrorsAsPostgREST() throws {
        let server = try Self.server(.both)
        let user = try server.signUp()
        let http = server.client()
        let missing = try http.request("GET", "/rest/v1/children?select=*,families(*)", headers: server.headers(user.token))
        #expect(missing.status == 400 && missing.jsonObject?["code"] as? String == "PGRST200", "\(missing.text)")
        #expect(missing.jsonObject?["message"] as? String == "Could not find a relationship between 'children' and 'families' in the schema cache")
        let wrongHint = try http.request("GET", "/rest/v1/user_profiles?select=*,children!nope(*)", headers: server.headers(user.token))
        #expect(wrongHint.status == 400 && wrongHint.jsonObject?["code"] as? String == "PGRST200")
        let column = try http.request("GET", "/rest/v1/user_profiles?select=children!current_child_id(nope)", headers: server.headers(user.token))
        #expect(column.status == 400 && column.jsonObject?["code"] as? String == "42703")
        let grammar = try http.request("GET", "/rest/v1/user_profiles?select=children!current_child_id(name", headers: server.headers(user.token))
        #expect(grammar.status == 400 && grammar.jsonObject?["code"] as? String == "PGRST100")

        // Two keys between the same tables: PGRST201 until a hint chooses.
        let admin = try Connection(conninfo: server.databaseURL)
        try admin.execute("""
            CREATE TABLE public.fx_people (id int PRIMARY KEY, name text);
            CREATE TABLE public.fx_letters (id int PRIMARY KEY, sender int REFERENCES public.fx_people, receiver int REFERENCES public.fx_people);
            INSERT INTO public.fx_people VALUES (1, 'ann'), (2, 'bob');
            INSERT INTO public.fx_letters VALUES (1, 1, 2);
            GRANT ALL ON public.fx_people, public.fx_letters TO service_role;
            """)
        let service = server.headers(server.serviceKey)
        #expect(eventually {
            try? admin.execute("NOTIFY pgrst, 'reload schema'")
            return (try? http.request("GET", "/rest/v1/fx_letters", headers: service).status) == 200
        })
        let ambiguous = try http.request("GET", "/rest/v1/fx_letters?select=*,fx_people(*)", headers: service)
        #expect(ambiguous.status == 300 && ambiguous.jsonObject?["code"] as? String == "PGRST201", "\(ambiguous.text)")
        #expect((ambiguous.jsonObject?["details"] as? [[String: Any]])?.count == 2)
        let chosen = try http.request("GET", "/rest/v1/fx_letters?select=id,from:fx_people!sender(name),to:fx_people!receiver(name)", headers: service)
        #expect(Self.compact(chosen) == #"[{"from":{"name":"ann"},"id":1,"to":{"name":"bob"}}]"#, "\(chosen.text)")
        let received = try http.request("GET", "/rest/v1/fx_people?select=name,fx_letters!receiver(id)&order=id", headers: service)
        #expect(Self.compact(received) == #"[{"fx_letters":[],"name":"ann"},{"fx_letters":[{"id":1}],"name":"bob"}]"#, "\(received.text)")
    }
}
