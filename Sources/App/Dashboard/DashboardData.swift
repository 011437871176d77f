import Foundation
import HTTP
import Postgres

/// A table of results: rendered as JSON (numbers as numbers) and as CSV, from the same rows.
struct DashboardTable: Sendable {
    let columns: [String]
    /// Columns whose values are numbers (rendered unquoted in JSON).
    let numeric: Set<String>
    let rows: [[String?]]

    init(_ result: QueryResult, numeric: Set<String>) {
        columns = result.columns
        self.numeric = numeric
        rows = (0..<result.count).map { row in (0..<result.columns.count).map { result[row, $0] } }
    }

    var json: String {
        "["
            + rows.map { row in
                "{"
                    + zip(columns, row).map { column, value in
                        let rendered: String
                        if let value {
                            if numeric.contains(column), let number = Double(value), number.isFinite { rendered = value } else { rendered = jsonString(value) }
                        } else {
                            rendered = "null"
                        }
                        return jsonString(column) + ":" + rendered
                    }.joined(separator: ",") + "}"
            }.joined(separator: ",") + "]"
    }

    /// RFC 4180 CSV with a header row; text cells a spreadsheet would run as a formula are
    /// prefixed with `'`.
    var csv: String {
        func cell(_ column: String, _ value: String?) -> String {
            guard var value else { return "" }
            if !numeric.contains(column), let first = value.first, "=+-@\t\r".contains(first) { value = "'" + value }
            if value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
                return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            }
            return value
        }
        var out = columns.map { cell("", $0) }.joined(separator: ",") + "\r\n"
        for row in rows { out += zip(columns, row).map { cell($0, $1) }.joined(separator: ",") + "\r\n" }
        return out
    }
}

/// A request's refusal with a JSON message (the dashboard's own `{"message": …}` shape).
struct DashboardError: Error, HTTPResponseError {
    let status: HTTPStatus
    let message: String
    init(_ status: HTTPStatus, _ message: String) {
        self.status = status
        self.message = message
    }
    func response(for request: HTTPRequest) -> HTTPResponse { Dashboard.secured(.error(status, message)) }
}

/// The onboarding analytics the dashboard shows: the `analytics` functions of the migration
/// 20251125000000_onboarding_analytics, called as the service role (the only role granted them).
enum DashboardAnalytics {
    /// The window and cohort of one request.
    struct Query: Sendable, Equatable {
        var from: String?
        var to: String?
        var cohort: String
        var stuckHours: Int

        static let cohorts = ["all", "day", "week", "provider"]

        /// From the query string: `from`/`to` as dates (`2025-06-02`, UTC midnight) or ISO 8601
        /// times, `cohort` one of `cohorts`, `stuck_hours` 1…8760.
        init(_ request: HTTPRequest) throws {
            func time(_ name: String) throws -> String? {
                guard let text = request.queryValue(name), !text.isEmpty else { return nil }
                if text.range(of: #"^\d{4}-\d{2}-\d{2}$"#, options: .regularExpression) != nil { return text + "T00:00:00Z" }
                guard text.range(of: #"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)$"#, options: .regularExpression) != nil
                else {
                    throw DashboardError(.badRequest, "\(name) must be a date (YYYY-MM-DD) or an ISO 8601 time with a zone")
                }
                return text
            }
            from = try time("from")
            to = try time("to")
            cohort = request.queryValue("cohort").flatMap { $0.isEmpty ? nil : $0 } ?? "all"
            guard Self.cohorts.contains(cohort) else { throw DashboardError(.badRequest, "cohort must be one of \(Self.cohorts.joined(separator: ", "))") }
            if let text = request.queryValue("stuck_hours"), !text.isEmpty {
                guard let hours = Int(text), (1...8760).contains(hours) else { throw DashboardError(.badRequest, "stuck_hours must be 1…8760") }
                stuckHours = hours
            } else {
                stuckHours = 24
            }
        }
    }

    /// The tables, by the name the CSV endpoint takes.
    static let tables = [
        "summary", "funnel", "drop_off", "step_durations", "daily_completion", "time_to_completion", "state_counts",
        "children_per_completed_user", "anonymous_upgrades", "stuck_users"
    ]

    /// The tables that name users (their e-mail from auth.users, which the service role may not
    /// read): read as the server's own role, still read-only.
    static let ownerTables: Set<String> = ["stuck_users"]

    /// The daily series needs both bounds: without them, the last 30 UTC days up to today.
    static func statement(_ table: String, _ q: Query) -> (SQL, Set<String>)? {
        let from = q.from
        let to = q.to
        let cohort = q.cohort
        switch table {
        case "summary": return summary(q)
        case "stuck_users": return stuckUsers(q)
        case "funnel":
            return (
                """
                SELECT cohort, step_no, step, users_reached, pct_of_previous, pct_of_first
                  FROM analytics.funnel(\(from)::timestamptz, \(to)::timestamptz, \(cohort))
                """, ["step_no", "users_reached", "pct_of_previous", "pct_of_first"]
            )
        case "drop_off":
            return (
                """
                SELECT cohort, step_no, step, users_at_step, users_stuck, pct_stuck_of_cohort
                  FROM analytics.drop_off(\(from)::timestamptz, \(to)::timestamptz, \(cohort), \(q.stuckHours)::integer)
                """, ["step_no", "users_at_step", "users_stuck", "pct_stuck_of_cohort"]
            )
        case "step_durations":
            return (
                """
                SELECT cohort, step_no, step, visits,
                       round(extract(epoch FROM median), 1) AS median_seconds, round(extract(epoch FROM p90), 1) AS p90_seconds
                  FROM analytics.step_durations(\(from)::timestamptz, \(to)::timestamptz, \(cohort))
                """, ["step_no", "visits", "median_seconds", "p90_seconds"]
            )
        case "time_to_completion":
            return (
                """
                SELECT cohort, users_completed, round(extract(epoch FROM median), 1) AS median_seconds,
                       round(extract(epoch FROM p90), 1) AS p90_seconds, round(extract(epoch FROM average), 1) AS average_seconds
                  FROM analytics.time_to_completion(\(from)::timestamptz, \(to)::timestamptz, \(cohort))
                """, ["users_completed", "median_seconds", "p90_seconds", "average_seconds"]
            )
        case "state_counts":
            return (
                """
                SELECT cohort, step_no, step, users, pct_of_cohort
                  FROM analytics.state_counts(\(from)::timestamptz, \(to)::timestamptz, \(cohort))
                """, ["step_no", "users", "pct_of_cohort"]
            )
        case "children_per_completed_user":
            return (
                """
                SELECT cohort, users_completed, children, average, median
                  FROM analytics.children_per_completed_user(\(from)::timestamptz, \(to)::timestamptz, \(cohort))
                """, ["users_completed", "children", "average", "median"]
            )
        case "anonymous_upgrades":
            return (
                """
                SELECT cohort, anonymous_users, upgraded_users, pct_upgraded
                  FROM analytics.anonymous_upgrades(\(from)::timestamptz, \(to)::timestamptz, \(cohort))
                """, ["anonymous_users", "upgraded_users", "pct_upgraded"]
            )
        case "daily_completion": return dailyCompletion(q)
        default:
            return nil
        }
    }

    /// The numbers a product manager asks first, for the window and for the window of the
    /// same length before it (everyone: the cohort does not split them): sign-ups, the
    /// share of them who completed, completions, and the median time to complete.
    static func summary(_ q: Query) -> (SQL, Set<String>) {
        let from = q.from
        let to = q.to
        return (
            """
            WITH bounds AS (
              SELECT coalesce(\(from)::timestamptz, date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '29 days') AS f,
                     coalesce(\(to)::timestamptz, date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 day') AS t
            ), periods AS (
              SELECT 1 AS n, 'current' AS period, f, t FROM bounds
              UNION ALL SELECT 2, 'previous', f - (t - f), f FROM bounds
            )
            SELECT p.period, to_char(p.f AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS period_from,
                   to_char(p.t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS period_to,
                   d.sign_ups, d.completions, round(100.0 * d.sign_ups_completed / nullif(d.sign_ups, 0), 1) AS completion_rate_pct,
                   (SELECT round(extract(epoch FROM x.median), 1) FROM analytics.time_to_completion(p.f, p.t, 'all') x) AS median_seconds_to_complete
              FROM periods p
              CROSS JOIN LATERAL (
                SELECT coalesce(sum(c.signed_up), 0) AS sign_ups, coalesce(sum(c.signed_up_completed), 0) AS sign_ups_completed,
                       coalesce(sum(c.completions), 0) AS completions
                  FROM analytics.daily_completion(p.f, p.t, 'all') c
              ) d
             ORDER BY p.n
            """, ["sign_ups", "completions", "completion_rate_pct", "median_seconds_to_complete"]
        )
    }

    /// Who is stuck: at a step (not COMPLETE) longer than the threshold, the longest first.
    static func stuckUsers(_ q: Query) -> (SQL, Set<String>) {
        let from = q.from
        let to = q.to
        return (
            """
            SELECT c.user_id::text AS user_id, u.email, coalesce(g.state, 'NOT_STARTED') AS step,
                   to_char(coalesce(g.state_since, c.signed_up_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS stuck_since,
                   round(extract(epoch FROM now() - coalesce(g.state_since, c.signed_up_at)) / 3600, 1) AS hours_stuck
              FROM analytics.cohort_users(\(from)::timestamptz, \(to)::timestamptz, 'all') c
              JOIN auth.users u ON u.id = c.user_id
              LEFT JOIN analytics.onboarding_progress g ON g.user_id = c.user_id
             WHERE coalesce(g.state, 'NOT_STARTED') <> 'COMPLETE'
               AND coalesce(g.state_since, c.signed_up_at) < now() - make_interval(hours => \(q.stuckHours)::integer)
             ORDER BY coalesce(g.state_since, c.signed_up_at), c.user_id
             LIMIT 100
            """, ["hours_stuck"]
        )
    }

    /// Without both bounds: the last 30 UTC days up to today.
    static func dailyCompletion(_ q: Query) -> (SQL, Set<String>) {
        let from = q.from
        let to = q.to
        let cohort = q.cohort
        return (
            """
            SELECT to_char(day, 'YYYY-MM-DD') AS day, cohort, signed_up, signed_up_completed, completion_rate_pct, completions
              FROM analytics.daily_completion(
                   coalesce(\(from)::timestamptz, date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '29 days'),
                   coalesce(\(to)::timestamptz, date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 day'),
                   \(cohort))
            """, ["signed_up", "signed_up_completed", "completion_rate_pct", "completions"]
        )
    }

    /// Runs the named tables in one read-only transaction as the service role.
    static func load(_ names: [String], _ q: Query, pool: Pool) throws -> [(String, DashboardTable)] {
        try checkWindow(q)
        do {
            return try pool.withTransaction { connection in
                // The owner's tables first, then the rest as the service role.
                _ = try connection.query("SELECT set_config('transaction_read_only', 'on', true)")
                var results: [String: DashboardTable] = [:]
                for name in names.sorted(by: { ownerTables.contains($0) && !ownerTables.contains($1) }) {
                    guard let (sql, numeric) = statement(name, q) else { throw DashboardError(.notFound, "no table named \(name)") }
                    if !ownerTables.contains(name), results.keys.allSatisfy(ownerTables.contains) {
                        _ = try connection.query("SELECT set_config('role', 'service_role', true)")
                    }
                    results[name] = DashboardTable(try connection.query(sql), numeric: numeric)
                }
                return names.map { ($0, results[$0]!) }
            }
        } catch let error as PostgresError where error.sqlState?.hasPrefix("22") == true {
            throw DashboardError(.badRequest, error.message)
        }
    }
}

extension DashboardAnalytics {
    /// `to` after `from`, at most 366 days apart.
    static func checkWindow(_ q: Query) throws {
        if let from = q.from, let to = q.to, let start = ISO8601DateFormatter.parse(from), let end = ISO8601DateFormatter.parse(to) {
            guard end > start else { throw DashboardError(.badRequest, "to must be after from") }
            guard end.timeIntervalSince(start) <= 366 * 86400 + 1 else { throw DashboardError(.badRequest, "the window is at most 366 days") }
        }
    }
}

extension ISO8601DateFormatter {
    /// An ISO 8601 time with or without fractional seconds.
    static func parse(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text.replacingOccurrences(of: " ", with: "T")) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text.replacingOccurrences(of: " ", with: "T"))
    }
}
