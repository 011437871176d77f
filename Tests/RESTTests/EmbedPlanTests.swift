import Identity
import Postgres
import Testing

@testable import REST

/// The statements of embeds, spreads, related orders and a write's embedded answer, exactly:
/// the plan values' writers must keep the text (and its binds' order) PostgreSQL was tested with.
@Suite struct EmbedPlanTests {
    static let cache = SchemaCache(
        tables: [
            Fixture.children, Fixture.profiles,
            SchemaCache.Table(
                name: "families", columns: [.init(name: "id", type: "uuid", nullable: false), .init(name: "name", type: "text", nullable: false)],
                primaryKey: ["id"]),
            SchemaCache.Table(
                name: "family_members",
                columns: [
                    .init(name: "family_id", type: "uuid", nullable: false), .init(name: "user_id", type: "uuid", nullable: false),
                    .init(name: "role", type: "text", nullable: false)
                ], primaryKey: ["family_id", "user_id"]),
            SchemaCache.Table(
                name: "tags", columns: [.init(name: "id", type: "integer", nullable: false), .init(name: "label", type: "text")], primaryKey: ["id"]),
            SchemaCache.Table(
                name: "child_tags",
                columns: [.init(name: "child_id", type: "uuid", nullable: false), .init(name: "tag_id", type: "integer", nullable: false)],
                primaryKey: ["child_id", "tag_id"])
        ],
        functions: [],
        foreignKeys: [
            .init(
                name: "user_profiles_current_child_fkey", table: "user_profiles", columns: ["current_child_id", "id"], referencedTable: "children",
                referencedColumns: ["id", "user_id"]),
            .init(
                name: "family_members_family_id_fkey", table: "family_members", columns: ["family_id"], referencedTable: "families", referencedColumns: ["id"]),
            .init(name: "child_tags_child_fkey", table: "child_tags", columns: ["child_id"], referencedTable: "children", referencedColumns: ["id"]),
            .init(name: "child_tags_tag_fkey", table: "child_tags", columns: ["tag_id"], referencedTable: "tags", referencedColumns: ["id"])
        ])

    static func statement(
        _ method: String, _ target: String, headers: [(String, String)] = [], caller: Caller, ownership: Bool
    ) throws -> SQL {
        let api = try Fixture.request(method, "/rest/v1/" + target, headers: headers)
        return try #require(try Planner(cache: cache, policy: Fixture.policy, ownershipEnabled: ownership).plan(api, caller: caller).statement)
    }

    static let me = Fixture.userID.uuidString.lowercased()

    @Test func manyToManyInnerEmbedCarriesTheRuleOfEveryTable() throws {
        let sql = try Self.statement("GET", "children?select=id,tags!inner(*)&tags.label=eq.x", caller: Fixture.user, ownership: true)
        #expect(
            sql.text
                == #"WITH pgrst_source AS (SELECT "children"."id", coalesce((SELECT json_agg("pgrst_1_row") FROM (SELECT "pgrst_1"."id", "pgrst_1"."label" FROM "public"."tags" AS "pgrst_1", "public"."child_tags" AS "pgrst_1_j" WHERE "pgrst_1_j"."tag_id" = "pgrst_1"."id" AND "pgrst_1_j"."child_id" = "children"."id" AND "pgrst_1"."label" = $1) "pgrst_1_row"), '[]'::json) AS "tags" FROM "public"."children" WHERE ("children"."user_id" = $2 OR "children"."user_id" IN (SELECT theirs."user_id" FROM "public"."family_members" mine JOIN "public"."family_members" theirs ON theirs."family_id" = mine."family_id" WHERE mine."user_id" = $3)) AND EXISTS (SELECT 1 FROM "public"."tags" AS "pgrst_2", "public"."child_tags" AS "pgrst_2_j" WHERE "pgrst_2_j"."tag_id" = "pgrst_2"."id" AND "pgrst_2_j"."child_id" = "children"."id" AND "pgrst_2"."label" = $4)) SELECT NULL::bigint AS total, pg_catalog.count(*) AS page_total, coalesce(json_agg(_postgrest_t), '[]')::text AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t"#,
            "\(sql.text)")
        #expect(sql.binds == ["x", Self.me, Self.me, "x"])
    }

    @Test func relatedOrderReadsTheEmbedsRowThroughItsOwnJoinAndRule() throws {
        let sql = try Self.statement(
            "GET", "user_profiles?select=id,children!current_child_id(name)&order=children(name).desc,id", caller: Fixture.user, ownership: true)
        #expect(
            sql.text
                == #"WITH pgrst_source AS (SELECT "user_profiles"."id", (SELECT row_to_json("pgrst_1_row") FROM (SELECT "pgrst_1"."name" FROM "public"."children" AS "pgrst_1" WHERE "pgrst_1"."id" = "user_profiles"."current_child_id" AND "pgrst_1"."user_id" = "user_profiles"."id" AND ("pgrst_1"."user_id" = $1 OR "pgrst_1"."user_id" IN (SELECT theirs."user_id" FROM "public"."family_members" mine JOIN "public"."family_members" theirs ON theirs."family_id" = mine."family_id" WHERE mine."user_id" = $2))) "pgrst_1_row") AS "children" FROM "public"."user_profiles" WHERE "user_profiles"."id" = $3 ORDER BY (SELECT "pgrst_2"."name" FROM "public"."children" AS "pgrst_2" WHERE "pgrst_2"."id" = "user_profiles"."current_child_id" AND "pgrst_2"."user_id" = "user_profiles"."id" AND ("pgrst_2"."user_id" = $4 OR "pgrst_2"."user_id" IN (SELECT theirs."user_id" FROM "public"."family_members" mine JOIN "public"."family_members" theirs ON theirs."family_id" = mine."family_id" WHERE mine."user_id" = $5))) DESC, "user_profiles"."id") SELECT NULL::bigint AS total, pg_catalog.count(*) AS page_total, coalesce(json_agg(_postgrest_t), '[]')::text AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t"#,
            "\(sql.text)")
        #expect(sql.binds == [Self.me, Self.me, Self.me, Self.me, Self.me])
    }

    @Test func toOneSpreadIsAScalarSubquery() throws {
        let sql = try Self.statement("GET", "family_members?select=role,...families(name)", caller: .serviceRole, ownership: false)
        #expect(
            sql.text
                == #"WITH pgrst_source AS (SELECT "family_members"."role", (SELECT "pgrst_1"."name" FROM "public"."families" AS "pgrst_1" WHERE "pgrst_1"."id" = "family_members"."family_id") AS "name" FROM "public"."family_members") SELECT NULL::bigint AS total, pg_catalog.count(*) AS page_total, coalesce(json_agg(_postgrest_t), '[]')::text AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t"#,
            "\(sql.text)")
        #expect(sql.binds == [])
    }

    @Test func toManySpreadIsAnArrayInTheEmbedsOrderAndRange() throws {
        let sql = try Self.statement(
            "GET", "families?select=name,...family_members(role)&family_members.order=role&family_members.limit=3", caller: .serviceRole, ownership: false)
        #expect(
            sql.text
                == #"WITH pgrst_source AS (SELECT "families"."name", coalesce((SELECT json_agg(pgrst_spread.value) FROM (SELECT "pgrst_1"."role" AS value FROM "public"."family_members" AS "pgrst_1" WHERE "pgrst_1"."family_id" = "families"."id" ORDER BY "pgrst_1"."role" LIMIT $1) pgrst_spread), '[]'::json) AS "role" FROM "public"."families") SELECT NULL::bigint AS total, pg_catalog.count(*) AS page_total, coalesce(json_agg(_postgrest_t), '[]')::text AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t"#,
            "\(sql.text)")
        #expect(sql.binds == ["3"])
    }

    @Test func limitedDeleteReturnsItsRowsWithTheirEmbeds() throws {
        let sql = try Self.statement(
            "DELETE", "families?select=name,family_members(role)&order=name&limit=1&offset=2", headers: [("Prefer", "return=representation")],
            caller: .serviceRole, ownership: false)
        #expect(
            sql.text
                == #"WITH pgrst_source AS (DELETE FROM "public"."families" WHERE ctid = ANY(ARRAY(SELECT ctid FROM "public"."families" ORDER BY "families"."name" LIMIT $1 OFFSET $2)) RETURNING "public"."families".*) SELECT NULL::bigint AS total, pg_catalog.count(*) AS page_total, coalesce(json_agg(_postgrest_t), '[]')::text AS body, NULL::bigint AS inserted FROM (SELECT pgrst_source."name", coalesce((SELECT json_agg("pgrst_1_row") FROM (SELECT "pgrst_1"."role" FROM "public"."family_members" AS "pgrst_1" WHERE "pgrst_1"."family_id" = pgrst_source."id") "pgrst_1_row"), '[]'::json) AS "family_members" FROM pgrst_source ORDER BY pgrst_source."name") _postgrest_t"#,
            "\(sql.text)")
        #expect(sql.binds == ["1", "2"])
    }
}
