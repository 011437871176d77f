import Analytics
import Foundation
import HTTP
import Postgres

/// The product analytics the dashboard shows (the apps' own events, in `product_analytics`):
/// events over time, by one property, the top events; and every experiment's report. Read as
/// the onboarding numbers are: one read-only transaction as the service role.
enum DashboardProduct {
    /// The window of a query: without dates, the last 30 UTC days up to today (as the onboarding page).
    static func bounds(_ q: DashboardAnalytics.Query) -> SQL {
        """
        SELECT coalesce(\(q.from)::timestamptz, date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '29 days') AS f,
               coalesce(\(q.to)::timestamptz, date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 day') AS t
        """
    }

    /// The events page's choices besides the window: one event (nil: every event) and the
    /// property the breakdown groups by.
    struct EventsQuery: Sendable, Equatable {
        var window: DashboardAnalytics.Query
        var event: String?
        var breakdown: String

        init(_ request: HTTPRequest) throws {
            window = try DashboardAnalytics.Query(request)
            event = request.queryValue("event").flatMap { $0.isEmpty ? nil : $0 }
            breakdown = request.queryValue("breakdown").flatMap { $0.isEmpty ? nil : $0 } ?? "screen"
            guard (event?.utf8.count ?? 0) <= 200, breakdown.utf8.count <= 200 else {
                throw DashboardError(.badRequest, "event and breakdown are at most 200 bytes")
            }
        }
    }

    /// One JSON object: the window, the chosen event's count per UTC day, its count by the
    /// breakdown property (the 20 most frequent values; events without it as null), the 20
    /// most frequent events with the distinct persons who sent them, and the properties the
    /// chosen events carry (for the breakdown picker; read from the latest 10,000 of them, so a
    /// busy window costs no more than that).
    static func events(_ q: EventsQuery) -> SQL {
        """
        WITH b AS (\(bounds(q.window))),
        ev AS (
          SELECT e.event, e.properties, e."timestamp", d.person_id
            FROM b, product_analytics.events AS e
            JOIN product_analytics.person_distinct_ids AS d ON d.distinct_id = e.distinct_id
           WHERE e."timestamp" >= b.f AND e."timestamp" < b.t
        ),
        chosen AS (SELECT * FROM ev WHERE \(q.event)::text IS NULL OR ev.event = \(q.event)::text),
        days AS (
          SELECT d::date AS day FROM b, generate_series((b.f AT TIME ZONE 'UTC')::date, ((b.t AT TIME ZONE 'UTC') - interval '1 microsecond')::date, interval '1 day') AS d
        ),
        per_day AS (SELECT ("timestamp" AT TIME ZONE 'UTC')::date AS day, count(*) AS n FROM chosen GROUP BY 1),
        groups AS (
          SELECT properties ->> \(q.breakdown)::text AS value, count(*) AS n, count(DISTINCT person_id) AS persons
            FROM chosen GROUP BY 1 ORDER BY count(*) DESC, 1 NULLS LAST LIMIT 20
        ),
        top AS (
          SELECT event, count(*) AS n, count(DISTINCT person_id) AS persons FROM ev GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 20
        ),
        keys AS (
          SELECT k, count(*) AS n
            FROM (SELECT properties FROM chosen ORDER BY "timestamp" DESC LIMIT 10000) AS latest, jsonb_object_keys(latest.properties) AS k
           GROUP BY 1 ORDER BY (k LIKE '$%'), count(*) DESC, 1 LIMIT 40
        )
        SELECT jsonb_build_object(
          'from', to_char(b.f AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
          'to', to_char(b.t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
          'event', \(q.event)::text, 'breakdown', \(q.breakdown)::text,
          'total', (SELECT count(*) FROM chosen), 'persons', (SELECT count(DISTINCT person_id) FROM chosen),
          'series', (SELECT coalesce(jsonb_agg(jsonb_build_object('day', to_char(days.day, 'YYYY-MM-DD'), 'count', coalesce(per_day.n, 0)) ORDER BY days.day), '[]')
                       FROM days LEFT JOIN per_day USING (day)),
          'breakdown_values', (SELECT coalesce(jsonb_agg(jsonb_build_object('value', value, 'count', n, 'persons', persons) ORDER BY n DESC, value NULLS LAST), '[]') FROM groups),
          'top_events', (SELECT coalesce(jsonb_agg(jsonb_build_object('event', event, 'count', n, 'persons', persons) ORDER BY n DESC, event), '[]') FROM top),
          'properties', (SELECT coalesce(jsonb_agg(k ORDER BY (k LIKE '$%'), n DESC, k), '[]') FROM keys)
        )::text
          FROM b
        """
    }

    /// What counts as a conversion in the experiments view: `goal_state` (default COMPLETE) or
    /// `goal_event`, within `days` (default 14) of the first exposure, as the report endpoint.
    static func goal(_ request: HTTPRequest) throws -> (ExperimentGoal, Int) {
        let state = request.queryValue("goal_state").flatMap { $0.isEmpty ? nil : $0 }
        let event = request.queryValue("goal_event").flatMap { $0.isEmpty ? nil : $0 }
        let goal: ExperimentGoal
        switch (state, event) {
        case (let state?, nil): goal = .state(state)
        case (nil, let event?): goal = .event(event)
        case (nil, nil): goal = .state("COMPLETE")
        case (.some, .some): throw DashboardError(.badRequest, "give one of goal_state and goal_event")
        }
        guard let days = Int(request.queryValue("days").flatMap { $0.isEmpty ? nil : $0 } ?? "14"), (1...365).contains(days) else {
            throw DashboardError(.badRequest, "days must be 1 to 365")
        }
        return (goal, days)
    }

    /// Every experiment (a flag with variants), each with the report endpoint's body (the same
    /// `ExperimentReport`), its name, whether it is active and its variants' weights; and the
    /// events seen in the last 90 days, to pick a goal from.
    static func experiments(_ connection: Connection, goal: ExperimentGoal, days: Int) throws -> String {
        var items: [JSON] = []
        for flag in try AnalyticsStore.flags(connection) where flag.isMultivariate {
            let weights = flag.variantWeights
            let report = ExperimentReport(counts: try AnalyticsStore.experimentCounts(connection, flag: flag.key, goal: goal, days: days), weights: weights)
            guard case .object(var members) = report.json(flag: flag.key, goal: goal, days: days) else { continue }
            members["name"] = .string(flag.name)
            members["active"] = .bool(flag.active)
            members["weights"] = .object(weights.mapValues(JSON.number))
            items.append(.object(members))
        }
        let names =
            try connection.query(
                """
                SELECT coalesce(jsonb_agg(event ORDER BY event), '[]')::text FROM (
                  SELECT DISTINCT event FROM product_analytics.events
                   WHERE "timestamp" > now() - interval '90 days' AND event NOT LIKE '$%' LIMIT 200) AS e
                """
            ).scalar ?? "[]"
        let goalJSON: JSON
        switch goal {
        case .state(let name): goalJSON = .object(["goal_state": .string(name)])
        case .event(let name): goalJSON = .object(["goal_event": .string(name)])
        }
        return #"{"goal":\#(goalJSON.text),"days":\#(days),"goal_events":\#(names),"experiments":\#(JSON.array(items).text)}"#
    }

    /// `body` in one read-only transaction as the service role (the onboarding numbers' way);
    /// a value PostgreSQL refuses (class 22) is the request's error.
    static func read<T>(_ pool: Pool, _ body: (Connection) throws -> T) throws -> T {
        do {
            return try pool.withTransaction { connection in
                _ = try connection.query("SELECT set_config('transaction_read_only', 'on', true)")
                _ = try connection.query("SELECT set_config('role', 'service_role', true)")
                return try body(connection)
            }
        } catch let error as PostgresError where error.sqlState?.hasPrefix("22") == true {
            throw DashboardError(.badRequest, error.message)
        }
    }
}
