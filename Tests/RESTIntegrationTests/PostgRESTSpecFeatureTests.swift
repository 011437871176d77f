import Foundation
import Postgres
import TestSupport
import Testing

/// More of PostgREST's own spec cases on `PostgRESTSpecTests`'s fixtures and server: embeds of
/// function rows, partitioned tables, embed disambiguation, unreadable tables, full text on
/// tsvector domains, logic trees and ranges. Each case is the spec's request and the spec's answer.
@Suite("PostgREST spec cases: functions, partitions, errors, filters", .serialized)
struct PostgRESTSpecFeatureTests {
    let base: PostgRESTSpecTests
    var server: TestServer { base.server }

    init() throws { base = try PostgRESTSpecTests() }

    /// The spec's request (a GET of `spec`) answers `status` and the spec's JSON.
    func check(_ path: String, _ expected: String, status: Int = 200, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try base.check(path, expected, status: status, sourceLocation: sourceLocation)
    }

    /// RpcSpec "embedding" and EmbedInnerJoinSpec "works with rpc": a function's rows of a
    /// table's type embed as the table's rows do, with embedded filters and `!inner`.
    @Test func functionRowsEmbed() throws {
        try check(
            "/rpc/getproject?id=1&select=id,name,client:clients(id),tasks(id)",
            #"[{"id":1,"name":"Windows 7","client":{"id":1},"tasks":[{"id":1},{"id":2}]}]"#)
        let posted = try server.client().request(
            "POST", "/rest/v1/rpc/getproject?select=id,name,client:clients(id),tasks(id)",
            headers: server.headers(nil, [("Content-Profile", "spec")]), body: #"{"id": 1}"#)
        #expect(
            (posted.json as? NSObject)
                == (try JSONSerialization.jsonObject(with: Data(#"[{"id":1,"name":"Windows 7","client":{"id":1},"tasks":[{"id":1},{"id":2}]}]"#.utf8))
                    as? NSObject),
            "\(posted.text)")
        try check(
            "/rpc/getallusers?select=name,tasks(name)&id=gt.1",
            #"[{"name":"Michael Scott","tasks":[{"name":"Design IOS"},{"name":"Code IOS"},{"name":"Design OSX"}]},{"name":"Dwight Schrute","tasks":[{"name":"Design w7"},{"name":"Design IOS"}]}]"#
        )
        try check(
            "/rpc/getallusers?select=name,tasks(name,project:projects(name))&id=gt.1",
            #"[{"name":"Michael Scott","tasks":[{"name":"Design IOS","project":{"name":"IOS"}},{"name":"Code IOS","project":{"name":"IOS"}},{"name":"Design OSX","project":{"name":"OSX"}}]},{"name":"Dwight Schrute","tasks":[{"name":"Design w7","project":{"name":"Windows 7"}},{"name":"Design IOS","project":{"name":"IOS"}}]}]"#
        )
        try check(
            "/rpc/getallprojects?select=id,clients(id)&clients.name=not.is.null",
            #"[{"id":1,"clients":{"id":1}},{"id":2,"clients":{"id":1}},{"id":3,"clients":{"id":2}},{"id":4,"clients":{"id":2}},{"id":5,"clients":null}]"#)
        try check("/rpc/getallprojects?select=id,clients!inner(id)&clients.id=eq.1", #"[{"id":1,"clients":{"id":1}},{"id":2,"clients":{"id":1}}]"#)
        // "should filter a proc that has arg name = filter name", "…with the not operator"
        try check("/rpc/get_projects_below?id=5&id=gt.2&select=id", #"[{"id":3},{"id":4}]"#)
        try check("/rpc/get_projects_below?id=5&id=not.gt.2&select=id", #"[{"id":1},{"id":2}]"#)
        try check("/rpc/get_projects_below?id=5&id=not.in.(1,3)&select=id", #"[{"id":2},{"id":4}]"#)
        let counted = try server.client().request(
            "HEAD", "/rest/v1/rpc/getallprojects?select=id,clients!inner(id)&clients.id=eq.1",
            headers: server.headers(nil, [("Accept-Profile", "spec"), ("Prefer", "count=exact")]))
        #expect(counted.status == 200 && counted.header("Content-Range") == "0-1/2", "\(counted.status) \(counted.header("Content-Range") ?? "-")")
    }

    /// QuerySpec "partitioned tables embedding": the partitions are not in the schema cache
    /// (PGRST205 without a hint: PostgREST's fuzzy hint wants a score of 0.75), and a junction
    /// that is partitioned is one relationship, not one per partition.
    @Test func partitionedTables() throws {
        try check(
            "/car_models?select=name,year,car_dealers(name,city)&order=name.asc&limit=4",
            #"[{"name":"DeLorean","year":1981,"car_dealers":[{"name":"Springfield Cars S.A.","city":"Springfield"}]},{"name":"F310-B","year":1997,"car_dealers":[]},{"name":"Murcielago","year":2001,"car_dealers":[{"name":"The Best Deals S.A.","city":"Franklin"}]},{"name":"Veneno","year":2013,"car_dealers":[]}]"#
        )
        try check(
            "/car_model_sales_202101?select=id,name,car_models(id,name)&order=id.asc",
            #"{"code":"PGRST205","details":null,"hint":null,"message":"Could not find the table 'spec.car_model_sales_202101' in the schema cache"}"#,
            status: 404)
        try check(
            "/car_models_default?select=id,name,car_model_sales(id,name)&order=id.asc",
            #"{"code":"PGRST205","details":null,"hint":null,"message":"Could not find the table 'spec.car_models_default' in the schema cache"}"#,
            status: 404)
        try check(
            "/car_models?select=name,car_model_sales(quantity)&name=eq.DeLorean&car_model_sales.order=quantity",
            #"[{"name":"DeLorean","car_model_sales":[{"quantity":7},{"quantity":9}]}]"#)
    }

    /// EmbedDisambiguationSpec: PGRST201's details as PostgREST writes them (`embedding`: the two
    /// tables, `relationship`: the key with the parent's columns and the target's), PGRST200
    /// naming the hint it searched with.
    @Test func embedDisambiguation() throws {
        try check(
            "/first?select=second(*)",
            #"{"code":"PGRST201","details":[{"cardinality":"one-to-one","embedding":"first with second","relationship":"first_second_id_1_fkey using first(second_id_1) and second(id)"},{"cardinality":"one-to-one","embedding":"first with second","relationship":"first_second_id_2_fkey using first(second_id_2) and second(id)"}],"hint":"Try changing 'second' to one of the following: 'second!first_second_id_1_fkey', 'second!first_second_id_2_fkey'. Find the desired relationship in the 'details' key.","message":"Could not embed because more than one relationship was found for 'first' and 'second'"}"#,
            status: 300)
        try check(
            "/message?select=id,sender:person!space(name)&id=lt.4",
            #"{"hint":null,"message":"Could not find a relationship between 'message' and 'person' in the schema cache","code":"PGRST200","details":"Searched for a foreign key relationship between 'message' and 'person' using the hint 'space' in the schema 'spec', but no matches were found."}"#,
            status: 400)
        // From the other side: one-to-many, the parent's columns first.
        let reverse = try server.client().request(
            "GET", "/rest/v1/person?select=message(*)", headers: server.headers(nil, [("Accept-Profile", "spec")]))
        let details = (reverse.jsonObject?["details"] as? [[String: Any]])?.compactMap { $0["relationship"] as? String }
        #expect(
            details == ["message_recipient_fkey using person(id) and message(recipient)", "message_sender_fkey using person(id) and message(sender)"],
            "\(reverse.text)")
    }

    /// RpcSpec: a `RAISE SQLSTATE 'PGRST'` whose MESSAGE or DETAIL PostgREST cannot read.
    @Test func unreadableRaises() throws {
        let message = #"Could not parse JSON in the \"RAISE SQLSTATE 'PGRST'\" error"#
        let detailHint = "DETAIL must be a JSON object with obligatory keys: 'status', 'headers' and optional key: 'status_text'."
        try check(
            "/rpc/raise_sqlstate_invalid_json_message",
            #"{"code":"PGRST121","message":"\#(message)","details":"Invalid JSON value for MESSAGE: 'INVALID'","hint":"MESSAGE must be a JSON object with obligatory keys: 'code', 'message' and optional keys: 'details', 'hint'."}"#,
            status: 500)
        try check(
            "/rpc/raise_sqlstate_invalid_json_details",
            #"{"code":"PGRST121","message":"\#(message)","details":"Invalid JSON value for DETAIL: 'INVALID'","hint":"\#(detailHint)"}"#, status: 500)
        try check(
            "/rpc/raise_sqlstate_missing_details",
            #"{"code":"PGRST121","message":"\#(message)","details":"DETAIL is missing in the RAISE statement","hint":"\#(detailHint)"}"#, status: 500)
    }

    /// QuerySpec and RpcSpec "works when the column type is a (recursive) tsvector domain": a
    /// domain over tsvector is searched as it is, not through to_tsvector.
    @Test func fullTextOnTSVectorDomains() throws {
        let vector = #"'do':7 'fun':5 'impossible':9 'it':1 'kind':3 'of':4 's':2 'the':8 'to':6"#
        try check("/tsearch_to_tsvector?select=text_search_domain&text_search_domain=fts(simple).of", #"[{"text_search_domain":"\#(vector)"}]"#)
        try check(
            "/tsearch_to_tsvector?select=text_search_rec_domain&text_search_rec_domain=fts(simple).of", #"[{"text_search_rec_domain":"\#(vector)"}]"#)
        try check("/rpc/get_tsearch_to_tsvector?select=text_search_domain&text_search_domain=fts(simple).impossible", #"[{"text_search_domain":"\#(vector)"}]"#)
        try check("/tsearch_to_tsvector?select=text_search&text_search=fts(simple).rats", #"[{"text_search":"Fat cats ate rats"}]"#)
    }

    @Test func logicTreesAndRanges() throws {
        // AndOrParamsSpec "can handle eq and neq": the extra `)` is ignored.
        try check("/entities?and=(id.eq.1,id.neq.2))&select=id", #"[{"id":1}]"#)
        try check("/entities?or=(id.lt.2,id.gt.3)&select=id", #"[{"id":1},{"id":4}]"#)
        // "allows whitespace"
        try check(
            "/entities?and=( and ( id.in.( 1, 2, 3 ) , id.eq.3 ) , or ( id.eq.2 , id.eq.3 ) )&select=id".replacingOccurrences(of: " ", with: "%20"),
            #"[{"id":3}]"#)
        // QuerySpec "errs when the embedded resource doesn't exist and an embedded filter is applied to it"
        try check(
            "/clients?select=*&non_existent_projects.name=like.*NonExistent*",
            #"{"hint":"Verify that 'non_existent_projects' is included in the 'select' query parameter.","details":null,"code":"PGRST108","message":"'non_existent_projects' is not an embedded resource in this request"}"#,
            status: 400)
        try check(
            "/clients?select=id,projects(id)&projects.tasks.id=eq.1",
            #"{"hint":"Verify that 'tasks' is included in the 'select' query parameter.","details":null,"code":"PGRST108","message":"'tasks' is not an embedded resource in this request"}"#,
            status: 400)
        // RangeSpec "succeeds if offset is negative as a no-op", "fails if limit is negative".
        try check("/clients?select=id&offset=-4&order=id", #"[{"id":1},{"id":2}]"#)
        try check(
            "/clients?select=id&limit=-1",
            #"{"message":"Requested range not satisfiable","code":"PGRST103","details":"Limit should be greater than or equal to zero.","hint":null}"#,
            status: 416)
    }
}
