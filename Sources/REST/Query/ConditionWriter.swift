import Postgres

/// Filters and the ownership rule as SQL over one table (PostgREST's SqlFragment): columns
/// quoted from the schema cache, every operand a bind.
extension QueryBuilder {
    /// Throws 42703 for a filter on a column the table lacks.
    func validate(_ conditions: [Condition]) throws(RESTError) {
        for condition in conditions {
            switch condition {
            case .filter(let filter):
                if !table.hasField(filter.column) { throw .unknownColumn(column: filter.column, table: table.name) }
            case .not(let inner): try validate([inner])
            case .and(let items), .or(let items): try validate(items)
            case .scope(.family(let column, _, _, _)), .scope(.familyID(let column, _, _)):
                if table.column(column) == nil { throw .unknownColumn(column: column, table: table.name) }
            }
        }
    }

    func write(_ condition: Condition, into sql: inout SQLBuilder) {
        switch condition {
        case .not(let inner):
            sql.raw("NOT ")
            write(inner, into: &sql)
        case .and(let items), .or(let items):
            let separator: String
            if case .and = condition { separator = " AND " } else { separator = " OR " }
            sql.raw("(")
            for (index, item) in items.enumerated() {
                if index > 0 { sql.raw(separator) }
                write(item, into: &sql)
            }
            sql.raw(")")
        case .filter(let filter):
            write(filter, into: &sql)
        case .scope(let scope):
            write(scope, into: &sql)
        }
    }

    /// The ownership middleware's rule, with the caller's id bound and the membership table's
    /// names quoted.
    func write(_ scope: OwnershipScope, into sql: inout SQLBuilder) {
        switch scope {
        case .family(let column, let user, let ownerOnly, let membership):
            let table = QueryWriter.qualified(QualifiedIdentifier(schema: membership.schema, name: membership.table))
            let family = quoteIdentifier(membership.familyColumn)
            let member = quoteIdentifier(membership.userColumn)
            sql.raw("(")
            writeColumn(column, into: &sql)
            sql.raw(" = ")
            sql.bind(user)
            sql.raw(" OR ")
            writeColumn(column, into: &sql)
            sql.raw(" IN (SELECT theirs.\(member) FROM \(table) mine JOIN \(table) theirs ON theirs.\(family) = mine.\(family) WHERE mine.\(member) = ")
            sql.bind(user)
            if ownerOnly {
                sql.raw(" AND mine.\(quoteIdentifier(membership.roleColumn)) = ")
                sql.bind(membership.ownerRole)
            }
            sql.raw("))")
        case .familyID(let column, let user, let membership):
            writeColumn(column, into: &sql)
            sql.raw(
                " IN (SELECT mine.\(quoteIdentifier(membership.familyColumn)) FROM \(QueryWriter.qualified(QualifiedIdentifier(schema: membership.schema, name: membership.table))) mine WHERE mine.\(quoteIdentifier(membership.userColumn)) = "
            )
            sql.bind(user)
            sql.raw(")")
        }
    }

    /// One filter (PostgREST's SqlFragment.pgFmtFilter): operands are unknown-typed binds that
    /// PostgreSQL casts to the column's type.
    func write(_ filter: Filter, into sql: inout SQLBuilder) {
        if [.fts, .plfts, .phfts, .wfts].contains(filter.op), let type = table.fieldType(filter.column),
            !(table.column(filter.column)?.isTSVector ?? (type == "tsvector")) || !filter.jsonPath.isEmpty
        {
            // PostgREST searches a text or json column through to_tsvector([language,] column).
            sql.raw("to_tsvector(")
            if let language = filter.language {
                sql.bind(language)
                sql.raw("::regconfig, ")
            }
            writeField(filter.column, path: filter.jsonPath, into: &sql)
            sql.raw(")")
        } else {
            writeField(filter.column, path: filter.jsonPath, into: &sql)
        }
        switch filter.operand {
        case .isValue(let value):
            switch value {
            case .null: sql.raw(" IS NULL")
            case .notNull: sql.raw(" IS NOT NULL")
            case .true: sql.raw(" IS TRUE")
            case .false: sql.raw(" IS FALSE")
            case .unknown: sql.raw(" IS UNKNOWN")
            }
        case .list(let items):
            // = ANY($1), not IN ($1, $2, …): one bind, one statement text per shape, and an empty list works.
            sql.raw(" = ANY(")
            if let parser = textParser(filter) {
                // Each element through the domain's text parser (PostgREST's unnest of the list).
                sql.raw("SELECT \(parser)(unnest(")
                sql.bind(SQL.arrayLiteral(items))
                sql.raw("::text[]))")
            } else {
                sql.bind(SQL.arrayLiteral(items))
            }
            sql.raw(")")
        case .value(let value) where filter.quantifier != nil:
            // `col LIKE ANY($1)` with the `{…}` list as one array bind (`*` is `%` in patterns).
            sql.raw(Self.symbol(filter.op) ?? " = ")
            sql.raw(filter.quantifier == .all ? "ALL(" : "ANY(")
            if let parser = textParser(filter) {
                sql.raw("SELECT \(parser)(unnest(")
                sql.bind(Self.operandText(filter.op, value))
                sql.raw("::text[]))")
            } else {
                sql.bind(Self.operandText(filter.op, value))
            }
            sql.raw(")")
        case .value(let value):
            if let symbol = Self.symbol(filter.op) {
                sql.raw(symbol)
                if let parser = textParser(filter) {
                    sql.raw(parser)
                    sql.raw("(")
                    sql.bind(value)
                    sql.raw("::text)")
                } else {
                    sql.bind(Self.operandText(filter.op, value))
                }
                return
            }
            // The full-text operators: `@@ to_tsquery([language,] value)`.
            let function: String
            switch filter.op {
            case .plfts: function = "plainto_tsquery"
            case .phfts: function = "phraseto_tsquery"
            case .wfts: function = "websearch_to_tsquery"
            case .fts: function = "to_tsquery"
            case .eq, .neq, .gt, .gte, .lt, .lte, .like, .ilike, .match, .imatch, .in, .is, .isdistinct, .cs, .cd, .ov, .sl, .sr, .nxl, .nxr, .adj:
                // Written with their symbol above.
                return
            }
            sql.raw(" @@ \(function)(")
            if let language = filter.language {
                sql.bind(language)
                sql.raw("::regconfig, ")
            }
            sql.bind(value)
            sql.raw(")")
        }
    }

    /// The text → domain function a filter's value goes through (PostgREST's domain
    /// representations): on a column (no JSON path) whose domain has one, for every operator but
    /// `like`/`ilike` (patterns), `isdistinct`, `is` and full-text search, as PostgREST.
    func textParser(_ filter: Filter) -> String? {
        guard filter.jsonPath.isEmpty, let parser = table.column(filter.column)?.representation.fromText else { return nil }
        switch filter.op {
        case .like, .ilike, .isdistinct, .is, .fts, .plfts, .phfts, .wfts: return nil
        case .eq, .neq, .gt, .gte, .lt, .lte, .match, .imatch, .in, .cs, .cd, .ov, .sl, .sr, .nxl, .nxr, .adj: return parser
        }
    }

    /// The SQL operator of a binary filter (PostgREST's SqlFragment.operators); nil for the
    /// full-text ones, written as a function call.
    static func symbol(_ op: FilterOperator) -> String? {
        switch op {
        case .eq, .in, .is: return " = "
        case .neq: return " <> "
        case .gt: return " > "
        case .gte: return " >= "
        case .lt: return " < "
        case .lte: return " <= "
        case .like: return " LIKE "
        case .ilike: return " ILIKE "
        case .match: return " ~ "
        case .imatch: return " ~* "
        case .isdistinct: return " IS DISTINCT FROM "
        case .cs: return " @> "
        case .cd: return " <@ "
        case .ov: return " && "
        case .sl: return " << "
        case .sr: return " >> "
        // PostgREST: nxr "does not extend to the right" (&<), nxl "… to the left" (&>).
        case .nxr: return " &< "
        case .nxl: return " &> "
        case .adj: return " -|- "
        case .fts, .plfts, .phfts, .wfts: return nil
        }
    }

    /// `*` stands for `%` in like patterns (URLs and `%` don't mix).
    static func operandText(_ op: FilterOperator, _ value: String) -> String {
        op == .like || op == .ilike ? String(value.map { $0 == "*" ? "%" : $0 }) : value
    }
}
