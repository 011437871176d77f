import Foundation
import Glibc

/// The real `onboard serve` binary in a process of its own, for tests that kill it (SIGKILL: no
/// shutdown code runs) and start it again. It listens on a free port it reports in its log.
public final class ServerProcess: @unchecked Sendable {  // pid and port are set once in init
    public let pid: pid_t
    public let port: Int
    public let log: String

    /// The executable built beside the tests (`swift build --build-tests`).
    public static func binary() throws -> String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("onboard")
        let fallback = TestPostgres.packageRoot.appendingPathComponent(".build/debug/onboard")
        guard let path = [beside.path, fallback.path].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestHTTPError.protocolError("the onboard executable is not built beside the tests (swift build --build-tests)")
        }
        return path
    }

    /// Starts `onboard serve --port 0` with `environment` (plus PATH and LOG_LEVEL=notice) and
    /// waits until it serves.
    public init(environment: [String: String], timeout: Double = 60) throws {
        let path = try Self.binary()
        log = NSTemporaryDirectory() + "onboard-process-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
        var environment = environment
        environment["PATH"] = environment["PATH"] ?? "/usr/bin:/bin"
        environment["LOG_LEVEL"] = environment["LOG_LEVEL"] ?? "notice"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let arguments = [path, "serve", "--port", "0"]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw TestHTTPError.protocolError("posix_spawn failed: \(spawned)") }
        self.pid = pid
        var port: Int?
        let log = self.log
        _ = eventually(timeout: timeout) {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            // "… url=http://127.0.0.1:PORT … onboard is serving" (text or JSON lines).
            if let line = text.split(separator: "\n").first(where: { $0.contains("onboard is serving") }),
                let range = line.range(of: #"http://[^" ]*:[0-9]+"#, options: .regularExpression)
            {
                port = Int(line[range].split(separator: ":").last ?? "")
            }
            return port != nil || Glibc.kill(pid, 0) != 0
        }
        guard let port else {
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            throw TestHTTPError.protocolError("onboard did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        self.port = port
    }

    deinit {
        kill()
        unlink(log)
    }

    public var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// SIGKILL, and waits for the process to end; returns whether it ended by that signal (false
    /// when it had already ended).
    @discardableResult
    public func kill() -> Bool {
        guard Glibc.kill(pid, 0) == 0 else { return false }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        guard waitpid(pid, &status, 0) == pid else { return false }
        return (status & 0x7f) == SIGKILL
    }

    public func client() -> TestHTTPClient { TestHTTPClient(port: port) }
}
