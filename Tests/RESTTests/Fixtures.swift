import App
import Foundation
import HTTP
import Identity
import Postgres

@testable import REST

/// The schema cache of the onboarding tables and functions, as the loader reads it.
enum Fixture {
    static let children = SchemaCache.Table(
        name: "children",
        columns: [
            .init(name: "id", type: "uuid", nullable: false, defaultExpression: "gen_random_uuid()"),
            .init(name: "user_id", type: "uuid", nullable: false),
            .init(name: "name", type: "text", nullable: false),
            .init(name: "age", type: "integer"),
            .init(name: "temperament", type: "text"),
            .init(name: "created_at", type: "timestamp with time zone", nullable: false, defaultExpression: "now()"),
            .init(name: "updated_at", type: "timestamp with time zone", nullable: false, defaultExpression: "now()"),
            .init(name: "birthday", type: "date"),
            .init(name: "goals", type: "text[]", defaultExpression: "'{}'::text[]"),
            .init(name: "topics", type: "text[]", defaultExpression: "'{}'::text[]"),
            .init(name: "temperament_talkative", type: "integer", defaultExpression: "5")
        ], primaryKey: ["id"])

    static let profiles = SchemaCache.Table(
        name: "user_profiles",
        columns: [
            .init(name: "id", type: "uuid", nullable: false),
            .init(name: "onboarding_state", type: "text", nullable: false, defaultExpression: "'NOT_STARTED'::text"),
            .init(name: "current_child_id", type: "uuid"),
            .init(name: "created_at", type: "timestamp with time zone", nullable: false, defaultExpression: "now()"),
            .init(name: "updated_at", type: "timestamp with time zone", nullable: false, defaultExpression: "now()")
        ], primaryKey: ["id"])

    static let cache = SchemaCache(
        tables: [children, profiles],
        functions: [
            .init(
                name: "get_user_with_profile", arguments: [.init(name: "p_user_id", type: "uuid")], returnType: "record",
                returnsSet: true, returnsComposite: true, volatility: .stable),
            .init(name: "complete_onboarding", arguments: [], returnType: "user_profiles", returnsSet: false, returnsComposite: true),
            .init(name: "delete_account", arguments: [], returnType: "void", returnsSet: false, returnsComposite: false, returnsVoid: true),
            .init(
                name: "add_them", arguments: [.init(name: "a", type: "integer"), .init(name: "b", type: "integer", hasDefault: true)],
                returnType: "integer", returnsSet: false, returnsComposite: false, volatility: .immutable)
        ])

    /// The product's ownership rule, as the application configures it.
    static let policy = Onboarding.ownership

    static let userID = UUID(uuidString: "07e706d2-c4dc-46e3-b64e-2b12fd23cac5")!
    static let otherID = "11111111-1111-4111-8111-111111111111"
    static let user = Caller(
        role: "authenticated", claimsJSON: #"{"sub":"07e706d2-c4dc-46e3-b64e-2b12fd23cac5","role":"authenticated"}"#,
        userID: userID, sessionID: nil, isAnonymousUser: false)

    /// Parses like the service does: `target` is `/rest/v1/...?query`.
    static func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: String? = nil) throws(RESTError) -> ApiRequest {
        let http = HTTPRequest(method: HTTPMethod(rawValue: method), target: target, headers: HTTPHeaders(headers), body: Array((body ?? "").utf8))
        return try ApiRequest.parse(
            method: HTTPMethod(rawValue: method), resource: String(http.path.dropFirst("/rest/v1".count)), query: http.query,
            headers: http.headers, body: http.body)
    }

    static func plan(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: String? = nil,
        caller: Caller = Fixture.user, ownership: Bool = true
    ) throws(RESTError) -> ActionPlan {
        let api = try request(method, target, headers: headers, body: body)
        return try Planner(cache: cache, policy: policy, ownershipEnabled: ownership).plan(api, caller: caller)
    }
}
