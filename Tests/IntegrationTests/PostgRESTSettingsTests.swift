import Foundation
import Postgres
import REST
import TestSupport
import Testing

/// PostgREST's settings in their three forms: from the environment, from the database (the login
/// role's `pgrst.*` settings in this database, and `db-pre-config`), and reloaded by
/// `NOTIFY pgrst, 'reload config'` without a restart.
@Suite("PostgREST settings", .serialized)
struct PostgRESTSettingsTests {
    /// A server over fixtures of this suite's own: five rows, a function returning them, one
    /// reading an app setting, one raising for a header, one calling a helper of another schema.
    static func server(_ configure: @escaping (inout PostgRESTSettings) -> Void = { _ in }) throws -> (TestServer, Connection) {
        let server = try TestServer { configure(&$0.postgrest) }
        let admin = try Connection(conninfo: server.databaseURL)
        try admin.execute(
            """
            CREATE TABLE public.st_items (id integer PRIMARY KEY);
            INSERT INTO public.st_items SELECT generate_series(1, 5);
            GRANT SELECT ON public.st_items TO anon, authenticated, service_role;
            CREATE FUNCTION public.st_all() RETURNS SETOF public.st_items LANGUAGE sql STABLE AS $$ SELECT * FROM public.st_items ORDER BY id $$;
            CREATE FUNCTION public.st_setting() RETURNS text LANGUAGE sql STABLE AS $$ SELECT current_setting('app.settings.greeting', true) $$;
            CREATE FUNCTION public.st_check() RETURNS void LANGUAGE plpgsql STABLE AS $$
            BEGIN
                IF current_setting('request.headers', true)::json->>'x-blocked' = 'yes' THEN
                    RAISE EXCEPTION 'blocked by the pre-request' USING ERRCODE = 'PT403', DETAIL = 'x-blocked';
                END IF;
            END $$;
            CREATE SCHEMA st_ext;
            GRANT USAGE ON SCHEMA st_ext TO anon, authenticated, service_role;
            CREATE FUNCTION st_ext.st_helper() RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'found' $$;
            CREATE FUNCTION public.st_uses_helper() RETURNS text LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN st_helper(); END $$;
            CREATE FUNCTION public.st_pre_config() RETURNS void LANGUAGE sql AS $$
                SELECT set_config('pgrst.server_timing_enabled', 'true', true), set_config('pgrst.db_max_rows', '1', true) $$;
            """)
        let http = server.client()
        #expect(
            eventually {
                try? admin.execute("NOTIFY pgrst, 'reload schema'")
                return (try? http.request("GET", "/rest/v1/st_items", headers: server.headers()).status) == 200
            })
        return (server, admin)
    }

    static func ids(_ response: TestResponse) -> [Int] {
        (response.json as? [[String: Any]])?.compactMap { $0["id"] as? Int } ?? []
    }

    /// `ALTER ROLE authenticator IN DATABASE <this one> SET pgrst.<name> = value` (the role requests
    /// log in as; this database only: the cluster is shared with other tests), then the reload. The value reaches the DDL
    /// through a bound setting and `%L`.
    static func setInDatabase(_ admin: Connection, _ name: String, _ value: String?) throws {
        if let value {
            _ = try admin.query("SELECT set_config('onboard.test_value', \(value), false)")
            try admin.execute(
                unsafeSQL:
                    "DO $$ BEGIN EXECUTE format('ALTER ROLE authenticator IN DATABASE %I SET pgrst.\(name) = %L', current_database(), current_setting('onboard.test_value')); END $$"
            )
        } else {
            try admin.execute(
                unsafeSQL: "DO $$ BEGIN EXECUTE format('ALTER ROLE authenticator IN DATABASE %I RESET pgrst.\(name)', current_database()); END $$")
        }
        try admin.execute("NOTIFY pgrst, 'reload config'")
    }

    @Test func maxRowsFromTheEnvironmentTheDatabaseAndAReload() throws {
        let (server, admin) = try Self.server { $0.maxRows = 2 }
        let http = server.client()
        let read = try http.request("GET", "/rest/v1/st_items?select=id&order=id", headers: server.headers(nil, [("Prefer", "count=exact")]))
        #expect(Self.ids(read) == [1, 2] && read.header("Content-Range") == "0-1/5", "\(read.text)")
        #expect(Self.ids(try http.request("GET", "/rest/v1/st_items?select=id&order=id&limit=1", headers: server.headers())) == [1])
        #expect(Self.ids(try http.request("GET", "/rest/v1/st_items?select=id&order=id&offset=3", headers: server.headers())) == [4, 5])
        #expect(Self.ids(try http.request("GET", "/rest/v1/rpc/st_all", headers: server.headers())) == [1, 2])
        // The database's setting wins, and a change is taken on reload.
        try Self.setInDatabase(admin, "db_max_rows", "3")
        #expect(try eventually { Self.ids(try http.request("GET", "/rest/v1/st_items?select=id&order=id", headers: server.headers())) == [1, 2, 3] })
        try Self.setInDatabase(admin, "db_max_rows", "4")
        #expect(try eventually { Self.ids(try http.request("GET", "/rest/v1/st_items?select=id&order=id", headers: server.headers())).count == 4 })
        // Removed from the database: the environment's again. A value it cannot use is refused
        // and the settings in force stay.
        try Self.setInDatabase(admin, "db_max_rows", "many")
        try Self.setInDatabase(admin, "db_max_rows", nil)
        #expect(try eventually { Self.ids(try http.request("GET", "/rest/v1/st_items?select=id&order=id", headers: server.headers())).count == 2 })
    }

    @Test func preConfigGivesSettingsFromAFunction() throws {
        let (server, admin) = try Self.server()
        let http = server.client()
        #expect(try http.request("GET", "/rest/v1/st_items", headers: server.headers()).header("Server-Timing") == nil)
        try Self.setInDatabase(admin, "db_pre_config", "public.st_pre_config")
        #expect(try eventually { try http.request("GET", "/rest/v1/st_items", headers: server.headers()).header("Server-Timing") != nil })
        let read = try http.request("GET", "/rest/v1/st_items?select=id&order=id", headers: server.headers())
        #expect(Self.ids(read) == [1])
        let timing = try #require(read.header("Server-Timing"))
        #expect(timing.contains("plan;dur=") && timing.contains("transaction;dur=") && timing.contains("response;dur="), "\(timing)")
    }

    @Test func preRequestRunsBeforeEveryStatement() throws {
        let (server, _) = try Self.server { $0.preRequest = .init("st_check") }
        let http = server.client()
        #expect(try http.request("GET", "/rest/v1/st_items", headers: server.headers()).status == 200)
        let blocked = try http.request("GET", "/rest/v1/st_items", headers: server.headers(nil, [("X-Blocked", "yes")]))
        #expect(blocked.status == 403 && blocked.jsonObject?["message"] as? String == "blocked by the pre-request", "\(blocked.text)")
        // Also on a write that decides between COMMIT and ROLLBACK (a worker's BEGIN … path).
        let user = try server.signUp()
        let write = try http.request(
            "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)",
            headers: server.headers(user.token, [("X-Blocked", "yes"), ("Accept", "application/vnd.pgrst.object+json")]),
            body: #"{"onboarding_state":"CHILD_INFO"}"#)
        #expect(write.status == 403, "\(write.text)")
    }

    @Test func appSettingsSearchPathAudienceAndVerbosity() throws {
        let (server, _) = try Self.server {
            $0.appSettings = [("app.settings.greeting", "hello")]
            $0.extraSearchPath = ["st_ext"]
            $0.jwtAudience = "other-app"
            $0.minimalErrors = true
        }
        let http = server.client()
        #expect(try http.request("GET", "/rest/v1/rpc/st_setting", headers: server.headers()).text == #""hello""#)
        #expect(try http.request("GET", "/rest/v1/rpc/st_uses_helper", headers: server.headers()).text == #""found""#)
        // A user's token says aud "authenticated": not this audience. Keys without aud pass.
        let user = try server.signUp()
        let refused = try http.request("GET", "/rest/v1/st_items", headers: server.headers(user.token))
        #expect(refused.status == 401 && refused.jsonObject?["message"] as? String == "JWT not in audience", "\(refused.text)")
        let unknown = try http.request("GET", "/rest/v1/st_items?select=nope", headers: server.headers())
        #expect(unknown.status == 400 && unknown.jsonObject?["details"] is NSNull && unknown.jsonObject?["hint"] is NSNull)
        #expect(unknown.jsonObject?["code"] as? String == "42703")
    }

    @Test func withoutSettingsNothingChanges() throws {
        let (server, _) = try Self.server()
        let http = server.client()
        let helper = try http.request("GET", "/rest/v1/rpc/st_uses_helper", headers: server.headers())
        #expect(helper.jsonObject?["code"] as? String == "42883", "\(helper.text)")
        #expect(Self.ids(try http.request("GET", "/rest/v1/st_items?select=id", headers: server.headers())).count == 5)
        #expect(try http.request("GET", "/rest/v1/rpc/st_setting", headers: server.headers()).text == "null")
    }

    /// `.explain()`: the plan of the statement the request would run, in JSON or text, with
    /// EXPLAIN's options; a write under `analyze` only where `db-tx-end` allows overrides, and it
    /// leaves nothing behind; off by default (406).
    @Test func plansWhenEnabled() throws {
        let (off, _) = try Self.server()
        let refused = try off.client().request("GET", "/rest/v1/st_items", headers: off.headers(nil, [("Accept", "application/vnd.pgrst.plan+json")]))
        #expect(refused.status == 406 && refused.jsonObject?["code"] as? String == "PGRST107", "\(refused.text)")

        let (server, admin) = try Self.server { $0.planEnabled = true }
        let http = server.client()
        let json = try http.request(
            "GET", "/rest/v1/st_items?select=id&id=gt.2", headers: server.headers(nil, [("Accept", "application/vnd.pgrst.plan+json; options=verbose")]))
        #expect(
            json.status == 200 && json.header("Content-Type") == #"application/vnd.pgrst.plan+json; for="application/json"; options=verbose; charset=utf-8"#)
        let plan = try #require((json.json as? [[String: Any]])?.first?["Plan"] as? [String: Any], "\(json.text)")
        #expect(plan["Node Type"] is String)
        // supabase-py's `.explain()` sends the text form with an empty options list.
        let text = try http.request("GET", "/rest/v1/st_items", headers: server.headers(nil, [("Accept", "application/vnd.pgrst.plan+text; options=")]))
        #expect(text.status == 200 && text.text.contains("Seq Scan on st_items"), "\(text.text)")
        #expect(text.header("Content-Type") == #"application/vnd.pgrst.plan+text; for="application/json"; charset=utf-8"#)
        let csv = try http.request("GET", "/rest/v1/st_items", headers: server.headers(nil, [("Accept", #"application/vnd.pgrst.plan; for="text/csv""#)]))
        #expect(csv.status == 200 && csv.header("Content-Type")?.contains(#"for="text/csv""#) == true, "\(csv.text)")
        // A write analysed for real would be a free try: refused under the default db-tx-end.
        _ = try admin.query("GRANT DELETE ON public.st_items TO service_role")
        let analyze = [("Accept", "application/vnd.pgrst.plan+json; options=analyze")]
        let refusedWrite = try http.request("DELETE", "/rest/v1/st_items?id=eq.1", headers: server.headers(server.serviceKey, analyze))
        #expect(refusedWrite.status == 406 && refusedWrite.jsonObject?["code"] as? String == "PGRST107", "\(refusedWrite.text)")
        #expect(try admin.query("SELECT count(*) FROM public.st_items").scalar == "5")
        // Where a client may roll back anyway, it is analysed and rolled back.
        let (overridable, overridableAdmin) = try Self.server {
            $0.planEnabled = true
            $0.transactionEnd = .commitAllowOverride
        }
        _ = try overridableAdmin.query("GRANT DELETE ON public.st_items TO service_role")
        let analysed = try overridable.client().request(
            "DELETE", "/rest/v1/st_items?id=eq.1", headers: overridable.headers(overridable.serviceKey, analyze))
        #expect(analysed.status == 200 && analysed.text.contains("Actual Rows"), "\(analysed.text)")
        #expect(try overridableAdmin.query("SELECT count(*) FROM public.st_items").scalar == "5")
    }
}
