import Foundation
import Postgres
import TestSupport
import Testing

/// Two users and an anonymous caller against every verb, with both ownership layers, with RLS
/// alone (middleware off) and with the middleware alone (RLS disabled in this test database):
/// nobody reads, changes, deletes or plants another user's rows.
@Suite("Two-user isolation matrix", .serialized)
struct IsolationMatrixTests {
    enum Layers: String, CaseIterable, Sendable { case both, rlsOnly, middlewareOnly }

    @Test(arguments: Layers.allCases)
    func nobodyReachesAnotherUsersRows(_ layers: Layers) throws {
        let server = try TestServer { config in config.enforceOwnership = layers != .rlsOnly }
        if layers == .middlewareOnly {
            let admin = try Connection(conninfo: server.databaseURL)
            try admin.execute("ALTER TABLE public.children DISABLE ROW LEVEL SECURITY; ALTER TABLE public.user_profiles DISABLE ROW LEVEL SECURITY")
        }
        let a = try server.signUp()
        let b = try server.signUp()
        let http = server.client()
        func call(_ method: String, _ target: String, _ token: String?, _ extra: [(String, String)] = [], body: String? = nil) throws -> TestResponse {
            try http.request(method, target, headers: Wire.py(server, token, extra), body: body)
        }
        let made = try call(
            "POST", "/rest/v1/children", a.token, [("Prefer", "return=representation")], body: #"{"user_id":"\#(a.id)","name":"A1","goals":["g"]}"#)
        #expect(made.status == 201)
        let aChild = try #require(made.jsonArray?.first?["id"] as? String)
        _ = try call("PATCH", "/rest/v1/user_profiles?id=eq.\(a.id)", a.token, body: #"{"onboarding_state":"GOALS"}"#)

        // Reads.
        for target in [
            "/rest/v1/children", "/rest/v1/children?id=eq.\(aChild)", "/rest/v1/children?user_id=eq.\(a.id.uppercased())",
            "/rest/v1/user_profiles?id=eq.\(a.id)", "/children?select=%2A", "/rest/v1/children?or=(user_id.eq.\(a.id),name.eq.A1)"
        ] {
            let read = try call("GET", target, b.token)
            #expect(read.status == 200 && read.text == "[]", "\(layers) GET \(target): \(read.status) \(read.text)")
        }
        let head = try call("HEAD", "/rest/v1/children", b.token, [("Prefer", "count=exact")])
        #expect(head.status == 200 && head.header("Content-Range") == "*/0")
        let single = try call("GET", "/rest/v1/user_profiles?id=eq.\(a.id)", b.token, [("Accept", "application/vnd.pgrst.object+json")])
        #expect(single.status == 406 && single.jsonObject?["code"] as? String == "PGRST116")
        let rpc = try call("POST", "/rest/v1/rpc/get_user_with_profile", b.token, body: #"{"p_user_id":"\#(a.id)"}"#)
        #expect(rpc.status == 200 && rpc.text == "[]")

        // Updates and deletes reach nothing.
        for (method, target, body) in [
            ("PATCH", "/rest/v1/children?id=eq.\(aChild)", #"{"name":"stolen"}"#),
            ("PATCH", "/rest/v1/children", #"{"name":"stolen"}"#),
            ("PATCH", "/rest/v1/user_profiles?id=eq.\(a.id)", #"{"onboarding_state":"COMPLETE"}"#),
            ("DELETE", "/rest/v1/children?id=eq.\(aChild)", "{}"),
            ("DELETE", "/rest/v1/children", "{}")
        ] {
            let write = try call(method, target, b.token, [("Prefer", "return=representation")], body: body)
            #expect(write.status == 200 && write.text == "[]", "\(layers) \(method) \(target): \(write.status) \(write.text)")
        }

        // Planting rows for A, or moving rows to A: 403 42501 in every layer.
        for (method, target, prefer, body) in [
            ("POST", "/rest/v1/children", "return=representation", #"{"user_id":"\#(a.id.uppercased())","name":"planted"}"#),
            (
                "POST", "/rest/v1/children?columns=%22user_id%22,%22name%22", "return=representation",
                #"[{"user_id":"\#(b.id)","name":"mine"},{"user_id":"\#(a.id)","name":"planted"}]"#
            ),
            (
                "POST", "/rest/v1/user_profiles?on_conflict=id", "return=representation,resolution=merge-duplicates",
                #"{"id":"\#(a.id)","onboarding_state":"COMPLETE"}"#
            ),
            ("PUT", "/rest/v1/user_profiles?id=eq.\(a.id)", "return=representation", #"{"id":"\#(a.id)","onboarding_state":"COMPLETE"}"#)
        ] {
            let write = try call(method, target, b.token, [("Prefer", prefer)], body: body)
            #expect(write.status == 403 && write.jsonObject?["code"] as? String == "42501", "\(layers) \(method) \(target): \(write.status) \(write.text)")
        }
        // Taking over A's child through an upsert on its id: refused or a no-op.
        let takeover = try call(
            "POST", "/rest/v1/children?on_conflict=id", b.token, [("Prefer", "return=representation,resolution=merge-duplicates")],
            body: #"{"id":"\#(aChild)","user_id":"\#(b.id)","name":"taken"}"#)
        #expect(takeover.status == 403 || (takeover.status == 200 && takeover.text == "[]"), "\(layers) takeover: \(takeover.status) \(takeover.text)")
        let ignored = try call(
            "POST", "/rest/v1/children?on_conflict=id", b.token, [("Prefer", "return=representation,resolution=ignore-duplicates")],
            body: #"{"id":"\#(aChild)","user_id":"\#(b.id)","name":"taken"}"#)
        #expect(ignored.status == 201 && ignored.text == "[]")
        // Moving B's own row to A.
        let own = try call("POST", "/rest/v1/children", b.token, [("Prefer", "return=representation")], body: #"{"user_id":"\#(b.id)","name":"B1"}"#)
        let bChild = try #require(own.jsonArray?.first?["id"] as? String)
        let move = try call("PATCH", "/rest/v1/children?id=eq.\(bChild)", b.token, body: #"{"user_id":"\#(a.id)"}"#)
        #expect(move.status == 403 && move.jsonObject?["code"] as? String == "42501")
        let moveProfile = try call("PATCH", "/rest/v1/user_profiles?id=eq.\(b.id)", b.token, body: #"{"id":"\#(a.id)"}"#)
        #expect(moveProfile.status == 403 && moveProfile.jsonObject?["code"] as? String == "42501")

        // Anonymous callers: nothing to read; writes refused (401) or reaching nothing.
        #expect(try call("GET", "/rest/v1/children", nil).text == "[]")
        #expect(try call("GET", "/rest/v1/user_profiles", nil).text == "[]")
        let anonInsert = try call("POST", "/rest/v1/children", nil, body: #"{"user_id":"\#(a.id)","name":"anon"}"#)
        #expect(anonInsert.status == 401 && anonInsert.jsonObject?["code"] as? String == "42501")
        for (method, target, body) in [("PATCH", "/rest/v1/children", #"{"name":"anon"}"#), ("DELETE", "/rest/v1/children", "{}")] {
            let write = try call(method, target, nil, [("Prefer", "return=representation")], body: body)
            #expect(write.status == 401 || (write.status == 200 && write.text == "[]"), "\(layers) anon \(method): \(write.status) \(write.text)")
        }

        // A's rows are exactly as A left them; B kept only B's own child.
        let mine = try call("GET", "/rest/v1/children?select=id,name,user_id", a.token)
        Wire.expectBody(mine, #"[{"id":"\#(aChild)","name":"A1","user_id":"\#(a.id)"}]"#, keepIDs: [aChild])
        Wire.expectBody(
            try call("GET", "/rest/v1/user_profiles?select=id,onboarding_state", a.token), #"[{"id":"\#(a.id)","onboarding_state":"GOALS"}]"#, keepIDs: [a.id])
        Wire.expectBody(try call("GET", "/rest/v1/children?select=name", b.token), #"[{"name":"B1"}]"#)
        Wire.expectBody(try call("GET", "/rest/v1/user_profiles?select=onboarding_state", b.token), #"[{"onboarding_state":"NOT_STARTED"}]"#)
    }
}
