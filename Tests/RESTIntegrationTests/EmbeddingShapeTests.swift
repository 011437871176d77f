import Foundation
import Postgres
import REST
import TestSupport
import Testing

/// Resource embedding's relationship shapes with both ownership layers on (`EmbeddingTests`'s
/// server): writes' embeds, orders by an embedded to-one column, one-to-one, computed and
/// self-referencing relationships, and relationship errors as PostgREST's.
@Suite("Resource embedding: relationship shapes", .serialized)
struct EmbeddingShapeTests {
    /// PostgREST's mutation specs ("embedding" in InsertSpec, UpdateSpec, UpsertSpec, DeleteSpec):
    /// a write's rows come back with their embeds, read in the statement's snapshot.
    @Test func writesAnswerWithTheirEmbeds() throws {
        let server = try EmbeddingTests.server(.both)
        try server.installFixtures(
            """
            CREATE TABLE public.fx_artists (id int PRIMARY KEY, name text);
            CREATE TABLE public.fx_albums (id int PRIMARY KEY, title text, artist_id int REFERENCES public.fx_artists ON DELETE CASCADE);
            INSERT INTO public.fx_artists VALUES (1, 'duster'), (2, 'bcnr');
            INSERT INTO public.fx_albums VALUES (1, 'stratosphere', 1), (2, 'contemporary movement', 1), (3, 'ants from up above', 2);
            GRANT ALL ON public.fx_artists, public.fx_albums TO service_role;
            """, probe: "/rest/v1/fx_albums")
        let http = server.client()
        func send(_ method: String, _ target: String, _ body: String? = nil, prefer: String = "return=representation") throws -> TestResponse {
            try http.request(method, "/rest/v1/" + target, headers: server.headers(server.serviceKey, [("Prefer", prefer)]), body: body)
        }
        // Many-to-one after an insert, under an alias.
        let inserted = try send("POST", "fx_albums?select=title,artist:fx_artists(name)", #"{"id":4,"title":"new","artist_id":2}"#)
        #expect(inserted.status == 201 && inserted.compactJSON == #"[{"artist":{"name":"bcnr"},"title":"new"}]"#, "\(inserted.text)")
        // One-to-many after an update, with the embed's filter and order; its limit is not
        // applied to a write, as PostgREST applies no range to a mutation's read plan.
        let patched = try send(
            "PATCH", "fx_artists?id=eq.1&select=name,fx_albums(title)&fx_albums.order=title.desc&fx_albums.title=neq.nothing&fx_albums.limit=1",
            #"{"name":"duster-patched"}"#)
        #expect(
            patched.status == 200
                && patched.compactJSON == #"[{"fx_albums":[{"title":"stratosphere"},{"title":"contemporary movement"}],"name":"duster-patched"}]"#,
            "\(patched.text)")
        let filtered = try send("PATCH", "fx_artists?id=eq.1&select=name,fx_albums(title)&fx_albums.title=like.s*", #"{"name":"duster"}"#)
        #expect(filtered.compactJSON == #"[{"fx_albums":[{"title":"stratosphere"}],"name":"duster"}]"#, "\(filtered.text)")
        // PUT, and a batch upsert answered in `order`.
        let put = try send("PUT", "fx_artists?id=eq.2&select=id,fx_albums(id)&fx_albums.order=id", #"{"id":2,"name":"bcnr-put"}"#)
        #expect(put.status == 200 && put.compactJSON == #"[{"fx_albums":[{"id":3},{"id":4}],"id":2}]"#, "\(put.text)")
        let upserted = try send(
            "POST", "fx_artists?select=id,name,fx_albums(id)&order=id.desc&fx_albums.order=id", #"[{"id":1,"name":"d"},{"id":2,"name":"b"}]"#,
            prefer: "return=representation,resolution=merge-duplicates")
        #expect(
            upserted.status == 200
                && upserted.compactJSON == #"[{"fx_albums":[{"id":3},{"id":4}],"id":2,"name":"b"},{"fx_albums":[{"id":1},{"id":2}],"id":1,"name":"d"}]"#,
            "\(upserted.text)")
        // `!inner` narrows the answer, not the write.
        let inner = try send("PATCH", "fx_albums?id=eq.4&select=title,fx_artists!inner(name)&fx_artists.name=eq.nobody", #"{"title":"newer"}"#)
        #expect(inner.status == 200 && inner.text == "[]", "\(inner.text)")
        #expect(try send("GET", "fx_albums?id=eq.4&select=title").compactJSON == #"[{"title":"newer"}]"#)
        // Without a representation nothing is embedded; a bad embed is still refused before
        // anything is written.
        let minimal = try send("POST", "fx_albums?select=*,fx_artists(*)", #"{"id":5,"title":"quiet","artist_id":1}"#, prefer: "return=minimal")
        #expect(minimal.status == 201 && minimal.text.isEmpty, "\(minimal.text)")
        let unknown = try send("POST", "fx_albums?select=*,nope(*)", #"{"id":6,"title":"never","artist_id":1}"#)
        #expect(unknown.status == 400 && unknown.jsonObject?["code"] as? String == "PGRST200", "\(unknown.text)")
        #expect(try send("GET", "fx_albums?id=eq.6").text == "[]")
        // A write without embeds answers in `order` too (an UPDATE returns rows in no order).
        let ordered = try send("PATCH", "fx_albums?artist_id=eq.1&select=id&order=id.desc", #"{"artist_id":1}"#)
        #expect(ordered.compactJSON == #"[{"id":5},{"id":2},{"id":1}]"#, "\(ordered.text)")
        // A DELETE answers the children its cascade removes (read in the statement's snapshot).
        let deleted = try send("DELETE", "fx_artists?id=eq.1&select=name,fx_albums(title)&fx_albums.order=id")
        #expect(
            deleted.status == 200
                && deleted.compactJSON == #"[{"fx_albums":[{"title":"stratosphere"},{"title":"contemporary movement"},{"title":"quiet"}],"name":"d"}]"#,
            "\(deleted.text)")
        #expect(try send("GET", "fx_albums?artist_id=eq.1").text == "[]")
    }

    /// PostgREST's RelatedQueriesSpec "related orders": `order=rel(col)` on a to-one embed, at
    /// the top, inside an embed and on a write; PGRST118 and PGRST108 otherwise.
    @Test func ordersByAnEmbeddedToOneColumn() throws {
        let server = try EmbeddingTests.server(.both)
        try server.installFixtures(
            """
            CREATE TABLE public.fx_clients (id int PRIMARY KEY, name text, info jsonb);
            CREATE TABLE public.fx_projects (id int PRIMARY KEY, name text, client_id int REFERENCES public.fx_clients);
            CREATE TABLE public.fx_users (id int PRIMARY KEY, name text);
            CREATE TABLE public.fx_tasks (id int PRIMARY KEY, name text, project_id int REFERENCES public.fx_projects, user_id int REFERENCES public.fx_users);
            INSERT INTO public.fx_clients VALUES (1, 'Microsoft', '{"rank":2}'), (2, 'Apple', '{"rank":1}');
            INSERT INTO public.fx_projects VALUES (1, 'Windows 7', 1), (2, 'Windows 10', 1), (3, 'IOS', 2), (4, 'OSX', 2), (5, 'Orphan', NULL);
            INSERT INTO public.fx_users VALUES (1, 'Angela');
            INSERT INTO public.fx_tasks VALUES (1, 'Design w7', 1, 1), (2, 'Code w7', 1, 1), (3, 'Design w10', 2, 1), (4, 'Code w10', 2, 1), (5, 'Design IOS', 3, 1);
            GRANT ALL ON public.fx_clients, public.fx_projects, public.fx_users, public.fx_tasks TO service_role;
            """, probe: "/rest/v1/fx_tasks")
        let http = server.client()
        func send(_ method: String, _ target: String, _ body: String? = nil) throws -> TestResponse {
            try http.request(method, "/rest/v1/" + target, headers: server.headers(server.serviceKey, [("Prefer", "return=representation")]), body: body)
        }
        func ids(_ response: TestResponse) -> [Int] { response.jsonArray?.compactMap { $0["id"] as? Int } ?? [] }
        let nullsFirst = try send("GET", "fx_projects?select=id,fx_clients(name)&order=fx_clients(name).nullsfirst,id")
        #expect(ids(nullsFirst) == [5, 3, 4, 1, 2], "\(nullsFirst.text)")
        #expect(nullsFirst.compactJSON.hasPrefix(#"[{"fx_clients":null,"id":5},{"fx_clients":{"name":"Apple"},"id":3}"#), "\(nullsFirst.text)")
        // By the embed's alias, descending with nulls last; along a JSON path.
        #expect(ids(try send("GET", "fx_projects?select=id,client:fx_clients(name)&order=client(name).desc.nullslast,id")) == [1, 2, 3, 4, 5])
        #expect(ids(try send("GET", "fx_projects?select=id,fx_clients(id)&order=fx_clients(info->rank).asc,id")) == [3, 4, 1, 2, 5])
        // A spread's relation, and an embedded level ordered by its own to-one embed.
        #expect(ids(try send("GET", "fx_projects?select=id,...fx_clients(client:name)&order=fx_clients(name).desc,id&id=lt.5")) == [1, 2, 3, 4])
        let nested = try send("GET", "fx_users?select=name,fx_tasks(id,fx_projects(name))&fx_tasks.order=fx_projects(name).asc,id")
        #expect(nested.jsonArray?.first.flatMap { ($0["fx_tasks"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } } == [5, 3, 4, 1, 2], "\(nested.text)")
        // The embed's filters apply to its order: a filtered-out row orders as NULL (last ascending).
        #expect(ids(try send("GET", "fx_projects?select=id,fx_clients(name)&fx_clients.name=eq.Microsoft&order=fx_clients(name),id")) == [1, 2, 3, 4, 5])
        #expect(ids(try send("GET", "fx_projects?select=id,fx_clients(name)&fx_clients.name=eq.Apple&order=fx_clients(name),id")) == [3, 4, 1, 2, 5])
        // A write's representation in a related order.
        let patched = try send("PATCH", "fx_projects?id=in.(1,3)&select=id,fx_clients(name)&order=fx_clients(name),id", #"{"name":"renamed"}"#)
        #expect(patched.status == 200 && ids(patched) == [3, 1], "\(patched.text)")

        func expectError(_ target: String, _ status: Int, _ expected: String, method: String = "GET") throws {
            let response = try send(method, target)
            #expect(response.status == status && response.compactJSON == expected, "\(target): \(response.status) \(response.text)")
        }
        try expectError(
            "fx_clients?select=*,fx_projects(*)&order=fx_projects(id)", 400,
            #"{"code":"PGRST118","details":"'fx_clients' and 'fx_projects' do not form a many-to-one or one-to-one relationship","hint":null,"message":"A related order on 'fx_projects' is not possible"}"#
        )
        try expectError(
            "fx_clients?select=*,pros:fx_projects(*)&order=pros(id)", 400,
            #"{"code":"PGRST118","details":"'fx_clients' and 'pros' do not form a many-to-one or one-to-one relationship","hint":null,"message":"A related order on 'pros' is not possible"}"#
        )
        // PostgREST names a write's own rows `pgrst_source` here.
        try expectError(
            "fx_clients?id=eq.9&select=*,fx_projects(*)&order=fx_projects(id)", 400,
            #"{"code":"PGRST118","details":"'pgrst_source' and 'fx_projects' do not form a many-to-one or one-to-one relationship","hint":null,"message":"A related order on 'fx_projects' is not possible"}"#,
            method: "DELETE")
        let notEmbedded =
            #"{"code":"PGRST108","details":null,"hint":"Verify that 'clientsx' is included in the 'select' query parameter.","message":"'clientsx' is not an embedded resource in this request"}"#
        try expectError("fx_projects?select=id,fx_clients(name)&order=clientsx(name).nullsfirst", 400, notEmbedded)
        try expectError("fx_projects?order=clientsx(name)", 400, notEmbedded)
        try expectError("fx_users?select=name,fx_tasks(id)&fx_tasks.order=clientsx(name)", 400, notEmbedded)
        let column = try send("GET", "fx_projects?select=id,fx_clients(name)&order=fx_clients(nope)")
        #expect(column.status == 400 && column.jsonObject?["code"] as? String == "42703", "\(column.text)")
    }

    /// PostgREST's one-to-one (O2O): a foreign key whose columns are its table's primary key or a
    /// unique constraint's embeds an object, not an array, from either side (reads, spreads,
    /// related orders, writes).
    @Test func oneToOneEmbedsAnObjectBothWays() throws {
        let server = try EmbeddingTests.server(.both)
        try server.installFixtures(
            """
            CREATE TABLE public.fx_students (id int, code text, name text, PRIMARY KEY (id, code));
            -- The key's columns in another order than the primary key's: compared as a set.
            CREATE TABLE public.fx_students_info (id int, code text, address text, PRIMARY KEY (id, code),
                                                  FOREIGN KEY (code, id) REFERENCES public.fx_students (code, id) ON DELETE CASCADE);
            CREATE TABLE public.fx_badges (id int PRIMARY KEY, student_id int, student_code text, label text, UNIQUE (student_id, student_code),
                                           FOREIGN KEY (student_id, student_code) REFERENCES public.fx_students (id, code) ON DELETE CASCADE);
            -- Not unique: many-to-one, one-to-many.
            CREATE TABLE public.fx_grades (id int PRIMARY KEY, student_id int, student_code text, grade int,
                                           FOREIGN KEY (student_id, student_code) REFERENCES public.fx_students (id, code) ON DELETE CASCADE);
            INSERT INTO public.fx_students VALUES (1, '0001', 'John Doe'), (2, '0002', 'Jane Doe');
            INSERT INTO public.fx_students_info VALUES (1, '0001', 'Street 1');
            INSERT INTO public.fx_badges VALUES (1, 1, '0001', 'gold');
            INSERT INTO public.fx_grades VALUES (1, 1, '0001', 5), (2, 1, '0001', 6);
            GRANT ALL ON public.fx_students, public.fx_students_info, public.fx_badges, public.fx_grades TO service_role;
            """, probe: "/rest/v1/fx_grades")
        let http = server.client()
        func send(_ method: String, _ target: String, _ body: String? = nil) throws -> TestResponse {
            try http.request(method, "/rest/v1/" + target, headers: server.headers(server.serviceKey, [("Prefer", "return=representation")]), body: body)
        }
        let students = try send("GET", "fx_students?select=name,fx_students_info(address),fx_badges(label),fx_grades(grade)&order=id&fx_grades.order=id")
        #expect(
            students.compactJSON
                == #"[{"fx_badges":{"label":"gold"},"fx_grades":[{"grade":5},{"grade":6}],"fx_students_info":{"address":"Street 1"},"name":"John Doe"},"#
                + #"{"fx_badges":null,"fx_grades":[],"fx_students_info":null,"name":"Jane Doe"}]"#, "\(students.text)")
        #expect(
            try send("GET", "fx_students_info?select=address,fx_students(name)").compactJSON == #"[{"address":"Street 1","fx_students":{"name":"John Doe"}}]"#
        )
        #expect(try send("GET", "fx_badges?select=label,fx_students(name)").compactJSON == #"[{"fx_students":{"name":"John Doe"},"label":"gold"}]"#)
        #expect(
            try send("GET", "fx_grades?select=grade,fx_students(name)&order=id&limit=1").compactJSON == #"[{"fx_students":{"name":"John Doe"},"grade":5}]"#)
        // To-one from the referenced side too: spreads and related orders take it.
        #expect(
            try send("GET", "fx_students?select=name,...fx_students_info(address)&order=id").compactJSON
                == #"[{"address":"Street 1","name":"John Doe"},{"address":null,"name":"Jane Doe"}]"#)
        let ordered = try send("GET", "fx_students?select=id,fx_badges(label)&order=fx_badges(label).nullsfirst")
        #expect(ordered.jsonArray?.compactMap { $0["id"] as? Int } == [2, 1], "\(ordered.text)")
        let spreadMany = try send("GET", "fx_students?select=name,...fx_grades(grade)&order=id")
        #expect(spreadMany.status == 200 && spreadMany.jsonArray?.first?["grade"] is [Any], "\(spreadMany.text)")
        // Writes (PostgREST's UpdateSpec and DeleteSpec "embeds an O2O relationship").
        let patched = try send("PATCH", "fx_students_info?id=eq.1&select=address,fx_students(name)", #"{"address":"New Street 1"}"#)
        #expect(patched.compactJSON == #"[{"address":"New Street 1","fx_students":{"name":"John Doe"}}]"#, "\(patched.text)")
        let deleted = try send("DELETE", "fx_students?id=eq.1&select=name,fx_students_info(address)")
        #expect(deleted.compactJSON == #"[{"fx_students_info":{"address":"New Street 1"},"name":"John Doe"}]"#, "\(deleted.text)")
    }

    /// PostgREST's ComputedRelsSpec: a function `f(t) returns [setof] u` embeds its rows under its
    /// name (to-one when it returns one row or `SETOF … ROWS 1`), in spreads, related orders and
    /// writes' answers.
    @Test func computedRelationshipsEmbedAFunctionsRows() throws {
        let server = try EmbeddingTests.server(.both)
        try server.installFixtures(
            """
            CREATE TABLE public.fx_designers (id int PRIMARY KEY, name text);
            CREATE TABLE public.fx_videogames (id int PRIMARY KEY, name text, designer_id int REFERENCES public.fx_designers);
            INSERT INTO public.fx_designers VALUES (1, 'Sid Meier'), (2, 'Hironobu Sakaguchi');
            INSERT INTO public.fx_videogames VALUES (1, 'Civilization I', 1), (2, 'Civilization II', 1), (3, 'Final Fantasy I', 2), (4, 'Final Fantasy II', 2);
            CREATE FUNCTION public.fx_computed_designers(public.fx_videogames) RETURNS SETOF public.fx_designers ROWS 1 LANGUAGE sql STABLE
                AS $$ SELECT * FROM public.fx_designers WHERE id = $1.designer_id $$;
            CREATE FUNCTION public.fx_computed_designer(public.fx_videogames) RETURNS public.fx_designers LANGUAGE sql STABLE
                AS $$ SELECT * FROM public.fx_designers WHERE id = $1.designer_id $$;
            CREATE FUNCTION public.fx_computed_videogames(public.fx_designers) RETURNS SETOF public.fx_videogames LANGUAGE sql STABLE
                AS $$ SELECT * FROM public.fx_videogames WHERE designer_id = $1.id $$;
            -- Named as the table: it overrides the foreign key's relationship (and finds nothing).
            CREATE FUNCTION public.fx_designers(public.fx_videogames) RETURNS SETOF public.fx_designers ROWS 1 LANGUAGE sql STABLE
                AS $$ SELECT * FROM public.fx_designers WHERE false $$;
            GRANT ALL ON public.fx_designers, public.fx_videogames TO service_role;
            """, probe: "/rest/v1/fx_videogames?select=id,fx_computed_designers(id)")
        let http = server.client()
        func send(_ method: String, _ target: String, _ body: String? = nil) throws -> TestResponse {
            try http.request(method, "/rest/v1/" + target, headers: server.headers(server.serviceKey, [("Prefer", "return=representation")]), body: body)
        }
        let games = try send("GET", "fx_videogames?select=name,fx_computed_designers(name)&id=lt.3&order=id")
        #expect(
            games.compactJSON
                == #"[{"fx_computed_designers":{"name":"Sid Meier"},"name":"Civilization I"},{"fx_computed_designers":{"name":"Sid Meier"},"name":"Civilization II"}]"#,
            "\(games.text)")
        #expect(
            try send("GET", "fx_videogames?select=name,designer:fx_computed_designer(name)&id=eq.3").compactJSON
                == #"[{"designer":{"name":"Hironobu Sakaguchi"},"name":"Final Fantasy I"}]"#)
        let designers = try send(
            "GET", "fx_designers?select=name,fx_computed_videogames(name)&order=id&fx_computed_videogames.order=id&fx_computed_videogames.name=like.*II")
        #expect(
            designers.compactJSON
                == #"[{"fx_computed_videogames":[{"name":"Civilization II"}],"name":"Sid Meier"},{"fx_computed_videogames":[{"name":"Final Fantasy II"}],"name":"Hironobu Sakaguchi"}]"#,
            "\(designers.text)")
        #expect(
            try send("GET", "fx_videogames?select=name,...fx_computed_designers(designer:name)&id=eq.1").compactJSON
                == #"[{"designer":"Sid Meier","name":"Civilization I"}]"#)
        #expect(try send("GET", "fx_videogames?select=name,fx_designers(name)&id=eq.1").compactJSON == #"[{"fx_designers":null,"name":"Civilization I"}]"#)
        let ordered = try send("GET", "fx_videogames?select=id,fx_computed_designers(name)&order=fx_computed_designers(name),id")
        #expect(ordered.jsonArray?.compactMap { $0["id"] as? Int } == [3, 4, 1, 2], "\(ordered.text)")
        let toMany = try send("GET", "fx_designers?select=*,fx_computed_videogames(*)&order=fx_computed_videogames(id)")
        #expect(
            toMany.status == 400 && toMany.jsonObject?["code"] as? String == "PGRST118"
                && toMany.jsonObject?["details"] as? String
                    == "'fx_designers' and 'fx_computed_videogames' do not form a many-to-one or one-to-one relationship",
            "\(toMany.text)")
        // Writes: the returned row is the function's argument (PUT's too, whose returned rows
        // carry one more column).
        let patched = try send("PATCH", "fx_videogames?id=eq.1&select=name,fx_computed_designers(name)", #"{"name":"Civ"}"#)
        #expect(patched.compactJSON == #"[{"fx_computed_designers":{"name":"Sid Meier"},"name":"Civ"}]"#, "\(patched.text)")
        let put = try send("PUT", "fx_videogames?id=eq.5&select=name,fx_computed_designers(name)", #"{"id":5,"name":"Pirates!","designer_id":1}"#)
        #expect(put.status == 201 && put.compactJSON == #"[{"fx_computed_designers":{"name":"Sid Meier"},"name":"Pirates!"}]"#, "\(put.text)")
    }

    /// PostgREST's findRel beyond a table's name: a table's key to itself (`t(…)` the children,
    /// `t!col(…)` the children through `col`, `col(…)` the parent; UpdateSpec's web_content), and
    /// a foreign key named by its constraint or its one column.
    @Test func selfReferencingKeysAndKeysAsTargets() throws {
        let server = try EmbeddingTests.server(.both)
        try server.installFixtures(
            """
            CREATE TABLE public.fx_web_content (id int PRIMARY KEY, name text, p_web_id int REFERENCES public.fx_web_content (id));
            INSERT INTO public.fx_web_content VALUES (5, 'wat', NULL), (0, 'tardis', 5), (1, 'fezz', 0), (2, 'foo', 0), (3, 'bar', 0), (4, 'wut', 1);
            CREATE TABLE public.fx_pages (id int PRIMARY KEY, content_id int CONSTRAINT fx_pages_content REFERENCES public.fx_web_content);
            INSERT INTO public.fx_pages VALUES (1, 4);
            GRANT ALL ON public.fx_web_content, public.fx_pages TO service_role;
            """, probe: "/rest/v1/fx_pages")
        let http = server.client()
        func send(_ method: String, _ target: String, _ body: String? = nil) throws -> TestResponse {
            try http.request(method, "/rest/v1/" + target, headers: server.headers(server.serviceKey, [("Prefer", "return=representation")]), body: body)
        }
        let tree = try send(
            "GET", "fx_web_content?id=eq.0&select=id,name,fx_web_content(name,fx_web_content(name)),parent_content:p_web_id(name)&fx_web_content.order=id")
        #expect(
            tree.compactJSON
                == #"[{"fx_web_content":[{"fx_web_content":[{"name":"wut"}],"name":"fezz"},{"fx_web_content":[],"name":"foo"},{"fx_web_content":[],"name":"bar"}],"id":0,"name":"tardis","parent_content":{"name":"wat"}}]"#,
            "\(tree.text)")
        #expect(
            try send("GET", "fx_web_content?id=eq.1&select=name,kids:fx_web_content!p_web_id(name)").compactJSON
                == #"[{"kids":[{"name":"wut"}],"name":"fezz"}]"#)
        // After an update, with the embed's filters (PostgREST's UpdateSpec).
        let patched = try send(
            "PATCH",
            "fx_web_content?id=eq.0&select=id,name,fx_web_content(name),parent_content:p_web_id(name)&fx_web_content.name=like.f*&fx_web_content.order=id",
            #"{"name":"tardis-patched"}"#)
        #expect(
            patched.compactJSON
                == #"[{"fx_web_content":[{"name":"fezz"},{"name":"foo"}],"id":0,"name":"tardis-patched","parent_content":{"name":"wat"}}]"#,
            "\(patched.text)")
        // A foreign key named by its one column or its constraint.
        #expect(try send("GET", "fx_pages?select=id,content_id(name)").compactJSON == #"[{"content_id":{"name":"wut"},"id":1}]"#)
        #expect(try send("GET", "fx_pages?select=id,fx_pages_content(name)").compactJSON == #"[{"fx_pages_content":{"name":"wut"},"id":1}]"#)
        #expect(try send("GET", "fx_web_content?id=eq.4&select=name,fx_pages_content(id)").compactJSON == #"[{"fx_pages_content":[{"id":1}],"name":"wut"}]"#)
    }

    @Test func relationshipErrorsAsPostgREST() throws {
        let server = try EmbeddingTests.server(.both)
        let user = try server.signUp()
        let http = server.client()
        let missing = try http.request("GET", "/rest/v1/children?select=*,families(*)", headers: server.headers(user.token))
        #expect(missing.status == 400 && missing.jsonObject?["code"] as? String == "PGRST200", "\(missing.text)")
        #expect(missing.jsonObject?["message"] as? String == "Could not find a relationship between 'children' and 'families' in the schema cache")
        let wrongHint = try http.request("GET", "/rest/v1/user_profiles?select=*,children!nope(*)", headers: server.headers(user.token))
        #expect(wrongHint.status == 400 && wrongHint.jsonObject?["code"] as? String == "PGRST200")
        let column = try http.request("GET", "/rest/v1/user_profiles?select=children!current_child_id(nope)", headers: server.headers(user.token))
        #expect(column.status == 400 && column.jsonObject?["code"] as? String == "42703")
        let grammar = try http.request("GET", "/rest/v1/user_profiles?select=children!current_child_id(name", headers: server.headers(user.token))
        #expect(grammar.status == 400 && grammar.jsonObject?["code"] as? String == "PGRST100")

        // Two keys between the same tables: PGRST201 until a hint chooses.
        let admin = try Connection(conninfo: server.databaseURL)
        try admin.execute(
            """
            CREATE TABLE public.fx_people (id int PRIMARY KEY, name text);
            CREATE TABLE public.fx_letters (id int PRIMARY KEY, sender int REFERENCES public.fx_people, receiver int REFERENCES public.fx_people);
            INSERT INTO public.fx_people VALUES (1, 'ann'), (2, 'bob');
            INSERT INTO public.fx_letters VALUES (1, 1, 2);
            GRANT ALL ON public.fx_people, public.fx_letters TO service_role;
            """)
        let service = server.headers(server.serviceKey)
        #expect(
            eventually {
                try? admin.execute("NOTIFY pgrst, 'reload schema'")
                return (try? http.request("GET", "/rest/v1/fx_letters", headers: service).status) == 200
            })
        let ambiguous = try http.request("GET", "/rest/v1/fx_letters?select=*,fx_people(*)", headers: service)
        #expect(ambiguous.status == 300 && ambiguous.jsonObject?["code"] as? String == "PGRST201", "\(ambiguous.text)")
        #expect((ambiguous.jsonObject?["details"] as? [[String: Any]])?.count == 2)
        let chosen = try http.request("GET", "/rest/v1/fx_letters?select=id,from:fx_people!sender(name),to:fx_people!receiver(name)", headers: service)
        #expect(chosen.compactJSON == #"[{"from":{"name":"ann"},"id":1,"to":{"name":"bob"}}]"#, "\(chosen.text)")
        let received = try http.request("GET", "/rest/v1/fx_people?select=name,fx_letters!receiver(id)&order=id", headers: service)
        #expect(received.compactJSON == #"[{"fx_letters":[],"name":"ann"},{"fx_letters":[{"id":1}],"name":"bob"}]"#, "\(received.text)")
    }
}
