import Foundation
import Postgres
import TestSupport
import Testing

/// PostgREST's spec cases of embedding through views (EmbedDisambiguationSpec,
/// EmbedInnerJoinSpec "works with views"), on its fixtures trimmed to what they read: views in
/// `spec` over tables of `spec_private` or of `spec`, their relationships found from the base
/// tables' keys. Each case is the spec's request and the spec's answer.
@Suite("PostgREST spec cases: embedding through views", .serialized)
struct PostgRESTSpecViewTests {
    static let fixtures = ##"""
        CREATE SCHEMA spec;
        CREATE SCHEMA spec_private;
        CREATE TABLE spec.users (id integer PRIMARY KEY, name text NOT NULL);
        CREATE TABLE spec.clients (id integer PRIMARY KEY, name text NOT NULL);
        CREATE TABLE spec.projects (id integer PRIMARY KEY, name text NOT NULL, client_id integer CONSTRAINT client REFERENCES spec.clients(id));
        CREATE TABLE spec.tasks (id integer PRIMARY KEY, name text NOT NULL, project_id integer CONSTRAINT project REFERENCES spec.projects(id));
        CREATE VIEW spec.projects_view AS SELECT projects.id, projects.name, projects.client_id FROM spec.projects;
        INSERT INTO spec.users VALUES (1, 'Angela Martin'), (2, 'Michael Scott'), (3, 'Dwight Schrute');
        INSERT INTO spec.clients VALUES (1, 'Microsoft'), (2, 'Apple');
        INSERT INTO spec.projects VALUES (1, 'Windows 7', 1), (2, 'Windows 10', 1), (3, 'IOS', 2), (4, 'OSX', 2), (5, 'Orphan', NULL);
        INSERT INTO spec.tasks VALUES (1, 'Design w7', 1), (2, 'Code w7', 1), (3, 'Design w10', 2), (4, 'Code w10', 2);

        CREATE TABLE spec_private.articles (id integer PRIMARY KEY, body text, owner name NOT NULL);
        CREATE TABLE spec_private.article_stars (
            article_id integer NOT NULL, user_id integer NOT NULL, created_at timestamp without time zone DEFAULT now() NOT NULL,
            PRIMARY KEY (article_id, user_id));
        ALTER TABLE ONLY spec_private.article_stars
            ADD CONSTRAINT article FOREIGN KEY (article_id) REFERENCES spec_private.articles(id),
            ADD CONSTRAINT "user" FOREIGN KEY (user_id) REFERENCES spec.users(id);
        CREATE VIEW spec."articleStars" AS
            SELECT article_stars.article_id AS "articleId", article_stars.user_id AS "userId", article_stars.created_at AS "createdAt"
            FROM spec_private.article_stars;
        CREATE VIEW spec.articles AS SELECT articles.id, articles.body, articles.owner FROM spec_private.articles;
        INSERT INTO spec_private.articles VALUES (1, 'No', 'diogo'), (2, 'Stop', 'diogo'), (3, 'It''s a fez', 'diogo');
        INSERT INTO spec_private.article_stars VALUES (1, 1, '2015-12-08 04:22:57.472738'), (1, 2, '2015-12-08 04:22:57.472738'),
            (2, 3, '2015-12-08 04:22:57.472738'), (3, 2, '2015-12-08 04:22:57.472738'), (1, 3, '2015-12-08 04:22:57.472738');

        CREATE TABLE spec.person (id integer PRIMARY KEY, name character varying NOT NULL);
        CREATE TABLE spec.message (
            id integer PRIMARY KEY, body text NOT NULL DEFAULT '', sender bigint NOT NULL REFERENCES spec.person(id),
            recipient bigint NOT NULL REFERENCES spec.person(id));
        CREATE VIEW spec.person_detail AS
            SELECT p.id, p.name, s.count AS sent, r.count AS received
            FROM spec.person p
            JOIN LATERAL (SELECT message.sender, count(message.id) AS count FROM spec.message GROUP BY message.sender) s ON s.sender = p.id
            JOIN LATERAL (SELECT message.recipient, count(message.id) AS count FROM spec.message GROUP BY message.recipient) r ON r.recipient = p.id;
        INSERT INTO spec.person VALUES (1, 'John'), (2, 'Jane'), (3, 'Jake'), (4, 'Julie');
        INSERT INTO spec.message VALUES (1, 'Hello Jane', 1, 2), (2, 'Hi John', 2, 1), (3, 'How are you doing?', 1, 2), (4, 'Hey Julie', 3, 4),
            (5, 'What''s up Jake', 4, 3);

        CREATE TABLE spec_private.authors (id integer PRIMARY KEY, name text);
        CREATE TABLE spec_private.publishers (id integer PRIMARY KEY, name text);
        CREATE TABLE spec_private.books (
            id integer PRIMARY KEY, title text, publication_year smallint, author_id integer REFERENCES spec_private.authors(id),
            first_publisher_id integer REFERENCES spec_private.publishers(id));
        CREATE VIEW spec.authors AS SELECT id, name FROM spec_private.authors;
        CREATE VIEW spec.publishers AS SELECT id, name FROM spec_private.publishers;
        CREATE VIEW spec.books AS SELECT id, title, publication_year, author_id, first_publisher_id FROM spec_private.books;
        INSERT INTO spec_private.authors VALUES (1, 'George Orwell'), (2, 'Anne Frank'), (3, 'Antoine de Saint-Exupéry'), (4, 'J.D. Salinger'),
            (5, 'Ray Bradbury'), (6, 'William Golding'), (7, 'Harper Lee'), (8, 'Kurt Vonnegut'), (9, 'Ken Kesey'), (10, 'Fyodor Dostoevsky');
        INSERT INTO spec_private.publishers VALUES (1, 'Secker & Warburg'), (2, 'Contact Publishing'), (3, 'Reynal & Hitchcock'),
            (4, 'Little, Brown and Company'), (5, 'Ballantine Books'), (6, 'Faber and Faber'), (7, 'J. B. Lippincott & Co.'), (8, 'Delacorte'),
            (9, 'Viking Press & Signet Books');
        INSERT INTO spec_private.books VALUES (1, '1984', 1949, 1, 1), (2, 'The Diary of a Young Girl', 1947, 2, 2),
            (3, 'The Little Prince', 1947, 3, 3), (4, 'The Catcher in the Rye', 1951, 4, 4), (5, 'Farenheit 451', 1953, 5, 5),
            (6, 'Lord of the Flies', 1954, 6, 6), (7, 'To Kill a Mockingbird', 1960, 7, 7), (8, 'Slaughterhouse-Five', 1969, 8, 8),
            (9, 'One Flew Over the Cuckoo''s Nest', 1962, 9, 9), (10, 'Crime and Punishment', 1866, 10, NULL);

        CREATE TABLE spec_private.screens (id serial PRIMARY KEY, name text NOT NULL DEFAULT 'new screen');
        CREATE TABLE spec_private.labels (id serial PRIMARY KEY, name text NOT NULL DEFAULT 'new label');
        CREATE TABLE spec_private.label_screen (
            label_id int NOT NULL REFERENCES spec_private.labels(id), screen_id int NOT NULL REFERENCES spec_private.screens(id),
            CONSTRAINT label_screen_pkey PRIMARY KEY (label_id, screen_id));
        CREATE VIEW spec.labels AS SELECT * FROM spec_private.labels;
        CREATE VIEW spec.screens AS SELECT * FROM spec_private.screens;
        CREATE VIEW spec.label_screen AS SELECT * FROM spec_private.label_screen;
        INSERT INTO spec_private.screens (name) VALUES ('banana'), ('helicopter'), ('formula 1 banana');
        INSERT INTO spec_private.labels (name) VALUES ('vehicles'), ('fruit');
        INSERT INTO spec_private.label_screen (label_id, screen_id) VALUES (1, 2), (1, 3), (2, 1), (2, 3);

        CREATE TABLE spec_private.actors (id int, name text, CONSTRAINT actors_id PRIMARY KEY (id));
        CREATE TABLE spec_private.films (id integer, title text, CONSTRAINT films_id PRIMARY KEY (id));
        CREATE TABLE spec_private.personnages (
            film_id int NOT NULL, role_id int NOT NULL, character text NOT NULL,
            CONSTRAINT personnages_film_id_role_id PRIMARY KEY (film_id, role_id),
            CONSTRAINT personnages_film_id_fkey FOREIGN KEY (film_id) REFERENCES spec_private.films(id),
            CONSTRAINT personnages_role_id_fkey FOREIGN KEY (role_id) REFERENCES spec_private.actors(id));
        CREATE VIEW spec.actors AS SELECT * FROM spec_private.actors;
        CREATE VIEW spec.films AS SELECT * FROM spec_private.films;
        CREATE VIEW spec.personnages AS SELECT * FROM spec_private.personnages;
        INSERT INTO spec_private.actors VALUES (1, 'john'), (2, 'mary');
        INSERT INTO spec_private.films VALUES (12, 'douze commandements'), (2001, 'odyssée de l''espace');
        INSERT INTO spec_private.personnages VALUES (12, 1, 'méchant'), (2001, 2, 'astronaute');

        CREATE TABLE spec.end_1 (id int PRIMARY KEY, name text);
        CREATE TABLE spec.end_2 (id int PRIMARY KEY, name text);
        CREATE TABLE spec_private.junction (
            end_1_id int NOT NULL REFERENCES spec.end_1(id), end_2_id int NOT NULL REFERENCES spec.end_2(id), PRIMARY KEY (end_1_id, end_2_id));
        CREATE TABLE spec.schauspieler (id int PRIMARY KEY, name text);
        CREATE TABLE spec.filme (id int PRIMARY KEY, titel text);
        CREATE TABLE spec.rollen ();
        CREATE TABLE spec_private.rollen (
            film_id int NOT NULL REFERENCES spec.filme(id), rolle_id int NOT NULL REFERENCES spec.schauspieler(id), charakter text NOT NULL,
            PRIMARY KEY (film_id, rolle_id));

        CREATE TABLE spec.big_projects (big_project_id serial PRIMARY KEY, name text);
        CREATE TABLE spec.sites (site_id serial PRIMARY KEY, name text, main_project_id int NULL REFERENCES spec.big_projects (big_project_id));
        ALTER TABLE spec.sites RENAME CONSTRAINT sites_main_project_id_fkey TO main_project;
        CREATE TABLE spec.jobs (
            job_id uuid, name text, site_id int NOT NULL REFERENCES spec.sites (site_id),
            big_project_id int NOT NULL REFERENCES spec.big_projects (big_project_id), PRIMARY KEY (job_id, site_id, big_project_id));
        CREATE VIEW spec.main_jobs AS SELECT * FROM spec.jobs WHERE site_id IN (SELECT site_id FROM spec.sites WHERE main_project_id IS NOT NULL);
        CREATE VIEW spec_private.priv_jobs AS SELECT * FROM spec.jobs;
        INSERT INTO spec.big_projects VALUES (1, 'big project 1'), (2, 'big project 2');
        INSERT INTO spec.sites VALUES (1, 'site 1', 1), (2, 'site 2', NULL), (3, 'site 3', 2), (4, 'site 4', NULL);
        INSERT INTO spec.jobs VALUES ('bc5d5362-b881-438f-b9f5-7417e08704ed', 'job 1-1', 1, 1),
            ('3bd52697-033b-4edd-8a28-46a9c04b7c1e', 'job 2-1', 2, 1), ('e6e67e4e-19b1-11e9-ab14-d663bd873d93', 'job 2-2', 2, 2);

        CREATE TABLE spec.agents (id int PRIMARY KEY, name text, department_id int);
        CREATE TABLE spec.departments (id int PRIMARY KEY, name text, head_id int REFERENCES spec.agents(id));
        ALTER TABLE spec.agents ADD CONSTRAINT agents_department_id_fkey FOREIGN KEY (department_id) REFERENCES spec.departments(id);

        CREATE TABLE spec.schedules (id int PRIMARY KEY, name text, start_at timetz, end_at timetz);
        CREATE TABLE spec.activities (id int, schedule_id int, car_id text, camera_id text, PRIMARY KEY (id, schedule_id));
        ALTER TABLE spec.activities ADD CONSTRAINT schedule FOREIGN KEY (schedule_id) REFERENCES spec.schedules (id);
        CREATE TABLE spec.unit_workdays (
            unit_id int, day date, fst_shift_activity_id int, fst_shift_schedule_id int, snd_shift_activity_id int,
            snd_shift_schedule_id int, PRIMARY KEY (unit_id, day));
        ALTER TABLE spec.unit_workdays
            ADD CONSTRAINT fst_shift FOREIGN KEY (fst_shift_activity_id, fst_shift_schedule_id) REFERENCES spec.activities (id, schedule_id),
            ADD CONSTRAINT snd_shift FOREIGN KEY (snd_shift_activity_id, snd_shift_schedule_id) REFERENCES spec.activities (id, schedule_id);
        CREATE VIEW spec.unit_workdays_fst_shift AS
            SELECT unit_id, day, fst_shift_activity_id, fst_shift_schedule_id FROM spec.unit_workdays
            WHERE fst_shift_activity_id IS NOT NULL AND fst_shift_schedule_id IS NOT NULL;
        INSERT INTO spec.schedules VALUES (1, 'morning', '06:00:00', '11:59:00'), (2, 'afternoon', '12:00:00', '17:59:00'),
            (3, 'night', '18:00:00', '23:59:00'), (4, 'early morning', '00:00:00', '05:59:00');
        INSERT INTO spec.activities (id, schedule_id, car_id) VALUES (1, 1, 'CAR-349');
        INSERT INTO spec.activities (id, schedule_id, camera_id) VALUES (2, 3, 'CAM-123');
        INSERT INTO spec.unit_workdays VALUES (1, '2019-12-02', 1, 1, 2, 3);

        CREATE TABLE spec_private.internal_job (
            id integer NOT NULL, parent_id integer, CONSTRAINT internal_job_pkey PRIMARY KEY (id),
            CONSTRAINT parent_fk FOREIGN KEY (parent_id) REFERENCES spec_private.internal_job (id));
        CREATE VIEW spec.job AS SELECT j.id, j.parent_id FROM spec_private.internal_job j;
        INSERT INTO spec_private.internal_job VALUES (1, NULL), (2, 1);
        CREATE TABLE spec.series (id bigint PRIMARY KEY, title text NOT NULL);
        CREATE TABLE spec.adaptation_notifications (id bigint PRIMARY KEY, series bigint REFERENCES spec.series(id), status text);
        CREATE VIEW spec.series_popularity AS SELECT id, random() AS popularity_score FROM spec.series;

        CREATE TABLE spec_private.i2459_simple_t1 (id int PRIMARY KEY);
        CREATE TABLE spec_private.i2459_simple_t2 (t1_id int REFERENCES spec_private.i2459_simple_t1);
        CREATE VIEW spec.i2459_simple_v1 AS TABLE spec_private.i2459_simple_t1;
        CREATE VIEW spec.i2459_simple_v2 AS SELECT t1_id AS t1_id1, t1_id AS t1_id2 FROM spec_private.i2459_simple_t2;
        CREATE TABLE spec_private.i2459_composite_t1 (PRIMARY KEY (a, b), a int, b int);
        CREATE TABLE spec_private.i2459_composite_t2 (
            t1_a int, t1_b int,
            CONSTRAINT i2459_composite_t2_t1_a_t1_b_fkey FOREIGN KEY (t1_a, t1_b) REFERENCES spec_private.i2459_composite_t1);
        CREATE VIEW spec.i2459_composite_v1 AS TABLE spec_private.i2459_composite_t1;
        CREATE VIEW spec.i2459_composite_v2 AS
            SELECT t1_a AS t1_a1, t1_b AS t1_b1, t1_a AS t1_a2, t1_b AS t1_b2 FROM spec_private.i2459_composite_t2;
        CREATE TABLE spec_private.i2459_self_t (id int PRIMARY KEY, parent int REFERENCES spec_private.i2459_self_t, type text);
        CREATE VIEW spec.i2459_self_v1 AS
            SELECT parent.parent AS grandparent, child.parent, child.id
            FROM spec_private.i2459_self_t AS parent JOIN spec_private.i2459_self_t AS child ON child.parent = parent.id WHERE child.type = 'A';
        CREATE VIEW spec.i2459_self_v2 AS
            SELECT parent.parent AS grandparent, child.parent, child.id
            FROM spec_private.i2459_self_t AS parent JOIN spec_private.i2459_self_t AS child ON child.parent = parent.id WHERE child.type = 'B';

        CREATE TABLE spec_private.ta (a1 INT PRIMARY KEY, a2 INT, UNIQUE (a1, a2));
        CREATE TABLE spec_private.tb (b1 INT REFERENCES spec_private.ta (a1), b2 INT, FOREIGN KEY (b1, b2) REFERENCES spec_private.ta (a1, a2));
        CREATE VIEW spec.va AS SELECT a1 FROM spec_private.ta;
        CREATE VIEW spec.vb AS SELECT b1 FROM spec_private.tb;

        GRANT USAGE ON SCHEMA spec TO anon, authenticated, service_role;
        GRANT USAGE ON SCHEMA spec_private TO anon, authenticated, service_role;
        GRANT SELECT ON ALL TABLES IN SCHEMA spec TO anon, authenticated, service_role;
        GRANT SELECT ON ALL TABLES IN SCHEMA spec_private TO anon, authenticated, service_role;
        """##

    let server: TestServer

    init() throws {
        server = try TestServer { $0.postgrest.schemas = ["public", "spec"] }
        try server.installSpecFixtures(Self.fixtures, profile: "spec", probe: "/books")
    }

    /// The spec's request (a GET of `spec`) answers `status` and the spec's JSON.
    func check(_ path: String, _ expected: String, status: Int = 200, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try server.expectSpec(path, expected, status: status, sourceLocation: sourceLocation)
    }

    /// The spec's `HEAD` with `Prefer: count=exact` answers this `Content-Range`.
    func checkCount(_ path: String, _ range: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let response = try server.client().request(
            "HEAD", "/rest/v1" + path, headers: server.headers(nil, [("Accept-Profile", "spec"), ("Prefer", "count=exact")]))
        #expect(response.status == 200 && response.header("Content-Range") == range, "\(path): \(response.status)", sourceLocation: sourceLocation)
    }

    /// EmbedInnerJoinSpec "works with views" (many-to-one, one-to-many, many-to-many through a
    /// view junction, both ways) and "works alongside another embedding".
    @Test func innerJoinsThroughViews() throws {
        try check(
            "/books?select=title,authors!inner(name)&authors.name=eq.George%20Orwell", #"[{"title":"1984","authors":{"name":"George Orwell"}}]"#)
        try checkCount("/books?select=title,authors!inner(name)&authors.name=eq.George%20Orwell", "0-0/1")
        try check(
            "/authors?select=*,books!inner(*)&books.title=eq.1984",
            #"[{"id":1,"name":"George Orwell","books":[{"id":1,"title":"1984","publication_year":1949,"author_id":1,"first_publisher_id":1}]}]"#)
        try checkCount("/authors?select=*,books!inner(*)&books.title=eq.1984", "0-0/1")
        try check(
            "/actors?select=*,films!inner(*)&films.title=eq.douze%20commandements",
            #"[{"id":1,"name":"john","films":[{"id":12,"title":"douze commandements"}]}]"#)
        try check("/films?select=*,actors!inner(*)&actors.name=eq.john", #"[{"id":12,"title":"douze commandements","actors":[{"id":1,"name":"john"}]}]"#)
        try checkCount("/actors?select=*,films!inner(*)&films.title=eq.douze%20commandements", "0-0/1")
        try check(
            "/books?select=id,authors(name),publishers!inner(name)&id=gte.7",
            #"[{"id":7,"authors":{"name":"Harper Lee"},"publishers":{"name":"J. B. Lippincott & Co."}},{"id":8,"authors":{"name":"Kurt Vonnegut"},"publishers":{"name":"Delacorte"}},{"id":9,"authors":{"name":"Ken Kesey"},"publishers":{"name":"Viking Press & Signet Books"}}]"#
        )
        try checkCount("/books?select=id,authors(name),publishers!inner(name)&id=gte.7", "0-2/3")
        try checkCount("/books?select=id,publishers!inner(name),authors(name)&id=gte.7", "0-2/3")
    }

    /// EmbedDisambiguationSpec "m2m embed when there's a junction in an internal schema": a view
    /// of the junction is one; a junction only in another schema is none, even with a homonym.
    @Test func junctionsThroughViews() throws {
        try check(
            "/screens?select=labels(name)",
            #"[{"labels":[{"name":"fruit"}]},{"labels":[{"name":"vehicles"}]},{"labels":[{"name":"vehicles"},{"name":"fruit"}]}]"#)
        try check(
            "/actors?select=*,films(*)",
            #"[{"id":1,"name":"john","films":[{"id":12,"title":"douze commandements"}]},{"id":2,"name":"mary","films":[{"id":2001,"title":"odyssée de l'espace"}]}]"#
        )
        try check(
            "/end_1?select=end_2(*)",
            #"{"hint":null,"message":"Could not find a relationship between 'end_1' and 'end_2' in the schema cache","code":"PGRST200","details":"Searched for a foreign key relationship between 'end_1' and 'end_2' in the schema 'spec', but no matches were found."}"#,
            status: 400)
        try check(
            "/schauspieler?select=filme(*)",
            #"{"hint":null,"message":"Could not find a relationship between 'schauspieler' and 'filme' in the schema cache","code":"PGRST200","details":"Searched for a foreign key relationship between 'schauspieler' and 'filme' in the schema 'spec', but no matches were found."}"#,
            status: 400)
    }
}
