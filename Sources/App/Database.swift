import EmbeddedPostgres
import Foundation
import Logging
import Migrations
import Postgres

/// Where the database is: a URL given by the operator, or the embedded cluster.
public enum DatabaseLocation: Sendable, Equatable {
    case url(String)
    /// The private cluster under this folder (default `.onboard/postgres`).
    case embedded(folder: String)

    /// `--database-url` / `DATABASE_URL` when set, else the embedded cluster.
    public static func resolve(url: String?, embeddedFolder: String = ".onboard/postgres") -> DatabaseLocation {
        if let url, !url.isEmpty { return .url(url) }
        return .embedded(folder: embeddedFolder)
    }
}

/// A database ready for use: its URL, and the embedded cluster if we started one (to stop it last).
public struct PreparedDatabase: Sendable {
    public let url: String
    public let cluster: EmbeddedPostgres?
    /// The embedded cluster was already running before us (then we leave it running).
    public let clusterWasRunning: Bool

    /// Stops the embedded cluster if this process started it.
    public func stopCluster() throws {
        if let cluster, !clusterWasRunning { try cluster.stop() }
    }
}

public enum DatabaseBootstrap {
    /// The database name the embedded default uses.
    public static let embeddedDatabaseName = "onboard"

    /// Starts the embedded cluster when needed and creates its database; a URL is used as given.
    public static func prepare(_ location: DatabaseLocation, logger: Logger) throws -> PreparedDatabase {
        switch location {
        case .url(let url):
            return PreparedDatabase(url: url, cluster: nil, clusterWasRunning: true)
        case .embedded(let folder):
            let cluster = try EmbeddedPostgres(dataDirectory: URL(fileURLWithPath: folder, isDirectory: true))
            let wasRunning = cluster.isRunning()
            if !wasRunning {
                logger.info("starting embedded PostgreSQL", metadata: ["folder": "\(cluster.dataDirectory.path)"])
            }
            try cluster.start()
            try createDatabaseIfMissing(cluster: cluster, name: embeddedDatabaseName)
            return PreparedDatabase(url: cluster.url(database: embeddedDatabaseName), cluster: cluster, clusterWasRunning: wasRunning)
        }
    }

    public static func createDatabaseIfMissing(cluster: EmbeddedPostgres, name: String) throws {
        let admin = try Connection(conninfo: cluster.url(database: "postgres"))
        let exists = try admin.query("SELECT 1 FROM pg_database WHERE datname = \(name)")
        if exists.isEmpty {
            try admin.execute(unsafeSQL: "CREATE DATABASE \(quoteIdentifier(name))")
        }
    }

    /// The `migrations/` folder: the given one, else `./migrations`, else the one beside the
    /// executable's folder (a packaged install).
    public static func migrationsDirectory(_ given: String?) -> URL {
        if let given, !given.isEmpty { return URL(fileURLWithPath: given, isDirectory: true) }
        let local = URL(fileURLWithPath: "migrations", isDirectory: true)
        if FileManager.default.fileExists(atPath: local.path) { return local }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("migrations", isDirectory: true)
        return FileManager.default.fileExists(atPath: beside.path) ? beside : local
    }
}
