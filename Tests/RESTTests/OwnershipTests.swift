import Foundation
import HTTP
import Identity
import Postgres
import Testing

@testable import REST

/// The ownership middleware as a pure decision, before any SQL.
@Suite struct OwnershipTests {
    static let me = Fixture.userID.uuidString  // upper-case, as supabase-swift sends it
    static let anonUser = Caller(role: "authenticated", claimsJSON: "{}", userID: nil, sessionID: nil, isAnonymousUser: false)

    static let refused: [(String, String, String?, String, Bool)] = [
        // method, target, body → table, authenticated
        ("POST", "/rest/v1/children", #"{"user_id":"\#(Fixture.otherID)","name":"x"}"#, "children", true),
        ("POST", "/rest/v1/children", #"{"user_id":null,"name":"x"}"#, "children", true),
        ("POST", "/rest/v1/children", #"[{"user_id":"\#(me)","name":"x"},{"user_id":"\#(Fixture.otherID)","name":"y"}]"#, "children", true),
        // With `columns=` naming the owner, a row without it is NULL (no `missing=default`).
        ("POST", "/rest/v1/children?columns=%22user_id%22,%22name%22", #"[{"user_id":"\#(me)","name":"x"},{"name":"y"}]"#, "children", true),
        ("POST", "/rest/v1/user_profiles?on_conflict=id", #"{"id":"\#(Fixture.otherID)"}"#, "user_profiles", true),
        ("PATCH", "/rest/v1/children?id=eq.1", #"{"user_id":"\#(Fixture.otherID)"}"#, "children", true),
        ("PATCH", "/rest/v1/user_profiles?id=eq.1", #"{"id":"\#(Fixture.otherID)"}"#, "user_profiles", true),
        ("PUT", "/rest/v1/user_profiles?id=eq.\(Fixture.otherID)", #"{"id":"\#(Fixture.otherID)"}"#, "user_profiles", true)
    ]

    @Test(arguments: refused)
    func refusesWritesForAnotherOwner(_ method: String, _ target: String, _ body: String?, _ table: String, _ authenticated: Bool) {
        #expect(throws: RESTError.ownership(table: table, authenticated: authenticated)) {
            try Fixture.plan(method, target, body: body)
        }
    }

    @Test func acceptsOwnRowsInAnyCase() throws {
        for body in [#"{"user_id":"\#(Self.me)","name":"x"}"#, #"{"user_id":"\#(Self.me.lowercased())","name":"x"}"#] {
            #expect(throws: Never.self) { try Fixture.plan("POST", "/rest/v1/children", body: body) }
        }
        #expect(throws: Never.self) { try Fixture.plan("PATCH", "/rest/v1/children?id=eq.1", body: #"{"user_id":"\#(Self.me)","name":"y"}"#) }
    }

    /// A body (or `columns=`) that does not write the owner column leaves it to its default
    /// (`children.user_id` defaults to `auth.uid()`); RLS refuses a default that is not the caller.
    @Test func leavesAMissingOwnerToItsDefault() throws {
        for (target, body) in [
            ("/rest/v1/children", #"{"name":"x"}"#),
            ("/rest/v1/children", #"[{"name":"x"},{"name":"y"}]"#),
            ("/rest/v1/children?columns=%22name%22", #"{"user_id":"\#(Self.me)","name":"x"}"#)
        ] {
            let insert = try #require(try Fixture.plan("POST", target, body: body).statement)
            #expect(insert.text.contains(#"INSERT INTO "public"."children" ("name")"#), "\(target) \(body): \(insert.text)")
        }
        // With `missing=default`, a row without the owner takes the default too.
        #expect(throws: Never.self) {
            try Fixture.plan(
                "POST", "/rest/v1/children?columns=%22user_id%22,%22name%22", headers: [("Prefer", "missing=default")],
                body: #"[{"user_id":"\#(Self.me)","name":"x"},{"name":"y"}]"#)
        }
    }

    @Test func anonymousAndUserlessCallers() throws {
        #expect(throws: RESTError.ownership(table: "children", authenticated: false)) {
            try Fixture.plan("POST", "/rest/v1/children", body: #"{"name":"x"}"#, caller: .anon)
        }
        #expect(throws: RESTError.ownership(table: "children", authenticated: false)) {
            try Fixture.plan("DELETE", "/rest/v1/children", caller: .anon)
        }
        #expect(throws: RESTError.ownership(table: "user_profiles", authenticated: true)) {
            try Fixture.plan("PATCH", "/rest/v1/user_profiles", body: "{}", caller: Self.anonUser)
        }
        let read = try #require(try Fixture.plan("GET", "/rest/v1/children?name=eq.x", caller: .anon).statement)
        #expect(read.text.contains(#"WHERE "children"."name" = $1 AND false)"#))
        let bare = try #require(try Fixture.plan("GET", "/rest/v1/children", caller: .anon).statement)
        #expect(bare.text.contains(" WHERE false)"))
    }

    @Test func serviceRoleAndMiddlewareOffAreUnrestricted() throws {
        let service = try #require(try Fixture.plan("GET", "/rest/v1/children", caller: .serviceRole).statement)
        #expect(!service.text.contains("WHERE"))
        #expect(throws: Never.self) {
            try Fixture.plan("POST", "/rest/v1/children", body: #"{"user_id":"\#(Fixture.otherID)","name":"x"}"#, caller: .serviceRole)
        }
        let off = try #require(try Fixture.plan("GET", "/rest/v1/children", ownership: false).statement)
        #expect(!off.text.contains("WHERE"))
        #expect(throws: Never.self) { try Fixture.plan("POST", "/rest/v1/children", body: #"{"user_id":"\#(Fixture.otherID)","name":"x"}"#, ownership: false) }
    }

    @Test func policyIsData() throws {
        let families = OwnershipPolicy(ownerColumns: ["children": "user_id", "families": "owner_id"])
        let table = SchemaCache.Table(name: "families", columns: [.init(name: "id", type: "uuid"), .init(name: "owner_id", type: "uuid")], primaryKey: ["id"])
        let cache = SchemaCache(tables: [table], functions: [])
        let api = try Fixture.request("GET", "/rest/v1/families")
        let plan = try Planner(cache: cache, policy: families, ownershipEnabled: true).plan(api, caller: Fixture.user)
        #expect(plan.statement?.text.contains(#"WHERE "families"."owner_id" = $1"#) == true)
        #expect(plan.statement?.binds == [Fixture.userID.uuidString.lowercased()])
    }
}

@Test func uuidTextIsCanonicalLowerCase() {
    for text in ["07E706D2-C4DC-46E3-B64E-2B12FD23CAC5", "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF"] {
        #expect(lowercaseUUIDString(UUID(uuidString: text)!) == text.lowercased())
    }
}

@Test func anEmptyBearerIsTheBearerSchemeWithNothingAfterIt() {
    for header in ["Bearer", "Bearer ", "bEaReR\t", "  Bearer  "] { #expect(RESTError.isEmptyBearer(header), "\(header)") }
    for header in [nil, "", "Bearer x", "Bearerx", "Basic ", "Bear"] as [String?] { #expect(!RESTError.isEmptyBearer(header), "\(header ?? "nil")") }
    #expect(RESTError.emptyToken.status == .unauthorized)
    #expect(RESTError.emptyToken.body == #"{"code":"PGRST301","details":null,"hint":null,"message":"Empty JWT is sent in Authorization header"}"#)
}
