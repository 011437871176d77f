import App
import Foundation
import Postgres
import TestSupport
import Testing

/// REST's requests log in as `authenticator`, as PostgREST's do: a role that can only switch to
/// the API roles, so that SQL run by a request (a function it calls, a mistake in built SQL)
/// never holds a superuser's rights; the `pgrst.*` settings are that role's.
@Suite("Least privilege: the request login", .serialized)
struct LeastPrivilegeTests {
    let server: TestServer
    let admin: Connection

    init() throws {
        server = try TestServer()
        admin = try Connection(conninfo: server.databaseURL)
        try admin.execute(
            """
            CREATE FUNCTION public.lp_session() RETURNS json LANGUAGE sql STABLE AS $$
                SELECT json_build_object('session_user', session_user, 'current_user', current_user) $$;
            CREATE FUNCTION public.lp_reset_role() RETURNS json LANGUAGE plpgsql VOLATILE AS $$
            BEGIN
                RESET ROLE;
                RETURN json_build_object('session_user', session_user, 'current_user', current_user,
                    'superuser', (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user));
            END $$;
            GRANT EXECUTE ON FUNCTION public.lp_session(), public.lp_reset_role() TO anon, authenticated, service_role;
            """)
        let http = server.client()
        // Again until the schema listener, which may not listen yet, has reloaded.
        #expect(
            eventually {
                try? admin.execute("NOTIFY pgrst, 'reload schema'")
                return (try? http.request("GET", "/rest/v1/rpc/lp_session", headers: server.headers()).status) == 200
            })
    }

    @Test func aRequestRunsAsTheAPIRoleOverTheAuthenticatorLogin() throws {
        let user = try server.signUp()
        let http = server.client()
        // A read (the pipelined read connections) and a call (the write connections or a worker).
        let read = try http.request("GET", "/rest/v1/rpc/lp_session", headers: server.headers(user.token))
        #expect(read.jsonObject?["session_user"] as? String == "authenticator", "\(read.text)")
        #expect(read.jsonObject?["current_user"] as? String == "authenticated", "\(read.text)")
        for token in [user.token, server.serviceKey, server.anonKey] {
            let reset = try http.request("POST", "/rest/v1/rpc/lp_reset_role", headers: server.headers(token), body: "{}")
            #expect(reset.status == 200, "\(reset.text)")
            // RESET ROLE returns to the login, which is no superuser.
            #expect(reset.jsonObject?["session_user"] as? String == "authenticator", "\(reset.text)")
            #expect(reset.jsonObject?["current_user"] as? String == "authenticator", "\(reset.text)")
            #expect(reset.jsonObject?["superuser"] as? Bool == false, "\(reset.text)")
        }
    }

    @Test func theRequestLoginCannotBecomeASuperuser() throws {
        #expect(server.application.requestLogin.role == "authenticator")
        let login = try Connection(conninfo: server.application.requestLogin.url)
        #expect(try login.query("SELECT session_user::text").scalar == "authenticator")
        for statement in ["SET ROLE postgres", "SET SESSION AUTHORIZATION postgres", "COPY (SELECT 1) TO PROGRAM 'true'", "SELECT pg_read_file('PG_VERSION')"] {
            #expect(throws: PostgresError.self, "\(statement)") { try login.execute(unsafeSQL: statement) }
        }
        // Only the API roles are open to it.
        for role in ["anon", "authenticated", "service_role"] {
            try login.execute(unsafeSQL: "SET ROLE \(role)")
            try login.execute(unsafeSQL: "RESET ROLE")
        }
    }

    @Test func theLoginRolesSettingsApplyAsPostgRESTReadsThem() throws {
        // supabase-swift's fixture: `ALTER ROLE authenticator SET pgrst.db_tx_end …` (here in
        // this database only: the cluster is shared).
        let http = server.client()
        func patch(_ user: (id: String, token: String, refresh: String)) throws -> TestResponse {
            try http.request(
                "PATCH", "/rest/v1/user_profiles?id=eq.\(user.id)",
                headers: server.headers(user.token, [("Prefer", "return=representation, tx=rollback")]), body: #"{"onboarding_state":"REVIEW"}"#)
        }
        func state(_ user: (id: String, token: String, refresh: String)) throws -> String? {
            try http.request("GET", "/rest/v1/user_profiles?select=onboarding_state", headers: server.headers(user.token)).jsonArray?.first?[
                "onboarding_state"] as? String
        }
        let before = try server.signUp()
        #expect(try patch(before).header("Preference-Applied") == "return=representation")
        #expect(try state(before) == "REVIEW")
        try admin.execute(
            unsafeSQL:
                "DO $$ BEGIN EXECUTE format('ALTER ROLE authenticator IN DATABASE %I SET pgrst.db_tx_end = %L', current_database(), 'commit-allow-override'); END $$"
        )
        try admin.execute("NOTIFY pgrst, 'reload config'")
        // A new user for each try until the reload has taken the setting: that try rolled back.
        var after = try server.signUp()
        #expect(
            try eventually {
                after = try server.signUp()
                return try patch(after).header("Preference-Applied") == "return=representation, tx=rollback"
            })
        #expect(try state(after) == "NOT_STARTED")
    }

    @Test(arguments: [
        ("postgresql://postgres@/onboard?host=%2Ftmp%2Fs&port=5432", "postgresql://authenticator@/onboard?host=%2Ftmp%2Fs&port=5432"),
        ("postgresql://postgres:se%40cret@db:5432/app", "postgresql://authenticator@db:5432/app"),
        ("postgres://u@h/d?user=root&password=x&sslmode=require", "postgres://authenticator@h/d?sslmode=require"),
        ("postgresql://h", "postgresql://authenticator@h"),
        ("host=/tmp dbname=app user=postgres", "host=/tmp dbname=app user=postgres user='authenticator'")
    ])
    func theRequestURLNamesTheRoleAndNoOtherPassword(given: String, expected: String) {
        #expect(RequestLogin.url(given, role: "authenticator", password: nil) == expected)
    }

    @Test func aPasswordIsEncodedIntoTheRequestURL() {
        #expect(
            RequestLogin.url("postgresql://postgres@db/app", role: "authenticator", password: "p@ss/word") == "postgresql://authenticator:p%40ss%2Fword@db/app")
        #expect(RequestLogin.url("dbname=app", role: "authenticator", password: "it's") == #"dbname=app user='authenticator' password='it\'s'"#)
    }
}
