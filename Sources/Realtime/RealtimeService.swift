import Foundation
import HTTP
import Identity
import Logging
import Postgres
import REST
import Synchronization

public struct RealtimeConfig: Sendable {
    public var keys: KeyConfig
    /// The application's ownership rule (the REST middleware's).
    public var policy: OwnershipPolicy
    /// The Swift-side ownership rule on every re-read (RLS checks again underneath).
    public var enforceOwnership = true
    /// How long a join waits for the change feed to listen (just after start, or while it
    /// reconnects) before it is refused.
    public var feedWait: Double = 15
    /// Broadcast and presence messages one socket may send per second; past it the channel is
    /// closed ("Too many messages per second"), as Realtime does past its tenant limit.
    public var maxEventsPerSecond = 100
    /// The largest broadcast payload, in bytes of JSON (Realtime: 3,000 kB; the socket's frame
    /// limit comes first).
    public var maxPayloadBytes = 3_000_000
    /// Supabase's "allow public access" off (`REALTIME_PRIVATE_ONLY`): every channel must be
    /// private, so only the policies on realtime.messages decide who reads a topic.
    public var privateOnly = false

    public init(keys: KeyConfig, policy: OwnershipPolicy) {
        self.keys = keys
        self.policy = policy
    }
}

/// Supabase Realtime at `/realtime/v1/websocket`: the upgrade, the sockets, the
/// `postgres_changes` subscriptions (`hub`) and the change feed that fills them, and the
/// channels' Broadcast and Presence (`topics`, delivered between servers by `MessageFeed`).
public final class RealtimeService: Sendable {
    let config: RealtimeConfig
    let pool: Pool
    let schema: SchemaCacheStore
    let hub = Hub()
    /// Joined channels for broadcast and presence.
    let topics = Topics()
    let logger: Logger
    private let sockets = Mutex<[ObjectIdentifier: RealtimeSocket]>([:])
    /// This process's name in `realtime.listeners`.
    let serverID = UUID()
    private let leases = Mutex<Leases>(Leases())
    /// Messages sent over HTTP in the current second (`BroadcastAPI`'s budget).
    let httpMessages = Mutex<(start: Double, count: Int)>((0, 0))

    struct Leases {
        var current: Set<Lease> = []
        var renewedAt: Double = 0
    }

    /// Seconds a lease lasts, and how often it is renewed while subscriptions need it.
    static let leaseSeconds = 60.0
    static let leaseRenewal = 20.0

    public init(config: RealtimeConfig, pool: Pool, schema: SchemaCacheStore, logger: Logger) {
        self.config = config
        self.pool = pool
        self.schema = schema
        self.logger = logger
    }

    public var socketCount: Int { sockets.withLock { $0.count } }
    public var subscriptionCount: Int { hub.count }

    // MARK: the change feed's state

    /// Which feed runs (once chosen) and whether its connection is up; set by `ChangeFeed`.
    private let feedListening = NSCondition()
    nonisolated(unsafe) private var feedState: (kind: RealtimeFeedKind?, listening: Bool) = (nil, false)  // guarded by feedListening

    public var feedKind: RealtimeFeedKind? {
        feedListening.lock()
        defer { feedListening.unlock() }
        return feedState.kind
    }

    public var feedIsListening: Bool {
        feedListening.lock()
        defer { feedListening.unlock() }
        return feedState.listening
    }

    /// Called by the change feed when it has chosen its kind, and when it starts or stops listening.
    func setFeed(_ kind: RealtimeFeedKind, listening: Bool) {
        feedListening.lock()
        feedState = (kind, listening)
        feedListening.broadcast()
        feedListening.unlock()
    }

    /// Waits up to `timeout` seconds for the change feed to listen; true once it does.
    func waitForFeed(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        feedListening.lock()
        defer { feedListening.unlock() }
        while !feedState.listening {
            guard feedListening.wait(until: deadline) else { return feedState.listening }
        }
        return true
    }

    // MARK: the upgrade

    /// Realtime's error shape: `{"error": …}`.
    static let errorStyle = ErrorStyle { #"{"error":\#(jsonString($0))}"# }

    /// `GET /realtime/v1/websocket?apikey=…&vsn=…`: Realtime's socket checks, then the 101.
    public func upgrade(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = WebSocketHandshake.check(request, style: Self.errorStyle) { return refusal }
        let vsn = request.queryValue("vsn") ?? PhoenixSerializer.v1.rawValue
        guard let serializer = PhoenixSerializer(rawValue: vsn) else {
            return .json(.forbidden, #"{"error":"Unsupported serializer version \#(vsn.filter { $0.isLetter || $0.isNumber || $0 == "." })"}"#)
        }
        guard let key = request.queryValue("apikey") ?? request.headers["apikey"] ?? request.headers["x-api-key"], !key.isEmpty else {
            return .json(.unauthorized, #"{"error":"API key is missing"}"#)
        }
        if case .failure(let refusal) = authorize(key) {
            return .json(.unauthorized, #"{"error":\#(jsonString(refusal.socketMessage))}"#)
        }
        return WebSocketHandshake.accept(request, delegate: RealtimeSocket(service: self, serializer: serializer, socketToken: key), style: Self.errorStyle)
    }

    /// Closes every socket (1001: clients reconnect and rejoin, re-reading what they missed).
    public func closeAll(reason: String) {
        for socket in sockets.withLock({ Array($0.values) }) { socket.close(.goingAway, reason: reason) }
    }

    func allSockets() -> [RealtimeSocket] { sockets.withLock { Array($0.values) } }

    func register(_ socket: RealtimeSocket) { sockets.withLock { $0[ObjectIdentifier(socket)] = socket } }

    func unregister(_ socket: RealtimeSocket) {
        sockets.withLock { $0[ObjectIdentifier(socket)] = nil }
        hub.remove(socket: socket)
    }

    // MARK: tokens

    struct Authorization {
        let caller: Caller
        /// `exp` in seconds since 1970; nil for the API keys given by value.
        let expiresAt: Double?
    }

    struct Refusal: Error {
        /// `Code: message`, the join reply's `reason`.
        let reason: String
        /// The message alone (system messages, the socket's 401 body).
        let message: String
        let socketMessage: String
    }

    /// Realtime's join-token rules: an API key by value, or a JWT (HS256, or RS256/ES256 by a
    /// `JWT_KEYS` key) with `role` and `exp`.
    func authorize(_ token: String) -> Result<Authorization, Refusal> {
        let keys = config.keys
        if let keyCaller = keys.role(ofKey: token) { return .success(Authorization(caller: keyCaller, expiresAt: nil)) }
        do {
            // No leeway here: the channel ends at `exp` (Realtime re-checks on a timer).
            let verified = try JWT.verify(token, keys: keys)
            guard verified.claims["role"] is String, let exp = (verified.claims["exp"] as? NSNumber)?.doubleValue else {
                return .failure(
                    Refusal(
                        reason: "InvalidJWTToken: Fields `role` and `exp` are required in JWT",
                        message: "Fields `role` and `exp` are required in JWT", socketMessage: "Fields `role` and `exp` are required in JWT"))
            }
            let now = Date().timeIntervalSince1970
            if exp <= now { return .failure(Self.expired(secondsAgo: now - exp)) }
            return .success(Authorization(caller: Caller(claimsJSON: verified.json, claims: verified.claims), expiresAt: exp))
        } catch .expired {
            let exp = Self.unverifiedExpiry(token) ?? Date().timeIntervalSince1970
            return .failure(Self.expired(secondsAgo: Date().timeIntervalSince1970 - exp))
        } catch .badSignature {
            return .failure(
                Refusal(
                    reason: "JwtSignatureError: Failed to validate JWT signature", message: "Failed to validate JWT signature",
                    socketMessage: "The token provided is not a valid JWT"))
        } catch {
            return .failure(
                Refusal(
                    reason: "MalformedJWT: The token provided is not a valid JWT", message: "The token provided is not a valid JWT",
                    socketMessage: "The token provided is not a valid JWT"))
        }
    }

    private static func expired(secondsAgo interval: Double) -> Refusal {
        let secondsAgo = wholeSeconds(interval)
        return Refusal(
            reason: "InvalidJWTToken: Token has expired \(secondsAgo) seconds ago", message: "Token has expired \(secondsAgo) seconds ago",
            socketMessage: "Token has expired")
    }

    /// A number of seconds computed from a token's claims, as a whole number that cannot trap:
    /// `exp` may be any JSON number (1e300, negative).
    static func wholeSeconds(_ interval: Double) -> Int {
        guard interval.isFinite, interval > 0 else { return 0 }
        return interval < 1e15 ? Int(interval) : 1_000_000_000_000_000
    }

    /// `exp` of a token whose signature was already checked (only for the error's wording).
    private static func unverifiedExpiry(_ token: String) -> Double? {
        let parts = token.split(separator: ".")
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]),
            let claims = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
        else { return nil }
        return (claims["exp"] as? NSNumber)?.doubleValue
    }

    /// The pure part of a client frame's way in: decoded in both serializers; a join's
    /// `postgres_changes` entries read as bindings, their filters parsed and written as SQL
    /// against `cache`. Returns how many bindings were read. What the request-path fuzz target
    /// drives; nothing here may trap, whatever the frame.
    public static func dryRun(frame text: String, cache: SchemaCache) -> Int {
        var count = 0
        for serializer in [PhoenixSerializer.v1, .v2] {
            guard let message = serializer.decode(text) else { continue }
            _ = serializer.encode(joinRef: message.joinRef, ref: message.ref, topic: message.topic, event: message.event, payloadJSON: "{}")
            guard message.event == "phx_join" else { continue }
            for entry in message.payload.postgresChanges {
                guard let binding = Binding(entry) else { continue }
                count += 1
                _ = binding.parametersDescription
                guard let name = binding.table, let table = cache.tables[name], let text = binding.filter,
                    let filter = try? RowAccess.parseFilter(text, table: table)
                else { continue }
                _ = try? RowAccess.sql([filter], table: table)
                _ = table.rowKey(for: filter)
            }
        }
        return count
    }

    // MARK: subscriptions

    /// The bindings as subscriptions, and the first problem Realtime would report for them
    /// (unknown table, filter that does not parse).
    func resolve(
        _ bindings: [Binding], socket: RealtimeSocket, topic: String, joinRef: String?, caller: Caller,
        since: TransactionSnapshot? = nil
    ) -> (subscriptions: [Subscription], problem: String?) {
        let cache = schema.cache
        var subscriptions: [Subscription] = []
        for binding in bindings {
            var filter: Condition? = nil
            if let table = binding.table {
                guard binding.schema == "public", let known = cache.tables[table] else {
                    return ([], Self.notEnabled(binding))
                }
                if let text = binding.filter {
                    do {
                        filter = try RowAccess.parseFilter(text, table: known)
                    } catch {
                        return ([], "Error parsing `filter` params: \(text) (\(error.fields.message))")
                    }
                    if let problem = filter.flatMap(RealtimeFilterOperator.problem) { return ([], "Error parsing `filter` params: \(text) (\(problem))") }
                }
            } else if binding.filter != nil {
                return ([], "Error parsing `filter` params: a filter needs a table")
            } else if binding.schema != "public" {
                return ([], Self.notEnabled(binding))
            }
            let rowKey = binding.table.flatMap { cache.tables[$0] }?.rowKey(for: filter)
            subscriptions.append(
                Subscription(
                    socket: socket, topic: topic, joinRef: joinRef, bindingID: binding.id, event: binding.event,
                    schema: binding.schema, table: binding.table, filter: filter, rowKey: rowKey, caller: caller,
                    since: since))
        }
        return (subscriptions, nil)
    }

    /// Asks the database, as the subscriber, whether each table is enabled and each filter's
    /// value fits its column (`id=eq.x` on a uuid column fails here, not at the first change).
    func confirm(_ subscriptions: [Subscription], bindings: [Binding]) -> String? {
        let cache = schema.cache
        for (subscription, binding) in zip(subscriptions, bindings) {
            guard let name = subscription.table, let table = cache.tables[name] else { continue }
            do {
                let qualified = quoteIdentifier("public") + "." + quoteIdentifier(name)
                var statements: [SQL] = [
                    RESTService.setup(caller: subscription.caller, readOnly: true),
                    "SELECT realtime.is_enabled(\(qualified)::regclass)"
                ]
                if let filter = subscription.filter {
                    statements.append(SQL(unsafeSQL: "SELECT 1 FROM \(qualified) WHERE false AND ") + (try RowAccess.sql([filter], table: table)))
                }
                let results = try pool.withConnection { try $0.pipeline(statements) }
                if results[1].first?.bool(0) != true { return Self.notEnabled(binding) }
            } catch let error as PostgresError where error.kind == .server {
                return
                    "Unable to subscribe to changes with given parameters. An exception happened so please check your connect parameters: \(binding.parametersDescription). Exception: ERROR \(error.sqlState ?? "") (\(error.message))"
            } catch {
                return
                    "Unable to subscribe to changes with given parameters. An exception happened so please check your connect parameters: \(binding.parametersDescription). Exception: \(error)"
            }
        }
        return nil
    }

    /// WAL feed: the snapshot a new subscription starts from (taken before the join reply);
    /// nil for the trigger feed, whose events re-read the row, or when it cannot be read.
    func subscriptionSnapshot() -> TransactionSnapshot? {
        guard feedKind == .wal else { return nil }
        do {
            let text = try pool.withConnection { try $0.query("SELECT pg_current_snapshot()::text", prepared: true).scalar }
            return text.flatMap(TransactionSnapshot.init)
        } catch {
            logger.error("realtime: could not read the snapshot a subscription starts from", metadata: ["error": "\(logText(error))"])
            return nil
        }
    }

    /// Takes the leases that new subscriptions need (before the join reply), so the triggers
    /// announce their changes. Serialised with the periodic renewal, so neither undoes the other.
    func addLeases(for subscriptions: [Subscription]) throws {
        guard feedKind == .triggers else { return }
        try leases.withLock { leases in
            let added = Set(subscriptions.map(\.lease)).subtracting(leases.current)
            guard !added.isEmpty else { return }
            try write(added, replace: false)
            leases.current.formUnion(added)
        }
    }

    /// Every `leaseRenewal` seconds (the change feed asks every quarter second): the whole set,
    /// renewed, and the leases no subscription needs any more dropped.
    func renewLeases() throws {
        try leases.withLock { leases in
            let now = Date().timeIntervalSince1970
            guard now - leases.renewedAt > Self.leaseRenewal else { return }
            let wanted = hub.leases()
            try write(wanted, replace: true)
            leases.current = wanted
            leases.renewedAt = now
        }
    }

    /// `body`, failures logged (the next renewal retries).
    func logLeaseFailure(_ body: () throws -> Void) {
        do {
            try body()
        } catch {
            logger.error("realtime: could not renew the listener lease", metadata: ["error": "\(logText(error))"])
        }
    }

    /// Installs the trigger feed's triggers on every enabled table (idempotent): the trigger
    /// feed's start, since a database that can stream the WAL has none.
    func installTriggers() throws {
        _ = try pool.withConnection { connection in
            try connection.pipeline(["SELECT set_config('role', 'service_role', true)", "SELECT realtime.use_triggers(true)"])
        }
    }

    /// Drops this server's leases (at shutdown: the triggers need not wait for them to expire).
    public func releaseLeases() throws {
        guard feedKind == .triggers else { return }
        try leases.withLock { leases in
            try write([], replace: true)
            leases.current = []
        }
    }

    private func write(_ wanted: Set<Lease>, replace: Bool) throws {
        let sorted = wanted.sorted { ($0.table, $0.rowKey) < ($1.table, $1.rowKey) }
        _ = try pool.withConnection { connection in
            try connection.pipeline([
                "SELECT set_config('role', 'service_role', true)",
                """
                SELECT realtime.renew_listener(\(serverID.uuidString), \(array: sorted.map(\.table))::text[], \
                \(array: sorted.map(\.rowKey))::text[], \(String(Int(Self.leaseSeconds)))::integer, \(replace)::boolean)
                """
            ])
        }
    }

    private static func notEnabled(_ binding: Binding) -> String {
        "Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given connect parameters: \(binding.parametersDescription)"
    }
}
