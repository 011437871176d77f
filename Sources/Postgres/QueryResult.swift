import CPostgres

/// The rows of one statement, copied out of libpq's `PGresult` (which is freed at once).
///
/// Values stay in PostgreSQL's text format: REST and Auth ask PostgreSQL for JSON text and
/// pass it through, so nothing here decodes types.
public struct QueryResult: Sendable {
    public let columns: [String]
    /// Row-major values; `nil` is SQL NULL.
    private let values: [String?]
    /// Rows affected by INSERT/UPDATE/DELETE (or returned by SELECT), from the command tag.
    public let affectedRows: Int?
    /// The command tag, e.g. `UPDATE 1`.
    public let command: String

    public var count: Int { columns.isEmpty ? 0 : values.count / columns.count }
    public var isEmpty: Bool { count == 0 }

    init(result: OpaquePointer) {
        let rows = Int(PQntuples(result))
        let fields = Int(PQnfields(result))
        columns = (0..<fields).map { String(cString: PQfname(result, Int32($0))) }
        var values: [String?] = []
        values.reserveCapacity(rows * fields)
        for row in 0..<rows {
            for column in 0..<fields {
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    values.append(nil)
                } else {
                    values.append(String(cString: PQgetvalue(result, Int32(row), Int32(column))))
                }
            }
        }
        self.values = values
        command = String(cString: PQcmdStatus(result))
        affectedRows = Int(String(cString: PQcmdTuples(result)))
    }

    public subscript(row: Int, column: Int) -> String? {
        precondition(row < count && column < columns.count, "row or column out of range")
        return values[row * columns.count + column]
    }

    public subscript(row: Int, column: String) -> String? {
        guard let index = columns.firstIndex(of: column) else {
            preconditionFailure("no column named \(column)")
        }
        return self[row, index]
    }

    /// The first row's value of the first column, if any: handy for `SELECT x`.
    public var scalar: String? { count > 0 ? self[0, 0] : nil }

    /// All rows as column-name dictionaries (tests and small catalog reads).
    public var rows: [[String: String?]] {
        (0..<count).map { row in
            Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, self[row, $0]) })
        }
    }
}
