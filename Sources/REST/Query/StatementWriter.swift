import Postgres

/// The statement of a table request: `WITH pgrst_source AS (<read or write>) <answer>`.
extension QueryWriter {
    static func statement(_ plan: TableStatementPlan) -> SQL {
        var sql = SQLBuilder()
        sql.unsafeRaw("WITH pgrst_source AS (")
        switch plan.source {
        case .read(let read): write(read, into: &sql)
        case .mutate(let mutate): write(mutate, into: &sql)
        }
        sql.unsafeRaw(") ")
        write(plan.answer, into: &sql)
        return sql.sql
    }

    /// `EXPLAIN (FORMAT JSON) SELECT 1 FROM …`: the planner's estimate of a read's rows.
    static func plannedCount(_ rows: ReadPlan) -> SQL {
        var sql = SQLBuilder()
        sql.unsafeRaw("EXPLAIN (FORMAT JSON) ")
        write(rows, into: &sql)
        return sql.sql
    }

    /// `EXPLAIN (FORMAT …, ANALYZE, …) `: the plan media type's options are its own constants.
    static func explainPrefix(_ media: Explain) -> SQL {
        SQL(unsafeSQL: "EXPLAIN (FORMAT \(media.json ? "JSON" : "TEXT")" + media.options.map { ", " + $0.uppercased() }.joined() + ") ")
    }

    /// PostgREST's outer query: `total`, `page_total`, `body` (built by PostgreSQL) and
    /// `inserted`, over the rows of `pgrst_source` (or a select over them).
    static func write(_ answer: AnswerPlan, into sql: inout SQLBuilder) {
        func rows(_ sql: inout SQLBuilder) {
            switch answer.rows {
            case .source: sql.unsafeRaw("pgrst_source")
            case .read(let read): writeSubquery(read, into: &sql)
            }
        }
        sql.unsafeRaw("SELECT ")
        switch answer.total {
        case .none: sql.unsafeRaw("NULL::bigint")
        case .rows(let counted): writeSubquery(counted, into: &sql)
        case .capped(let rows):
            sql.unsafeRaw("(SELECT pg_catalog.count(*) FROM ")
            writeSubquery(rows, into: &sql)
            sql.unsafeRaw(" pgrst_capped)")
        case .all: sql.unsafeRaw("(SELECT pg_catalog.count(*) FROM pgrst_all)")
        case .page: sql.unsafeRaw("pg_catalog.count(*)")
        }
        // `count(*)`, not `count(_postgrest_t)` (PostgREST's): the same number, as a row is never
        // a NULL datum, but a second whole-row reference would have PostgreSQL build each row
        // twice, every embed and computed column in it evaluated twice.
        sql.unsafeRaw(" AS total, pg_catalog.count(*) AS page_total, ")
        if !answer.locationKeys.isEmpty {
            // Each row's key values as JSON (PostgREST reads them through row_to_json).
            sql.unsafeRaw("coalesce(json_agg(json_build_array(")
            sql.unsafeRaw(answer.locationKeys.map { "to_json(_postgrest_t." + quoteIdentifier($0) + ")" }.joined(separator: ", "))
            sql.unsafeRaw(")), '[]')::text")
        } else {
            writeBody(answer.media, nullForEmptyObject: answer.nullForEmptyObject, rows: rows, into: &sql)
        }
        sql.unsafeRaw(" AS body, ")
        sql.unsafeRaw(answer.countsInserted ? "(SELECT pg_catalog.count(*) FILTER (WHERE pgrst_inserted) FROM pgrst_source)" : "NULL::bigint")
        sql.unsafeRaw(" AS inserted FROM ")
        rows(&sql)
        sql.unsafeRaw(" _postgrest_t")
    }

    /// The body in the negotiated media, aggregated over `_postgrest_t`'s rows.
    static func writeBody(
        _ media: ApiRequest.Media, nullForEmptyObject: Bool, rows: (inout SQLBuilder) -> Void, into sql: inout SQLBuilder
    ) {
        switch media {
        case .json, .openAPI:
            sql.unsafeRaw("coalesce(json_agg(_postgrest_t), '[]')::text")
        case .strippedArray:
            sql.unsafeRaw("coalesce(json_agg(json_strip_nulls(row_to_json(_postgrest_t))), '[]')::text")
        case .singleObject(let strip):
            let object = strip ? "json_strip_nulls(json_agg(_postgrest_t) -> 0)" : "(json_agg(_postgrest_t) -> 0)"
            sql.unsafeRaw("coalesce(\(object)::text, \(nullForEmptyObject ? "'null'" : "''"))")
        case .custom(let custom):
            sql.unsafeRaw(customBody(custom))
        case .csv:
            // Header from the first row's keys, then each row's record text without its
            // parentheses (PostgREST's asCsvF).
            sql.unsafeRaw("(SELECT coalesce(string_agg(a.k, ','), '') FROM (SELECT json_object_keys(r)::text AS k FROM (SELECT row_to_json(hh) AS r FROM ")
            rows(&sql)
            sql.unsafeRaw(
                " AS hh LIMIT 1) s) a) || chr(10) || coalesce(string_agg(substring(_postgrest_t::text, 2, length(_postgrest_t::text) - 2), chr(10)), '')")
        }
    }

    /// The body of a custom media handler over `_postgrest_t`'s rows, as text (bytes as hex).
    static func customBody(_ media: ApiRequest.CustomMedia) -> String {
        let value: String
        let row = media.scalar ? "_postgrest_t.pgrst_scalar" : "_postgrest_t"
        if let aggregate = media.aggregate {
            value = aggregate + "(" + row + (media.rowType.map { "::" + $0 } ?? "") + ")"
        } else {
            // The function's one value is the body (array_agg: any type, xml too).
            value = "(pg_catalog.array_agg(" + row + "))[1]"
        }
        return media.binary ? "pg_catalog.encode(" + value + ", 'hex')" : "(" + value + ")::text"
    }
}
