import HTTP
import Identity
import Logging
import Postgres

/// PostHog's wire protocol: capture (events), flags (values for one distinct id), the flag
/// definitions for server SDKs, and the service role's admin API for flags.
public struct AnalyticsService: Sendable {
    public let config: AnalyticsConfig
    let store: AnalyticsStore
    /// Whether a request carries the service role's key (App's rule for every dialect).
    let isServiceRole: @Sendable (HTTPRequest) -> Bool
    /// The client's address as the other budgets read it (`RATE_LIMIT_HEADER` when trusted).
    let clientAddress: @Sendable (HTTPRequest) -> String
    let budget: EventBudget
    let flagCache = FlagCache()

    public init(
        config: AnalyticsConfig, pool: Pool, logger: Logger, clientAddress: @escaping @Sendable (HTTPRequest) -> String,
        isServiceRole: @escaping @Sendable (HTTPRequest) -> Bool
    ) {
        self.config = config
        self.store = AnalyticsStore(pool: pool, logger: logger)
        self.clientAddress = clientAddress
        self.isServiceRole = isServiceRole
        budget = EventBudget(perClient: config.eventsPerMinutePerClient, perProject: config.eventsPerMinute)
    }

    /// Keeps the in-memory flags current through `listener` (without it, every read of the flags
    /// goes to the table).
    public func followFlagChanges(_ listener: NotificationListener) {
        flagCache.follow(listener)
    }

    /// Every flag, from memory when current.
    func flags() throws(AnalyticsError) -> [FeatureFlag] {
        try flagCache.flags { () throws(AnalyticsError) in try store.flags() }
    }

    /// The capture paths PostHog's SDKs post to (`/engage/`: the older person updates).
    public static let capturePaths = ["/i/v0/e", "/capture", "/batch", "/e", "/track", "/engage"]

    public func register(_ router: inout Router) {
        for path in Self.capturePaths {
            router.add(.post, path) { request in try capture(request) }
        }
        for path in ["/flags", "/decide"] {
            router.add(.post, path) { request in try flags(request) }
        }
        for path in ["/api/feature_flag/local_evaluation", "/flags/definitions"] {
            router.add(.get, path) { request in try definitions(request) }
        }
        router.add(.get, "/analytics/v1/flags") { request in try listFlags(request) }
        router.add(.post, "/analytics/v1/flags") { request in try saveFlag(request) }
        router.add(.delete, "/analytics/v1/flags/:key") { request in try deleteFlag(request) }
        router.add(.get, "/analytics/v1/experiments/:key") { request in try experiment(request) }
    }

    /// Stores the request's events, all or none: `{"status": 1}` as PostHog answers.
    func capture(_ request: HTTPRequest) throws(AnalyticsError) -> HTTPResponse {
        let parsed = try CaptureRequest(request, config: config, defaultEvent: request.path.hasPrefix("/engage") ? "$set" : nil)
        if let seconds = budget.spend(parsed.events.count, client: clientAddress(request)) { throw .throttled(retryAfter: seconds) }
        _ = try store.ingest(parsed.events, source: "capture")
        if let days = config.retentionDays { store.dropExpiredEvents(days: days) }
        return .json(.ok, #"{"status":1}"#)
    }

    /// Every active flag's value for the body's `distinct_id`, with its stored person
    /// properties under the body's `person_properties`.
    func flags(_ request: HTTPRequest) throws(AnalyticsError) -> HTTPResponse {
        let body = try CaptureRequest.decodedBody(request, config: config)
        guard let json = JSON.parse(body), let members = json.object else { throw .invalidPayload("the body must be a JSON object") }
        guard let key = members["api_key"]?.string ?? members["token"]?.string ?? request.queryValue("token") else { throw .missingAPIKey }
        guard Crypto.constantTimeEquals(key, config.projectKey) else { throw .invalidAPIKey }
        guard let distinctID = members["distinct_id"].flatMap(CaptureRequest.distinctID), !distinctID.isEmpty else {
            throw .invalidPayload("distinct_id is required")
        }
        var properties = try store.personProperties(distinctID)
        switch members["person_properties"] {
        case .none, .some(.null): break
        case .some(.object(let given)): properties.merge(given) { _, new in new }
        case .some(.bool), .some(.number), .some(.string), .some(.array): throw .invalidPayload("person_properties must be an object")
        }
        properties["distinct_id"] = properties["distinct_id"] ?? .string(distinctID)
        return .json(.ok, FlagsAnswer.values(try flags(), distinctID: distinctID, properties: properties))
    }

    /// The flag definitions, for the secret key only (`Authorization: Bearer …`); a `token`,
    /// when given, must be the project key.
    func definitions(_ request: HTTPRequest) throws(AnalyticsError) -> HTTPResponse {
        try requireSecretKey(request)
        if let token = request.queryValue("token"), !Crypto.constantTimeEquals(token, config.projectKey) { throw .invalidAPIKey }
        return .json(.ok, FlagsAnswer.definitions(try flags()))
    }

    func listFlags(_ request: HTTPRequest) throws(AnalyticsError) -> HTTPResponse {
        try requireAdmin(request)
        return .json(.ok, FlagsAnswer.definitions(try flags()))
    }

    /// Creates or replaces one flag: `{"key", "name", "active", "filters"}`.
    func saveFlag(_ request: HTTPRequest) throws(AnalyticsError) -> HTTPResponse {
        try requireAdmin(request)
        guard let body = JSON.parse(request.body), let key = body["key"]?.string else { throw .invalidPayload("a flag needs a key") }
        var active = true
        if case .bool(let value) = body["active"] { active = value }
        let filters = FlagsAnswer.storedFilters(
            body["filters"] ?? .object(["groups": .array([.object(["properties": .array([]), "rollout_percentage": .number(100)])])]))
        try store.saveFlag(key: key, name: body["name"]?.string ?? "", active: active, filters: filters)
        flagCache.invalidate()
        return .json(.ok, FlagsAnswer.definitions(try flags().filter { $0.key == key }))
    }

    func deleteFlag(_ request: HTTPRequest) throws(AnalyticsError) -> HTTPResponse {
        try requireAdmin(request)
        guard try store.deleteFlag(key: request.pathParameters["key"] ?? "") else { throw .notFound }
        flagCache.invalidate()
        return HTTPResponse(status: .noContent)
    }

    /// The report of the experiment on flag `key`: `?goal_state=COMPLETE` (an onboarding
    /// state) or `?goal_event=…`, reached within `?days=` (14 by default) of the first exposure.
    func experiment(_ request: HTTPRequest) throws(AnalyticsError) -> HTTPResponse {
        try requireAdmin(request)
        let key = request.pathParameters["key"] ?? ""
        let goal: ExperimentGoal
        switch (request.queryValue("goal_state"), request.queryValue("goal_event")) {
        case (let state?, nil): goal = .state(state)
        case (nil, let event?): goal = .event(event)
        case (.some, .some), (nil, nil): throw .invalidPayload("give one of goal_state and goal_event")
        }
        guard let days = Int(request.queryValue("days") ?? "14"), (1...365).contains(days) else { throw .invalidPayload("days must be 1 to 365") }
        guard let flag = try flags().first(where: { $0.key == key }) else { throw .notFound }
        let report = ExperimentReport(counts: try store.experimentCounts(flag: key, goal: goal, days: days), weights: flag.variantWeights)
        return .json(.ok, report.json(flag: key, goal: goal, days: days).text)
    }

    func requireSecretKey(_ request: HTTPRequest) throws(AnalyticsError) {
        guard let bearer = Credentials.bearerToken(request.headers["Authorization"]) else { throw .notAuthenticated }
        guard Crypto.constantTimeEquals(bearer, config.secretKey) else { throw .notAuthenticated }
    }

    /// The admin API: the service role's key, or the analytics secret key.
    func requireAdmin(_ request: HTTPRequest) throws(AnalyticsError) {
        if isServiceRole(request) { return }
        try requireSecretKey(request)
    }
}
