import Auth
import Foundation
import Glibc
import HTTP
import Migrations
import Postgres
import REST
import Realtime
import Synchronization

/// Prometheus metrics for `GET /metrics`: requests by route and status, a latency histogram by
/// route, the pool's connections in use and waiters, and auth failures by reason. Route labels
/// are bounded: known tables, functions and auth endpoints by name, everything else `other`.
public final class Metrics: Sendable {
    static let buckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
    static let authEndpoints: Set<String> = [
        "signup", "token", "user", "logout", "settings", "health", "admin", "verify", "recover",
        "otp", "magiclink", "resend", "reauthenticate"
    ]

    struct Histogram {
        var counts = [UInt64](repeating: 0, count: Metrics.buckets.count)
        var total: UInt64 = 0
        var sum: Double = 0

        mutating func add(_ seconds: Double, bucket: Int?) {
            if let bucket { counts[bucket] += 1 }
            total += 1
            sum += seconds
        }
    }

    private struct State {
        var requests: [String: UInt64] = [:]  // "route\u{0}method\u{0}status"
        var latency: [String: Histogram] = [:]
        var authFailures: [String: UInt64] = [:]
        var databaseErrors: [String: UInt64] = [:]
        /// `route(_:)`'s answers by path under one schema cache generation (at most
        /// `routesKept`: the paths a server is asked are few, and a flood of others only
        /// empties it).
        var routes: [String: String] = [:]
        var routesGeneration = -1
    }

    static let routesKept = 1024

    /// Workers update one of several shards (chosen by thread), merged when rendered: one shared
    /// lock was the hottest spot of a trivial request under load (Swift's Mutex is a PI futex).
    private final class Shard: Sendable { let state = Mutex(State()) }
    private let shards: [Shard] = (0..<16).map { _ in Shard() }
    let pool: Pool
    /// The database's own login, which reads the mail outbox (the request role may not).
    let adminPool: Pool
    let pipeline: PipelineClient?
    let readPipeline: PipelineClient?
    private let schema: SchemaCacheStore
    private let started = Date()
    let realtime: RealtimeService?
    let feed: ChangeFeed?
    let mailer: Mailer?
    private let readReplicas: ReadReplicas?
    let hookCalls: AuthHookCalls?
    /// Tables also served at bare paths (`/children`).
    private let bareTables: Set<String>
    /// The requests per route at two moments (the newer at least `markSpacing` after the older),
    /// for the operations page's "per second now" from its first paint.
    private let marks = Mutex<[(at: Double, requests: [String: UInt64])]>([])
    static let markSpacing: Double = 5

    init(
        pool: Pool, adminPool: Pool? = nil, schema: SchemaCacheStore, realtime: RealtimeService? = nil, feed: ChangeFeed? = nil, bareTables: Set<String> = [],
        mailer: Mailer? = nil, pipeline: PipelineClient? = nil, readPipeline: PipelineClient? = nil, readReplicas: ReadReplicas? = nil,
        hookCalls: AuthHookCalls? = nil
    ) {
        self.hookCalls = hookCalls
        self.readPipeline = readPipeline
        self.readReplicas = readReplicas
        self.pool = pool
        self.adminPool = adminPool ?? pool
        self.pipeline = pipeline
        self.schema = schema
        self.realtime = realtime
        self.feed = feed
        self.mailer = mailer
        self.bareTables = bareTables
    }

    /// Records one answered request, timed from `started` (`DispatchTime.now().uptimeNanoseconds`
    /// when it was parsed).
    func record(path: String, method: HTTPMethod, _ response: HTTPResponse, since started: UInt64) {
        record(path: path, method: method, response, seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
    }

    /// Records one answered request.
    func record(path: String, method: HTTPMethod, _ response: HTTPResponse, seconds: Double) {
        let bucket = Self.buckets.firstIndex { seconds <= $0 }
        let shard = Int(truncatingIfNeeded: (UInt64(pthread_self()) &* 0x9E37_79B9_7F4A_7C15) >> 60)
        let generation = schema.generation
        shards[shard].state.withLock { state in
            if state.routesGeneration != generation || state.routes.count >= Self.routesKept {
                state.routes.removeAll(keepingCapacity: true)
                state.routesGeneration = generation
            }
            let route: String
            if let known = state.routes[path] {
                route = known
            } else {
                route = self.route(path)
                state.routes[path] = route
            }
            let key = route + "\u{0}" + method.rawValue + "\u{0}" + String(response.status.code)
            let failure = Self.authFailure(route: route, response)
            state.requests[key, default: 0] += 1
            // In place: a copy taken out and stored back would copy its counts every time.
            state.latency[route, default: Histogram()].add(seconds, bucket: bucket)
            if let failure { state.authFailures[failure, default: 0] += 1 }
        }
    }

    /// One REST request answered ≥ 500 because of the database, by SQLSTATE (or `connection`).
    func recordDatabaseError(sqlState: String) {
        let label = sqlState.count <= 10 ? sqlState : "other"
        let shard = Int(truncatingIfNeeded: (UInt64(pthread_self()) &* 0x9E37_79B9_7F4A_7C15) >> 60)
        shards[shard].state.withLock { $0.databaseErrors[label, default: 0] += 1 }
    }

    /// Why an authentication failed, from GoTrue's error code or PostgREST's 401s.
    static func authFailure(route: String, _ response: HTTPResponse) -> String? {
        guard [.badRequest, .unauthorized, .forbidden, .unprocessableContent, .tooManyRequests].contains(response.status) else {
            return nil
        }
        if route.hasPrefix("/auth/v1/") {
            return response.headers["x-sb-error-code"]
        }
        if response.status == .unauthorized {
            // PostgREST: a missing/invalid key or a bad/expired token.
            let body = String(decoding: response.body.prefix(200), as: UTF8.self)
            if body.contains("PGRST303") { return "jwt_expired" }
            if body.contains("PGRST301") { return "bad_jwt" }
            if body.contains("No API key") { return "no_api_key" }
            return "invalid_api_key"
        }
        return nil
    }

    /// A bounded label for a path.
    func route(_ path: String) -> String {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        if segments.count >= 2 && segments[0] == "auth" && segments[1] == "v1" {
            guard segments.count >= 3, Self.authEndpoints.contains(String(segments[2])) else { return "/auth/v1/other" }
            return "/auth/v1/" + segments[2]
        }
        if segments.count >= 2 && segments[0] == "rest" && segments[1] == "v1" {
            let cache = schema.cache
            if segments.count == 2 { return "/rest/v1/" }
            if segments.count == 4 && segments[2] == "rpc" {
                return cache.functions[String(segments[3])] != nil ? "/rest/v1/rpc/" + segments[3] : "/rest/v1/rpc/other"
            }
            return segments.count == 3 && cache.tables[String(segments[2])] != nil ? "/rest/v1/" + segments[2] : "/rest/v1/other"
        }
        if segments.count == 1 && (["health", "ready", "metrics"].contains(String(segments[0])) || bareTables.contains(String(segments[0]))) {
            return "/" + segments[0]
        }
        if path == "/realtime/v1/websocket" { return path }
        if segments.first == "dashboard" { return "/dashboard" }
        return "other"
    }

    /// The shards merged.
    private func snapshot() -> State {
        var snapshot = State()
        for shard in shards {
            let part = shard.state.withLock { $0 }
            snapshot.requests.merge(part.requests, uniquingKeysWith: +)
            snapshot.authFailures.merge(part.authFailures, uniquingKeysWith: +)
            snapshot.databaseErrors.merge(part.databaseErrors, uniquingKeysWith: +)
            snapshot.latency.merge(part.latency) { a, b in
                Histogram(counts: zip(a.counts, b.counts).map { $0 + $1 }, total: a.total + b.total, sum: a.sum + b.sum)
            }
        }
        return snapshot
    }

    /// The dashboard's operations page, as JSON object members (no braces): uptime, requests and
    /// errors by route since the start, the pool, Realtime.
    func dashboardJSON() -> String {
        let snapshot = snapshot()
        var routes: [String: (requests: UInt64, clientErrors: UInt64, serverErrors: UInt64)] = [:]
        for (key, count) in snapshot.requests {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            let status = Int(parts[2]) ?? 0
            var entry = routes[String(parts[0])] ?? (0, 0, 0)
            entry.requests += count
            if (400..<500).contains(status) { entry.clientErrors += count }
            if status >= 500 { entry.serverErrors += count }
            routes[String(parts[0])] = entry
        }
        // The rate now: against the older mark (at least `markSpacing` ago, when there is one),
        // else since the start.
        let now = Date().timeIntervalSince(started)
        let totals = routes.mapValues(\.requests)
        let reference = marks.withLock { marks -> (at: Double, requests: [String: UInt64]) in
            if marks.isEmpty || now - marks[marks.count - 1].at >= Self.markSpacing { marks.append((now, totals)) }
            if marks.count > 2 { marks.removeFirst(marks.count - 2) }
            return marks.first { now - $0.at >= 1 } ?? (0, [:])
        }
        func milliseconds(_ seconds: Double?) -> String { seconds.map { String(($0 * 100_000).rounded() / 100) } ?? "null" }
        let routeList = routes.sorted { $0.key < $1.key }.map { route, entry in
            let histogram = snapshot.latency[route]
            let mean = histogram.map { $0.total > 0 ? $0.sum / Double($0.total) : 0 } ?? 0
            let elapsed = max(now - reference.at, 0.001)
            let perSecond = (Double(entry.requests - min(entry.requests, reference.requests[route] ?? 0)) / elapsed * 100).rounded() / 100
            return #"{"route":\#(jsonString(route)),"requests":\#(entry.requests),"per_second_now":\#(perSecond),"#
                + #""client_errors":\#(entry.clientErrors),"server_errors":\#(entry.serverErrors),"mean_ms":\#(milliseconds(mean)),"#
                + #""p50_ms":\#(milliseconds(histogram.flatMap { Self.quantile(0.5, $0) })),"p99_ms":\#(milliseconds(histogram.flatMap { Self.quantile(0.99, $0) }))}"#
        }
        let stats = pool.stats
        var out = #""uptime_seconds":\#(Int(now)),"rate_window_seconds":\#((now - reference.at).rounded()),"#
        out += #""routes":[\#(routeList.joined(separator: ","))],"#
        // The connections really open: the pool's and the pipelined ones (REST on the I/O thread).
        let pipelined = (pipeline?.stats.open ?? 0) + (readPipeline?.stats.open ?? 0)
        out += #""pool":{"size":\#(pool.size),"open":\#(stats.open),"in_use":\#(stats.inUse),"waiting":\#(stats.waiting),"#
        out += #""pipelined_open":\#(pipelined),"connections_open":\#(stats.open + pipelined)}"#
        if let realtime, let feed {
            out +=
                #","realtime":{"sockets":\#(realtime.socketCount),"subscriptions":\#(realtime.subscriptionCount),"events_delivered":\#(feed.deliveredCount),"feed_listening":\#(feed.isListening)}"#
        }
        return out
    }

    /// The `q` quantile of a latency histogram, in seconds, as Prometheus's histogram_quantile
    /// estimates it: linear within the bucket it falls in (the first bucket from 0); past the
    /// last bound, that bound. Nil without observations.
    static func quantile(_ q: Double, _ histogram: Histogram) -> Double? {
        guard histogram.total > 0 else { return nil }
        let rank = q * Double(histogram.total)
        var below: UInt64 = 0
        for (index, bound) in buckets.enumerated() {
            let count = histogram.counts[index]
            if Double(below + count) >= rank, count > 0 {
                let lower = index == 0 ? 0 : buckets[index - 1]
                return lower + (bound - lower) * (rank - Double(below)) / Double(count)
            }
            below += count
        }
        return buckets.last
    }

    /// The Prometheus text exposition (version 0.0.4).
    func render() -> String {
        var out = requestsText(snapshot()) + poolText() + pipelineText()
        if let readReplicas { out += readReplicas.metricsText() }
        out += "# HELP onboard_process_start_time_seconds Start time of the process since the Unix epoch.\n"
        out += "# TYPE onboard_process_start_time_seconds gauge\n"
        out += "onboard_process_start_time_seconds \(Int(started.timeIntervalSince1970))\n"
        return out + mailText() + hooksText() + realtimeText()
    }

    /// Requests by route, method and status; latency by route; auth failures; database errors.
    private func requestsText(_ snapshot: State) -> String {
        var out = ""
        out += "# HELP onboard_http_requests_total HTTP requests answered, by route, method and status.\n"
        out += "# TYPE onboard_http_requests_total counter\n"
        for (key, count) in snapshot.requests.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            out += "onboard_http_requests_total{route=\(Self.label(parts[0])),method=\(Self.label(parts[1])),status=\(Self.label(parts[2]))} \(count)\n"
        }
        out += "# HELP onboard_http_request_duration_seconds Time from a parsed request to its response, by route.\n"
        out += "# TYPE onboard_http_request_duration_seconds histogram\n"
        for (route, histogram) in snapshot.latency.sorted(by: { $0.key < $1.key }) {
            var cumulative: UInt64 = 0
            for (index, bound) in Self.buckets.enumerated() {
                cumulative += histogram.counts[index]
                out += "onboard_http_request_duration_seconds_bucket{route=\(Self.label(route)),le=\"\(bound)\"} \(cumulative)\n"
            }
            out += "onboard_http_request_duration_seconds_bucket{route=\(Self.label(route)),le=\"+Inf\"} \(histogram.total)\n"
            out += "onboard_http_request_duration_seconds_sum{route=\(Self.label(route))} \(histogram.sum)\n"
            out += "onboard_http_request_duration_seconds_count{route=\(Self.label(route))} \(histogram.total)\n"
        }
        out += "# HELP onboard_auth_failures_total Refused authentications, by reason (GoTrue error code or PostgREST key/token failure).\n"
        out += "# TYPE onboard_auth_failures_total counter\n"
        for (reason, count) in snapshot.authFailures.sorted(by: { $0.key < $1.key }) {
            out += "onboard_auth_failures_total{reason=\(Self.label(reason))} \(count)\n"
        }
        out += "# HELP onboard_rest_database_errors_total REST requests answered 5xx because of the database, by SQLSTATE (connection: unreachable).\n"
        out += "# TYPE onboard_rest_database_errors_total counter\n"
        for (state, count) in snapshot.databaseErrors.sorted(by: { $0.key < $1.key }) {
            out += "onboard_rest_database_errors_total{sqlstate=\(Self.label(state))} \(count)\n"
        }
        return out
    }

    /// A quoted label value, escaped as the exposition format requires.
    static func label<S: StringProtocol>(_ value: S) -> String {
        var out = "\""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out + "\""
    }
}
