import App
import ArgumentParser
import Foundation
import Migrations
import Postgres

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply, list, verify or create SQL migrations.",
        subcommands: [Up.self, Status.self, Verify.self, New.self]
    )

    /// Runs `body` with a connection to the configured (or embedded) database.
    static func withDatabase<T>(_ options: DatabaseOptions, _ body: (Connection) throws -> T) throws -> T {
        let database = try DatabaseBootstrap.prepare(options.location, logger: makeLogger("onboard.migrate"))
        defer { try? database.stopCluster() }
        let connection = try Connection(conninfo: database.url)
        return try body(connection)
    }

    struct Up: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Apply pending migrations, each in its own transaction.")
        @OptionGroup var database: DatabaseOptions
        @Flag(help: "Show what would run, change nothing.") var dryRun = false

        func run() throws {
            do {
                let migrator = Migrator(directory: database.migrations)
                let environment = ProcessInfo.processInfo.environment
                let applied = try Migrate.withDatabase(database) { connection in
                    let applied = try migrator.up(connection, dryRun: dryRun) { print($0) }
                    // The request role's password, when given, as `serve` sets it (compose's
                    // one-shot migration gives it the database's).
                    if !dryRun, let password = environment["DB_REQUEST_PASSWORD"], !password.isEmpty {
                        let role = environment["DB_REQUEST_ROLE"].flatMap { $0.isEmpty ? nil : $0 } ?? "authenticator"
                        try RequestLogin.setPassword(connection, role: role, password: password)
                    }
                    return applied
                }
                if dryRun {
                    print(applied.isEmpty ? "nothing to apply" : applied.map { "would apply \($0.fileName)" }.joined(separator: "\n"))
                } else if applied.isEmpty {
                    print("nothing to apply: database is up to date")
                }
            } catch {
                throw fail(error)
            }
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List applied and pending migrations.")
        @OptionGroup var database: DatabaseOptions

        func run() throws {
            do {
                let states = try Migrate.withDatabase(database) { try Migrator(directory: database.migrations).status($0) }
                print(MigrationTable.render(states))
                if states.contains(where: { $0.kind == .changed || $0.kind == .missing }) { throw ExitCode.failure }
            } catch let exit as ExitCode {
                throw exit
            } catch {
                throw fail(error)
            }
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Fail if an applied migration's file changed on disk.")
        @OptionGroup var database: DatabaseOptions

        func run() throws {
            do {
                try Migrate.withDatabase(database) { try Migrator(directory: database.migrations).verify($0) }
                print("ok: every applied migration matches its file")
            } catch {
                throw fail(error)
            }
        }
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an empty, timestamped migration file.")
        @Argument(help: "What the migration does, e.g. add_families") var name: String
        @Option(name: .customLong("migrations-dir"), help: "Folder of the SQL migrations (default ./migrations).")
        var migrationsDirectory: String?

        func run() throws {
            do {
                let file = try Migrator.create(name: name, in: DatabaseBootstrap.migrationsDirectory(migrationsDirectory))
                print(file.path)
            } catch {
                throw fail(error)
            }
        }
    }
}

struct BackfillProfiles: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backfill-profiles",
        abstract: "Give every existing user without a profile one (for users who signed up before onboarding existed).",
        discussion:
            "Existing users are assumed to have finished onboarding, as the seed decided: their new profile is COMPLETE. Use --state NOT_STARTED to send them through onboarding instead."
    )
    @OptionGroup var database: DatabaseOptions
    @Option(help: "State for the new profiles: COMPLETE (existing users skip onboarding) or NOT_STARTED.") var state = "COMPLETE"

    func validate() throws {
        guard ["COMPLETE", "NOT_STARTED"].contains(state) else { throw ValidationError("--state must be COMPLETE or NOT_STARTED") }
    }

    func run() throws {
        do {
            let created = try Migrate.withDatabase(database) { connection in
                try connection.query(
                    """
                    INSERT INTO public.user_profiles (id, onboarding_state)
                    SELECT id, \(state) FROM auth.users
                    ON CONFLICT (id) DO NOTHING
                    """
                ).affectedRows ?? 0
            }
            print("created \(created) profile(s) with state \(state)")
        } catch {
            throw fail(error)
        }
    }
}

/// `migrate status` output: one line per version with a clear marker.
enum MigrationTable {
    static func render(_ states: [MigrationState]) -> String {
        if states.isEmpty { return "no migrations" }
        var lines = ["  version         state     applied at (UTC)     ms  name"]
        for state in states {
            let marker: String
            switch state.kind {
            case .applied: marker = "[x]"
            case .pending: marker = "[ ]"
            case .changed: marker = "[!]"
            case .missing: marker = "[?]"
            }
            let appliedAt = state.appliedAt ?? "-"
            let duration = state.durationMilliseconds.map(String.init) ?? "-"
            lines.append(
                "\(marker) \(state.version)  \(state.kind.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0))  \(appliedAt.padding(toLength: 19, withPad: " ", startingAt: 0))  \(duration.leftPadded(4))  \(state.name)"
            )
        }
        let pending = states.filter { $0.kind == .pending }.count
        lines.append(
            "\(states.count - pending) applied, \(pending) pending"
                + (states.contains { $0.kind == .changed } ? "; [!] = changed on disk since applied (run migrate verify)" : ""))
        return lines.joined(separator: "\n")
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
