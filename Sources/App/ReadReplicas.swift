import Auth
import EventLoop
import Foundation
import HTTP
import Logging
import Postgres
import REST
import Synchronization

/// `DATABASE_READ_URLS` and `DB_READ_MAX_LAG`: hot standbys for REST reads.
public struct ReadReplicaConfig: Sendable, Equatable {
    /// The standbys' URLs (directly, or each through a PgBouncer pool of its own).
    public var urls: [String] = []
    /// A standby further behind than this (seconds of the primary's WAL) is skipped.
    public var maxLagSeconds: Double = 10
    /// A standby further behind than this many bytes of WAL is skipped (nil: no byte limit).
    public var maxLagBytes: UInt64?
    /// Seconds between two health checks of every standby (and samples of the primary's WAL).
    public var checkInterval: Double = 0.25
    /// Seconds two servers' clocks may differ by (a token's `iat` against the primary's samples).
    public var clockSkew: Double = 0.5

    public init() {}

    /// `DB_READ_MAX_LAG`: a duration (`10s`, `500ms`, plain seconds) or a size of WAL (`16MB`,
    /// `512kB`, `1GB`, `4096B`).
    public mutating func setMaxLag(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, UInt64)] = [("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10), ("KB", 1 << 10), ("B", 1)]
        if let unit = units.first(where: { trimmed.hasSuffix($0.0) }), let number = UInt64(trimmed.dropLast(unit.0.count)) {
            maxLagBytes = number * unit.1
            maxLagSeconds = .infinity
            return
        }
        guard let seconds = parseDuration(trimmed), seconds > 0 else {
            throw ConfigurationError("DB_READ_MAX_LAG must be a duration (10s, 500ms) or a size of WAL (16MB, 512kB), not \"\(text)\"")
        }
        maxLagSeconds = seconds
        maxLagBytes = nil
    }
}

/// The hot standbys REST reads go to, with read-your-writes.
///
/// A health thread samples the primary's WAL position (`pg_current_wal_flush_lsn()`, with the
/// wall-clock time taken before asking) and each standby's replay position
/// (`pg_last_wal_replay_lsn()`). A standby is healthy while it answers, is in recovery, and is
/// behind the primary by at most `DB_READ_MAX_LAG`; its "as of" time is the latest sample its
/// replay has passed: it holds everything the primary had committed by then.
///
/// Read-your-writes: a request that may have written marks its writer (the user, or the role
/// for anon and service_role) as pending before its answer is sent; a thread then reads the
/// primary's `pg_current_wal_insert_lsn()` (after the commit, so at or past the commit record)
/// for every pending writer at once. The writer's reads go to the primary while pending, and
/// afterwards to a standby whose replay has passed that position. A token's `iat` (plus the
/// clock skew) must also be older than the standby's "as of" time: what the primary held when
/// the token was issued (the sign-up, its profile, an earlier server's writes before a sign-in
/// or refresh) is on that standby, whichever server wrote it.
public final class ReadReplicas: ReadRouting {
    public enum Status: String, Sendable {
        case starting, healthy, lagging, unreachable, failing
        case notStandby = "not_standby"
    }

    struct Health: Sendable {
        var status = Status.starting
        var replay: UInt64 = 0
        var lagBytes: UInt64?
        var lagSeconds: Double?
        var asOf: Double = 0
        var error: String?
    }

    final class Standby: Sendable {
        let target: ReadTarget
        let url: String
        let health = Mutex(Health())
        let reads = Atomic<UInt64>(0)
        let failures = Atomic<UInt64>(0)

        init(target: ReadTarget, url: String) {
            self.target = target
            self.url = url
        }
    }

    struct Positions {
        /// Writers whose last write's position is being read from the primary.
        var pending: Set<String> = []
        /// Each writer's last write position (pruned once every healthy standby has passed it).
        var written: [String: UInt64] = [:]
        /// The highest pruned position: a standby must have passed it to serve any read.
        var floor: UInt64 = 0
    }

    let config: ReadReplicaConfig
    let primaryURL: String
    let standbys: [Standby]
    let logger: Logger
    private let positions = Mutex(Positions())
    private let primaryReads = Atomic<UInt64>(0)
    private let turn = Atomic<Int>(0)
    private let fetch = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    private let ended = DispatchSemaphore(value: 0)

    init(config: ReadReplicaConfig, primaryURL: String, poolSize: Int, pipelineSize: Int, preparedStatements: Bool, loop: EventLoop, logger: Logger) {
        self.config = config
        self.primaryURL = primaryURL
        self.logger = logger
        standbys = config.urls.map { given in
            // A standby that does not answer must fail a read fast (it is answered by the primary).
            let url = Self.withConnectTimeout(given)
            let pipeline = pipelineSize > 0 ? PipelineClient(conninfo: url, size: pipelineSize, allowsPreparedStatements: preparedStatements, loop: loop) : nil
            let pool = Pool(conninfo: url, size: poolSize, acquireTimeout: 2, allowsPreparedStatements: preparedStatements)
            return Standby(target: ReadTarget(name: Self.displayName(given), pool: pool, pipeline: pipeline), url: url)
        }
    }

    /// host:port/database of a URL, without user or password.
    static func displayName(_ url: String) -> String {
        guard let components = URLComponents(string: url) else { return "standby" }
        let query = components.queryItems ?? []
        let host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? query.first { $0.name == "host" }?.value ?? "localhost"
        let port = components.port.map(String.init) ?? query.first { $0.name == "port" }?.value ?? "5432"
        return "\(host):\(port)\(components.path)"
    }

    /// Starts the health and position threads and the standbys' pipelined connections.
    func start() {
        for standby in standbys { standby.target.pipeline?.start() }
        startThread(name: "replica-health") { [self] in checkHealth() }
        startThread(name: "replica-lsn") { [self] in fetchPositions() }
    }

    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        fetch.signal()
        _ = ended.wait(timeout: .now() + 5)
        _ = ended.wait(timeout: .now() + 5)
        for standby in standbys {
            standby.target.pipeline?.close()
            standby.target.pool.close()
        }
    }

    // MARK: ReadRouting

    public func target(forReadBy writer: String, issuedAt: Double?) -> ReadTarget? {
        let required: UInt64? = positions.withLock { positions in
            if positions.pending.contains(writer) { return nil }
            return max(positions.written[writer] ?? 0, positions.floor)
        }
        guard let required else {
            primaryReads.add(1, ordering: .relaxed)
            return nil
        }
        let oldest = issuedAt.map { $0 + 1 + config.clockSkew } ?? 0
        let eligible = standbys.filter { standby in
            standby.health.withLock { $0.status == .healthy && $0.replay >= required && $0.asOf >= oldest }
        }
        guard !eligible.isEmpty else {
            primaryReads.add(1, ordering: .relaxed)
            return nil
        }
        let chosen = eligible[turn.add(1, ordering: .relaxed).newValue % eligible.count]
        chosen.reads.add(1, ordering: .relaxed)
        return chosen.target
    }

    public func wrote(_ writer: String) {
        positions.withLock { _ = $0.pending.insert(writer) }
        fetch.signal()
    }

    public func failed(_ target: ReadTarget, _ error: PostgresError) {
        guard let standby = standbys.first(where: { $0.target === target }) else { return }
        standby.failures.add(1, ordering: .relaxed)
        standby.health.withLock { health in
            health.status = error.kind == .connection ? .unreachable : .failing
            health.error = error.message
        }
        logger.warning("a standby failed a read; it is answered by the primary", metadata: ["standby": "\(target.name)", "error": "\(logText(error))"])
    }

    // MARK: the threads

    /// Reads the primary's insert position for every pending writer at once (one query per
    /// batch, however many writes), until stopped.
    private func fetchPositions() {
        defer { ended.signal() }
        var connection: Connection?
        while !stopped.load(ordering: .acquiring) {
            _ = fetch.wait(timeout: .now() + 1)
            let batch = positions.withLock { positions -> Set<String> in positions.pending }
            if batch.isEmpty || stopped.load(ordering: .acquiring) { continue }
            do {
                if connection == nil { connection = try Connection(conninfo: primaryURL, allowsPreparedStatements: false) }
                guard let text = try connection!.query("SELECT pg_current_wal_insert_lsn()::text").scalar, let position = Self.lsn(text) else {
                    continue
                }
                positions.withLock { positions in
                    for writer in batch {
                        positions.written[writer] = max(positions.written[writer] ?? 0, position)
                    }
                    // Writers that wrote again meanwhile stay pending: their new write may be later.
                    positions.pending.subtract(batch)
                }
            } catch {
                connection = nil
                logger.warning("cannot read the primary's WAL position; reads of recent writers stay on the primary", metadata: ["error": "\(logText(error))"])
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
    }

    /// Samples the primary and checks every standby each `checkInterval`, until stopped.
    private func checkHealth() {
        defer { ended.signal() }
        var primary: Connection?
        var connections: [Connection?] = Array(repeating: nil, count: standbys.count)
        var samples: [(time: Double, lsn: UInt64)] = []
        let keep = max(16, Int((min(config.maxLagSeconds, 600) + 5) / config.checkInterval))
        while !stopped.load(ordering: .acquiring) {
            let time = Date().timeIntervalSince1970
            do {
                if primary == nil { primary = try Connection(conninfo: primaryURL, allowsPreparedStatements: false) }
                if let text = try primary!.query("SELECT pg_current_wal_flush_lsn()::text").scalar, let lsn = Self.lsn(text) {
                    samples.append((time, lsn))
                    if samples.count > keep { samples.removeFirst(samples.count - keep) }
                }
            } catch {
                primary = nil
            }
            for (index, standby) in standbys.enumerated() {
                var health = Health()
                do {
                    if connections[index] == nil {
                        connections[index] = try Connection(conninfo: standby.url, allowsPreparedStatements: false)
                    }
                    let row = try connections[index]!.query("SELECT pg_is_in_recovery(), coalesce(pg_last_wal_replay_lsn(), '0/0')::text")
                    health.replay = Self.lsn(row[0, 1] ?? "") ?? 0
                    if row[0].bool(0) != true {
                        health.status = .notStandby
                        health.error = "not in recovery (promoted?): its data may have diverged from the primary"
                    } else {
                        let passed = samples.last { $0.lsn <= health.replay }
                        let newest = samples.last
                        health.asOf = passed?.time ?? 0
                        health.lagBytes = newest.map { $0.lsn > health.replay ? $0.lsn - health.replay : 0 }
                        if let newest, newest.lsn <= health.replay {
                            health.lagSeconds = 0
                        } else {
                            health.lagSeconds = time - (passed?.time ?? samples.first?.time ?? time)
                        }
                        let tooFarBehind =
                            (health.lagSeconds ?? 0) > config.maxLagSeconds || (config.maxLagBytes.map { (health.lagBytes ?? 0) > $0 } ?? false)
                        health.status = samples.isEmpty ? .starting : tooFarBehind ? .lagging : .healthy
                    }
                } catch let error as PostgresError {
                    connections[index] = nil
                    health.status = error.kind == .connection ? .unreachable : .failing
                    health.error = error.message
                } catch {
                    connections[index] = nil
                    health.status = .failing
                    health.error = "\(error)"
                }
                let before = standby.health.withLock { old -> Status in
                    defer { old = health }
                    return old.status
                }
                if before != health.status && !(before == .starting && health.status == .healthy) {
                    logger.notice(
                        "standby state changed",
                        metadata: ["standby": "\(standby.target.name)", "state": "\(health.status.rawValue)", "was": "\(before.rawValue)"])
                }
            }
            prune()
            let elapsed = Date().timeIntervalSince1970 - time
            if elapsed < config.checkInterval { Thread.sleep(forTimeInterval: config.checkInterval - elapsed) }
        }
    }

    /// Forgets the positions every healthy standby has passed (raising the floor to them), so
    /// the table holds only recent writers; a standby that comes back must pass the floor.
    private func prune() {
        let replays = standbys.compactMap { standby in standby.health.withLock { $0.status == .healthy ? $0.replay : nil } }
        guard replays.count == standbys.count, let lowest = replays.min() else { return }
        positions.withLock { positions in
            var highest = positions.floor
            positions.written = positions.written.filter { _, position in
                if position <= lowest {
                    highest = max(highest, position)
                    return false
                }
                return true
            }
            positions.floor = highest
            if positions.written.count > 100_000 {
                positions.floor = max(positions.floor, positions.written.values.max() ?? 0)
                positions.written = [:]
            }
        }
    }

    /// `X/Y` (two hex numbers) as a 64-bit position.
    static func lsn(_ text: String) -> UInt64? {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let high = UInt64(parts[0], radix: 16), let low = UInt64(parts[1], radix: 16) else { return nil }
        return high << 32 | low
    }

    /// The URL with `connect_timeout=2` unless it names one: a standby that does not answer is
    /// found out quickly.
    static func withConnectTimeout(_ url: String) -> String {
        guard !url.contains("connect_timeout") else { return url }
        return url + (url.contains("?") ? "&" : "?") + "connect_timeout=2"
    }

    // MARK: reports

    struct Report {
        let name: String
        let health: Health
        let reads: UInt64
        let failures: UInt64
    }

    func reports() -> (primaryReads: UInt64, standbys: [Report]) {
        (
            primaryReads.load(ordering: .relaxed),
            standbys.map {
                Report(
                    name: $0.target.name, health: $0.health.withLock { $0 }, reads: $0.reads.load(ordering: .relaxed),
                    failures: $0.failures.load(ordering: .relaxed))
            }
        )
    }

    /// `/ready`'s `"standbys"` member: each standby's state, lag and share of reads.
    func readinessJSON() -> String {
        let (primaryReads, reports) = reports()
        let total = Double(primaryReads + reports.reduce(0) { $0 + $1.reads })
        let items = reports.map { report -> String in
            let share = total > 0 ? (Double(report.reads) / total * 1000).rounded() / 1000 : 0
            let lagSeconds = report.health.lagSeconds.map { "\(($0 * 1000).rounded() / 1000)" } ?? "null"
            let lagBytes = report.health.lagBytes.map { "\($0)" } ?? "null"
            return
                #"{"name":\#(jsonString(report.name)),"state":"\#(report.health.status.rawValue)","lag_seconds":\#(lagSeconds),"lag_bytes":\#(lagBytes),"reads":\#(report.reads),"read_share":\#(share)}"#
        }
        let primaryShare = total > 0 ? (Double(primaryReads) / total * 1000).rounded() / 1000 : 0
        return #""reads":{"primary":\#(primaryReads),"primary_share":\#(primaryShare)},"standbys":[\#(items.joined(separator: ","))]"#
    }

    /// The Prometheus lines.
    func metricsText() -> String {
        let (primaryReads, reports) = reports()
        var out = "# HELP onboard_db_standby_up 1 while a standby serves reads (healthy), by standby and state.\n"
        out += "# TYPE onboard_db_standby_up gauge\n"
        for report in reports {
            out +=
                "onboard_db_standby_up{standby=\(Metrics.label(report.name)),state=\"\(report.health.status.rawValue)\"} \(report.health.status == .healthy ? 1 : 0)\n"
        }
        out += "# HELP onboard_db_standby_lag_seconds How far a standby's replay is behind the primary, in seconds.\n"
        out += "# TYPE onboard_db_standby_lag_seconds gauge\n"
        for report in reports { out += "onboard_db_standby_lag_seconds{standby=\(Metrics.label(report.name))} \(report.health.lagSeconds ?? -1)\n" }
        out += "# HELP onboard_db_standby_lag_bytes How far a standby's replay is behind the primary, in bytes of WAL.\n"
        out += "# TYPE onboard_db_standby_lag_bytes gauge\n"
        for report in reports {
            out += "onboard_db_standby_lag_bytes{standby=\(Metrics.label(report.name))} \(report.health.lagBytes.map { Int64($0) } ?? -1)\n"
        }
        out += "# HELP onboard_db_reads_total REST reads by where they ran (primary, or a standby by name).\n"
        out += "# TYPE onboard_db_reads_total counter\n"
        out += "onboard_db_reads_total{target=\"primary\"} \(primaryReads)\n"
        for report in reports { out += "onboard_db_reads_total{target=\(Metrics.label(report.name))} \(report.reads)\n" }
        out += "# HELP onboard_db_standby_failures_total Reads a standby failed (answered by the primary instead).\n"
        out += "# TYPE onboard_db_standby_failures_total counter\n"
        for report in reports { out += "onboard_db_standby_failures_total{standby=\(Metrics.label(report.name))} \(report.failures)\n" }
        return out
    }
}

extension ReadReplicas {
    /// A request to Auth that may write (anything but `GET`): its bearer's user is a writer, so
    /// their next reads see what it changed (Auth runs on the primary).
    func recordAuthWrite(_ request: HTTPRequest, config: ServerConfig) {
        guard request.method != .get, request.method != .head, request.path.hasPrefix("/auth/v1/") else { return }
        guard let caller = try? Routes.restCaller(request, config: config, audience: nil), caller.userID != nil else { return }
        wrote(RESTService.writer(caller))
    }
}
