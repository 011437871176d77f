import HTTP
import Identity
import Postgres

/// PostgREST filters and the ownership middleware's read rule for layers that check single rows
/// (Realtime re-reading a changed row for a subscriber): the same grammar, the same validation
/// and the same SQL as a REST read, so the two cannot drift apart.
public enum RowAccess {
    /// Which rows of `table` `caller` may read, by the ownership middleware (`nil` condition:
    /// unrestricted). Returns `.none` when the caller reaches no row at all (no user).
    public enum Scope: Sendable, Equatable {
        case all
        case only(Condition)
        case none
    }

    public static func readScope(table: String, policy: OwnershipPolicy, enabled: Bool, caller: Caller) -> Scope {
        let read = ApiRequest.read(table: table)
        // A read never throws: only writes can name another owner.
        guard let decision = try? Ownership.decide(read, table: table, policy: policy, enabled: enabled, caller: caller) else { return .none }
        switch decision {
        case .unrestricted: return .all
        case .nothing: return .none
        case .owner(let column, let user): return .only(.filter(Filter(column: column, op: .eq, operand: .value(user))))
        case .scoped(let scope, _): return .only(.scope(scope))
        }
    }

    /// `column=[not.]op.value` (one PostgREST filter) parsed and checked against `table`'s columns.
    public static func parseFilter(_ text: String, table: SchemaCache.Table) throws(RESTError) -> Condition {
        guard let equals = text.firstIndex(of: "=") else {
            throw .parse(message: "\"failed to parse filter (\(text))\" (line 1, column 1)", details: "expecting \"=\"")
        }
        let condition = try QueryGrammar.parseFilter(column: String(text[..<equals]), String(text[text.index(after: equals)...]))
        // Realtime's filters name columns only (its row-key shortcut reads the filter's column).
        if case .filter(let filter) = condition, !filter.jsonPath.isEmpty {
            throw .parse(message: "\"failed to parse filter (\(text))\" (line 1, column 1)", details: "JSON paths are not supported in this filter")
        }
        try QueryBuilder(table: table).validate([condition])
        return condition
    }

    /// The conditions ANDed (`TRUE` when empty), columns written as `"table"."column"` and values
    /// as binds (append it to a statement with `SQL.+`: its binds follow the statement's).
    public static func sql(_ conditions: [Condition], table: SchemaCache.Table) throws(RESTError) -> SQL {
        let builder = QueryBuilder(table: table)
        try builder.validate(conditions)
        var sql = SQLBuilder()
        if conditions.isEmpty { sql.unsafeRaw("TRUE") }
        for (index, condition) in conditions.enumerated() {
            if index > 0 { sql.unsafeRaw(" AND ") }
            builder.write(condition, into: &sql)
        }
        return sql.sql
    }
}

extension ApiRequest {
    /// A plain `GET /table` (what the ownership rule decides reads on).
    static func read(table: String) -> ApiRequest {
        // Parsing a bare table path with no query or headers cannot fail.
        try! ApiRequest.parse(method: .get, resource: "/" + table, query: [], headers: HTTPHeaders(), body: [])
    }
}
