import App
import Foundation
import Migrations
import Postgres
import TestSupport
import Testing

/// What a new operator's set-up and an attacker's cheap tries meet: keys of the wrong role,
/// mails that go nowhere, a binary without its migrations, tokens left in the checkout, plans
/// that would make a write a free try, and Broadcast over HTTP without a budget.
@Suite("Deployment traps and free tries", .serialized)
struct DeploymentGuardTests {
    static let secret = String(repeating: "k", count: 40)

    static func environment(anon: String, service: String) -> [String: String] {
        ["JWT_SECRET": secret, "DATABASE_URL": "postgresql://u@db/app", "ANON_KEY": anon, "SERVICE_ROLE_KEY": service]
    }

    @Test func keysOfAnotherRoleStopTheStart() throws {
        let bytes = Array(Self.secret.utf8)
        let anon = APIKey.make(role: "anon", secret: bytes)
        let service = APIKey.make(role: "service_role", secret: bytes)
        _ = try ServerConfig(environment: Self.environment(anon: anon, service: service), flags: ServeFlags()) { _ in ("", "", "") }
        // An opaque key carries no role: it stands for its own.
        _ = try ServerConfig(environment: Self.environment(anon: "opaque-anon-key", service: service), flags: ServeFlags()) { _ in ("", "", "") }
        for (anonKey, serviceKey, named) in [(service, service, "ANON_KEY"), (anon, anon, "SERVICE_ROLE_KEY")] {
            do {
                _ = try ServerConfig(environment: Self.environment(anon: anonKey, service: serviceKey), flags: ServeFlags()) { _ in ("", "", "") }
                Issue.record("\(named) of another role was accepted")
            } catch let error as ConfigurationError {
                #expect(error.description.hasPrefix(named), "\(error)")
            }
        }
    }

    @Test func mailsWithoutAMailServerAreAnnouncedOnceAtStart() throws {
        let log = CapturedLog()
        _ = try TestServer(log: log)
        let said = log.entries.filter { $0.message.hasPrefix("no mail server") }
        #expect(said.count == 1 && said.first?.level == .warning, "\(log.entries.map(\.message))")
    }

    @Test func aMissingMigrationsFolderSaysWhereItIsLooked() throws {
        let missing = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("onboard-no-migrations-\(UUID().uuidString)")
        #expect(throws: MigrationError.missingDirectory(missing.path)) { try Migrator(directory: missing).migrations() }
        let text = MigrationError.missingDirectory(missing.path).description
        #expect(text.contains(missing.path) && text.contains("--migrations-dir") && text.contains("ONBOARD_MIGRATIONS_DIR"))
    }

    @Test func theFirstFiveMinutesLeaveNoTokensForGit() throws {
        let readme = try String(contentsOf: TestPostgres.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let written = readme.matches(of: #/> ([A-Za-z0-9_./-]+\.json)/#).map { String($0.output.1) }
        #expect(written.contains("session.json"))
        let git = Process()
        git.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        git.arguments = ["git", "-C", TestPostgres.packageRoot.path, "check-ignore", "--no-index", "-q"] + written
        try git.run()
        git.waitUntilExit()
        #expect(git.terminationStatus == 0, "git does not ignore every file the README writes: \(written)")
    }

    /// EXPLAIN ANALYZE runs a call and rolls it back: under a `db-tx-end` without overrides that
    /// would be a free, uncounted try of a throttled function (a join code), so it is refused.
    @Test func anAnalyzedCallIsNoFreeTry() throws {
        let server = try TestServer { $0.postgrest.planEnabled = true }
        let owner = try server.signUp()
        let guesser = try server.signUp()
        let analyze = [("Accept", "application/vnd.pgrst.plan+json; options=analyze")]
        #expect(try server.post("/rest/v1/rpc/create_family", #"{"name":"Plan"}"#, token: owner.token).status == 200)
        for _ in 0..<3 {
            let tried = try server.post("/rest/v1/rpc/join_family", #"{"code":"AAAAA-BBBBB"}"#, token: guesser.token, headers: analyze)
            #expect(tried.status == 406 && tried.jsonObject?["code"] as? String == "PGRST107", "\(tried.text)")
        }
        // A read is still analysed; without `analyze` a call's plan is only planned.
        #expect(try server.get("/rest/v1/children", token: owner.token, headers: analyze).status == 200)
        let planned = try server.post(
            "/rest/v1/rpc/join_family", #"{"code":"AAAAA-BBBBB"}"#, token: guesser.token, headers: [("Accept", "application/vnd.pgrst.plan+json")])
        #expect(planned.status == 200, "\(planned.text)")
    }

    @Test func broadcastOverHTTPSpendsTheTenantsBudget() throws {
        let server = try TestServer { $0.realtimeMaxEventsPerSecond = 3 }
        let http = server.client()
        let path = "/realtime/v1/api/broadcast"
        func messages(_ count: Int) -> String {
            #"{"messages":["# + (0..<count).map { #"{"topic":"budget","event":"e","payload":{"n":\#($0)}}"# }.joined(separator: ",") + "]}"
        }
        // More than a second's budget at once: refused whole, every time.
        let over = try http.request("POST", path, headers: server.headers(server.serviceKey), body: messages(4))
        #expect(over.status == 429 && over.text == #"{"message":"You have exceeded your rate limit"}"# && over.header("Retry-After") == "1")
        // The budget spent, the next message waits for the next second (retried if a second
        // boundary fell between the two requests).
        #expect(
            try eventually {
                let spent = try http.request("POST", path, headers: server.headers(), body: messages(3))
                let next = try http.request("POST", path + "/budget/events/e", headers: server.headers(), body: #"{"n":9}"#)
                return spent.status == 202 && next.status == 429
            })
    }
}
