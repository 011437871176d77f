import Postgres

/// A function call's statement from its plan.
extension QueryWriter {
    static func statement(_ plan: CallPlan) -> SQL {
        var sql = SQLBuilder()
        let never = plan.callsNothing ? " WHERE false" : ""
        switch plan.result {
        case .void:
            sql.unsafeRaw("SELECT NULL::bigint AS total, 1::bigint AS page_total, NULL::text AS body, NULL::bigint AS inserted FROM (SELECT ")
            write(plan.invocation, into: &sql)
            sql.unsafeRaw(never + ") pgrst_call")
            return sql.sql
        case .rows(let rows):
            writeSource(plan, into: &sql) { write(rows, into: &$0) }
            write(plan.answer, into: &sql)
        case .scalar(let body):
            writeSource(plan, into: &sql) { sql in
                sql.unsafeRaw("SELECT ")
                write(plan.invocation, into: &sql)
                sql.unsafeRaw(" AS pgrst_scalar" + never)
            }
            sql.unsafeRaw("SELECT ")
            switch plan.answer.total {
            case .all: sql.unsafeRaw("(SELECT pg_catalog.count(*) FROM pgrst_all)")
            case .page: sql.unsafeRaw("pg_catalog.count(*)")
            case .none, .rows, .capped: sql.unsafeRaw("NULL::bigint")
            }
            // `count(*)`: one whole-row reference only (see `StatementWriter`).
            sql.unsafeRaw(" AS total, pg_catalog.count(*) AS page_total, ")
            switch body {
            case .custom(let custom): sql.unsafeRaw(customBody(custom))
            case .array: sql.unsafeRaw("coalesce(json_agg(_postgrest_t.pgrst_scalar), '[]')::text")
            case .first(let nullForNone): sql.unsafeRaw("coalesce((json_agg(_postgrest_t.pgrst_scalar) -> 0)::text, \(nullForNone ? "'null'" : "''"))")
            }
            sql.unsafeRaw(" AS body, NULL::bigint AS inserted FROM pgrst_source _postgrest_t")
        }
        return sql.sql
    }

    /// `WITH pgrst_source AS (rows LIMIT …) `, or with `Prefer: count` (`exact`, `planned` and
    /// `estimated` alike: a function's rows cannot be estimated without running it) the rows once
    /// as `pgrst_all`, which the total counts, and the page taken from them: the function runs
    /// once either way.
    static func writeSource(_ plan: CallPlan, into sql: inout SQLBuilder, rows: (inout SQLBuilder) -> Void) {
        if plan.counted {
            sql.unsafeRaw("WITH pgrst_all AS (")
            rows(&sql)
            sql.unsafeRaw("), pgrst_source AS (SELECT * FROM pgrst_all")
        } else {
            sql.unsafeRaw("WITH pgrst_source AS (")
            rows(&sql)
        }
        writeRange(limit: plan.limit, offset: plan.offset, into: &sql)
        sql.unsafeRaw(") ")
    }

    /// `"public"."f"(a := $1::integer, VARIADIC v := $2::text[])`.
    static func write(_ invocation: CallPlan.Invocation, into sql: inout SQLBuilder) {
        sql.unsafeRaw(qualified(invocation.function))
        sql.unsafeRaw("(")
        for (index, argument) in invocation.arguments.enumerated() {
            if index > 0 { sql.unsafeRaw(", ") }
            if argument.variadic { sql.unsafeRaw("VARIADIC ") }
            if let name = argument.name {
                sql.unsafeRaw(quoteIdentifier(name))
                sql.unsafeRaw(" := ")
            }
            sql.bind(argument.value)
            sql.unsafeRaw("::")
            sql.unsafeRaw(argument.type)
        }
        sql.unsafeRaw(")")
    }
}
