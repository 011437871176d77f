import Foundation
import HTTP
import Identity
import Postgres
import Testing

@testable import REST

/// The plan cache: a repeated read gets the very plan the planner made for it (same SQL text and
/// binds); anything the plan is made from that differs (query, headers, caller) is another entry;
/// writes are never kept; a new schema cache or new settings empty it.
@Suite struct PlanCacheTests {
    static let me = "07e706d2-c4dc-46e3-b64e-2b12fd23cac5"

    /// A service that never connects (nothing here does I/O).
    static func service() -> RESTService {
        RESTService(
            pool: Pool(conninfo: "host=/nonexistent", size: 1), schema: SchemaCacheStore(Fixture.cache),
            config: RESTConfig(ownership: Fixture.policy))
    }

    static func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: String = "") -> HTTPRequest {
        HTTPRequest(method: HTTPMethod(rawValue: method), target: target, headers: HTTPHeaders(headers), body: Array(body.utf8))
    }

    func plan(_ service: RESTService, _ request: HTTPRequest, caller: Caller = Fixture.user) throws(RESTError) -> ActionPlan {
        let (settings, generation) = service.settings.settingsAndGeneration
        return try service.cachedPlan(
            request, resource: String(request.path.dropFirst("/rest/v1".count)), caller: caller, settings: settings,
            settingsGeneration: generation)
    }

    @Test func aRepeatedReadIsPlannedOnceWithTheSameStatement() throws {
        let service = Self.service()
        let read = Self.request("GET", "/rest/v1/children?select=%2A&user_id=eq.\(Self.me)", headers: [("Accept", "*/*")])
        let first = try #require(try plan(service, read).statement)
        #expect(service.plans.counts.entries == 1 && service.plans.counts.hits == 0)
        let second = try #require(try plan(service, read).statement)
        #expect(service.plans.counts.hits == 1)
        #expect(first.text == second.text && first.binds == second.binds)
        // What the planner makes for the same request without the cache.
        let planned = try #require(
            try RESTService.plan(
                read, resource: "/children", caller: Fixture.user, cache: Fixture.cache, config: RESTConfig(ownership: Fixture.policy)
            ).statement)
        #expect(second.text == planned.text && second.binds == planned.binds)
    }

    /// Clients write their headers in orders of their own; the order of different names does
    /// not make another entry, the order of one repeated name's values does.
    @Test func theOrderOfDifferentHeadersIsTheSameEntry() throws {
        let service = Self.service()
        let base = "/rest/v1/children?select=%2A&user_id=eq.\(Self.me)"
        _ = try plan(service, Self.request("GET", base, headers: [("Accept", "*/*"), ("apikey", "k"), ("Accept-Profile", "public")]))
        _ = try plan(service, Self.request("GET", base, headers: [("accept-profile", "public"), ("ACCEPT", "*/*")]))
        #expect(service.plans.counts.entries == 1 && service.plans.counts.hits == 1)
        _ = try plan(service, Self.request("GET", base, headers: [("Prefer", "count=exact"), ("Prefer", "return=minimal")]))
        _ = try plan(service, Self.request("GET", base, headers: [("Prefer", "return=minimal"), ("Prefer", "count=exact")]))
        #expect(service.plans.counts.entries == 3 && service.plans.counts.hits == 1)
    }

    @Test func whatThePlanIsMadeFromMakesAnotherEntry() throws {
        let service = Self.service()
        let base = "/rest/v1/children?select=%2A&user_id=eq.\(Self.me)"
        _ = try plan(service, Self.request("GET", base))
        _ = try plan(service, Self.request("GET", base + "&limit=1"))
        _ = try plan(service, Self.request("GET", base, headers: [("Range", "0-0")]))
        _ = try plan(service, Self.request("GET", base, headers: [("Prefer", "count=exact")]))
        _ = try plan(service, Self.request("GET", base, headers: [("Accept", "application/vnd.pgrst.object+json")]))
        _ = try plan(service, Self.request("HEAD", base))
        _ = try plan(service, Self.request("GET", "/rest/v1/children?select=%2A"), caller: .serviceRole)
        #expect(service.plans.counts.entries == 7 && service.plans.counts.hits == 0)
        // Another user's request for the same rows: planned for that caller (the ownership rule
        // adds the caller's scope), not taken from the first user's entry.
        let other = Caller(
            role: "authenticated", claimsJSON: #"{"sub":"11111111-1111-4111-8111-111111111111","role":"authenticated"}"#,
            userID: UUID(uuidString: "11111111-1111-4111-8111-111111111111"), sessionID: nil, isAnonymousUser: false)
        let theirs = try #require(try plan(service, Self.request("GET", base), caller: other).statement)
        #expect(service.plans.counts.hits == 0)
        #expect(theirs.binds.contains("11111111-1111-4111-8111-111111111111"))
    }

    @Test func writesAndFailuresAreNotKept() throws {
        let service = Self.service()
        let patch = Self.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(Self.me)", headers: [("Content-Type", "application/json")],
            body: #"{"onboarding_state":"GOALS"}"#)
        _ = try plan(service, patch)
        _ = try plan(service, patch)
        #expect(service.plans.counts.entries == 0)
        let unknown = Self.request("GET", "/rest/v1/nonexistent?select=%2A")
        #expect(throws: RESTError.self) { try plan(service, unknown) }
        #expect(throws: RESTError.self) { try plan(service, unknown) }
        #expect(service.plans.counts.entries == 0)
    }

    @Test func aNewSchemaCacheOrNewSettingsEmptyIt() throws {
        let service = Self.service()
        let read = Self.request("GET", "/rest/v1/children?select=%2A&user_id=eq.\(Self.me)")
        _ = try plan(service, read)
        _ = try plan(service, read)
        #expect(service.plans.counts.hits == 1)
        // The table is gone from the new schema cache: the read is planned again, and fails.
        service.schema.replace(SchemaCache(tables: [Fixture.profiles], functions: []))
        #expect(throws: RESTError.self) { try plan(service, read) }
        service.schema.replace(Fixture.cache)
        _ = try plan(service, read)
        #expect(service.plans.counts.hits == 1 && service.plans.counts.entries == 1)
        // db-max-rows changes the statement: new settings are planned under, not the old plan.
        var settings = service.settings.settings
        settings.maxRows = 5
        service.settings.replace(settings)
        let limited = try #require(try plan(service, read).statement)
        #expect(limited.text.contains(" LIMIT $2") && limited.binds == [Self.me, "5"])
        #expect(service.plans.counts.hits == 1)
    }

    @Test func theOldestEntryMakesRoomPastTheCapacity() {
        let cache = PlanCache(capacity: 2)
        let plan = ActionPlan(
            request: ApiRequest.read(table: "children"), statement: nil, readOnly: true, mustDecide: false, rollback: false, resource: "children")
        func key(_ n: Int) -> PlanCache.Key {
            PlanCache.Key(method: "GET", resource: "/children", query: "n=\(n)", headers: "", role: "anon", userID: nil)
        }
        for n in 0..<3 { cache.keep(plan, for: key(n), schemaGeneration: 0, settingsGeneration: 0) }
        #expect(cache.counts.entries == 2)
        #expect(cache.plan(for: key(0), schemaGeneration: 0, settingsGeneration: 0) == nil)
        #expect(cache.plan(for: key(1), schemaGeneration: 0, settingsGeneration: 0) != nil)
        #expect(cache.plan(for: key(2), schemaGeneration: 0, settingsGeneration: 0) != nil)
        #expect(PlanCache(capacity: 0).counts.entries == 0)
    }
}
