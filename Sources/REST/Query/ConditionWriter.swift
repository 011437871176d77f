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
            sql.unsafeRaw("NOT ")
            write(inner, into: &sql)
        case .and(let items), .or(let items):
            let separator: String
            if case .and = condition { separator = " AND " } else { separator = " OR " }
            sql.unsafeRaw("(")
            for (index, item) in items.enumerated() {
                if index > 0 { sql.unsafeRaw(separator) }
                write(item, into: &sql)
            }
            sql.unsafeRaw(")")
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
            sql.unsafeRaw("(")
            writeColumn(column, into: &sql)
            sql.unsafeRaw(" = ")
            sql.bind(user)
            sql.unsafeRaw(" OR ")
            writeColumn(column, into: &sql)
            sql.unsafeRaw(" IN (SELECT theirs.\(member) FROM \(table) mine JOIN \(table) theirs ON theirs.\(family) = mine.\(family) WHERE mine.\(member) = ")
            sql.bind(user)
            if ownerOnly {
                sql.unsafeRaw(" AND mine.\(quoteIdentifier(membership.roleColumn)) = ")
                sql.bind(membership.ownerRole)
            }
            sql.unsafeRaw("))")
        case .familyID(let column, let user, let membership):
            writeColumn(column, into: &sql)
            sql.unsafeRaw(
                " IN (SELECT mine.\(quoteIdentifier(membership.familyColumn)) FROM \(QueryWriter.qualified(QualifiedIdentifier(schema: membership.schema, name: membership.table))) mine WHERE mine.\(quoteIdentifier(membership.userColumn)) = "
            )
            sql.bind(user)
            sql.unsafeRaw(")")
        }
    }

    /// One filter (PostgREST's SqlFragment.pgFmtFilter): operands are unknown-typed binds that
    /// PostgreSQL casts to the column's type.
    func write(_ filter: Filter, into sql: inout SQLBuilder) {
        if [.fts, .plfts, .phfts, .wfts].contains(filter.op), let type = table.fieldType(filter.column),
            !(table.column(filter.column)?.isTSVector ?? (type == "tsvector")) || !filter.jsonPath.isEmpty
        {
            // PostgREST searches a text or json column through to_tsvector([language,] column).
            sql.unsafeRaw("to_tsvector(")
            if let language = filter.language {
                sql.bind(language)
                sql.unsafeRaw("::regconfig, ")
            }
            writeField(filter.column, path: filter.jsonPath, into: &sql)
            sql.unsafeRaw(")")
        } else {
            writeField(filter.column, path: filter.jsonPath, into: &sql)
        }
        switch filter.operand {
        case .isValue(let value):
            switch value {
            case .null: sql.unsafeRaw(" IS NULL")
            case .notNull: sql.unsafeRaw(" IS NOT NULL")
            case .true: sql.unsafeRaw(" IS TRUE")
            case .false: sql.unsafeRaw(" IS FALSE")
            case .unknown: sql.unsafeRaw(" IS UNKNOWN")
            }
        case .list(let items):
            // = ANY($1), not IN ($1, $2, …): one bind, one statement text per shape, and an empty list works.
            sql.unsafeRaw(" = ANY(")
            if let parser = textParser(filter) {
                // Each element through the domain's text parser (PostgREST's unnest of the list).
                sql.unsafeRaw("SELECT \(parser)(unnest(")
                sql.bind(SQL.arrayLiteral(items))
                sql.unsafeRaw("::text[]))")
            } else {
                sql.bind(SQL.arrayLiteral(items))
            }
            sql.unsafeRaw(")")
        case .value(let value) where filter.quantifier != nil:
            // `col LIKE ANY($1)` with the `{…}` list as one array bind (`*` is `%` in patterns).
            sql.unsafeRaw(Self.symbol(filter.op) ?? " = ")
            sql.unsafeRaw(filter.quantifier == .all ? "ALL(" : "ANY(")
            if let parser = textParser(filter) {
                sql.unsafeRaw("SELECT \(parser)(unnest(")
                sql.bind(Self.operandText(filter.op, value))
                sql.unsafeRaw("::text[]))")
            } else {
                sql.bind(Self.operandText(filter.op, value))
            }
            sql.unsafeRaw(")")
        case .value(let value):
            if let symbol = Self.symbol(filter.op) {
                sql.unsafeRaw(symbol)
                if let parser = textParser(filter) {
                    sql.unsafeRaw(parser)
                    sql.unsafeRaw("(")
                    sql.bind(value)
                    sql.unsafeRaw("::text)")
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
            sql.unsafeRaw(" @@ \(function)(")
            if let language = filter.language {
                sql.bind(language)
                sql.unsafeRaw("::regconfig, ")
            }
            sql.bind(value)
            sql.unsafeRaw(")")
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
