import Foundation
import Postgres
import TestSupport
import Testing

/// PostgREST's own spec cases (its `test/spec/Feature/Query/*.hs`) on its own fixtures, in a
/// schema of their own (`spec`, exposed beside `public` and chosen with `Accept-Profile`):
/// EmbedInnerJoinSpec (nested `!inner`), RelatedQueriesSpec (null filtering on embeds),
/// QuerySpec's empty embeds. Each case is the spec's request and the spec's answer; the other
/// spec cases on these fixtures are `PostgRESTSpecFeatureTests`.
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
        try server.installSpecFixtures(Self.fixtures, profile: "spec", probe: "/clients")
    }

    /// The spec's request (a GET of `spec`) answers `status` and the spec's JSON.
    func check(_ path: String, _ expected: String, status: Int = 200, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try server.expectSpec(path, expected, status: status, sourceLocation: sourceLocation)
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

}
