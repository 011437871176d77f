import Foundation
import Identity
import Postgres
import Testing

@testable import REST

/// The schema cache behind the planner: unknown names as schema-cache errors with PostgREST's
/// hints, the cache built from catalog rows, media handlers and domain representations.
@Suite struct PlanSchemaCacheTests {
    @Test func unknownNamesAreSchemaCacheErrors() {
        #expect(throws: RESTError.unknownTable("chilren", hint: "children")) { try Fixture.plan("GET", "/rest/v1/chilren") }
        #expect(throws: RESTError.unknownTable("zzz", hint: nil)) { try Fixture.plan("GET", "/rest/v1/zzz") }
        #expect(throws: RESTError.unknownColumn(column: "nope", table: "children")) { try Fixture.plan("GET", "/rest/v1/children?nope=eq.1") }
        #expect(throws: RESTError.unknownColumn(column: "nope", table: "children")) { try Fixture.plan("GET", "/rest/v1/children?select=nope") }
        #expect(throws: RESTError.unknownColumn(column: "nope", table: "children")) { try Fixture.plan("GET", "/rest/v1/children?order=nope.desc") }
        #expect(throws: RESTError.unknownBodyColumn(column: "nope", table: "children")) {
            try Fixture.plan("PATCH", "/rest/v1/children?id=eq.1", body: #"{"nope":1}"#)
        }
        #expect(throws: RESTError.unknownFunction(name: "get_user_with_profiles", arguments: [], hint: "get_user_with_profile")) {
            try Fixture.plan("POST", "/rest/v1/rpc/get_user_with_profiles", body: "{}")
        }
        #expect(throws: RESTError.unknownFunction(name: "get_user_with_profile", arguments: ["x"], hint: nil)) {
            try Fixture.plan("POST", "/rest/v1/rpc/get_user_with_profile", body: #"{"x":1}"#)
        }
        // A GET searches by the names only (no single unnamed json parameter).
        #expect(throws: RESTError.unknownFunction(name: "get_user_with_profile", arguments: [], hint: nil, search: .plain)) {
            try Fixture.plan("GET", "/rest/v1/rpc/get_user_with_profile")
        }
    }

    /// PostgREST's own examples of its hints (Error.hs, noRpcHint's doctests).
    @Test func functionHintsAreFuzzyAsPostgRESTs() {
        let overloads = ["(name, param, val)", "(attr, id)"]
        #expect(fuzzyClosest("(nam, pqaram, vall)", among: overloads, minScore: 0.33) == "(name, param, val)")
        #expect(fuzzyClosest("(param, val)", among: overloads, minScore: 0.33) == "(name, param, val)")
        #expect(fuzzyClosest("(attrs, id)", among: overloads, minScore: 0.33) == "(attr, id)")
        #expect(fuzzyClosest("(id)", among: overloads, minScore: 0.33) == "(attr, id)")
        #expect(fuzzyClosest("(noclosealternative)", among: overloads, minScore: 0.33) == nil)
        let names = ["test", "another"]
        #expect(fuzzyClosest("testt", among: names, minScore: 0.75) == "test")
        #expect(fuzzyClosest("other", among: names, minScore: 0.75) == nil)
        #expect(fuzzyClosest("noclosealternative", among: names, minScore: 0.75) == nil)
    }

    @Test func schemaCacheBuildsFromCatalogRows() {
        let cache = SchemaCache.build(
            columns: [
                [
                    "table_name": "t", "column_name": "id", "type": "uuid", "nullable": "f", "default_expression": "gen_random_uuid()", "kind": "r",
                    "in_pk": "t", "description": nil
                ],
                [
                    "table_name": "t", "column_name": "tags", "type": "text[]", "nullable": "t", "default_expression": nil, "kind": "r", "in_pk": "f",
                    "description": nil
                ]
            ],
            functions: [
                [
                    "name": "f", "returns_set": "t", "volatility": "s", "return_type": "record", "returns_composite": "t", "returns_void": "f",
                    "default_count": "1", "arguments": #"[["a","uuid"],["b","integer"]]"#
                ],
                [
                    "name": "label", "returns_set": "f", "volatility": "s", "return_type": "text", "returns_composite": "f", "returns_void": "f",
                    "default_count": "0", "arguments": #"[["","t","i"]]"#, "computed_table": "t"
                ],
                [
                    "name": "f", "returns_set": "f", "volatility": "v", "return_type": "text", "returns_composite": "f", "returns_void": "f",
                    "default_count": "0", "arguments": #"[["v","text[]","v"]]"#
                ]
            ])
        let table = cache.tables["t"]
        #expect(table?.primaryKey == ["id"])
        #expect(table?.column("tags")?.type == "text[]")
        #expect(table?.column("id")?.defaultExpression == "gen_random_uuid()")
        let function = cache.functions["f"]?.first
        #expect(function?.arguments == [.init(name: "a", type: "uuid", hasDefault: false), .init(name: "b", type: "integer", hasDefault: true)])
        #expect(function?.volatility == .stable && function?.returnsSet == true)
        // Overloads are kept in catalog order; a variadic parameter is marked.
        #expect(cache.functions["f"]?.count == 2 && cache.functions["f"]?.last?.arguments.first?.variadic == true)
        // A function of one unnamed row parameter: a computed field of the table, not callable.
        #expect(table?.computed["label"] == .init(name: "label", type: "text") && table?.hasField("label") == true)
        #expect(cache.functions["label"] == nil)
    }

    @Test func mediaHandlersAreLoadedAndNegotiated() throws {
        let handlers = SchemaCache.mediaHandlers([
            [
                "aggregate": #"public."tsv_agg""#, "relation": "t", "media_type": "text/tab-separated-values", "resolved": "text/tab-separated-values",
                "binary": "f"
            ],
            ["aggregate": "public.count_agg", "relation": "", "media_type": "text/x-count", "resolved": "text/x-count", "binary": "f"],
            ["aggregate": nil, "relation": "logo", "media_type": "*/*", "resolved": "application/octet-stream", "binary": "t"]
        ])
        let table = SchemaCache.Table(name: "t", columns: [.init(name: "id", type: "integer")], primaryKey: ["id"])
        let cache = SchemaCache(
            tables: [table], functions: [.init(name: "logo", arguments: [], returnType: #""*/*""#, returnsSet: false, returnsComposite: false)],
            mediaHandlers: handlers)
        func plan(_ target: String, _ accept: String?) throws(RESTError) -> ActionPlan {
            let api = try Fixture.request("GET", target, headers: accept.map { [("Accept", $0)] } ?? [])
            return try Planner(cache: cache, policy: Fixture.policy, ownershipEnabled: false).plan(api, caller: .serviceRole)
        }
        let tsv = try plan("/rest/v1/t", "text/tab-separated-values")
        #expect(
            tsv.request.media
                == .custom(
                    .init(aggregate: #"public."tsv_agg""#, rowType: #""public"."t""#, contentType: "text/tab-separated-values", binary: false, scalar: false)))
        #expect(try #require(tsv.statement).text.contains(#"(public."tsv_agg"(_postgrest_t::"public"."t"))::text AS body"#))
        #expect(tsv.readsResponseSettings)
        // Any rows; JSON first when it comes first; the table's own handler needs `*`.
        #expect(try #require(try plan("/rest/v1/t?select=id", "text/x-count").statement).text.contains("(public.count_agg(_postgrest_t))::text AS body"))
        #expect(try plan("/rest/v1/t", "application/json, text/x-count").request.media == .json)
        #expect(throws: RESTError.notAcceptable("text/tab-separated-values")) { try plan("/rest/v1/t?select=id", "text/tab-separated-values") }
        // A function returning `"*/*"`: any Accept, its value as the body (bytes as hex).
        let logo = try plan("/rest/v1/rpc/logo", "image/png")
        #expect(ResponseRenderer.contentType(logo.request.media) == "application/octet-stream")
        #expect(try #require(logo.statement).text.contains("pg_catalog.encode((pg_catalog.array_agg(_postgrest_t.pgrst_scalar))[1], 'hex') AS body"))
        #expect(ResponseRenderer.bodyBytes("00ff41", logo.request.media) == [0x00, 0xFF, 0x41])
    }

    @Test func domainRepresentationsApplyToOutputFiltersAndBodies() throws {
        let column = ["table_name": "d", "kind": "r", "nullable": "t", "default_expression": nil, "description": nil] as [String: String?]
        var id = column
        var color = column
        id["column_name"] = "id"
        id["type"] = "integer"
        id["in_pk"] = "t"
        color["column_name"] = "c"
        color["type"] = "color"
        color["in_pk"] = "f"
        let cache = SchemaCache.build(
            columns: [id, color], functions: [],
            representations: [
                ["source": "color", "target": "json", "function": "public.color_json"],
                ["source": "text", "target": "color", "function": "public.color_text"],
                ["source": "json", "target": "color", "function": "public.color_from_json"],
                ["source": "color", "target": "text", "function": "public.unused"]
            ])
        #expect(
            cache.tables["d"]?.column("c")?.representation
                == .init(toJSON: "public.color_json", fromText: "public.color_text", fromJSON: "public.color_from_json"))
        #expect(cache.tables["d"]?.column("id")?.representation.isEmpty == true)
        func plan(_ method: String, _ target: String, body: String? = nil) throws -> SQL {
            let api = try Fixture.request(method, target, headers: [("Prefer", "return=representation")], body: body)
            return try #require(try Planner(cache: cache, policy: Fixture.policy, ownershipEnabled: false).plan(api, caller: .serviceRole).statement)
        }
        let read = try plan("GET", "/rest/v1/d?c=eq.00FF00&id=in.(1,2)")
        #expect(
            read.text.hasPrefix(
                #"WITH pgrst_source AS (SELECT "d"."id", public.color_json("d"."c") AS "c" FROM "public"."d" WHERE "d"."c" = public.color_text($1::text) AND "d"."id" = ANY($2)"#
            ), "\(read.text)")
        let list = try plan("GET", "/rest/v1/d?select=id,x:c&c=in.(1,2)&or=(c.like.*1,c.gt(any).{1,2})")
        #expect(
            list.text.hasPrefix(
                #"WITH pgrst_source AS (SELECT "d"."id", public.color_json("d"."c") AS "x" FROM "public"."d" WHERE "d"."c" = ANY(SELECT public.color_text(unnest($1::text[]))) AND ("d"."c" LIKE $2 OR "d"."c" > ANY(SELECT public.color_text(unnest($3::text[]))))"#
            ), "\(list.text)")
        let insert = try plan("POST", "/rest/v1/d", body: #"{"id":1,"c":"00FF00"}"#)
        #expect(
            insert.text.hasPrefix(
                #"WITH pgrst_source AS (INSERT INTO "public"."d" ("c", "id") SELECT public.color_from_json(pgrst_body."c"), pgrst_body."id" FROM json_to_record($1::json) AS pgrst_body("c" json, "id" integer) RETURNING "public"."d".*)"#
            ), "\(insert.text)")
        #expect(insert.text.contains(#"FROM (SELECT pgrst_source."id", public.color_json(pgrst_source."c") AS "c" FROM pgrst_source)"#), "\(insert.text)")
        let update = try plan("PATCH", "/rest/v1/d?id=eq.1", body: #"{"c":"00FF00"}"#)
        #expect(
            update.text.hasPrefix(
                #"WITH pgrst_source AS (UPDATE "public"."d" SET "c" = public.color_from_json(pgrst_body."c") FROM json_to_record($1::json) AS pgrst_body("c" json)"#
            ), "\(update.text)")
    }
}
