import Foundation
import Glibc

/// A private PostgreSQL cluster run from the system's PostgreSQL binaries: the default database
/// when none is configured, and the database of the test suite (one piece of code for both).
///
/// The cluster lives in `dataDirectory` and listens on a Unix socket inside it (TCP on loopback
/// only when a port is asked for). A second `start()` reuses the cluster, a stale
/// `postmaster.pid` left by a crash is cleared, and `stop()` shuts it down cleanly. PostgreSQL
/// refuses to run as root, so as root the server runs as the unprivileged `postgres` user
/// (created by Debian's postgresql package), which then owns the data folder.
public final class EmbeddedPostgres: Sendable {
    public struct Options: Sendable {
        /// Turn off fsync and friends: for throw-away test clusters only.
        public var durable: Bool = true
        /// Also listen on 127.0.0.1 at this port (nil: Unix socket only).
        public var tcpPort: Int? = nil
        /// Extra `-c name=value` server settings.
        public var settings: [String: String] = [:]
        public init() {}
    }

    public enum Failure: Error, CustomStringConvertible {
        case binariesNotFound(String)
        case commandFailed(command: String, status: Int32, output: String)
        case userMissing(String)

        public var description: String {
            switch self {
            case .binariesNotFound(let detail):
                return "PostgreSQL server binaries not found (\(detail)); install them with: apt-get install -y postgresql"
            case .commandFailed(let command, let status, let output):
                return "\(command) failed with status \(status):\n\(output)"
            case .userMissing(let user):
                return "running as root, but the system user '\(user)' to run PostgreSQL as does not exist (apt-get install -y postgresql creates it)"
            }
        }
    }

    public let dataDirectory: URL
    public let options: Options
    public let binDirectory: URL
    /// The Unix socket directory (inside the data folder's parent, so paths stay short).
    public var socketDirectory: URL { dataDirectory.appendingPathComponent("socket") }
    public var port: Int { options.tcpPort ?? 5432 }
    public let superuser = "postgres"
    private var runAsUser: String? { geteuid() == 0 ? "postgres" : nil }
    private var clusterDirectory: URL { dataDirectory.appendingPathComponent("data") }

    public init(dataDirectory: URL, options: Options = Options(), binDirectory: URL? = nil) throws {
        self.dataDirectory = dataDirectory.standardizedFileURL
        self.options = options
        self.binDirectory = try binDirectory ?? Self.findBinDirectory()
    }

    /// `pg_config --bindir` when it has `initdb` (Debian's points at the client-only folder),
    /// else the newest `/usr/lib/postgresql/<version>/bin`.
    public static func findBinDirectory() throws -> URL {
        let fileManager = FileManager.default
        if let output = try? run(["pg_config", "--bindir"], asUser: nil) {
            let candidate = URL(fileURLWithPath: output.trimmingCharacters(in: .whitespacesAndNewlines))
            if fileManager.isExecutableFile(atPath: candidate.appendingPathComponent("initdb").path) {
                return candidate
            }
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? fileManager.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap { Int($0) }
            .sorted(by: >)
        for version in versions {
            let candidate = URL(fileURLWithPath: "\(root)/\(version)/bin")
            if fileManager.isExecutableFile(atPath: candidate.appendingPathComponent("initdb").path) {
                return candidate
            }
        }
        throw Failure.binariesNotFound("looked at pg_config --bindir and \(root)/*/bin")
    }

    /// Creates the cluster if needed, starts it if it is not running, and waits until it accepts
    /// connections.
    public func start() throws {
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: socketDirectory, withIntermediateDirectories: true)
        if let user = runAsUser {
            guard (try? Self.run(["id", "-u", user], asUser: nil)) != nil else { throw Failure.userMissing(user) }
            try Self.run(["chown", "-R", "\(user):\(user)", dataDirectory.path], asUser: nil)
            try Self.run(["chmod", "0700", dataDirectory.path], asUser: nil)
        }
        if !fileManager.fileExists(atPath: clusterDirectory.appendingPathComponent("PG_VERSION").path) {
            try? fileManager.removeItem(at: clusterDirectory)
            try pgCommand(
                "initdb",
                [
                    "-D", clusterDirectory.path, "-U", superuser, "--auth=trust",
                    "--encoding=UTF8", "--locale=C", "--no-instructions"
                ])
        }
        if isRunning() { return }
        // Nothing answers on the socket, so the pid and socket lock files are stale (a crash, or
        // a pid since reused by another process, which would make PostgreSQL refuse to start).
        try? fileManager.removeItem(at: clusterDirectory.appendingPathComponent("postmaster.pid"))
        try? fileManager.removeItem(at: socketDirectory.appendingPathComponent(".s.PGSQL.\(port).lock"))
        // wal_level=logical: Realtime streams committed changes through logical replication.
        var serverOptions = [
            "-k", socketDirectory.path, "-p", String(port),
            "-c", "listen_addresses=\(options.tcpPort == nil ? "" : "127.0.0.1")",
            "-c", "TimeZone=UTC", "-c", "max_connections=200", "-c", "wal_level=logical"
        ]
        if !options.durable {
            serverOptions += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        }
        for (name, value) in options.settings.sorted(by: { $0.key < $1.key }) {
            serverOptions += ["-c", "\(name)=\(value)"]
        }
        let quoted = serverOptions.map { $0.contains(" ") || $0.isEmpty || $0.hasSuffix("=") ? "'\($0)'" : $0 }
        try pgCommand(
            "pg_ctl",
            [
                "-D", clusterDirectory.path, "-l", dataDirectory.appendingPathComponent("server.log").path,
                "-w", "-t", "60", "-o", quoted.joined(separator: " "), "start"
            ])
    }

    /// A hot standby of this running cluster in `folder`, not started yet: `pg_basebackup`
    /// with `-R` (it streams from this cluster's socket as the superuser) through the physical
    /// replication slot `slot`, created here. Same options as this cluster (a standby needs
    /// settings such as max_connections at least as high as its primary's).
    public func makeStandby(in folder: URL, slot: String) throws -> EmbeddedPostgres {
        let standby = try EmbeddedPostgres(dataDirectory: folder, options: options, binDirectory: binDirectory)
        try FileManager.default.createDirectory(at: standby.socketDirectory, withIntermediateDirectories: true)
        if let user = runAsUser {
            try Self.run(["chown", "-R", "\(user):\(user)", standby.dataDirectory.path], asUser: nil)
            try Self.run(["chmod", "0700", standby.dataDirectory.path], asUser: nil)
        }
        try pgCommand(
            "pg_basebackup",
            [
                "-h", socketDirectory.path, "-p", String(port), "-U", superuser, "-D", standby.clusterDirectory.path,
                "-R", "-X", "stream", "-C", "-S", slot, "--checkpoint=fast"
            ])
        return standby
    }

    /// True when this cluster's server accepts connections on its socket. (`pg_ctl status` only
    /// checks that the pid in `postmaster.pid` is alive, which a stale file can fake.)
    public func isRunning() -> Bool {
        guard FileManager.default.fileExists(atPath: clusterDirectory.appendingPathComponent("PG_VERSION").path) else { return false }
        return (try? pgCommand("pg_isready", ["-q", "-h", socketDirectory.path, "-p", String(port), "-t", "5"])) != nil
    }

    /// Stops the server (fast shutdown: open transactions are rolled back, data is safe).
    public func stop() throws {
        guard FileManager.default.fileExists(atPath: clusterDirectory.appendingPathComponent("postmaster.pid").path),
            (try? pgCommand("pg_ctl", ["-D", clusterDirectory.path, "status"])) != nil
        else { return }
        try pgCommand("pg_ctl", ["-D", clusterDirectory.path, "-w", "-t", "60", "-m", "fast", "stop"])
    }

    /// A libpq URL for a database of this cluster, over the Unix socket.
    public func url(database: String) -> String {
        let host =
            socketDirectory.path.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? socketDirectory.path
        return "postgresql://\(superuser)@/\(database)?host=\(host)&port=\(port)"
    }

    @discardableResult
    private func pgCommand(_ name: String, _ arguments: [String]) throws -> String {
        try Self.run([binDirectory.appendingPathComponent(name).path] + arguments, asUser: runAsUser)
    }

    /// Runs a command (as `user` through `runuser` when given) and returns its output; throws
    /// with the output when it exits non-zero.
    ///
    /// posix_spawn + waitpid rather than Foundation's `Process`, whose `waitUntilExit` was seen to
    /// hang here after the child had exited. Output goes to a temporary file, not a pipe, because
    /// `pg_ctl start` leaves the postmaster running with the inherited descriptors.
    @discardableResult
    static func run(_ command: [String], asUser user: String?) throws -> String {
        var arguments = command
        if let user { arguments = ["runuser", "-u", user, "--"] + arguments }
        let outputPath = NSTemporaryDirectory() + "onboard-cmd-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).log"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw Failure.commandFailed(command: arguments.joined(separator: " "), status: -1, output: String(cString: strerror(spawned)))
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exited = (status & 0x7f) == 0
        let code = exited ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        guard code == 0 else {
            throw Failure.commandFailed(command: arguments.joined(separator: " "), status: code, output: text)
        }
        return text
    }
}
