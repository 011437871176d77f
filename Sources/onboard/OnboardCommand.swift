import App
import ArgumentParser
import Foundation
import Logging
import Migrations
import Postgres

@main
struct OnboardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "onboard",
        abstract: "A self-hostable backend speaking Supabase's Auth, REST and Realtime dialects.",
        subcommands: [Serve.self, Migrate.self, Keys.self, Gen.self, BackfillProfiles.self],
        defaultSubcommand: Serve.self
    )
}

/// `--database-url` / `DATABASE_URL`, shared by every command that needs the database.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"), help: "PostgreSQL URL (env DATABASE_URL). Unset: the embedded cluster under --data-dir.")
    var databaseURL: String?

    @Option(name: .customLong("data-dir"), help: "Folder of the embedded PostgreSQL cluster (env ONBOARD_DATA_DIR).")
    var dataDirectory: String?

    @Option(name: .customLong("migrations-dir"), help: "Folder of the SQL migrations (env ONBOARD_MIGRATIONS_DIR; default ./migrations).")
    var migrationsDirectory: String?

    var location: DatabaseLocation {
        let environment = ProcessInfo.processInfo.environment
        return DatabaseLocation.resolve(
            url: databaseURL ?? environment["DATABASE_URL"],
            embeddedFolder: dataDirectory ?? environment["ONBOARD_DATA_DIR"] ?? ".onboard/postgres")
    }

    var migrations: URL {
        DatabaseBootstrap.migrationsDirectory(migrationsDirectory ?? ProcessInfo.processInfo.environment["ONBOARD_MIGRATIONS_DIR"])
    }
}

/// Chooses the log format once per process: `LOG_FORMAT=json` gives JSON lines, anything else
/// swift-log's default text lines.
let loggingBootstrap: Void = {
    if ProcessInfo.processInfo.environment["LOG_FORMAT"] == "json" {
        LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
    }
}()

func makeLogger(_ label: String) -> Logger {
    _ = loggingBootstrap
    var logger = Logger(label: label)
    logger.logLevel = Logger.Level(rawValue: ProcessInfo.processInfo.environment["LOG_LEVEL"] ?? "info") ?? .info
    return logger
}

/// Prints an error the way an operator wants it and exits non-zero.
func fail(_ error: any Error) -> ExitCode {
    FileHandle.standardError.write(Data("error: \(logText(error))\n".utf8))
    return ExitCode.failure
}
