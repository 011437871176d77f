import Foundation
import Postgres
import TestSupport
import Testing

/// PostgREST's own spec cases (its `test/spec/Feature/Query/*.hs`) on its own fixtures, in a
/// schema of their own (`spec`, exposed beside `public` and chosen with `Accept-Profile`):
/// EmbedInnerJoinSpec (nested `!inner`), RelatedQueriesSpec (null filtering on embeds),
/// QuerySpec's empty embeds, AndOrParamsSpec's trailing characters and RangeSpec's negative
/// offset and limit. Each case is the spec's request and the spec's answer.
@Suite("PostgREST spec cases", .serialized)
struct PostgRESTSpecTests {
    /// PostgREST's fixture tables these cases read (its `schema.sql` and `data.sql`, moved from
    /// `test` to `spec`).
    static let fixtures = ##"""
        CREATE SCHEMA spec;
        CREATE TABLE spec.projects (
            id integer NOT NULL,
            name text NOT NULL,
            client_id integer
        );
        CREATE TABLE spec.clients (
            id integer NOT NULL,
            name text NOT NULL
        );
        CREATE TABLE spec.users (
            id integer NOT NULL,
            name text NOT NULL
        );
        CREATE TABLE spec.tasks (
            id integer NOT NULL,
            name text NOT NULL,
            project_id integer
        );
        CREATE TABLE spec.child_entities (
            id integer NOT NULL,
            name text,
            parent_id integer
        );
        CREATE TABLE spec.entities (
            id integer NOT NULL,
            name text,
            arr integer[],
            text_search_vector tsvector
        );
        CREATE TABLE spec.grandchild_entities (
            id integer NOT NULL,
            name text,
            parent_id integer,
            or_starting_col text,
            and_starting_col text,
            jsonb_col jsonb
        );
        CREATE TABLE spec.products (
            id integer NOT NULL,
            name text
        );
        CREATE TABLE spec.products_suppliers (
            product_id integer NOT NULL,
            supplier_id integer NOT NULL
        );
        CREATE TABLE spec.suppliers (
            id integer NOT NULL,
            name text
        );
        CREATE TABLE spec.suppliers_trade_unions (
            supplier_id integer NOT NULL,
            trade_union_id integer NOT NULL
        );
        CREATE TABLE spec.table_a (
            id integer NOT NULL,
            name text
        );
        CREATE TABLE spec.table_b (
            table_a_id integer,
            name text
        );
        CREATE TABLE spec.trade_unions (
            id integer NOT NULL,
            name text
        );
        CREATE TABLE spec.users_tasks (
            user_id integer NOT NULL,
            task_id integer NOT NULL
        );
        INSERT INTO spec.child_entities VALUES
        	(1, 'child entity 1', 1),
        	(2, 'child entity 2', 1),
        	(3, 'child entity 3', 2),
        	(4, 'child entity 4', 1),
        	(5, 'child entity 5', 1),
        	(6, 'child entity 6', 2);
        INSERT INTO spec.clients VALUES
        	(1, 'Microsoft'),
        	(2, 'Apple');
        INSERT INTO spec.entities VALUES
        	(1, 'entity 1', '{1}', '''bar'':2 ''foo'':1'),
        	(2, 'entity 2', '{1,2}', '''baz'':1 ''qux'':2'),
        	(3, 'entity 3', '{1,2,3}', NULL),
        	(4, NULL, NULL, NULL);
        INSERT INTO spec.grandchild_entities VALUES
        	(1, 'grandchild entity 1', 1, NULL, NULL, NULL),
        	(2, 'grandchild entity 2', 1, NULL, NULL, NULL),
        	(3, 'grandchild entity 3', 2, NULL, NULL, NULL),
        	(4, '(grandchild,entity,4)', 2, NULL, NULL, '{"a": {"b": "foo"}}'),
        	(5, '(grandchild,entity,5)', 2, NULL, NULL, '{"b": "bar"}');
        INSERT INTO spec.products VALUES
        	(1, 'product-1'),
        	(2, 'product-2'),
        	(3, 'product-3');
        INSERT INTO spec.products_suppliers VALUES
        	(1, 1),
        	(1, 2),
        	(2, 1),
        	(2, 3);
        INSERT INTO spec.projects VALUES
        	(1, 'Windows 7', 1),
        	(2, 'Windows 10', 1),
        	(3, 'IOS', 2),
        	(4, 'OSX', 2),
        	(5, 'Orphan', NULL);
        INSERT INTO spec.suppliers VALUES
        	(1, 'supplier-1'),
        	(2, 'supplier-2'),
        	(3, 'supplier-3');
        INSERT INTO spec.suppliers_trade_unions VALUES
        	(1, 1),
        	(1, 2),
        	(2, 3),
        	(2, 4);
        INSERT INTO spec.table_a VALUES
        	(1, 'Not null 1'),
        	(2, NULL),
        	(3, 'Not null 2');
        INSERT INTO spec.table_b VALUES
        	(1, 'Test 1'),
        	(2, 'Test 2'),
        	(NULL, 'Test 3');
        INSERT INTO spec.tasks VALUES
        	(1, 'Design w7', 1),
        	(2, 'Code w7', 1),
        	(3, 'Design w10', 2),
        	(4, 'Code w10', 2),
        	(5, 'Design IOS', 3),
        	(6, 'Code IOS', 3),
        	(7, 'Design OSX', 4),
        	(8, 'Code OSX', 4);
        INSERT INTO spec.trade_unions VALUES
        	(1, 'union-1'),
        	(2, 'union-2'),
        	(3, 'union-3'),
        	(4, 'union-4');
        INSERT INTO spec.users VALUES
        	(1, 'Angela Martin'),
        	(2, 'Michael Scott'),
        	(3, 'Dwight Schrute');
        INSERT INTO spec.users_tasks VALUES
        	(1, 1),
        	(1, 2),
        	(1, 3),
        	(1, 4),
        	(2, 5),
        	(2, 6),
        	(2, 7),
        	(3, 1),
        	(3, 5);
        ALTER TABLE ONLY spec.child_entities
            ADD CONSTRAINT child_entities_pkey PRIMARY KEY (id);
        ALTER TABLE ONLY spec.clients
            ADD CONSTRAINT clients_pkey PRIMARY KEY (id);
        ALTER TABLE ONLY spec.entities
            ADD CONSTRAINT entities_pkey PRIMARY KEY (id);
        ALTER TABLE ONLY spec.grandchild_entities
            ADD CONSTRAINT grandchild_entities_pkey PRIMARY KEY (id);
        ALTER TABLE ONLY spec.products
            ADD CONSTRAINT products_pkey PRIMARY KEY (id);
        ALTER TABLE ONLY spec.products_suppliers
            ADD CONSTRAINT products_suppliers_pkey PRIMARY KEY (product_id, supplier_id);
        ALTER TABLE ONLY spec.projects
            ADD CONSTRAINT projects_pkey PRIMARY KEY (id);
        ALTER TABLE ONLY spec.suppliers
            ADD CONSTRAINT suppliers_pkey PRIMARY KEY (id);
        ALTER TABLE ONLY spec.suppliers_trade_unions
            ADD CONSTRAINT suppliers_trade_unions_pkey PRIMARY KEY (supplier_id, trade_union_id);
        ALTER TABLE ONLY spec.table_a
            ADD CONSTRAINT table_a_pkey PRIMARY KEY (id);
        ALTER TABLE ONLY spec.tasks
            ADD CONSTRAINT tasks_pkey PRIMARY KEY (id);
        ALTER TABLE ONLY spec.trade_unions
            ADD CONSTRAINT trade_unions_pkey PRIMARY KEY (id);
        ALTER TABLE ONLY spec.users
            ADD CONSTRAINT users_pkey PRIMARY KEY (id);
        ALTER TABLE ONLY spec.users_tasks
            ADD CONSTRAINT users_tasks_pkey PRIMARY KEY (task_id, user_id);
        ALTER TABLE ONLY spec.child_entities
            ADD CONSTRAINT child_entities_parent_id_fkey FOREIGN KEY (parent_id) REFERENCES spec.entities(id);
        ALTER TABLE ONLY spec.projects
            ADD CONSTRAINT client FOREIGN KEY (client_id) REFERENCES spec.clients(id);
        ALTER TABLE ONLY spec.grandchild_entities
            ADD CONSTRAINT grandchild_entities_parent_id_fkey FOREIGN KEY (parent_id) REFERENCES spec.child_entities(id);
        ALTER TABLE ONLY spec.products_suppliers
            ADD CONSTRAINT products_suppliers_product_id_fkey FOREIGN KEY (product_id) REFERENCES spec.products(id);
        ALTER TABLE ONLY spec.products_suppliers
            ADD CONSTRAINT products_suppliers_supplier_id_fkey FOREIGN KEY (supplier_id) REFERENCES spec.suppliers(id);
        ALTER TABLE ONLY spec.tasks
            ADD CONSTRAINT project FOREIGN KEY (project_id) REFERENCES spec.projects(id);
        ALTER TABLE ONLY spec.suppliers_trade_unions
            ADD CONSTRAINT suppliers_trade_unions_supplier_id_fkey FOREIGN KEY (supplier_id) REFERENCES spec.suppliers(id);
        ALTER TABLE ONLY spec.suppliers_trade_unions
            ADD CONSTRAINT suppliers_trade_unions_trade_union_id_fkey FOREIGN KEY (trade_union_id) REFERENCES spec.trade_unions(id);
        ALTER TABLE ONLY spec.table_b
            ADD CONSTRAINT table_b_table_a_id_fkey FOREIGN KEY (table_a_id) REFERENCES spec.table_a(id);
        ALTER TABLE ONLY spec.users_tasks
            ADD CONSTRAINT users_tasks_task_id_fkey FOREIGN KEY (task_id) REFERENCES spec.tasks(id);
        ALTER TABLE ONLY spec.users_tasks
            ADD CONSTRAINT users_tasks_user_id_fkey FOREIGN KEY (user_id) REFERENCES spec.users(id);
        CREATE TABLE spec.car_models (name varchar(64) NOT NULL, year int NOT NULL) PARTITION BY LIST (year);
        CREATE TABLE spec.car_models_2021 PARTITION OF spec.car_models FOR VALUES IN (2021);
        CREATE TABLE spec.car_models_default PARTITION OF spec.car_models FOR VALUES IN (1981, 1997, 2001, 2013);
        ALTER TABLE spec.car_models ADD PRIMARY KEY (name, year);
        CREATE TABLE spec.car_model_sales (
            date varchar(64) NOT NULL, quantity int NOT NULL, car_model_name varchar(64), car_model_year int,
            PRIMARY KEY (date, car_model_name, car_model_year), FOREIGN KEY (car_model_name, car_model_year) REFERENCES spec.car_models (name, year)
        ) PARTITION BY RANGE (date);
        CREATE TABLE spec.car_model_sales_202101 PARTITION OF spec.car_model_sales FOR VALUES FROM ('2021-01-01') TO ('2021-01-31');
        CREATE TABLE spec.car_model_sales_default PARTITION OF spec.car_model_sales DEFAULT;
        CREATE TABLE spec.car_dealers (name varchar(64) NOT NULL, city varchar(64) NOT NULL, PRIMARY KEY (name, city)) PARTITION BY LIST (city);
        CREATE TABLE spec.car_dealers_springfield PARTITION OF spec.car_dealers FOR VALUES IN ('Springfield');
        CREATE TABLE spec.car_dealers_default PARTITION OF spec.car_dealers DEFAULT;
        CREATE TABLE spec.car_models_car_dealers (
            car_model_name varchar(64) NOT NULL, car_model_year int NOT NULL, car_dealer_name varchar(64) NOT NULL,
            car_dealer_city varchar(64) NOT NULL, quantity int NOT NULL,
            FOREIGN KEY (car_model_name, car_model_year) REFERENCES spec.car_models (name, year),
            FOREIGN KEY (car_dealer_name, car_dealer_city) REFERENCES spec.car_dealers (name, city),
            PRIMARY KEY (car_model_name, car_model_year, car_dealer_name, car_dealer_city, quantity)
        ) PARTITION BY RANGE (quantity);
        CREATE TABLE spec.car_models_car_dealers_10to20 PARTITION OF spec.car_models_car_dealers FOR VALUES FROM (10) TO (20);
        CREATE TABLE spec.car_models_car_dealers_default PARTITION OF spec.car_models_car_dealers DEFAULT;
        INSERT INTO spec.car_models VALUES ('DeLorean', 1981), ('F310-B', 1997), ('Veneno', 2013), ('Murcielago', 2001);
        INSERT INTO spec.car_model_sales VALUES ('2021-01-14', 7, 'DeLorean', 1981), ('2021-01-15', 9, 'DeLorean', 1981), ('2021-02-11', 1, 'Murcielago', 2001);
        INSERT INTO spec.car_dealers VALUES ('Springfield Cars S.A.', 'Springfield'), ('The Best Deals S.A.', 'Franklin');
        INSERT INTO spec.car_models_car_dealers VALUES ('DeLorean', 1981, 'Springfield Cars S.A.', 'Springfield', 15),
            ('Murcielago', 2001, 'The Best Deals S.A.', 'Franklin', 2);
        CREATE TABLE spec.second (id int PRIMARY KEY, name text);
        CREATE TABLE spec.first (
            id int PRIMARY KEY, name text, second_id_1 int REFERENCES spec.second UNIQUE, second_id_2 int REFERENCES spec.second UNIQUE);
        CREATE TABLE spec.person (id integer PRIMARY KEY, name character varying NOT NULL);
        CREATE TABLE spec.message (
            id integer PRIMARY KEY, body text NOT NULL DEFAULT '', sender bigint NOT NULL REFERENCES spec.person (id),
            recipient bigint NOT NULL REFERENCES spec.person (id));
        CREATE FUNCTION spec.raise_sqlstate_invalid_json_message() RETURNS void LANGUAGE plpgsql AS $$
        BEGIN RAISE SQLSTATE 'PGRST' USING message = 'INVALID', detail = '{"status":332,"headers":{"X-Header":"str"}}'; END $$;
        CREATE FUNCTION spec.raise_sqlstate_invalid_json_details() RETURNS void LANGUAGE plpgsql AS $$
        BEGIN RAISE SQLSTATE 'PGRST' USING message = '{"code":"123","message":"ABC","details":"DEF"}', detail = 'INVALID'; END $$;
        CREATE FUNCTION spec.raise_sqlstate_missing_details() RETURNS void LANGUAGE plpgsql AS $$
        BEGIN RAISE SQLSTATE 'PGRST' USING message = '{"code":"123","message":"ABC","details":"DEF"}'; END $$;
        CREATE FUNCTION spec.get_projects_below(id int) RETURNS SETOF spec.projects AS $$ SELECT * FROM spec.projects WHERE id < $1 $$ LANGUAGE sql;
        CREATE DOMAIN spec.tsvector_not_null AS tsvector CONSTRAINT "tsvector is required" CHECK (value IS NOT NULL);
        CREATE DOMAIN spec.tsvector_not_empty AS spec.tsvector_not_null CONSTRAINT "tsvector is required and not empty" CHECK (value <> '');
        CREATE TABLE spec.tsearch_to_tsvector (
            text_search text, jsonb_search jsonb, text_search_domain spec.tsvector_not_null DEFAULT '',
            text_search_rec_domain spec.tsvector_not_empty DEFAULT '.');
        INSERT INTO spec.tsearch_to_tsvector (text_search) VALUES ('It''s kind of fun to do the impossible'), ('But also fun to do what is possible'),
            ('Fat cats ate rats');
        UPDATE spec.tsearch_to_tsvector SET text_search_domain = to_tsvector('simple', text_search);
        UPDATE spec.tsearch_to_tsvector SET text_search_rec_domain = to_tsvector('simple', text_search);
        CREATE FUNCTION spec.get_tsearch_to_tsvector() RETURNS SETOF spec.tsearch_to_tsvector AS $$ SELECT * FROM spec.tsearch_to_tsvector $$ LANGUAGE sql;
        CREATE FUNCTION spec.getproject(id int) RETURNS SETOF spec.projects AS $$ SELECT * FROM spec.projects WHERE id = $1 $$ LANGUAGE sql;
        CREATE FUNCTION spec.getallprojects() RETURNS SETOF spec.projects AS $$ SELECT * FROM spec.projects $$ LANGUAGE sql;
        CREATE FUNCTION spec.getallusers() RETURNS SETOF spec.users AS $$ SELECT * FROM spec.users $$ LANGUAGE sql;
        GRANT USAGE ON SCHEMA spec TO anon, authenticated, service_role;
        GRANT SELECT ON ALL TABLES IN SCHEMA spec TO anon, authenticated, service_role;
        """##

    let server: TestServer

    init() throws {
        server = try TestServer { $0.postgrest.schemas = ["public", "spec"] }
        let admin = try Connection(conninfo: server.databaseURL)
        try admin.execute(unsafeSQL: Self.fixtures)
        let http = server.client()
        #expect(
            eventually {
                try? admin.execute("NOTIFY pgrst, 'reload schema'")
                return (try? http.request("GET", "/rest/v1/clients", headers: server.headers(nil, [("Accept-Profile", "spec")])).status) == 200
            })
    }

    /// The spec's request (a GET of `spec`) answers `status` and the spec's JSON.
    func check(_ path: String, _ expected: String, status: Int = 200, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let response = try server.client().request("GET", "/rest/v1" + path, headers: server.headers(nil, [("Accept-Profile", "spec")]))
        let wanted = try JSONSerialization.jsonObject(with: Data(expected.utf8), options: [.fragmentsAllowed]) as? NSObject
        #expect(response.status == status, "\(path): \(response.text)", sourceLocation: sourceLocation)
        #expect((response.json as? NSObject) == wanted, "\(path): \(response.text)", sourceLocation: sourceLocation)
    }

    @Test func embedInnerJoinTwoLevelsBelow() throws {
        // "filters source tables when a two levels below embedded table is filtered"
        try check(
            "/tasks?select=id,projects!inner(id,clients!inner(id))&projects.clients.id=eq.1",
            #"[{"id":1,"projects":{"id":1,"clients":{"id":1}}},{"id":2,"projects":{"id":1,"clients":{"id":1}}},{"id":3,"projects":{"id":2,"clients":{"id":1}}},{"id":4,"projects":{"id":2,"clients":{"id":1}}}]"#
        )
        try check(
            "/entities?select=id,child_entities!inner(id,grandchild_entities!inner(id))&child_entities.grandchild_entities.id=in.(1,5)",
            #"[{"id":1,"child_entities":[{"id":1,"grandchild_entities":[{"id":1}]},{"id":2,"grandchild_entities":[{"id":5}]}]}]"#)
        try check(
            "/products?select=id,suppliers!inner(id,trade_unions!inner(id))&suppliers.trade_unions.id=eq.3",
            #"[{"id":1,"suppliers":[{"id":2,"trade_unions":[{"id":3}]}]}]"#)
        // One level: the embed's filter narrows the parent.
        try check(
            "/projects?select=id,clients!inner(id)&clients.id=eq.2&order=id", #"[{"id":3,"clients":{"id":2}},{"id":4,"clients":{"id":2}}]"#)
    }

    @Test func relatedQueriesNullFiltering() throws {
        // "works on a many-to-one relationship"
        try check(
            "/projects?select=name,clients()&clients=not.is.null", #"[{"name":"Windows 7"},{"name":"Windows 10"},{"name":"IOS"},{"name":"OSX"}]"#)
        try check("/projects?select=name,clients()&clients=is.null", #"[{"name":"Orphan"}]"#)
        // "works on a one-to-many relationship"
        try check("/entities?select=name,child_entities()&child_entities=not.is.null", #"[{"name":"entity 1"},{"name":"entity 2"}]"#)
        try check("/entities?select=name,child_entities()&child_entities=is.null", #"[{"name":"entity 3"},{"name":null}]"#)
        // "works on a many-to-many relationship"
        try check("/users?select=name,tasks()&tasks.id=eq.1&tasks=not.is.null", #"[{"name":"Angela Martin"},{"name":"Dwight Schrute"}]"#)
        try check("/users?select=name,tasks()&tasks.id=eq.1&tasks=is.null", #"[{"name":"Michael Scott"}]"#)
        // "works on nested embeds" (ordered here: the spec relies on the heap's order)
        try check(
            "/entities?select=name,child_entities(name,grandchild_entities())&child_entities.grandchild_entities=not.is.null&child_entities=not.is.null&child_entities.order=id",
            #"[{"name":"entity 1","child_entities":[{"name":"child entity 1"},{"name":"child entity 2"}]}]"#)
        // "embeds verifying that the entire target table row is not null"
        try check(
            "/table_b?select=name,table_a(name)&table_a=not.is.null",
            #"[{"name":"Test 1","table_a":{"name":"Not null 1"}},{"name":"Test 2","table_a":{"name":null}}]"#)
        // The embed's value stays when it selects columns.
        try check(
            "/projects?select=name,clients(name)&clients=not.is.null",
            #"[{"name":"Windows 7","clients":{"name":"Microsoft"}},{"name":"Windows 10","clients":{"name":"Microsoft"}},{"name":"IOS","clients":{"name":"Apple"}},{"name":"OSX","clients":{"name":"Apple"}}]"#
        )
        // `is.not_null` as `not.is.null`; counted with the filter applied.
        let counted = try server.client().request(
            "GET", "/rest/v1/projects?select=name,clients()&clients=is.not_null",
            headers: server.headers(nil, [("Accept-Profile", "spec"), ("Prefer", "count=exact")]))
        #expect(counted.header("Content-Range") == "0-3/4", "\(counted.text)")
    }

    @Test func emptyEmbedsSelectNothing() throws {
        // QuerySpec "empty embed"
        try check(
            "/projects?select=id,name,clients()",
            #"[{"id":1,"name":"Windows 7"},{"id":2,"name":"Windows 10"},{"id":3,"name":"IOS"},{"id":4,"name":"OSX"},{"id":5,"name":"Orphan"}]"#)
        try check("/projects?select=id,name,clients!inner()&clients.id=eq.2", #"[{"id":3,"name":"IOS"},{"id":4,"name":"OSX"}]"#)
        try check("/clients?select=id,name,projects()", #"[{"id":1,"name":"Microsoft"},{"id":2,"name":"Apple"}]"#)
        try check("/clients?select=id,name,projects!inner()&projects.name=eq.IOS", #"[{"id":2,"name":"Apple"}]"#)
        try check("/users?select=*,tasks!inner()", #"[{"id":1,"name":"Angela Martin"},{"id":2,"name":"Michael Scott"},{"id":3,"name":"Dwight Schrute"}]"#)
        try check("/users?select=*,tasks!inner()&tasks.id=eq.3", #"[{"id":1,"name":"Angela Martin"}]"#)
        try check(
            "/users?select=*,users_tasks(tasks(projects()))",
            #"[{"id":1,"name":"Angela Martin"},{"id":2,"name":"Michael Scott"},{"id":3,"name":"Dwight Schrute"}]"#)
        try check("/users?select=*,users_tasks!inner(tasks!inner(projects()))&users_tasks.tasks.id=eq.3", #"[{"id":1,"name":"Angela Martin"}]"#)
        try check(
            "/users?select=*,tasks(projects(clients()),users_tasks())",
            #"[{"id":1,"name":"Angela Martin"},{"id":2,"name":"Michael Scott"},{"id":3,"name":"Dwight Schrute"}]"#)
        try check(
            "/users?select=*,tasks!inner(projects(clients()),users_tasks(),name)&tasks.id=eq.3",
            #"[{"id":1,"name":"Angela Martin","tasks":[{"name":"Design w10"}]}]"#)
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
