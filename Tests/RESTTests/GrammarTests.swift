import HTTP
import Testing

@testable import REST

/// Query string → ApiRequest: PostgREST's grammar (QueryParams.hs), valid and invalid.
@Suite struct GrammarTests {
    static let id = "07e706d2-c4dc-46e3-b64e-2b12fd23cac5"

    static func filter(_ column: String, _ op: FilterOperator, _ value: String) -> Condition {
        .filter(Filter(column: column, op: op, operand: .value(value)))
    }

    static let filters: [(String, [Condition])] = [
        ("user_id=eq.\(id)", [filter("user_id", .eq, id)]),
        ("name=neq.x", [filter("name", .neq, "x")]),
        ("age=gte.2&age=lt.10", [filter("age", .gte, "2"), filter("age", .lt, "10")]),
        ("age=gt.1&age=lte.9", [filter("age", .gt, "1"), filter("age", .lte, "9")]),
        ("name=like.Ma*", [filter("name", .like, "Ma*")]),
        ("name=ilike.*ya", [filter("name", .ilike, "*ya")]),
        ("name=match.^M", [filter("name", .match, "^M")]),
        ("name=imatch.^m", [filter("name", .imatch, "^m")]),
        ("temperament=is.null", [.filter(Filter(column: "temperament", op: .is, operand: .isValue(.null)))]),
        ("temperament=is.NULL", [.filter(Filter(column: "temperament", op: .is, operand: .isValue(.null)))]),
        ("birthday=not.is.null", [.not(.filter(Filter(column: "birthday", op: .is, operand: .isValue(.null))))]),
        ("age=isdistinct.5", [filter("age", .isdistinct, "5")]),
        // httpx form-encodes: `+` is a space, %2B a plus; values keep their dots.
        ("name=eq.Mary+Ann%2B1", [filter("name", .eq, "Mary Ann+1")]),
        ("name=eq.a.b.c", [filter("name", .eq, "a.b.c")]),
        // Outside lists and logic trees a value is taken as written, quotes included.
        ("name=eq.%22quoted%22", [filter("name", .eq, "\"quoted\"")]),
        ("goals=cs.%7Bpatience%2C%22a+b%22%7D", [filter("goals", .cs, "{patience,\"a b\"}")]),
        ("goals=cd.{a,b}", [filter("goals", .cd, "{a,b}")]),
        ("goals=ov.{a}", [filter("goals", .ov, "{a}")]),
        ("name=fts(english).cat", [.filter(Filter(column: "name", op: .fts, operand: .value("cat"), language: "english"))]),
        ("name=wfts.cat", [filter("name", .wfts, "cat")]),
        ("name=not.eq.x", [.not(filter("name", .eq, "x"))]),
        // in: quoted elements with backslash escapes, as supabase-py writes them.
        (
            "name=in.%28Maya%2C%22A%2C+comma%22%2C%22q%5C%22uote%22%29",
            [.filter(Filter(column: "name", op: .in, operand: .list(["Maya", "A, comma", "q\"uote"])))]
        ),
        ("id=in.()", [.filter(Filter(column: "id", op: .in, operand: .list([])))]),
        ("name=in.(a,b\\c)", [.filter(Filter(column: "name", op: .in, operand: .list(["a", "b\\c"])))]),
        ("name=not.in.(a)", [.not(.filter(Filter(column: "name", op: .in, operand: .list(["a"]))))]),
        ("%22name%22=eq.x", [filter("name", .eq, "x")]),
        // Logic trees.
        (
            "or=(name.eq.Leo,and(age.gte.6,goals.cs.{patience}))",
            [.or([filter("name", .eq, "Leo"), .and([filter("age", .gte, "6"), filter("goals", .cs, "{patience}")])])]
        ),
        ("and=(age.gt.1,age.lt.9)", [.and([filter("age", .gt, "1"), filter("age", .lt, "9")])]),
        ("not.or=(age.eq.1,age.eq.2)", [.not(.or([filter("age", .eq, "1"), filter("age", .eq, "2")]))]),
        ("or=(name.eq.%22a,b%22,name.eq.c)", [.or([filter("name", .eq, "a,b"), filter("name", .eq, "c")])]),
        (
            "or=(name.in.(a,%22b)%22),age.not.is.null)",
            [
                .or([
                    .filter(Filter(column: "name", op: .in, operand: .list(["a", "b)"]))),
                    .not(.filter(Filter(column: "age", op: .is, operand: .isValue(.null))))
                ])
            ]
        ),
        (
            "or=(goals.cs.{a,b},not.and(age.eq.1,age.eq.2))",
            [.or([filter("goals", .cs, "{a,b}"), .not(.and([filter("age", .eq, "1"), filter("age", .eq, "2")]))])]
        ),
        ("or=(name.eq.x)&age=eq.1", [.or([filter("name", .eq, "x")]), filter("age", .eq, "1")])
    ]

    @Test(arguments: filters)
    func parsesFilters(_ query: String, _ expected: [Condition]) throws {
        let request = try Fixture.request("GET", "/rest/v1/children?\(query)")
        #expect(request.conditions == expected)
    }

    static let selects: [(String, [SelectItem])] = [
        ("select=%2A", [SelectItem(column: "*")]),
        ("select=", [SelectItem(column: "*")]),
        ("select=id,name,goals", [SelectItem(column: "id"), SelectItem(column: "name"), SelectItem(column: "goals")]),
        ("select=id,+name", [SelectItem(column: "id"), SelectItem(column: "name")]),
        ("select=kid:name,age::text", [SelectItem(column: "name", alias: "kid"), SelectItem(column: "age", cast: "text")]),
        ("select=years:age::text", [SelectItem(column: "age", alias: "years", cast: "text")]),
        ("select=%22user_id%22", [SelectItem(column: "user_id")]),
        ("select=*,name", [SelectItem(column: "*"), SelectItem(column: "name")])
    ]

    @Test(arguments: selects)
    func parsesSelect(_ query: String, _ expected: [SelectItem]) throws {
        #expect(try Fixture.request("GET", "/rest/v1/children?\(query)").select == expected)
    }

    static let orders: [(String, [OrderTerm])] = [
        ("created_at.desc,name.asc", [OrderTerm(column: "created_at", descending: true), OrderTerm(column: "name", descending: false)]),
        ("created_at.desc.nullslast", [OrderTerm(column: "created_at", descending: true, nulls: .last)]),
        ("name", [OrderTerm(column: "name")]),
        ("name.nullsfirst", [OrderTerm(column: "name", nulls: .first)]),
        ("age.asc.nullsfirst,name", [OrderTerm(column: "age", descending: false, nulls: .first), OrderTerm(column: "name")]),
        // PostgREST's OrderRelationTerm: a column of an embedded resource, JSON paths included.
        ("name,clients(name),id", [OrderTerm(column: "name"), OrderTerm(column: "name", relation: "clients"), OrderTerm(column: "id")]),
        (
            "clients(json_col->key).desc.nullsfirst",
            [OrderTerm(column: "json_col", descending: true, nulls: .first, jsonPath: [JSONPathStep(asText: false, .key("key"))], relation: "clients")]
        )
    ]

    @Test(arguments: orders)
    func parsesOrder(_ order: String, _ expected: [OrderTerm]) throws {
        #expect(try Fixture.request("GET", "/rest/v1/children?order=\(order)").order == expected)
    }

    @Test func parsesLimitOffsetRangeColumnsAndConflict() throws {
        let read = try Fixture.request("GET", "/rest/v1/children?limit=10&offset=5")
        #expect(read.limit == 10 && read.offset == 5)
        let ranged = try Fixture.request("GET", "/rest/v1/children", headers: [("Range", "2-4"), ("Range-Unit", "items")])
        #expect(ranged.limit == 3 && ranged.offset == 2)
        let open = try Fixture.request("GET", "/rest/v1/children", headers: [("Range", "3-")])
        #expect(open.limit == nil && open.offset == 3)
        let insert = try Fixture.request(
            "POST", "/rest/v1/children?columns=%22age%22%2C%22user_id%22%2C%22name%22",
            body: #"[{"name":"A","user_id":"x"},{"name":"B","age":3,"user_id":"x"}]"#)
        #expect(insert.columns == ["age", "user_id", "name"])
        #expect(insert.payload?.rows.count == 2)
        let upsert = try Fixture.request("POST", "/rest/v1/user_profiles?on_conflict=id", body: #"{"id":"x"}"#)
        #expect(upsert.onConflict == ["id"])
    }

    @Test func targetsAndActions() throws {
        #expect(try Fixture.request("GET", "/rest/v1/").target == .root)
        #expect(try Fixture.request("GET", "/rest/v1").target == .root)
        #expect(try Fixture.request("HEAD", "/rest/v1/children").action == .read(headOnly: true))
        #expect(try Fixture.request("PUT", "/rest/v1/children?id=eq.1", body: "{}").action == .singleUpsert)
        let call = try Fixture.request("GET", "/rest/v1/rpc/get_user_with_profile?p_user_id=\(Self.id)")
        #expect(call.target == .function("get_user_with_profile"))
        #expect(call.action == .call(readOnly: true, headOnly: false))
        #expect(call.functionArguments == [QueryPair("p_user_id", Self.id)])
        #expect(call.conditions.isEmpty)
        let post = try Fixture.request("POST", "/rest/v1/rpc/complete_onboarding")
        #expect(post.payload?.keys == [])
        // supabase-py's DELETE carries `{}`: ignored.
        #expect(try Fixture.request("DELETE", "/rest/v1/children?id=eq.1", body: "{}").payload == nil)
        // The apikey query parameter is a credential, not a filter.
        #expect(try Fixture.request("GET", "/rest/v1/children?apikey=abc").conditions.isEmpty)
    }

    // MARK: Errors: PostgREST's message shape.

    static let malformed: [(String, String, String?)] = [
        ("name=xx.1", #""failed to parse filter (xx.1)" (line 1, column 1)"#, #"unexpected "x" expecting "not" or operator (eq, gt, ...)"#),
        ("name=eq", #""failed to parse filter (eq)" (line 1, column 3)"#, #"unexpected end of input expecting delimiter (.)"#),
        ("name=not.xx.1", #""failed to parse filter (not.xx.1)" (line 1, column 5)"#, #"unexpected "x" expecting operator (eq, gt, ...)"#),
        (
            "name=is.maybe", #""failed to parse filter (is.maybe)" (line 1, column 4)"#,
            #"unexpected "m" expecting isVal: (null, not_null, true, false, unknown)"#
        ),
        ("name=in.a,b", #""failed to parse filter (in.a,b)" (line 1, column 4)"#, #"unexpected "a" expecting "(""#),
        ("name=in.(a,b", #""failed to parse filter (in.(a,b)" (line 1, column 8)"#, #"unexpected end of input expecting "," or ")""#),
        ("or=(name.eq.1", #""failed to parse logic tree ((name.eq.1)" (line 1, column 13)"#, #"unexpected end of input expecting "," or ")""#),
        ("or=name.eq.1", #""failed to parse logic tree (name.eq.1)" (line 1, column 3)"#, #"unexpected "n" expecting "(""#),
        ("or=(name.xx.1)", #""failed to parse logic tree ((name.xx.1))" (line 1, column 9)"#, #"unexpected "x" expecting "not" or operator (eq, gt, ...)"#),
        ("order=name.up", #""failed to parse order (name.up)" (line 1, column 6)"#, #"unexpected "u" expecting "asc", "desc", "nullsfirst" or "nullslast""#),
        ("order=name.asc.up", #""failed to parse order (name.asc.up)" (line 1, column 10)"#, #"unexpected "u" expecting "nullsfirst" or "nullslast""#),
        // QuerySpec "gives meaningful error message on bad syntax": `nullslast` is read, then `tt`.
        ("order=id.asc.nullslasttt", #""failed to parse order (id.asc.nullslasttt)" (line 1, column 17)"#, #"unexpected 't' expecting "," or end of input"#),
        // Not a relation term (one column only): it fails at the `(`, as PostgREST's.
        ("order=clients(name,id)", #""failed to parse order (clients(name,id))" (line 1, column 8)"#, #"unexpected "(" expecting "," or end of input"#),
        ("select=id,", #""failed to parse select parameter (id,)" (line 1, column 4)"#, #"unexpected end of input expecting field name (* or [a..z0..9_$])"#)
    ]

    /// PostgREST reads `limit` and `offset` with `readMaybe`: what is no integer is ignored, a
    /// negative offset is none, a negative limit is 416 PGRST103; a logic tree's trailing
    /// characters are ignored (its parser does not ask for the end of input).
    @Test func rangesAndTrailingCharacters() throws {
        let ignored = try Fixture.request("GET", "/rest/v1/children?limit=ten&offset=x")
        #expect(ignored.limit == nil && ignored.offset == 0)
        #expect(try Fixture.request("GET", "/rest/v1/children?offset=-4").offset == 0)
        #expect(try Fixture.request("GET", "/rest/v1/children?limit=%205%20&offset=2").limit == 5)
        #expect(throws: RESTError.invalidRange(.negativeLimit)) { try Fixture.request("GET", "/rest/v1/children?limit=-1") }
        // Past this server's integers (PostgREST's are unbounded): saturated.
        #expect(try Fixture.request("GET", "/rest/v1/children?limit=99999999999999999999").limit == Int.max)
        let trailing = try Fixture.request("GET", "/rest/v1/children?and=(name.eq.a,name.neq.b))")
        #expect(trailing.conditions == (try Fixture.request("GET", "/rest/v1/children?and=(name.eq.a,name.neq.b)")).conditions)
    }

    @Test(arguments: malformed)
    func malformedGrammarIsPGRST100(_ query: String, _ message: String, _ details: String?) {
        #expect(throws: RESTError.parse(message: message, details: details)) {
            try Fixture.request("GET", "/rest/v1/children?\(query)")
        }
    }

    @Test func embedsParseWithHintsJoinTypesAliasesAndNesting() throws {
        let select = try QueryGrammar.parseSelect("id,kid:children!current_child_id!inner(name,age,toys(*)),families()")
        #expect(select.count == 3)
        let kid = try #require(select[1].embed)
        #expect(select[1].column == "children" && select[1].alias == "kid" && kid.hint == "current_child_id" && kid.inner)
        #expect(kid.select.map(\.column) == ["name", "age", "toys"] && kid.select[2].embed?.select == [SelectItem(column: "*")])
        // `families()`: PostgREST's empty embed, selecting nothing.
        #expect(select[2].embed?.select == [])
        // Embedded filters, order and limit go to their embed's path.
        let request = try Fixture.request(
            "GET", "/rest/v1/user_profiles?select=id,children!current_child_id(name)&children.age=gt.3&children.order=name.desc&children.limit=2")
        #expect(request.embedded["children"]?.conditions == [.filter(Filter(column: "age", op: .gt, operand: .value("3")))])
        #expect(request.embedded["children"]?.order == [OrderTerm(column: "name", descending: true)] && request.embedded["children"]?.limit == 2)
        for bad in ["id,children(name", "id,children!(name)", "children!inner", "a,(b)"] {
            #expect(throws: RESTError.self, "\(bad)") { try QueryGrammar.parseSelect(bad) }
        }
    }

    @Test func jsonPathsParseAsPostgRESTsPJsonPath() throws {
        let key = { (text: Bool, name: String) in JSONPathStep(asText: text, .key(name)) }
        let index = { (text: Bool, number: String) in JSONPathStep(asText: text, .index(number)) }
        let select = try QueryGrammar.parseSelect(#"metadata->>key,a:data->0->b->>-1::int,data->!@#$%^&*_d,data->0xy1->23-xy-45,data->"a.b",goals->0"#)
        #expect(
            select.map(\.jsonPath) == [
                [key(true, "key")], [index(false, "0"), key(false, "b"), index(true, "-1")], [key(false, "!@#$%^&*_d")],
                [key(false, "0xy1"), key(false, "23-xy-45")], [key(false, "a.b")], [index(false, "0")]
            ])
        #expect(select.map(\.outputName) == ["key", "a", "!@#$%^&*_d", "23-xy-45", "a.b", "goals"])
        #expect(select[1].cast == "int" && select[1].alias == "a")
        // An index ends at a delimiter; inside an embed `)` is one.
        #expect(try QueryGrammar.parseSelect("rel(data->0)")[0].embed?.select[0].jsonPath == [index(false, "0")])
        // Filters (plain and in logic trees), order and embedded paths.
        let request = try Fixture.request(
            "GET", "/rest/v1/children?metadata->>key=eq.x&or=(data->a->>b.eq.1,goals->>0.not.is.null)&order=data->>n.desc.nullslast&kids.meta->>k=eq.2")
        #expect(
            request.conditions == [
                .filter(Filter(column: "metadata", op: .eq, operand: .value("x"), jsonPath: [key(true, "key")])),
                .or([
                    .filter(Filter(column: "data", op: .eq, operand: .value("1"), jsonPath: [key(false, "a"), key(true, "b")])),
                    .not(.filter(Filter(column: "goals", op: .is, operand: .isValue(.null), jsonPath: [index(true, "0")])))
                ])
            ])
        #expect(request.order == [OrderTerm(column: "data", descending: true, nulls: .last, jsonPath: [key(true, "n")])])
        #expect(request.embedded["kids"]?.conditions == [.filter(Filter(column: "meta", op: .eq, operand: .value("2"), jsonPath: [key(true, "k")]))])
        // Reserved characters and badly formed numbers are PGRST100, as in PostgREST.
        for bad in ["data->(x", "data->>-78xy,", "data->", "data->>--34"] {
            #expect(throws: RESTError.self, "\(bad)") { try QueryGrammar.parseSelect(bad) }
        }
        #expect(
            throws: RESTError.parse(
                message: #""failed to parse select parameter (data->(x)" (line 1, column 7)"#,
                details: #"unexpected "(" expecting "-", digit or any non reserved character different from: .,>()"#)
        ) {
            try QueryGrammar.parseSelect("data->(x")
        }
        #expect(throws: RESTError.self) { try Fixture.request("GET", "/rest/v1/children?data->(x=eq.1") }
    }

    @Test func aggregatesAndSpreadsParse() throws {
        let select = try QueryGrammar.parseSelect(
            "count(),cnt:count()::text,age.sum(),total:age.avg()::int,metadata->>n::integer.max(),name,age.min(),id.count()")
        #expect(select.map(\.aggregate) == [.count, .count, .sum, .avg, .max, nil, .min, .count])
        #expect(select.map(\.outputName) == ["count", "cnt", "sum", "total", "max", "name", "min", "count"])
        #expect(select[0].column == "*" && select[1].aggregateCast == "text" && select[3].aggregateCast == "int" && select[3].cast == nil)
        #expect(select[4].cast == "integer" && select[4].jsonPath == [JSONPathStep(asText: true, .key("n"))])
        let spread = try QueryGrammar.parseSelect("id,...clients!client_id!inner(name,...owners(o:name)),other(*)")
        let clients = try #require(spread[1].embed)
        #expect(spread[1].column == "clients" && spread[1].alias == nil && clients.spread && clients.inner && clients.hint == "client_id")
        #expect(clients.select[1].embed?.spread == true && spread[2].embed?.spread == false)
        for bad in ["age.total()", "age.sum(", "count(x)", "alias:...rel(*)", "...rel", "age.sum()::"] {
            #expect(throws: RESTError.self, "\(bad)") { try QueryGrammar.parseSelect(bad) }
        }
    }

    static let badBodies: [(String, String, String)] = [
        ("POST", "{", "Empty or invalid json"),
        ("POST", "", "Empty or invalid json"),
        ("POST", "[1,2]", "All object keys must match"),
        ("POST", #"[{"a":1},{"b":2}]"#, "All object keys must match"),
        ("PATCH", #"[{"a":1},{"b":2}]"#, "All object keys must match"),
        ("PATCH", "\"text\"", "Empty or invalid json"),
        ("POST", #"{"a":1}x"#, "Empty or invalid json"),
        ("POST", "{\"a\":\"\u{01}\"}", "Empty or invalid json")
    ]

    @Test(arguments: badBodies)
    func invalidBodiesArePGRST102(_ method: String, _ body: String, _ message: String) {
        #expect(throws: RESTError.invalidBody(message)) {
            try Fixture.request(method, "/rest/v1/children", body: body)
        }
    }

    /// A PATCH takes an array as PostgREST does: `[]` and `[{}]` set no column.
    @Test(arguments: ["[]", "[{}]", "{}"])
    func emptyPatchBodiesSetNothing(_ body: String) throws {
        let request = try Fixture.request("PATCH", "/rest/v1/children", body: body)
        #expect(request.payload?.keys == [])
    }

    @Test func jsonValueParsesAndSerializes() throws {
        let text = #"{"a":[1,-2.5e3,true,false,null],"b":"x\"y\\\u00e9\ud83d\ude00","c":{}}"#
        let value = try #require(JSONValue.parse(Array(text.utf8)))
        #expect(value["b"] == .string("x\"y\\é😀"))
        #expect(value["a"] == .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null]))
        #expect(value.serialized == #"{"a":[1,-2.5e3,true,false,null],"b":"x\"y\\é😀","c":{}}"#)
        for bad in ["01", "1.", "-", "[1,]", "{\"a\"}", "\"\\ud83d\"", "tru", "{\"a\":1,}", ""] {
            #expect(JSONValue.parse(Array(bad.utf8)) == nil, "\(bad)")
        }
    }
}
