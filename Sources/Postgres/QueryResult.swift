import CPostgres

/// The rows of one statement, copied out of libpq's `PGresult` (which is freed at once).
///
/// Values stay in PostgreSQL's text format: REST and Auth ask PostgreSQL for JSON text and pass
/// it through. A cell that is read as a value is read by type through a `Row`
/// (`result[0].bool(1)`, `int`, `double`, `string`), never by comparing its text.
public struct QueryResult: Sendable, RandomAccessCollection {
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

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    /// One row, whose cells are read by type.
    public subscript(row: Int) -> Row {
        precondition(row >= 0 && row < count, "row out of range")
        return Row(result: self, index: row)
    }

    /// The first row's value of the first column, if any: handy for `SELECT x`.
    public var scalar: String? { count > 0 ? self[0, 0] : nil }

    /// All rows as column-name dictionaries (tests and small catalog reads).
    public var rows: [[String: String?]] {
        (0..<count).map { row in
            Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, self[row, $0]) })
        }
    }

    /// One row of a result. Each typed reader answers nil for SQL NULL; a cell that is not in
    /// the type's text form is a programming error (the statement names the wrong column or
    /// type), like a column that does not exist, and stops the program.
    public struct Row: Sendable {
        let result: QueryResult
        /// The row's position in the result.
        public let index: Int

        public func string(_ column: Int) -> String? { result[index, column] }
        public func string(_ column: String) -> String? { result[index, column] }

        /// A `boolean` cell (`t` or `f`).
        public func bool(_ column: Int) -> Bool? { string(column).map { QueryResult.bool($0) } }
        public func bool(_ column: String) -> Bool? { string(column).map { QueryResult.bool($0) } }

        /// An integer cell (`smallint`, `integer`, `bigint`).
        public func int(_ column: Int) -> Int? { string(column).map { QueryResult.int($0) } }
        public func int(_ column: String) -> Int? { string(column).map { QueryResult.int($0) } }

        /// A floating-point cell (`real`, `double precision`, or `numeric`).
        public func double(_ column: Int) -> Double? { string(column).map { QueryResult.double($0) } }
        public func double(_ column: String) -> Double? { string(column).map { QueryResult.double($0) } }
    }

    /// PostgreSQL's text form of a `boolean`.
    static func bool(_ text: String) -> Bool {
        switch text {
        case "t": return true
        case "f": return false
        default: preconditionFailure("a boolean cell that reads neither t nor f")
        }
    }

    static func int(_ text: String) -> Int {
        guard let value = Int(text) else { preconditionFailure("a cell read as an integer that is not one") }
        return value
    }

    static func double(_ text: String) -> Double {
        guard let value = Double(text) else { preconditionFailure("a cell read as a number that is not one") }
        return value
    }
}

extension Dictionary where Key == String, Value == String? {
    /// A `boolean` cell of a row read as a dictionary (`QueryResult.rows`); nil when NULL or absent.
    public func bool(_ column: String) -> Bool? { (self[column] ?? nil).map { QueryResult.bool($0) } }
}
