import Foundation
import Postgres
import TestSupport
import Testing

/// Two users, every verb: nobody reaches another's rows — with the Swift ownership checks and
/// RLS together, with RLS alone (middleware off), and with the middleware alone (RLS off).
@Suite("Ownership enforced twice")
struct IsolationTests {
    enum Layers: String, CaseIterable, Sendable { case both, rlsOnly, middlewareOnly }

    @Test(arguments: Layers.allCases)
    func twoUserMatrix(_ layers: Layers) throws {
        let server = try TestServer { config in config.enforceOwnership = layers != .rlsOnly }
        if layers == .middlewareOnly {
            let admin = try Connection(conninfo: server.databaseURL)
            try admin.execute("ALTER TABLE public.children DISABLE ROW LEVEL SECURITY; ALTER TABLE public.user_profiles DISABLE ROW LEVEL SECURITY")
        }
        let a = try server.signUp()
        let b = try server.signUp()
        let http = server.client()
        let created = try http.request("POST", "/rest/v1/children", headers: server.headers(a.token, [("Prefer", "return=representation")]), body: #"{"user_id":"\#(a.id)","name":"A's"}"#)
        #expect(created.status == 201)
        let childID = try #require(created.jsonArray?.first?["id"] as? String)

        // Reads: B sees nothing of A's.
        #expect(try http.request("GET", "/rest/v1/children?select=%2A", headers: server.headers(b.token)).jsonArray?.isEmpty == true)
        #expect(try http.request("GET", "/rest/v1/children?id=eq.\(childID)", headers: server.headers(b.token)).jsonArray?.isEmpty == true)
        #expect(try http.request("GET", "/rest/v1/user_profiles?id=eq.\(a.id)", headers: server.headers(b.token)).jsonArray?.isEmpty == true)
        #expect(try http.request("HEAD", "/rest/v1/children", headers: server.headers(b.token, [("Prefer", "count=exact")])).header("Content-Range") == "*/0")
        // Updates and deletes hit nothing.
        let update = try http.request("PATCH", "/rest/v1/children?id=eq.\(childID)", headers: server.headers(b.token, [("Prefer", "return=representation")]), body: #"{"name":"stolen"}"#)
        #expect(update.status == 200 && update.jsonArray?.isEmpty == true)
        let profile = try http.request("PATCH", "/rest/v1/user_profiles?id=eq.\(a.id)", headers: server.headers(b.token, [("Prefer", "return=representation")]), body: #"{"onboarding_state":"COMPLETE"}"#)
        #expect(profile.jsonArray?.isEmpty == true)
        let delete = try http.request("DELETE", "/rest/v1/children?id=eq.\(childID)", headers: server.headers(b.token, [("Prefer", "return=representation")]), body: "{}")
        #expect(delete.jsonArray?.isEmpty == true)
        // Inserts for A, upserts onto A's row and re-owning B's own row are refused.
        let plant = try http.request("POST", "/rest/v1/children", headers: server.headers(b.token), body: #"{"user_id":"\#(a.id.uppercased())","name":"planted"}"#)
        #expect(plant.status == 403 && plant.jsonObject?["code"] as? String == "42501")
        let upsert = try http.request("POST", "/rest/v1/user_profiles?on_conflict=id", headers: server.headers(b.token, [("Prefer", "resolution=merge-duplicates")]), body: #"{"id":"\#(a.id)","onboarding_state":"COMPLETE"}"#)
        #expect(upsert.status == 403 || upsert.status == 409)
        let own = try http.request("POST", "/rest/v1/children", headers: server.headers(b.token, [("Prefer", "return=representation")]), body: #"{"user_id":"\#(b.id)","name":"B's"}"#)
        let bChild = try #require(own.jsonArray?.first?["id"] as? String)
        let reown = try http.request("PATCH", "/rest/v1/children?id=eq.\(bChild)", headers: server.headers(b.token), body: #"{"user_id":"\#(a.id)"}"#)
        #expect(reown.status == 403 && reown.jsonObject?["code"] as? String == "42501")
        // Anonymous callers read nothing and write nothing.
        #expect(try http.request("GET", "/rest/v1/children", headers: server.headers()).jsonArray?.isEmpty == true)
        let anonWrite = try http.request("POST", "/rest/v1/children", headers: server.headers(), body: #"{"user_id":"\#(a.id)","name":"anon"}"#)
        #expect(anonWrite.status == 401 && anonWrite.jsonObject?["code"] as? String == "42501")

        // A's data is exactly as A left it.
        let mine = try http.request("GET", "/rest/v1/children?select=name,user_id", headers: server.headers(a.token))
        #expect(mine.jsonArray?.count == 1 && mine.jsonArray?.first?["name"] as? String == "A's")
        let state = try http.request("GET", "/rest/v1/user_profiles?select=onboarding_state", headers: server.headers(a.token))
        #expect(state.jsonArray?.first?["onboarding_state"] as? String == "NOT_STARTED")
    }
}
