import Postgres

/// The SQL of one request: the main statement (whose result has the columns `total`,
/// `page_total`, `body` and, for upserts, `all_updated`) and how it must run.
struct QueryPlan {
    var statement: SQL
    /// True when the caller must look at the result before the transaction may commit
    /// (single-object Accept, max-affected, tx=rollback): then it runs inside BEGIN … and is
    /// committed or rolled back in a second round trip.
    var needsDecision: Bool
    var readOnly: Bool
}

/// Builds SQL from a checked request. Identifiers come only from the schema cache (`\(ident:)`),
/// values only as binds.
struct QueryBuilder {
    let table: SchemaCache.Table

    var qualified: SQL { "\(unsafeRaw: quoteIdentifier("public")).\(ident: table.name)" }

    func column(_ name: String) throws(RESTError) -> SQL {
        guard table.column(name) != nil else { throw .unknownColumn(column: name, table: table.name) }
        return "\(qualified).\(ident: name)"
    }

    /// The select list; `*` expands to every column so extra bookkeeping columns never leak.
    func selectList(_ items: [SelectItem]) throws(RESTError) -> SQL {
        var parts: [SQL] = []
        for item in items {
            if item.isStar {
                parts += table.columns.map { "_src.\(ident: $0.name)" }
                continue
            }
            guard table.column(item.column) != nil else { throw .unknownColumn(column: item.column, table: table.name) }
            var part: SQL = "_src.\(ident: item.column)"
            if let cast = item.cast { part = "\(part)::\(unsafeRaw: cast)" }  // cast: validated identifier-like type name
            if item.alias != nil || item.cast != nil { part = "\(part) AS \(ident: item.alias ?? item.column)" }
            parts.append(part)
        }
        return SQL.join(parts, separator: ", ")
    }

    func whereClause(_ condition: Condition?) throws(RESTError) -> SQL {
        guard let condition else { return "" }
        return " WHERE " + (try sql(for: condition))
    }

    func sql(for condition: Condition) throws(RESTError) -> SQL {
        switch condition {
        case .not(let inner): return "NOT (\(try sql(for: inner)))"
        case .and(let items): return "(" + SQL.join(try items.map { item throws(RESTError) in try sql(for: item) }, separator: " AND ") + ")"
        case .or(let items): return "(" + SQL.join(try items.map { item throws(RESTError) in try sql(for: item) }, separator: " OR ") + ")"
        case .filter(let filter): return try sql(for: filter)
        }
    }

    func sql(for filter: Filter) throws(RESTError) -> SQL {
        let column = try column(filter.column)
        let value = filter.value
        switch filter.op {
        case .eq: return "\(column) = \(value)"
        case .neq: return "\(column) <> \(value)"
        case .gt: return "\(column) > \(value)"
        case .gte: return "\(column) >= \(value)"
        case .lt: return "\(column) < \(value)"
        case .lte: return "\(column) <= \(value)"
        case .like: return "\(column)::text LIKE \(value.replacingStars())"
        case .ilike: return "\(column)::text ILIKE \(value.replacingStars())"
        case .match: return "\(column)::text ~ \(value)"
        case .imatch: return "\(column)::text ~* \(value)"
        // = ANY($1) rather than IN ($1, $2, …): one bind, one statement text, and an empty list works.
        case .in: return "\(column) = ANY(\(array: filter.list))"
        case .is:
            switch value.lowercased() {
            case "null": return "\(column) IS NULL"
            case "not_null": return "\(column) IS NOT NULL"
            case "true": return "\(column) IS TRUE"
            case "false": return "\(column) IS FALSE"
            default: return "\(column) IS UNKNOWN"
            }
        case .isdistinct: return "\(column) IS DISTINCT FROM \(value)"
        case .cs: return "\(column) @> \(value)"
        case .cd: return "\(column) <@ \(value)"
        case .ov: return "\(column) && \(value)"
        case .fts, .plfts, .phfts, .wfts:
            let function = ["fts": "to_tsquery", "plfts": "plainto_tsquery", "phfts": "phraseto_tsquery", "wfts": "websearch_to_tsquery"][filter.op.rawValue]!
            if let language = filter.language {
                return "to_tsvector(\(language)::regconfig, \(column)::text) @@ \(unsafeRaw: function)(\(language)::regconfig, \(value))"
            }
            return "to_tsvector(\(column)::text) @@ \(unsafeRaw: function)(\(value))"
        }
    }

    func orderClause(_ terms: [OrderTerm]) throws(RESTError) -> SQL {
        guard !terms.isEmpty else { return "" }
        let parts = try terms.map { term throws(RESTError) -> SQL in
            var part = try column(term.column)
            part.append(term.descending ? " DESC" : " ASC")
            if let nullsFirst = term.nullsFirst { part.append(nullsFirst ? " NULLS FIRST" : " NULLS LAST") }
            return part
        }
        return " ORDER BY " + SQL.join(parts, separator: ", ")
    }

    /// The final SELECT over `pgrst_source`, shared by every statement.
    func aggregate(select: [SelectItem], single: Bool, total: SQL?, upsert: Bool) throws(RESTError) -> SQL {
        let body: SQL = single ? "coalesce((json_agg(_agg) -> 0)::text, '')" : "coalesce(json_agg(_agg), '[]')::text"
        let totalSQL: SQL = total ?? "NULL::bigint"
        let allUpdated: SQL = upsert ? ", (SELECT coalesce(bool_and(NOT pgrst_inserted), false) FROM pgrst_source) AS all_updated" : ""
        return "SELECT \(totalSQL) AS total, count(*) AS page_total, \(body) AS body\(allUpdated) FROM (SELECT \(try selectList(select)) FROM pgrst_source _src) _agg"
    }
}

extension String {
    /// PostgREST lets `*` stand for `%` in like patterns (URLs and `%` don't mix).
    func replacingStars() -> String { String(map { $0 == "*" ? "%" : $0 }) }
}
