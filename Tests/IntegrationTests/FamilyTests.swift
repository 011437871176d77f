import Foundation
import Postgres
import TestSupport
import Testing

/// Families through the REST layer: create, join by code, share children, leave, ownership
/// passing, the join throttle — with the ownership middleware and RLS, and with each alone.
@Suite("Families", .serialized)
struct FamilyTests {
    enum Layers: String, CaseIterable, Sendable { case both, rlsOnly, middlewareOnly }

    static func server(_ layers: Layers) throws -> TestServer {
        let server = try TestServer { config in config.enforceOwnership = layers != .rlsOnly }
        if layers == .middlewareOnly {
            let admin = try Connection(conninfo: server.databaseURL)
            try admin.execute(
                """
                ALTER TABLE public.children DISABLE ROW LEVEL SECURITY;
                ALTER TABLE public.families DISABLE ROW LEVEL SECURITY;
                ALTER TABLE public.family_members DISABLE ROW LEVEL SECURITY
                """)
        }
        return server
    }

    func rpc(_ server: TestServer, _ name: String, _ token: String, _ body: String = "{}") throws -> TestResponse {
        try server.post("/rest/v1/rpc/\(name)", body, token: token)
    }

    @Test(arguments: Layers.allCases)
    func twoParentsShareAChildAndNobodyElseSeesIt(_ layers: Layers) throws {
        let server = try Self.server(layers)
        let a = try server.signUp(data: #"{"full_name":"Ada"}"#)
        let b = try server.signUp(data: #"{"full_name":"Ben"}"#)
        let c = try server.signUp()
        let http = server.client()

        let created = try rpc(server, "create_family", a.token, #"{"name":"The Lovelaces"}"#)
        #expect(created.status == 200, "\(created.text)")
        let code = try #require(created.jsonObject?["invite_code"] as? String)
        #expect(code.range(of: #"^[A-HJKMNP-Z2-9]{5}-[A-HJKMNP-Z2-9]{5}$"#, options: .regularExpression) != nil)
        let child = try http.request(
            "POST", "/rest/v1/children", headers: server.headers(a.token, [("Prefer", "return=representation")]),
            body: #"{"user_id":"\#(a.id)","name":"Kid"}"#)
        let childID = try #require(child.jsonArray?.first?["id"] as? String)

        // C: a wrong code is a 404 and joins nothing; C sees none of it.
        let wrong = try rpc(server, "join_family", c.token, #"{"code":"AAAAA-BBBBB"}"#)
        #expect(wrong.status == 404 && wrong.jsonObject?["code"] as? String == "PT404")
        // B joins with the code in lower case and without the dash.
        let joined = try rpc(server, "join_family", b.token, #"{"code":"\#(code.lowercased().replacingOccurrences(of: "-", with: ""))"}"#)
        #expect(joined.status == 200, "\(joined.text)")
        let members = try #require(joined.jsonObject?["members"] as? [[String: Any]])
        #expect(members.map { $0["full_name"] as? String } == ["Ada", "Ben"])
        #expect(members.map { $0["role"] as? String } == ["owner", "parent"])
        #expect(!joined.text.contains("@example.com"))  // never e-mails

        // B reads and edits A's child; C still sees nothing and cannot edit it.
        let seen = try http.request("GET", "/rest/v1/children?select=id,name", headers: server.headers(b.token))
        #expect(seen.jsonArray?.map { $0["id"] as? String } == [childID])
        let edited = try http.request(
            "PATCH", "/rest/v1/children?id=eq.\(childID)", headers: server.headers(b.token, [("Prefer", "return=representation")]),
            body: #"{"goals":["sleep"]}"#)
        #expect(edited.jsonArray?.first?["goals"] as? [String] == ["sleep"])
        #expect(try http.request("GET", "/rest/v1/children?select=id", headers: server.headers(c.token)).text == "[]")
        #expect(
            try http.request(
                "PATCH", "/rest/v1/children?id=eq.\(childID)", headers: server.headers(c.token, [("Prefer", "return=representation")]),
                body: #"{"name":"Mine"}"#
            ).text == "[]")
        #expect(try http.request("GET", "/rest/v1/families?select=name", headers: server.headers(b.token)).text == #"[{"name":"The Lovelaces"}]"#)
        #expect(try http.request("GET", "/rest/v1/families?select=name", headers: server.headers(c.token)).text == "[]")
        #expect(try http.request("GET", "/rest/v1/family_members?select=role", headers: server.headers(c.token)).text == "[]")
        // B's profile stays private, and B may not delete A's child (the owner A could).
        #expect(try http.request("GET", "/rest/v1/user_profiles?select=id&id=eq.\(a.id)", headers: server.headers(b.token)).text == "[]")
        #expect(
            try http.request("DELETE", "/rest/v1/children?id=eq.\(childID)", headers: server.headers(b.token, [("Prefer", "return=representation")])).text
                == "[]")
        // Family rows are written through the RPCs only.
        #expect(
            try http.request(
                "POST", "/rest/v1/family_members", headers: server.headers(c.token),
                body: #"{"family_id":"\#(created.jsonObject?["id"] as? String ?? "")","user_id":"\#(c.id)"}"#
            ).status == 403)

        // B leaves: access is gone at once.
        #expect(try rpc(server, "leave_family", b.token).status == 204)
        #expect(try http.request("GET", "/rest/v1/children?select=id", headers: server.headers(b.token)).text == "[]")
        #expect(try http.request("GET", "/rest/v1/children?select=id", headers: server.headers(a.token)).jsonArray?.count == 1)
    }

    @Test func ownershipPassesAndEmptyFamiliesGo() throws {
        let server = try TestServer()
        let a = try server.signUp()
        let b = try server.signUp()
        let c = try server.signUp()
        let code = try #require(try rpc(server, "create_family", a.token, #"{"name":"F"}"#).jsonObject?["invite_code"] as? String)
        #expect(try rpc(server, "join_family", b.token, #"{"code":"\#(code)"}"#).status == 200)
        #expect(try rpc(server, "join_family", c.token, #"{"code":"\#(code)"}"#).status == 200)
        // Already in a family: 409, for both create and join elsewhere.
        let again = try rpc(server, "create_family", b.token, #"{"name":"G"}"#)
        #expect(again.status == 409 && again.jsonObject?["message"] as? String == "You already belong to a family")
        // Only the owner regenerates the code; the old code stops working.
        #expect(try rpc(server, "regenerate_invite_code", b.token).status == 403)
        let fresh = try #require(try rpc(server, "regenerate_invite_code", a.token).jsonObject?["invite_code"] as? String)
        #expect(fresh != code)
        // The owner leaves: the longest-standing parent (B) becomes owner.
        #expect(try rpc(server, "leave_family", a.token).status == 204)
        let family = try rpc(server, "get_family", c.token)
        let members = try #require(family.jsonObject?["members"] as? [[String: Any]])
        #expect(members.map { $0["user_id"] as? String } == [b.id, c.id])
        #expect(members.map { $0["role"] as? String } == ["owner", "parent"])
        #expect(try rpc(server, "join_family", a.token, #"{"code":"\#(code)"}"#).status == 404)
        // Everyone leaves: the family is deleted.
        #expect(try rpc(server, "leave_family", b.token).status == 204)
        #expect(try rpc(server, "leave_family", c.token).status == 204)
        let admin = try Connection(conninfo: server.databaseURL)
        #expect(try admin.query("SELECT count(*) FROM public.families").scalar == "0")
        #expect(try rpc(server, "get_family", c.token).text == "null")
    }

    @Test func guessingCodesIsThrottled() throws {
        let server = try TestServer()
        let owner = try server.signUp()
        let guesser = try server.signUp()
        let code = try #require(try rpc(server, "create_family", owner.token, #"{"name":"F"}"#).jsonObject?["invite_code"] as? String)
        var statuses: [Int] = []
        for attempt in 0..<11 {
            statuses.append(try rpc(server, "join_family", guesser.token, #"{"code":"WRONG-\#(attempt)"}"#).status)
        }
        #expect(statuses == Array(repeating: 404, count: 10) + [429])
        // Even the right code waits out the hour now.
        let blocked = try rpc(server, "join_family", guesser.token, #"{"code":"\#(code)"}"#)
        #expect(blocked.status == 429 && blocked.jsonObject?["code"] as? String == "PT429")
        #expect(try rpc(server, "get_family", guesser.token).text == "null")
        #expect(try rpc(server, "join_family", owner.token, #"{"code":"\#(code)"}"#).status == 200)  // others are unaffected
    }
}
