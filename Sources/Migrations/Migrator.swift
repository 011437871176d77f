import Foundation
import Postgres

/// One `migrations/YYYYMMDDHHMMSS_name.sql` file.
public struct Migration: Sendable, Equatable {
    public let version: String
    public let name: String
    public let fileName: String
    public let sql: String
}

/// What `migrate status` shows for one version.
public struct MigrationState: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case applied, pending
        /// Applied, but the file on disk no longer has the checksum recorded then.
        case changed
        /// Recorded as applied, but the file is gone.
        case missing
    }
    public let version: String
    public let name: String
    public let kind: Kind
    public let appliedAt: String?
    public let durationMilliseconds: Int?
}

public enum MigrationError: Error, Equatable, CustomStringConvertible {
    case badFileName(String)
    case duplicateVersion(String)
    case checksumMismatch([String])
    case failed(file: String, line: Int?, error: PostgresError)
    /// The folder of migrations is not there (a binary copied without it).
    case missingDirectory(String)

    public var description: String {
        switch self {
        case .badFileName(let name):
            return "migration file name '\(name)' is not YYYYMMDDHHMMSS_name.sql"
        case .duplicateVersion(let version):
            return "two migration files share version \(version)"
        case .checksumMismatch(let files):
            return
                "applied migration(s) changed on disk since they ran: \(files.joined(separator: ", ")) — write a new migration instead of editing an applied one"
        case .failed(let file, let line, let error):
            var text = "migration \(file) failed"
            if let line { text += " at line \(line)" }
            text += ": \(error.message)"
            if let sqlState = error.sqlState { text += " (SQLSTATE \(sqlState))" }
            if let detail = error.detail { text += "\nDETAIL: \(detail)" }
            if let hint = error.hint { text += "\nHINT: \(hint)" }
            return text + "\nNothing of this file was applied."
        case .missingDirectory(let path):
            return
                "no migrations folder at \(path): onboard applies the SQL files of the repository's migrations/ folder, which a binary does not carry. "
                + "Run it from the repository's folder, copy migrations/ beside the binary's bin/ folder (<prefix>/migrations), "
                + "or name the folder with --migrations-dir or ONBOARD_MIGRATIONS_DIR"
        }
    }
}

/// Applies `migrations/*.sql` in file-name order, each file in its own transaction, and records
/// (version, name, sha256, applied_at, duration) in `onboard_migrations.schema_migrations`.
/// Runners serialise on an advisory lock (as golang-migrate does), so concurrent `up`s apply
/// each file exactly once.
public struct Migrator: Sendable {
    public let directory: URL
    /// Arbitrary constant naming the migrations lock ("onboard" in ASCII).
    static let advisoryLockKey = 0x6f6e626f617264

    public init(directory: URL) {
        self.directory = directory
    }

    /// Reads and orders the migration files.
    public func migrations() throws -> [Migration] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw MigrationError.missingDirectory(directory.path)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".sql") }
            .sorted()
        var seen = Set<String>()
        return try names.map { fileName in
            let stem = fileName.dropLast(4)
            let parts = stem.split(separator: "_", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 14, parts[0].allSatisfy(\.isASCII), parts[0].allSatisfy(\.isNumber) else {
                throw MigrationError.badFileName(fileName)
            }
            let version = String(parts[0])
            guard seen.insert(version).inserted else { throw MigrationError.duplicateVersion(version) }
            let sql = try String(contentsOf: directory.appendingPathComponent(fileName), encoding: .utf8)
            return Migration(version: version, name: String(parts[1]), fileName: fileName, sql: sql)
        }
    }

    /// Applied and pending migrations, oldest first.
    public func status(_ connection: Connection) throws -> [MigrationState] {
        try ensureTable(connection)
        return try states(connection, files: migrations())
    }

    /// Throws `checksumMismatch` naming every applied file that changed on disk.
    public func verify(_ connection: Connection) throws {
        try ensureTable(connection)
        let changed = try states(connection, files: migrations()).filter { $0.kind == .changed }
        if !changed.isEmpty { throw MigrationError.checksumMismatch(changed.map { "\($0.version)_\($0.name).sql" }) }
    }

    /// Applies the pending migrations (or, with `dryRun`, only returns them) and returns those
    /// this runner applied. Each file runs in its own transaction that first takes a
    /// transaction-level advisory lock and re-checks the file is still pending, so concurrent
    /// runners apply each file exactly once, in order — and no session state is needed, which
    /// keeps it safe behind PgBouncer in transaction mode.
    @discardableResult
    public func up(_ connection: Connection, dryRun: Bool = false, log: (String) -> Void = { _ in }) throws -> [Migration] {
        try ensureTable(connection)
        let files = try migrations()
        let states = try states(connection, files: files)
        let changed = states.filter { $0.kind == .changed }
        if !changed.isEmpty { throw MigrationError.checksumMismatch(changed.map { "\($0.version)_\($0.name).sql" }) }
        let pendingVersions = Set(states.filter { $0.kind == .pending }.map(\.version))
        let pending = files.filter { pendingVersions.contains($0.version) }
        if dryRun { return pending }
        var applied: [Migration] = []
        for migration in pending {
            let started = Date()
            do {
                let milliseconds = try connection.withTransaction { connection -> Int? in
                    _ = try connection.query("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))")
                    let done = try connection.query("SELECT 1 FROM onboard_migrations.schema_migrations WHERE version = \(migration.version)")
                    // Another runner applied it while this one waited for the lock.
                    guard done.count == 0 else { return nil }
                    try connection.execute(unsafeSQL: migration.sql)
                    let milliseconds = Int(Date().timeIntervalSince(started) * 1000)
                    _ = try connection.query(
                        """
                        INSERT INTO onboard_migrations.schema_migrations (version, name, checksum, duration_ms)
                        VALUES (\(migration.version), \(migration.name), encode(sha256(convert_to(\(migration.sql), 'UTF8')), 'hex'), \(milliseconds))
                        """)
                    return milliseconds
                }
                guard let milliseconds else { continue }
                applied.append(migration)
                log("applied \(migration.fileName) (\(milliseconds) ms)")
            } catch let error as PostgresError {
                throw MigrationError.failed(file: migration.fileName, line: error.position.map { Self.line(of: $0, in: migration.sql) }, error: error)
            }
        }
        return applied
    }

    /// Creates `migrations/<UTC timestamp>_<name>.sql` with a header comment.
    public static func create(name: String, in directory: URL, now: Date = Date()) throws -> URL {
        let slug = name.lowercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
        guard !slug.isEmpty, slug.contains(where: { $0 != "_" }) else { throw MigrationError.badFileName(name) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss"
        let file = directory.appendingPathComponent("\(formatter.string(from: now))_\(slug).sql")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard !FileManager.default.fileExists(atPath: file.path) else { throw MigrationError.duplicateVersion(file.lastPathComponent) }
        try "-- \(name)\n-- Runs in one transaction; do not add BEGIN/COMMIT.\n\n".write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    private func ensureTable(_ connection: Connection) throws {
        if try connection.query("SELECT to_regclass('onboard_migrations.schema_migrations') IS NOT NULL").first?.bool(0) == true { return }
        // Concurrent first runs may race on CREATE ... IF NOT EXISTS; the lock makes it safe.
        try connection.withTransaction { connection in
            _ = try connection.query("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey + 1))")
            try connection.execute(
                """
                CREATE SCHEMA IF NOT EXISTS onboard_migrations;
                CREATE TABLE IF NOT EXISTS onboard_migrations.schema_migrations (
                    version     text PRIMARY KEY,
                    name        text NOT NULL,
                    checksum    text NOT NULL,
                    applied_at  timestamptz NOT NULL DEFAULT now(),
                    duration_ms integer NOT NULL
                );
                """)
        }
    }

    private func states(_ connection: Connection, files: [Migration]) throws -> [MigrationState] {
        let applied = try connection.query(
            """
            SELECT m.version, m.name, m.checksum = encode(sha256(convert_to(f.sql, 'UTF8')), 'hex') AS same,
                   f.sql IS NOT NULL AS present,
                   to_char(m.applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS applied_at, m.duration_ms
            FROM onboard_migrations.schema_migrations m
            LEFT JOIN unnest(\(array: files.map(\.version))::text[], \(array: files.map(\.sql))::text[]) AS f(version, sql)
                   ON f.version = m.version
            ORDER BY m.version
            """)
        var result: [MigrationState] = []
        var appliedVersions = Set<String>()
        for row in 0..<applied.count {
            let version = applied[row, "version"]!
            appliedVersions.insert(version)
            let kind: MigrationState.Kind = applied[row].bool("present") == false ? .missing : (applied[row].bool("same") == true ? .applied : .changed)
            result.append(
                MigrationState(
                    version: version, name: applied[row, "name"]!, kind: kind,
                    appliedAt: applied[row, "applied_at"],
                    durationMilliseconds: applied[row, "duration_ms"].flatMap { Int($0) }))
        }
        for file in files where !appliedVersions.contains(file.version) {
            result.append(MigrationState(version: file.version, name: file.name, kind: .pending, appliedAt: nil, durationMilliseconds: nil))
        }
        return result.sorted { $0.version < $1.version }
    }

    /// 1-based line of a 1-based character position.
    static func line(of position: Int, in text: String) -> Int {
        1 + text.prefix(max(0, position - 1)).filter { $0 == "\n" }.count
    }
}
