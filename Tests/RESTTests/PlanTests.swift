import Foundation
import Identity
import Postgres
import Testing

@testable import REST

/// ApiRequest + SchemaCache → SQL text and binds. Values are always binds; identifiers come from
/// the schema cache, quoted; the statement text is the same for the same request shape.
@Suite struct PlanTests {
    static let me = "07e706d2-c4dc-46e3-b64e-2b12fd23cac5"
    static let childColumns =
        #""children"."id", "children"."user_id", "children"."name", "children"."age", "children"."temperament", "children"."created_at", "children"."updated_at", "children"."birthday", "children"."goals", "children"."topics", "children"."temperament_talkative""#
    static let returnedProfile =
        #"pgrst_source."id", pgrst_source."onboarding_state", pgrst_source."current_child_id", pgrst_source."created_at", pgrst_source."updated_at""#

    @Test func benchReadIsOneStatementWithTheFilterBound() throws {
        let plan = try Fixture.plan("GET", "/rest/v1/children?select=%2A&user_id=eq.\(Self.me.uppercased())")
        let sql = try #require(plan.statement)
        #expect(
            sql.text
                == #"WITH pgrst_source AS (SELECT \#(Self.childColumns) FROM "public"."children" WHERE "children"."user_id" = $1) SELECT NULL::bigint AS total, pg_catalog.count(*) AS page_total, coalesce(json_agg(_postgrest_t), '[]')::text AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t"#
        )
        // The client's own id (any case) is the owner filter already: no duplicate.
        #expect(sql.binds == [Self.me.uppercased()])
        #expect(plan.readOnly && !plan.mustDecide && !plan.rollback)
        // The statement text is the same for every user (one prepared statement).
        let own = try #require(try Fixture.plan("GET", "/rest/v1/children?select=%2A&user_id=eq.\(Self.me)").statement)
        #expect(own.text == sql.text && own.binds == [Self.me])
        // Filtering on another user's id adds the caller's scope: own rows or the family's.
        let other = try #require(try Fixture.plan("GET", "/rest/v1/children?select=%2A&user_id=eq.\(Fixture.otherID)").statement)
        #expect(
            other.text.contains(
                #"WHERE "children"."user_id" = $1 AND ("children"."user_id" = $2 OR "children"."user_id" IN (SELECT theirs."user_id" FROM "public"."family_members" mine JOIN "public"."family_members" theirs ON theirs."family_id" = mine."family_id" WHERE mine."user_id" = $3)))"#
            ))
        #expect(other.binds == [Fixture.otherID, Self.me, Self.me])
    }

    @Test func benchPatchIsOneStatement() throws {
        let plan = try Fixture.plan(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(Self.me)", headers: [("Prefer", "return=representation")], body: #"{"onboarding_state":"GOALS"}"#)
        let sql = try #require(plan.statement)
        #expect(
            sql.text
                == #"WITH pgrst_source AS (UPDATE "public"."user_profiles" SET "onboarding_state" = pgrst_body."onboarding_state" FROM json_to_record($1::json) AS pgrst_body("onboarding_state" text) WHERE "user_profiles"."id" = $2 RETURNING "public"."user_profiles".*) SELECT NULL::bigint AS total, pg_catalog.count(*) AS page_total, coalesce(json_agg(_postgrest_t), '[]')::text AS body, NULL::bigint AS inserted FROM (SELECT \#(Self.returnedProfile) FROM pgrst_source) _postgrest_t"#
        )
        #expect(sql.binds == [#"{"onboarding_state":"GOALS"}"#, Self.me])
        #expect(!plan.readOnly && !plan.mustDecide)
        #expect(plan.action == .update && !plan.mergesDuplicates)
    }

    static let filterSQL: [(String, String, [String?])] = [
        ("age=eq.5", #""children"."age" = $1"#, ["5"]),
        ("age=neq.5", #""children"."age" <> $1"#, ["5"]),
        ("age=gt.5", #""children"."age" > $1"#, ["5"]),
        ("age=gte.5", #""children"."age" >= $1"#, ["5"]),
        ("age=lt.5", #""children"."age" < $1"#, ["5"]),
        ("age=lte.5", #""children"."age" <= $1"#, ["5"]),
        ("name=like.M*a", #""children"."name" LIKE $1"#, ["M%a"]),
        ("name=ilike.*a", #""children"."name" ILIKE $1"#, ["%a"]),
        ("name=match.^M", #""children"."name" ~ $1"#, ["^M"]),
        ("name=imatch.^m", #""children"."name" ~* $1"#, ["^m"]),
        ("name=in.(a,%22b,c%22)", #""children"."name" = ANY($1)"#, [#"{"a","b,c"}"#]),
        ("name=in.()", #""children"."name" = ANY($1)"#, ["{}"]),
        ("birthday=is.null", #""children"."birthday" IS NULL"#, []),
        ("birthday=not.is.null", #"NOT "children"."birthday" IS NULL"#, []),
        ("age=is.not_null", #""children"."age" IS NOT NULL"#, []),
        ("age=isdistinct.3", #""children"."age" IS DISTINCT FROM $1"#, ["3"]),
        ("goals=cs.{a,%22b c%22}", #""children"."goals" @> $1"#, [#"{a,"b c"}"#]),
        ("goals=cd.{a}", #""children"."goals" <@ $1"#, ["{a}"]),
        ("goals=ov.{a}", #""children"."goals" && $1"#, ["{a}"]),
        // A text column is searched through to_tsvector, in the filter's language (PostgREST).
        ("name=fts(english).cat", #"to_tsvector($1::regconfig, "children"."name") @@ to_tsquery($2::regconfig, $3)"#, ["english", "english", "cat"]),
        ("name=plfts.big+cat", #"to_tsvector("children"."name") @@ plainto_tsquery($1)"#, ["big cat"]),
        (
            "or=(age.eq.1,and(name.eq.x,goals.cs.{a,b}))", #"("children"."age" = $1 OR ("children"."name" = $2 AND "children"."goals" @> $3))"#,
            ["1", "x", "{a,b}"]
        ),
        ("not.and=(age.gt.1,age.lt.3)", #"NOT ("children"."age" > $1 AND "children"."age" < $2)"#, ["1", "3"])
    ]

    @Test(arguments: filterSQL)
    func filtersBecomeBoundSQL(_ query: String, _ expected: String, _ binds: [String?]) throws {
        let sql = try #require(try Fixture.plan("GET", "/rest/v1/children?select=id&\(query)", caller: .serviceRole).statement)
        #expect(sql.text.contains(#"WHERE \#(expected))"#), "\(sql.text)")
        #expect(sql.binds == binds)
    }

    @Test func selectOrderLimitOffsetAndCount() throws {
        let plan = try Fixture.plan(
            "GET", "/rest/v1/children?select=kid:name,age::text&order=created_at.desc.nullslast,name&limit=10&offset=20",
            headers: [("Prefer", "count=exact")], caller: .serviceRole)
        let sql = try #require(plan.statement)
        #expect(
            sql.text
                == #"WITH pgrst_source AS (SELECT "children"."name" AS "kid", CAST("children"."age" AS text) AS "age" FROM "public"."children" ORDER BY "children"."created_at" DESC NULLS LAST, "children"."name" LIMIT $1 OFFSET $2) SELECT (SELECT pg_catalog.count(*) FROM "public"."children") AS total, pg_catalog.count(*) AS page_total, coalesce(json_agg(_postgrest_t), '[]')::text AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t"#
        )
        #expect(sql.binds == ["10", "20"])
    }

    @Test func jsonPathsAreBoundAndNamed() throws {
        // text[] goes through to_jsonb; keys and indexes are binds with their type.
        let plan = try Fixture.plan("GET", "/rest/v1/children?select=goals->0,g:goals->>1,temperament&goals->>0=eq.x&order=goals->>0.desc", ownership: false)
        let sql = try #require(plan.statement)
        #expect(
            sql.text.hasPrefix(
                #"WITH pgrst_source AS (SELECT to_jsonb("children"."goals")->$1::int AS "goals", to_jsonb("children"."goals")->>$2::int AS "g", "children"."temperament" FROM "public"."children" WHERE to_jsonb("children"."goals")->>$3::int = $4 ORDER BY to_jsonb("children"."goals")->>$5::int DESC)"#
            ), "\(sql.text)")
        #expect(sql.binds == ["0", "1", "0", "x", "0"])
        // A quote in a key is a bind's text, never the statement's: same text for any key.
        let quoted = try #require(try Fixture.plan("GET", "/rest/v1/children?select=goals->>it's", ownership: false).statement)
        let plain = try #require(try Fixture.plan("GET", "/rest/v1/children?select=goals->>other", ownership: false).statement)
        #expect(quoted.text == plain.text.replacingOccurrences(of: #""other""#, with: #""it's""#) && quoted.binds == ["it's"])
        // The key is only an output name, quoted as an identifier (PostgREST's alias).
        #expect(quoted.text.contains(#"->>$1::text AS "it's" FROM"#))
        // A path on the owner column is not the owner filter: the scope is still added.
        let owner = try #require(try Fixture.plan("GET", "/rest/v1/user_profiles?id->>x=eq.\(Self.me)").statement)
        #expect(owner.text.contains(#"WHERE to_jsonb("user_profiles"."id")->>$1::text = $2 AND "user_profiles"."id" = $3"#), "\(owner.text)")
    }

    @Test func aggregatesGroupByTheOtherColumns() throws {
        var planner = Planner(cache: Fixture.cache, policy: Fixture.policy, ownershipEnabled: false)
        #expect(throws: RESTError.aggregatesNotAllowed) {
            try planner.plan(try Fixture.request("GET", "/rest/v1/children?select=count()"), caller: Fixture.user)
        }
        planner.aggregatesEnabled = true
        let plan = try planner.plan(
            try Fixture.request("GET", "/rest/v1/children?select=temperament,n:count(),age.sum()::int,name&order=temperament"), caller: Fixture.user)
        #expect(
            try #require(plan.statement).text.hasPrefix(
                #"WITH pgrst_source AS (SELECT "children"."temperament", pg_catalog.count(*) AS "n", CAST(pg_catalog.sum("children"."age") AS int) AS "sum", "children"."name" FROM "public"."children" GROUP BY 1, 4 ORDER BY "children"."temperament")"#
            ))
        // Only aggregates: no GROUP BY; a cast of the argument goes inside.
        let total = try planner.plan(try Fixture.request("GET", "/rest/v1/children?select=age::numeric.avg()"), caller: Fixture.user)
        #expect(
            try #require(total.statement).text.hasPrefix(
                #"WITH pgrst_source AS (SELECT pg_catalog.avg(CAST("children"."age" AS numeric)) AS "avg" FROM "public"."children")"#))
    }

    @Test func singleObjectAndCSVBodies() throws {
        let single = try #require(try Fixture.plan("GET", "/rest/v1/children?select=id", headers: [("Accept", "application/vnd.pgrst.object+json")]).statement)
        #expect(single.text.contains("coalesce((json_agg(_postgrest_t) -> 0)::text, '') AS body"))
        let stripped = try #require(
            try Fixture.plan("GET", "/rest/v1/children?select=id", headers: [("Accept", "application/vnd.pgrst.object+json;nulls=stripped")]).statement)
        #expect(stripped.text.contains("json_strip_nulls(json_agg(_postgrest_t) -> 0)"))
        let csv = try #require(try Fixture.plan("GET", "/rest/v1/children?select=id", headers: [("Accept", "text/csv")]).statement)
        #expect(csv.text.contains("string_agg(substring(_postgrest_t::text, 2, length(_postgrest_t::text) - 2), chr(10))"))
    }

    @Test func insertsUseTheBodyAsOneJSONBind() throws {
        let body = #"{"user_id":"\#(Self.me.uppercased())","name":"Maya","goals":["a","b"]}"#
        let plan = try Fixture.plan(
            "POST", "/rest/v1/children?select=%2A", headers: [("Prefer", "return=representation"), ("Accept", "application/vnd.pgrst.object+json")], body: body)
        let sql = try #require(plan.statement)
        #expect(
            sql.text.hasPrefix(
                #"WITH pgrst_source AS (INSERT INTO "public"."children" ("goals", "name", "user_id") SELECT pgrst_body."goals", pgrst_body."name", pgrst_body."user_id" FROM json_to_record($1::json) AS pgrst_body("goals" text[], "name" text, "user_id" uuid) RETURNING "public"."children".*)"#
            ))
        #expect(sql.binds == [body])
        #expect(plan.mustDecide)  // object Accept on a write: committed only with exactly one row
        #expect(plan.action == .insert && !plan.mergesDuplicates)

        let bulk = try Fixture.plan(
            "POST", "/rest/v1/children?columns=%22user_id%22,%22name%22,%22age%22",
            body: #"[{"user_id":"\#(Self.me)","name":"A"},{"user_id":"\#(Self.me)","name":"B","age":3}]"#)
        #expect(try #require(bulk.statement).text.contains(#"FROM json_to_recordset($1::json) AS pgrst_body("age" integer, "name" text, "user_id" uuid)"#))

        let defaults = try Fixture.plan(
            "POST", "/rest/v1/children?columns=%22user_id%22,%22name%22,%22goals%22", headers: [("Prefer", "missing=default")],
            body: #"{"user_id":"\#(Self.me)","name":"A"}"#)
        let defaultsSQL = try #require(defaults.statement)
        #expect(
            defaultsSQL.text.contains(
                #"SELECT CASE WHEN pgrst_elem.value -> $1 IS NULL THEN '{}'::text[] ELSE pgrst_body."goals" END, pgrst_body."name", pgrst_body."user_id" FROM json_array_elements($2::json) AS pgrst_elem"#
            ))
        #expect(defaultsSQL.binds == ["goals", #"[{"user_id":"\#(Self.me)","name":"A"}]"#])
    }

    @Test func keyOrderDoesNotChangeTheStatement() throws {
        let one = try Fixture.plan("PATCH", "/rest/v1/children?id=eq.1", body: #"{"name":"a","age":1}"#)
        let other = try Fixture.plan("PATCH", "/rest/v1/children?id=eq.1", body: #"{"age":1,"name":"a"}"#)
        #expect(one.statement?.text == other.statement?.text)
    }

    @Test func upsertsMergeWithAnOwnerGuard() throws {
        let plan = try Fixture.plan(
            "POST", "/rest/v1/user_profiles?on_conflict=id", headers: [("Prefer", "return=representation,resolution=merge-duplicates")],
            body: #"{"id":"\#(Self.me)","onboarding_state":"TOPICS"}"#)
        let sql = try #require(plan.statement)
        #expect(
            sql.text.contains(
                #"ON CONFLICT ("id") DO UPDATE SET "id" = EXCLUDED."id", "onboarding_state" = EXCLUDED."onboarding_state" WHERE "user_profiles"."id" = $2 RETURNING "public"."user_profiles".*, (xmax::text = '0') AS pgrst_inserted"#
            ))
        #expect(sql.text.contains("(SELECT pg_catalog.count(*) FILTER (WHERE pgrst_inserted) FROM pgrst_source) AS inserted"))
        #expect(plan.action == .insert && plan.mergesDuplicates)
        let ignore = try Fixture.plan("POST", "/rest/v1/user_profiles", headers: [("Prefer", "resolution=ignore-duplicates")], body: #"{"id":"\#(Self.me)"}"#)
        #expect(try #require(ignore.statement).text.contains(#"ON CONFLICT ("id") DO NOTHING RETURNING"#))
    }

    @Test func putIsASingleUpsertOnThePrimaryKey() throws {
        let plan = try Fixture.plan("PUT", "/rest/v1/user_profiles?id=eq.\(Self.me)", body: #"{"id":"\#(Self.me.uppercased())","onboarding_state":"GOALS"}"#)
        #expect(plan.action == .singleUpsert && !plan.mergesDuplicates)
        #expect(try #require(plan.statement).text.contains(#"ON CONFLICT ("id") DO UPDATE SET"#))
        #expect(throws: RESTError.putMatchingPK) {
            try Fixture.plan("PUT", "/rest/v1/user_profiles?id=eq.\(Self.me)", body: #"{"id":"\#(Fixture.otherID)"}"#, caller: .serviceRole)
        }
        #expect(throws: RESTError.invalidFilters) {
            try Fixture.plan("PUT", "/rest/v1/user_profiles?onboarding_state=eq.x", body: #"{"id":"\#(Self.me)"}"#)
        }
    }

    @Test func deleteAndEmptyPatch() throws {
        let delete = try #require(try Fixture.plan("DELETE", "/rest/v1/children?id=eq.1", body: "{}").statement)
        // Deleting a child: its creator, or the owner of the creator's family.
        #expect(
            delete.text.hasPrefix(
                #"WITH pgrst_source AS (DELETE FROM "public"."children" WHERE "children"."id" = $1 AND ("children"."user_id" = $2 OR "children"."user_id" IN (SELECT theirs."user_id" FROM "public"."family_members" mine JOIN "public"."family_members" theirs ON theirs."family_id" = mine."family_id" WHERE mine."user_id" = $3 AND mine."role" = $4)) RETURNING "public"."children".*)"#
            ))
        let empty = try #require(try Fixture.plan("PATCH", "/rest/v1/children?id=eq.1", body: "{}").statement)
        #expect(empty.text.hasPrefix(#"WITH pgrst_source AS (SELECT "public"."children".* FROM "public"."children" WHERE false)"#))
    }

    @Test func rpcCallsBindNamedArguments() throws {
        let post = try Fixture.plan("POST", "/rest/v1/rpc/get_user_with_profile", body: #"{"p_user_id":"\#(Self.me)"}"#)
        let sql = try #require(post.statement)
        #expect(
            sql.text
                == #"WITH pgrst_source AS (SELECT pgrst_call.* FROM "public"."get_user_with_profile"("p_user_id" := $1::uuid) pgrst_call) SELECT NULL::bigint AS total, pg_catalog.count(*) AS page_total, coalesce(json_agg(_postgrest_t), '[]')::text AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t"#
        )
        #expect(sql.binds == [Self.me])
        #expect(!post.readOnly)
        let get = try Fixture.plan("GET", "/rest/v1/rpc/get_user_with_profile?p_user_id=\(Self.me)")
        #expect(get.statement?.text == sql.text && get.readOnly)
        // One row (not SETOF): an object.
        let single = try #require(try Fixture.plan("POST", "/rest/v1/rpc/complete_onboarding", body: "{}").statement)
        #expect(single.text.contains("coalesce((json_agg(_postgrest_t) -> 0)::text, 'null') AS body"))
        let void = try Fixture.plan("POST", "/rest/v1/rpc/delete_account")
        #expect(void.action == .call(readOnly: false, headOnly: false) && void.returnsVoid)
        let scalar = try #require(try Fixture.plan("GET", "/rest/v1/rpc/add_them?a=1").statement)
        #expect(
            scalar.text
                == #"WITH pgrst_source AS (SELECT "public"."add_them"("a" := $1::integer) AS pgrst_scalar) SELECT NULL::bigint AS total, pg_catalog.count(*) AS page_total, coalesce((json_agg(_postgrest_t.pgrst_scalar) -> 0)::text, 'null') AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t"#
        )
    }

    @Test func argumentTexts() {
        #expect(Planner.argumentText(.string("x"), type: "text") == "x")
        #expect(Planner.argumentText(.number("1.5"), type: "numeric") == "1.5")
        #expect(Planner.argumentText(.bool(true), type: "boolean") == "true")
        #expect(Planner.argumentText(.null, type: "text") == nil)
        #expect(Planner.argumentText(.array([.string("a b"), .null]), type: "text[]") == #"{"a b",NULL}"#)
        #expect(Planner.argumentText(.object([("k", .number("1"))]), type: "jsonb") == #"{"k":1}"#)
    }

}

@Test func openAPIDescribesTheSchemaCache() throws {
    let text = OpenAPI.document(Fixture.cache)
    let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    #expect(document["swagger"] as? String == "2.0")
    let paths = try #require(document["paths"] as? [String: [String: Any]])
    #expect(Set(paths["/children"]?.keys.map { $0 } ?? []) == ["get", "post", "patch", "delete", "put"])
    #expect(paths["/rpc/get_user_with_profile"]?["get"] != nil)  // stable: GET allowed
    #expect(paths["/rpc/delete_account"]?["get"] == nil)  // volatile: POST only
    let definitions = try #require(document["definitions"] as? [String: [String: Any]])
    let properties = try #require(definitions["children"]?["properties"] as? [String: [String: Any]])
    #expect(properties["goals"]?["type"] as? String == "array")
    #expect(properties["id"]?["description"] as? String == "Note:\nThis is a Primary Key.<pk/>")
    #expect(Set(definitions["children"]?["required"] as? [String] ?? []) == ["user_id", "name"])
    #expect(text.contains(#""/children""#))  // slashes not escaped
    // Swagger 2.0: defaults are values of the column's type; `required` is never empty.
    #expect(properties["goals"]?["default"] as? [Any] != nil && (properties["goals"]?["default"] as? [Any])?.isEmpty == true)
    #expect(properties["temperament_talkative"]?["default"] as? Int == 5)
    #expect(properties["created_at"]?["default"] == nil && properties["created_at"]?["description"] as? String == "Default: now()")
    let profile = try #require(definitions["user_profiles"]?["properties"] as? [String: [String: Any]])
    #expect(profile["onboarding_state"]?["default"] as? String == "NOT_STARTED")
    #expect(!text.contains(#""required":[]"#))
}

@Test func openAPIDefaultsAreValuesOrNothing() {
    #expect(OpenAPI.defaultValue("'it''s'::text", type: "text") as? String == "it's")
    #expect(OpenAPI.defaultValue("'{}'::text[]", type: "text[]") as? [Any] != nil)
    #expect(OpenAPI.defaultValue("'{a}'::text[]", type: "text[]") == nil)
    #expect(OpenAPI.defaultValue("0.5", type: "numeric") as? Double == 0.5)
    #expect(OpenAPI.defaultValue("true", type: "boolean") as? Bool == true)
    #expect(OpenAPI.defaultValue("gen_random_uuid()", type: "uuid") == nil)
    #expect(OpenAPI.defaultValue("nextval('s'::regclass)", type: "bigint") == nil)
}
