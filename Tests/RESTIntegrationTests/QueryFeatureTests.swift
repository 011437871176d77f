import Foundation
import Postgres
import TestSupport
import Testing

/// JSON paths, aggregates, spreads and many-to-many embeds against PostgreSQL, on fixture tables
/// of the test's own (the answers of PostgREST's JsonOperatorSpec, AggregateFunctionsSpec and
/// SpreadQueriesSpec, on data shaped like theirs), as the service role. Ownership of the same
/// features is in EmbeddingTests' matrix.
@Suite("JSON paths, aggregates, spreads, many-to-many", .serialized)
struct QueryFeatureTests {
    let server: TestServer

    init() throws {
        server = try TestServer { $0.aggregatesEnabled = true }
        try server.installFixtures(
            """
            CREATE TABLE public.fx_json (id int PRIMARY KEY, metadata jsonb, settings json, goals text[]);
            INSERT INTO public.fx_json VALUES
              (1, '{"key": "x", "n": 5, "a": {"b": {"c": "deep"}}, "it''s": "quoted", "arr": [1, 2, 3], "with-dash": "d"}',
                  '{"foo": {"bar": "baz", "int": 1}}', '{patience,kindness}'),
              (2, '{"key": "y", "n": 7, "a": {"b": {"c": "other"}}, "arr": [[9, 8], [7, 6]]}', '{"foo": {"bar": "qux", "int": 2}}', '{curiosity}'),
              (3, '{"n": 12}', NULL, '{}');
            CREATE TABLE public.fx_clients (id int PRIMARY KEY, name text NOT NULL);
            CREATE TABLE public.fx_projects (id int PRIMARY KEY, name text NOT NULL, client_id int REFERENCES public.fx_clients);
            CREATE TABLE public.fx_invoices (id int PRIMARY KEY, project_id int REFERENCES public.fx_projects, total int, meta jsonb);
            INSERT INTO public.fx_clients VALUES (1, 'Microsoft'), (2, 'Apple');
            INSERT INTO public.fx_projects VALUES (1, 'Windows 7', 1), (2, 'Windows 10', 1), (3, 'IOS', 2), (4, 'OSX', 2), (5, 'Orphan', NULL);
            INSERT INTO public.fx_invoices VALUES (1, 1, 100, '{"k": 1}'), (2, 1, 200, '{"k": 2}'), (3, 2, 500, '{"k": 3}'), (4, 2, 700, NULL),
              (5, 3, 1200, NULL), (6, 3, 2000, NULL), (7, 4, 100, NULL), (8, 4, 4000, NULL);
            CREATE TABLE public.fx_users (id int PRIMARY KEY, name text);
            CREATE TABLE public.fx_tasks (id int PRIMARY KEY, title text);
            CREATE TABLE public.fx_users_tasks (user_id int REFERENCES public.fx_users, task_id int REFERENCES public.fx_tasks,
                                                PRIMARY KEY (user_id, task_id));
            INSERT INTO public.fx_users VALUES (1, 'Angela'), (2, 'Dwight'), (3, 'Nobody');
            INSERT INTO public.fx_tasks VALUES (1, 'Design'), (2, 'Code'), (3, 'Test');
            INSERT INTO public.fx_users_tasks VALUES (1, 1), (1, 2), (2, 2), (2, 3);
            CREATE FUNCTION public.fx_all_invoices() RETURNS SETOF public.fx_invoices LANGUAGE sql STABLE AS $$ SELECT * FROM public.fx_invoices $$;
            GRANT ALL ON public.fx_json, public.fx_clients, public.fx_projects, public.fx_invoices, public.fx_users, public.fx_tasks,
                public.fx_users_tasks TO service_role;
            """, probe: "/rest/v1/fx_users_tasks")
    }

    /// The body compacted with sorted keys; `expected` is compared likewise.
    func expect(_ target: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let response = try server.service.get(target)
        #expect(response.status == 200, "\(target): \(response.status) \(response.text)", sourceLocation: sourceLocation)
        #expect(response.compactJSON == Self.canonical(expected), "\(target): \(response.text)", sourceLocation: sourceLocation)
    }

    static func canonical(_ json: String) -> String {
        let value = try! JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
        return String(decoding: try! JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)
    }

    // MARK: JSON paths

    @Test func jsonPathsInSelectAreNamedByTheirLastKey() throws {
        try expect("/rest/v1/fx_json?select=id,metadata->>key&order=id", #"[{"id":1,"key":"x"},{"id":2,"key":"y"},{"id":3,"key":null}]"#)
        try expect("/rest/v1/fx_json?select=metadata->a->b->>c&id=lt.3&order=id", #"[{"c":"deep"},{"c":"other"}]"#)
        // `->` keeps JSON; an alias wins; a cast applies to the value.
        try expect("/rest/v1/fx_json?select=metadata->a&id=eq.1", #"[{"a":{"b":{"c":"deep"}}}]"#)
        try expect("/rest/v1/fx_json?select=k:metadata->>key&id=eq.2", #"[{"k":"y"}]"#)
        try expect("/rest/v1/fx_json?select=settings->foo->>int::integer&id=eq.1", #"[{"int":1}]"#)
        try expect("/rest/v1/fx_json?select=myFoo:settings->>foo::json&id=eq.1", #"[{"myFoo":{"bar":"baz","int":1}}]"#)
        // Array indexes: an index-only path is named by the column, else by the last key.
        try expect("/rest/v1/fx_json?select=metadata->arr->>1&id=eq.1", #"[{"arr":"2"}]"#)
        try expect("/rest/v1/fx_json?select=metadata->arr->1->0&id=eq.2", #"[{"arr":7}]"#)
        try expect("/rest/v1/fx_json?select=metadata->arr->-1&id=eq.1", #"[{"arr":3}]"#)
        // A text[] column goes through to_jsonb, as PostgREST does for arrays and composites.
        try expect(
            "/rest/v1/fx_json?select=goals->0,second:goals->>1&order=id",
            #"[{"goals":"patience","second":"kindness"},{"goals":"curiosity","second":null},{"goals":null,"second":null}]"#)
        // Keys with dashes and quoted keys.
        try expect("/rest/v1/fx_json?select=metadata->>with-dash&id=eq.1", #"[{"with-dash":"d"}]"#)
        try expect("/rest/v1/fx_json?select=metadata->>%22a.b%22&id=eq.1", #"[{"a.b":null}]"#)
        // `->>` then `->` is PostgreSQL's error, as in PostgREST.
        let wrong = try server.service.get("/rest/v1/fx_json?select=metadata->>a->b")
        #expect(wrong.status == 404 && wrong.jsonObject?["code"] as? String == "42883", "\(wrong.text)")
        let bad = try server.service.get("/rest/v1/fx_json?select=metadata->(x")
        #expect(bad.status == 400 && bad.jsonObject?["code"] as? String == "PGRST100", "\(bad.text)")
        #expect(bad.jsonObject?["details"] as? String == #"unexpected "(" expecting "-", digit or any non reserved character different from: .,>()"#)
    }

    @Test func jsonPathsInFiltersAndOrder() throws {
        try expect("/rest/v1/fx_json?select=id&metadata->>key=eq.x", #"[{"id":1}]"#)
        try expect("/rest/v1/fx_json?select=id&metadata->a->b->>c=eq.other", #"[{"id":2}]"#)
        try expect("/rest/v1/fx_json?select=id&metadata->>key=not.eq.x&order=id", #"[{"id":2}]"#)
        // `->` compares JSON: the operand is read as jsonb.
        try expect("/rest/v1/fx_json?select=id&metadata->n=gt.6&order=id", #"[{"id":2},{"id":3}]"#)
        try expect("/rest/v1/fx_json?select=id&metadata->a=eq.%7B%22b%22:%7B%22c%22:%22deep%22%7D%7D", #"[{"id":1}]"#)
        try expect("/rest/v1/fx_json?select=id&metadata->arr->>0=eq.1", #"[{"id":1}]"#)
        try expect("/rest/v1/fx_json?select=id&goals->>0=eq.curiosity", #"[{"id":2}]"#)
        try expect("/rest/v1/fx_json?select=id&metadata->>key=in.(x,y)&order=id", #"[{"id":1},{"id":2}]"#)
        try expect("/rest/v1/fx_json?select=id&metadata->>key=is.null", #"[{"id":3}]"#)
        try expect("/rest/v1/fx_json?select=id&or=(metadata->>key.eq.x,metadata->n.eq.12)&order=id", #"[{"id":1},{"id":3}]"#)
        // Order by a path, with nulls placement.
        try expect("/rest/v1/fx_json?select=id&order=metadata->n.desc", #"[{"id":3},{"id":2},{"id":1}]"#)
        try expect("/rest/v1/fx_json?select=id&order=metadata->>key.desc.nullslast", #"[{"id":2},{"id":1},{"id":3}]"#)
        try expect("/rest/v1/fx_json?select=id&order=settings->foo->>bar.nullsfirst", #"[{"id":3},{"id":1},{"id":2}]"#)
        // An embedded filter on a path.
        try expect("/rest/v1/fx_projects?select=name,fx_invoices(id)&fx_invoices.meta->>k=eq.2&id=eq.1", #"[{"name":"Windows 7","fx_invoices":[{"id":2}]}]"#)
    }

    @Test func jsonKeysAreBoundNotSpliced() throws {
        // A quote in a key is only a key: the value is found, nothing else runs.
        try expect("/rest/v1/fx_json?select=metadata->>it's&id=eq.1", #"[{"it's":"quoted"}]"#)
        try expect("/rest/v1/fx_json?select=id&metadata->>it's=eq.quoted", #"[{"id":1}]"#)
        try expect("/rest/v1/fx_json?select=id&order=metadata->>it's.desc.nullslast,id", #"[{"id":1},{"id":2},{"id":3}]"#)
        let injection = "x'%3B%20DROP%20TABLE%20fx_json%3B%20SELECT%20'y"
        try expect("/rest/v1/fx_json?select=id,metadata->>\(injection)&id=eq.1", #"[{"id":1,"x'; DROP TABLE fx_json; SELECT 'y":null}]"#)
        try expect("/rest/v1/fx_json?select=id&metadata->>\(injection)=is.null&order=id", #"[{"id":1},{"id":2},{"id":3}]"#)
        try expect("/rest/v1/fx_json?select=count()", #"[{"count":3}]"#)
        // And a quote in an index position is a key, never an integer spliced in.
        try expect("/rest/v1/fx_json?select=metadata->arr->>0'&id=eq.1", #"[{"0'":null}]"#)
    }

    // MARK: aggregates

    @Test func aggregatesAsPostgREST() throws {
        try expect("/rest/v1/fx_invoices?select=count()", #"[{"count":8}]"#)
        try expect("/rest/v1/fx_invoices?select=cnt:count()", #"[{"cnt":8}]"#)
        try expect("/rest/v1/fx_invoices?select=count()::text", #"[{"count":"8"}]"#)
        try expect("/rest/v1/fx_invoices?select=total.sum()", #"[{"sum":8800}]"#)
        try expect("/rest/v1/fx_invoices?select=total.avg()::int", #"[{"avg":1100}]"#)
        try expect("/rest/v1/fx_invoices?select=total.min(),total.max(),total.count()", #"[{"min":100,"max":4000,"count":8}]"#)
        // Grouped by the other columns, aliases on either.
        try expect(
            "/rest/v1/fx_invoices?select=total.sum(),total.max(),pid:project_id&order=project_id.desc",
            #"[{"sum":4100,"max":4000,"pid":4},{"sum":3200,"max":2000,"pid":3},{"sum":1200,"max":700,"pid":2},{"sum":300,"max":200,"pid":1}]"#)
        try expect(
            "/rest/v1/fx_invoices?select=total_charged:total.sum()::text,project_id&order=project_id&project_id=lt.3",
            #"[{"total_charged":"300","project_id":1},{"total_charged":"1200","project_id":2}]"#)
        try expect("/rest/v1/fx_invoices?select=c:count(),project_id&project_id=gt.2&order=project_id", #"[{"c":2,"project_id":3},{"c":2,"project_id":4}]"#)
        // The argument cast (here of a JSON path) and the result's.
        try expect("/rest/v1/fx_json?select=metadata->>n::integer.sum()", #"[{"sum":24}]"#)
        try expect("/rest/v1/fx_json?select=s:metadata->>n::integer.sum()::text", #"[{"s":"24"}]"#)
        // Filters narrow the rows first; a count of nothing is 0, a sum of nothing null.
        try expect("/rest/v1/fx_invoices?select=count(),total.sum()&total=gt.100000", #"[{"count":0,"sum":null}]"#)
        // On a function's rows too, grouped by the other columns.
        try expect(
            "/rest/v1/rpc/fx_all_invoices?select=total.sum(),project_id&project_id=lt.3&order=project_id",
            #"[{"sum":300,"project_id":1},{"sum":1200,"project_id":2}]"#)
    }

    @Test func aggregatesInsideEmbedsAndGroupedEmbeds() throws {
        try expect(
            "/rest/v1/fx_projects?select=name,fx_invoices(total.sum())&order=id",
            #"[{"name":"Windows 7","fx_invoices":[{"sum":300}]},{"name":"Windows 10","fx_invoices":[{"sum":1200}]},{"name":"IOS","fx_invoices":[{"sum":3200}]},{"name":"OSX","fx_invoices":[{"sum":4100}]},{"name":"Orphan","fx_invoices":[{"sum":null}]}]"#
        )
        try expect(
            "/rest/v1/fx_projects?select=name,fx_invoices(count(),total.max())&id=in.(1,5)&order=id",
            #"[{"name":"Windows 7","fx_invoices":[{"count":2,"max":200}]},{"name":"Orphan","fx_invoices":[{"count":0,"max":null}]}]"#)
        // An embedded object is a grouping column too.
        try expect(
            "/rest/v1/fx_invoices?select=project_id,total:total.sum(),fx_projects(name)&order=project_id",
            #"[{"project_id":1,"total":300,"fx_projects":{"name":"Windows 7"}},{"project_id":2,"total":1200,"fx_projects":{"name":"Windows 10"}},{"project_id":3,"total":3200,"fx_projects":{"name":"IOS"}},{"project_id":4,"total":4100,"fx_projects":{"name":"OSX"}}]"#
        )
        // `rel(count)`, the older spelling supabase-js documents.
        try expect(
            "/rest/v1/fx_clients?select=name,fx_projects(count)&order=id",
            #"[{"name":"Microsoft","fx_projects":[{"count":2}]},{"name":"Apple","fx_projects":[{"count":2}]}]"#)
        try expect("/rest/v1/fx_invoices?select=n:count", #"[{"n":8}]"#)
        // Grouping in an embed: per client, the projects' count.
        try expect(
            "/rest/v1/fx_clients?select=name,fx_projects(count())&order=id",
            #"[{"name":"Microsoft","fx_projects":[{"count":2}]},{"name":"Apple","fx_projects":[{"count":2}]}]"#)
    }

    @Test func aggregatesInSpreadsAreHoisted() throws {
        // Per client: the invoices' total, grouped by the spread column.
        let grouped = try server.service.get("/rest/v1/fx_invoices?select=total.sum(),...fx_projects(project:name)&project_id=lt.3")
        #expect(Set((grouped.jsonArray ?? []).map { "\($0["project"] ?? "")=\($0["sum"] ?? "")" }) == ["Windows 7=300", "Windows 10=1200"], "\(grouped.text)")
        // Only aggregates: one row.
        try expect("/rest/v1/fx_projects?select=...fx_clients(clients:count(),top:id.max())", #"[{"clients":4,"top":2}]"#)
    }

    @Test func aggregatesAreOffByDefault() throws {
        let plain = try TestServer()
        for target in [
            "/rest/v1/children?select=count()", "/rest/v1/children?select=age.sum()", "/rest/v1/user_profiles?select=id,children!current_child_id(age.max())"
        ] {
            let response = try plain.client().request("GET", target, headers: plain.headers(plain.serviceKey))
            #expect(response.status == 400, "\(target): \(response.text)")
            #expect(
                response.compactJSON == #"{"code":"PGRST123","details":null,"hint":null,"message":"Use of aggregate functions is not allowed"}"#)
        }
        // `count` as a column (PostgreSQL's `t.count` is `count(t)`) still counts, as in PostgREST.
        let legacy = try plain.client().request("GET", "/rest/v1/children?select=count", headers: plain.headers(plain.serviceKey))
        #expect(legacy.compactJSON == #"[{"count":0}]"#, "\(legacy.text)")
        // JSON paths and spreads need no setting.
        let path = try plain.client().request("GET", "/rest/v1/children?select=goals->0", headers: plain.headers(plain.serviceKey))
        #expect(path.status == 200, "\(path.text)")
    }

    // MARK: spread

    @Test func spreadsMergeTheRelatedRow() throws {
        try expect(
            "/rest/v1/fx_projects?select=id,...fx_clients(client_name:name)&order=id",
            #"[{"id":1,"client_name":"Microsoft"},{"id":2,"client_name":"Microsoft"},{"id":3,"client_name":"Apple"},{"id":4,"client_name":"Apple"},{"id":5,"client_name":null}]"#
        )
        // Nested spreads flatten; a spread inside an embed merges into the embed's object.
        try expect(
            "/rest/v1/fx_invoices?select=id,...fx_projects(project:name,...fx_clients(client:name))&id=in.(1,5)&order=id",
            #"[{"id":1,"project":"Windows 7","client":"Microsoft"},{"id":5,"project":"IOS","client":"Apple"}]"#)
        try expect(
            "/rest/v1/fx_invoices?select=id,p:fx_projects(name,...fx_clients(client:name))&id=eq.1",
            #"[{"id":1,"p":{"name":"Windows 7","client":"Microsoft"}}]"#)
        // `*`, JSON paths and embeds inside a spread.
        try expect("/rest/v1/fx_projects?select=...fx_clients(*)&id=eq.3", #"[{"id":2,"name":"Apple"}]"#)
        try expect(
            "/rest/v1/fx_invoices?select=id,...fx_projects(name,fx_clients(name))&id=eq.8",
            #"[{"id":8,"name":"OSX","fx_clients":{"name":"Apple"}}]"#)
        // !inner leaves out parents without one; embedded filters null the spread columns.
        try expect(
            "/rest/v1/fx_projects?select=id,...fx_clients!inner(client:name)&order=id&id=gt.3",
            #"[{"id":4,"client":"Apple"}]"#)
        try expect(
            "/rest/v1/fx_projects?select=id,...fx_clients(client:name)&fx_clients.name=eq.Apple&id=in.(1,3)&order=id",
            #"[{"id":1,"client":null},{"id":3,"client":"Apple"}]"#)
        try expect(
            "/rest/v1/fx_projects?select=id,...fx_clients!inner(client:name)&fx_clients.name=eq.Apple&order=id",
            #"[{"id":3,"client":"Apple"},{"id":4,"client":"Apple"}]"#)
        // To-many (PostgREST 13): each column an array of the related rows' values, in the embed's
        // order and within its limit; [] for none; filters and !inner as for a to-one spread.
        try expect(
            "/rest/v1/fx_clients?select=name,...fx_projects(project:name,project_id:id)&fx_projects.order=id.desc&order=id",
            #"[{"name":"Microsoft","project":["Windows 10","Windows 7"],"project_id":[2,1]},{"name":"Apple","project":["OSX","IOS"],"project_id":[4,3]}]"#)
        try expect(
            "/rest/v1/fx_clients?select=id,...fx_projects(name)&fx_projects.order=name&fx_projects.limit=1&order=id",
            #"[{"id":1,"name":["Windows 10"]},{"id":2,"name":["IOS"]}]"#)
        try expect(
            "/rest/v1/fx_clients?select=id,...fx_projects(name)&fx_projects.name=like.Win*&fx_projects.order=id&order=id",
            #"[{"id":1,"name":["Windows 7","Windows 10"]},{"id":2,"name":[]}]"#)
        try expect(
            "/rest/v1/fx_clients?select=id,...fx_projects!inner(name)&fx_projects.name=eq.OSX",
            #"[{"id":2,"name":["OSX"]}]"#)
        // Embeds and to-one spreads inside a to-many spread: arrays of their values.
        try expect(
            "/rest/v1/fx_clients?select=id,...fx_projects(fx_invoices(id))&fx_projects.order=id&fx_projects.fx_invoices.order=id&id=eq.2",
            #"[{"id":2,"fx_invoices":[[{"id":5},{"id":6}],[{"id":7},{"id":8}]]}]"#)
        // Aggregates in a to-many spread: PGRST127, as PostgREST.
        let many = try server.service.get("/rest/v1/fx_clients?select=*,...fx_projects(count())")
        #expect(many.status == 400, "\(many.text)")
        #expect(
            many.compactJSON
                == #"{"code":"PGRST127","details":"Aggregates are not implemented for one-to-many or many-to-many spreads.","hint":null,"message":"Feature not implemented"}"#
        )
        let grammar = try server.service.get("/rest/v1/fx_projects?select=alias:...fx_clients(*)")
        #expect(grammar.status == 400 && grammar.jsonObject?["code"] as? String == "PGRST100", "\(grammar.text)")
    }

    // MARK: many-to-many

    @Test func manyToManyThroughAJunction() throws {
        try expect(
            "/rest/v1/fx_users?select=name,fx_tasks(title)&fx_tasks.order=id&order=id",
            #"[{"name":"Angela","fx_tasks":[{"title":"Design"},{"title":"Code"}]},{"name":"Dwight","fx_tasks":[{"title":"Code"},{"title":"Test"}]},{"name":"Nobody","fx_tasks":[]}]"#
        )
        try expect(
            "/rest/v1/fx_tasks?select=title,fx_users(name)&fx_users.order=name.desc&id=eq.2",
            #"[{"title":"Code","fx_users":[{"name":"Dwight"},{"name":"Angela"}]}]"#)
        // The junction's name as hint; filters, limit, !inner and aggregates on the far side.
        try expect(
            "/rest/v1/fx_users?select=name,fx_tasks!fx_users_tasks(title)&fx_tasks.title=eq.Test&order=id&id=lt.3",
            #"[{"name":"Angela","fx_tasks":[]},{"name":"Dwight","fx_tasks":[{"title":"Test"}]}]"#)
        try expect("/rest/v1/fx_users?select=name,fx_tasks!inner(title)&fx_tasks.title=eq.Design", #"[{"name":"Angela","fx_tasks":[{"title":"Design"}]}]"#)
        try expect(
            "/rest/v1/fx_users?select=name,fx_tasks(title)&fx_tasks.order=id.desc&fx_tasks.limit=1&id=eq.1",
            #"[{"name":"Angela","fx_tasks":[{"title":"Code"}]}]"#)
        try expect(
            "/rest/v1/fx_users?select=name,fx_tasks(count())&order=id",
            #"[{"name":"Angela","fx_tasks":[{"count":2}]},{"name":"Dwight","fx_tasks":[{"count":2}]},{"name":"Nobody","fx_tasks":[{"count":0}]}]"#)
        // The junction itself still embeds one-to-many, and its rows spread their task.
        try expect(
            "/rest/v1/fx_users?select=name,tasks:fx_users_tasks(...fx_tasks(title))&tasks.order=task_id&id=eq.2",
            #"[{"name":"Dwight","tasks":[{"title":"Code"},{"title":"Test"}]}]"#)
        let wrongHint = try server.service.get("/rest/v1/fx_users?select=name,fx_tasks!nope(title)")
        #expect(wrongHint.status == 400 && wrongHint.jsonObject?["code"] as? String == "PGRST200", "\(wrongHint.text)")
    }
}
