import Foundation
import HTTP
import Postgres

/// The six success metrics of an onboarding (the app teams' TestFlight targets), each against
/// its target, for the people who signed up in the window. From the server's transitions:
/// completion rate (> 90 %), drop-off points, the median time to complete (< 5 min). From the
/// app's events in the window: voluntary account creation (people shown `account_prompt_shown`
/// who sent `account_created`, > 30 %), error frequency (error events among the app's events,
/// < 1 %) and skip patterns (`account_skipped` and every `*_skipped` event, by `screen` or
/// `section`). A metric whose denominator has no rows is "no data" (null), never 0 %.
enum DashboardMetrics {
    /// Error events: PostHog's `$exception`, `error`, and names ending in `_error` or `_failed`.
    static let errorRule = "$exception, error, *_error, *_failed"

    /// The raw numbers, as one JSON object.
    static func numbers(_ q: DashboardAnalytics.Query) -> SQL {
        """
        WITH b AS (\(DashboardProduct.bounds(q))),
        signups AS (
          SELECT coalesce(sum(c.signed_up), 0) AS n, coalesce(sum(c.signed_up_completed), 0) AS completed
            FROM b, analytics.daily_completion(b.f, b.t, 'all') AS c
        ),
        timing AS (
          SELECT x.users_completed AS n, round(extract(epoch FROM x.median), 1) AS median, round(extract(epoch FROM x.p90), 1) AS p90
            FROM b, analytics.time_to_completion(b.f, b.t, 'all') AS x
        ),
        stopped AS (
          SELECT d.step_no, d.step, d.users_at_step FROM b, analytics.drop_off(b.f, b.t, 'all', \(q.stuckHours)::integer) AS d
           WHERE d.users_at_step > 0 ORDER BY d.users_at_step DESC, d.step_no LIMIT 3
        ),
        ev AS (
          SELECT e.event, e.properties, d.person_id
            FROM b, product_analytics.events AS e
            JOIN product_analytics.person_distinct_ids AS d ON d.distinct_id = e.distinct_id
           WHERE e."timestamp" >= b.f AND e."timestamp" < b.t
        ),
        prompted AS (SELECT DISTINCT person_id FROM ev WHERE event = 'account_prompt_shown'),
        created AS (SELECT * FROM ev WHERE event = 'account_created' AND person_id IN (SELECT person_id FROM prompted)),
        app AS (
          SELECT *, (event IN ('$exception', 'error') OR event LIKE '%\\_error' OR event LIKE '%\\_failed') AS is_error
            FROM ev WHERE event NOT LIKE '$%' OR event = '$exception'
        ),
        skips AS (
          SELECT person_id, coalesce(properties ->> 'screen', properties ->> 'section', '(none)') AS screen
            FROM ev WHERE event = 'account_skipped' OR event LIKE '%\\_skipped'
        ),
        by_screen AS (SELECT screen, count(*) AS n, count(DISTINCT person_id) AS persons FROM skips GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5)
        SELECT jsonb_build_object(
          'from', to_char(b.f AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'to', to_char(b.t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
          'sign_ups', s.n, 'completed', s.completed,
          'completion_rate', round(100.0 * s.completed / nullif(s.n, 0), 1),
          'users_completed', coalesce(t.n, 0), 'median_seconds', t.median, 'p90_seconds', t.p90,
          'stopped', (SELECT coalesce(jsonb_agg(jsonb_build_object('step', step, 'users', users_at_step,
                        'pct', round(100.0 * users_at_step / nullif(s.n, 0), 1)) ORDER BY users_at_step DESC, step_no), '[]') FROM stopped),
          'prompted', (SELECT count(*) FROM prompted), 'created', (SELECT count(DISTINCT person_id) FROM created),
          'account_rate', round(100.0 * (SELECT count(DISTINCT person_id) FROM created) / nullif((SELECT count(*) FROM prompted), 0), 1),
          'methods', (SELECT coalesce(jsonb_agg(jsonb_build_object('method', m, 'persons', n) ORDER BY n DESC, m), '[]') FROM (
                        SELECT coalesce(properties ->> 'method', '(none)') AS m, count(DISTINCT person_id) AS n FROM created GROUP BY 1) AS x),
          'app_events', (SELECT count(*) FROM app), 'errors', (SELECT count(*) FROM app WHERE is_error),
          'error_rate', round(100.0 * (SELECT count(*) FROM app WHERE is_error) / nullif((SELECT count(*) FROM app), 0), 2),
          'error_persons', (SELECT count(DISTINCT person_id) FROM app WHERE is_error),
          'skips', (SELECT count(*) FROM skips), 'skip_persons', (SELECT count(DISTINCT person_id) FROM skips),
          'skip_rate', round(100.0 * (SELECT count(DISTINCT person_id) FROM skips WHERE person_id IN (SELECT person_id FROM prompted))
                             / nullif((SELECT count(*) FROM prompted), 0), 1),
          'skipped_screens', (SELECT coalesce(jsonb_agg(jsonb_build_object('screen', screen, 'skips', n, 'persons', persons) ORDER BY n DESC, screen), '[]') FROM by_screen)
        )::text
          FROM b CROSS JOIN signups AS s LEFT JOIN timing AS t ON true
        """
    }

    /// A card: the metric's value (nil: no data), its target, whether the target is met (nil
    /// when there is no target or no data) and what it is made of.
    static func card(_ key: String, _ label: String, unit: String, value: Double?, target: (String, Double)?, detail: [String: JSON]) -> JSON {
        var members = detail
        members["key"] = .string(key)
        members["label"] = .string(label)
        members["unit"] = .string(unit)
        members["value"] = value.map(JSON.number) ?? .null
        members["target"] = target.map { .object(["op": .string($0.0), "value": .number($0.1)]) } ?? .null
        if let value, let (op, bound) = target {
            members["met"] = .bool(op == ">" ? value > bound : value < bound)
        } else {
            members["met"] = .null
        }
        return .object(members)
    }

    /// The six cards from the raw numbers.
    static func cards(_ n: JSON) -> JSON {
        func number(_ key: String) -> Double? { n[key]?.number }
        func count(_ key: String) -> Double { n[key]?.number ?? 0 }
        let stopped = n["stopped"]?.array ?? []
        let screens = n["skipped_screens"]?.array ?? []
        return .array([
            card(
                "completion_rate", "Onboarding completion", unit: "percent", value: count("sign_ups") > 0 ? number("completion_rate") : nil,
                target: (">", 90), detail: ["numerator": .number(count("completed")), "denominator": .number(count("sign_ups"))]),
            card(
                "account_creation_rate", "Voluntary account creation", unit: "percent", value: count("prompted") > 0 ? number("account_rate") : nil,
                target: (">", 30),
                detail: ["numerator": .number(count("created")), "denominator": .number(count("prompted")), "methods": n["methods"] ?? .array([])]),
            card(
                "drop_off", "Drop-off points", unit: "step", value: stopped.isEmpty ? nil : stopped[0]["pct"]?.number, target: nil,
                detail: ["steps": .array(stopped), "denominator": .number(count("sign_ups"))]),
            card(
                "time_to_complete", "Time to complete (median)", unit: "seconds", value: count("users_completed") > 0 ? number("median_seconds") : nil,
                target: ("<", 300), detail: ["p90_seconds": n["p90_seconds"] ?? .null, "denominator": .number(count("users_completed"))]),
            card(
                "error_rate", "Error frequency", unit: "percent", value: count("app_events") > 0 ? number("error_rate") : nil, target: ("<", 1),
                detail: [
                    "numerator": .number(count("errors")), "denominator": .number(count("app_events")),
                    "persons": .number(count("error_persons")), "rule": .string(errorRule)
                ]),
            card(
                "skip_patterns", "Skip patterns", unit: "screen", value: screens.isEmpty ? nil : number("skip_rate"), target: nil,
                detail: [
                    "screens": .array(screens), "numerator": .number(count("skip_persons")), "denominator": .number(count("prompted")),
                    "skips": .number(count("skips"))
                ])
        ])
    }
}
