import CPostgres

/// A failure from libpq or the server, with the fields PostgREST needs to render its error body.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The server rejected a statement (`sqlState` says why).
        case server
        /// The connection could not be made or was lost.
        case connection
        /// libpq refused the call (e.g. a pipeline misuse).
        case client
    }

    public var kind: Kind
    public var sqlState: String?
    public var severity: String?
    public var message: String
    public var detail: String?
    public var hint: String?
    public var constraint: String?
    public var schema: String?
    public var table: String?
    public var column: String?
    /// 1-based character position in the statement, when PostgreSQL gives one.
    public var position: Int?

    public init(kind: Kind, message: String, sqlState: String? = nil) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
    }

    /// What PostgreSQL answers for a NUL character in text (22021), raised here before sending:
    /// libpq passes values as C strings, so a NUL would otherwise silently cut the value.
    public static let nulCharacter = PostgresError(kind: .server, message: "invalid byte sequence for encoding \"UTF8\": 0x00", sqlState: "22021")

    /// Copies the diagnostic fields out of a failed result.
    init(result: OpaquePointer) {
        func field(_ code: Int32) -> String? {
            guard let pointer = PQresultErrorField(result, code) else { return nil }
            return String(cString: pointer)
        }
        let primary = field(Int32(UInt8(ascii: "M"))) ?? String(cString: PQresultErrorMessage(result))
        self.init(kind: .server, message: primary.trimmingTrailingNewlines(), sqlState: field(Int32(UInt8(ascii: "C"))))
        severity = field(Int32(UInt8(ascii: "V")))
        detail = field(Int32(UInt8(ascii: "D")))
        hint = field(Int32(UInt8(ascii: "H")))
        constraint = field(Int32(UInt8(ascii: "n")))
        schema = field(Int32(UInt8(ascii: "s")))
        table = field(Int32(UInt8(ascii: "t")))
        column = field(Int32(UInt8(ascii: "c")))
        position = field(Int32(UInt8(ascii: "P"))).flatMap { Int($0) }
        // Connection exceptions and administrator/crash shutdowns end the session: the pool
        // must drop the connection, not reuse it.
        if let state = sqlState, state.hasPrefix("08") || state.hasPrefix("57P") { kind = .connection }
        if sqlState == nil { kind = .client }
    }

    static func connection(_ conn: OpaquePointer?, _ fallback: String) -> PostgresError {
        let text = conn.flatMap { PQerrorMessage($0) }.map { String(cString: $0) } ?? ""
        return PostgresError(kind: .connection, message: text.isEmpty ? fallback : text.trimmingTrailingNewlines())
    }

    /// The SQLSTATE and the kind only: the message and the detail may hold values, host names and
    /// socket paths, so an error interpolated by accident (`"\(error)"`) says none of them. The
    /// whole text is `debugDescription` (`String(reflecting:)`, `logText(_:)`).
    public var description: String {
        "PostgreSQL error" + (sqlState.map { " \($0)" } ?? "") + " (\(kind))"
    }

    /// Everything PostgreSQL said: for the operators' log, never for an answer.
    public var debugDescription: String {
        var text = "PostgreSQL error"
        if let sqlState { text += " \(sqlState)" }
        text += ": \(message)"
        if let detail { text += " (\(detail))" }
        return text
    }
}

/// An error's whole text for the operators' log (a `PostgresError`'s message and detail
/// included); anything else as it describes itself.
public func logText(_ error: any Error) -> String {
    (error as? PostgresError)?.debugDescription ?? "\(error)"
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var text = self
        while let last = text.last, last.isNewline || last == " " { text.removeLast() }
        return text
    }
}
