import HTTP
import Postgres

/// How a PostgreSQL error becomes PostgREST's answer: a function's own `RAISE SQLSTATE 'PGRST'`
/// and the SQLSTATE → HTTP status table.
extension RESTError {
    /// PostgREST's `RAISE SQLSTATE 'PGRST' USING MESSAGE = '{"code","message","details","hint"}',
    /// DETAIL = '{"status": n, "headers": {…}}'`: a function chooses the whole answer. Nil when
    /// `error` is not that, or its JSON does not parse (then it is an ordinary error).
    static func raisedByFunction(_ error: PostgresError) -> (status: HTTPStatus, fields: [String: String?], headers: [(String, String)])? {
        guard error.kind == .server, error.sqlState == "PGRST",
            case .object(let body)? = JSONValue.parse(Array(error.message.utf8)),
            case .object(let detail)? = error.detail.flatMap({ JSONValue.parse(Array($0.utf8)) }),
            case .number(let statusText)? = detail.first(where: { $0.key == "status" })?.value,
            let status = Int(statusText), (100...599).contains(status)
        else { return nil }
        var fields: [String: String?] = [:]
        for (key, value) in body where ["code", "message", "details", "hint"].contains(key) {
            if case .string(let text) = value { fields[key] = text } else if value == .null { fields[key] = .some(nil) }
        }
        var headers: [(String, String)] = []
        if case .object(let members)? = detail.first(where: { $0.key == "headers" })?.value {
            for (name, value) in members { if case .string(let text) = value { headers.append((name, text)) } }
        }
        return (HTTPStatus(code: status), fields, headers)
    }

    /// A `RAISE SQLSTATE 'PGRST'` whose MESSAGE or DETAIL is not what PostgREST reads: 500
    /// PGRST121 with PostgREST's details and hint (nil for any other error).
    static func unreadableRaise(_ error: PostgresError) -> (details: String, hint: String)? {
        guard error.kind == .server, error.sqlState == "PGRST", raisedByFunction(error) == nil else { return nil }
        let messageHint = "MESSAGE must be a JSON object with obligatory keys: 'code', 'message' and optional keys: 'details', 'hint'."
        let detailHint = "DETAIL must be a JSON object with obligatory keys: 'status', 'headers' and optional key: 'status_text'."
        guard case .object? = JSONValue.parse(Array(error.message.utf8)) else {
            return ("Invalid JSON value for MESSAGE: '\(error.message)'", messageHint)
        }
        guard let detail = error.detail else { return ("DETAIL is missing in the RAISE statement", detailHint) }
        return ("Invalid JSON value for DETAIL: '\(detail)'", detailHint)
    }

    /// PostgREST's SQLSTATE → HTTP status table (Error.hs `mapSQLtoHTTP`), in its order. This is
    /// the only such table in the code base.
    public static func status(for error: PostgresError, authenticated: Bool) -> HTTPStatus {
        guard error.kind == .server, let code = error.sqlState else {
            // No server answer: connection trouble or a pool timeout.
            return error.sqlState == "08000" ? .gatewayTimeout : .serviceUnavailable
        }
        let chars = Array(code)
        guard chars.count == 5 else { return .internalServerError }
        let klass = String(chars[0...1])
        switch code {
        case "23503", "23505": return .conflict
        case "25006": return .methodNotAllowed
        case "21000": return .internalServerError
        case "22023": return error.message.hasPrefix("role") && error.message.hasSuffix("does not exist") ? .unauthorized : .badRequest
        case "53400": return .internalServerError
        case "57P01": return .serviceUnavailable
        case "P0001": return .badRequest
        case "42883": return .notFound
        case "42P01": return .notFound
        case "42P17": return .internalServerError
        case "42501": return authenticated ? .forbidden : .unauthorized
        default: break
        }
        switch klass {
        case "08": return .serviceUnavailable
        case "09": return .internalServerError
        case "0L", "0P": return .forbidden
        case "25": return .internalServerError
        case "28": return .forbidden
        case "2D", "38", "39", "3B", "40": return .internalServerError
        case "53": return .serviceUnavailable
        case "54", "55", "57", "58", "F0", "HV", "P0", "XX": return .internalServerError
        case "PT":
            if let status = Int(String(chars[2...4])), (100...599).contains(status) { return HTTPStatus(code: status) }
            return .internalServerError
        default: return .badRequest
        }
    }
}
