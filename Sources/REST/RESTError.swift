import HTTP
import JWT
import Postgres

/// Every way a REST request fails, rendered in one place as PostgREST renders it:
/// `{"code","details","hint","message"}` with the status from PostgREST's tables (Error.hs).
public enum RESTError: Error, HTTPResponseError, Equatable {
    /// PGRST100: the query string doesn't parse.
    case parse(message: String, details: String?)
    /// PGRST102: the body isn't valid JSON (or the wrong shape).
    case invalidBody(String)
    /// PGRST106 / 406: a schema other than public was asked for.
    case invalidSchema(String)
    /// PGRST107 / 415-ish: Accept can't be satisfied (406).
    case notAcceptable(String)
    /// PGRST116: the object Accept with 0 or several rows.
    case singularity(rows: Int)
    /// PGRST202: no such function.
    case unknownFunction(String)
    /// PGRST204: a body column the table lacks.
    case unknownBodyColumn(column: String, table: String)
    /// PGRST205: no such table.
    case unknownTable(String)
    /// 42703: a column in select/filter/order the table lacks.
    case unknownColumn(column: String, table: String)
    /// PGRST124: `Prefer: max-affected` exceeded with `handling=strict`.
    case tooManyAffected(Int, max: Int)
    /// PGRST103: a range that can't be satisfied.
    case invalidRange(String)
    /// The gateway's answer without an apikey.
    case noAPIKey
    case invalidAPIKey
    /// PGRST301/PGRST303: a bad or expired bearer token.
    case jwt(JWTError)
    /// 42501 raised by the ownership middleware before any SQL runs.
    case ownership(table: String, authenticated: Bool)
    /// A PostgreSQL error, mapped by SQLSTATE.
    case database(PostgresError, authenticated: Bool)

    var status: Int {
        switch self {
        case .parse, .invalidBody, .unknownBodyColumn, .unknownColumn, .tooManyAffected: return 400
        case .invalidSchema, .notAcceptable, .singularity: return 406
        case .unknownFunction, .unknownTable: return 404
        case .invalidRange: return 416
        case .noAPIKey, .invalidAPIKey, .jwt: return 401
        case .ownership(_, let authenticated): return authenticated ? 403 : 401
        case .database(let error, let authenticated): return Self.status(for: error, authenticated: authenticated)
        }
    }

    /// PostgREST's SQLSTATE → HTTP status table (src/PostgREST/Error.hs), in its order.
    static func status(for error: PostgresError, authenticated: Bool) -> Int {
        guard let code = error.sqlState else { return 503 }  // no server answer: connection trouble
        let klass = code.prefix(2)
        if klass == "PT", let status = Int(code.dropFirst(2)), (100...599).contains(status) { return status }
        switch code {
        case "23503", "23505": return 409
        case "25006": return 405
        case "53400": return 500
        case "57P01": return 503
        case "P0001": return 400
        case "42883", "42P01": return 404
        case "42P17": return 500
        case "42501": return authenticated ? 403 : 401
        default: break
        }
        switch klass {
        case "08", "53": return 503
        case "0L", "0P", "28": return 403
        case "09", "25", "2D", "38", "39", "3B", "40", "54", "55", "57", "58", "F0", "HV", "P0", "XX": return 500
        default: return 400
        }
    }

    var body: (code: String?, message: String, details: String?, hint: String?) {
        switch self {
        case .parse(let message, let details): return ("PGRST100", message, details, nil)
        case .invalidBody(let message): return ("PGRST102", message, nil, nil)
        case .invalidSchema(let schema): return ("PGRST106", "Invalid schema: \(schema)", nil, "Only the following schemas are exposed: public")
        case .notAcceptable(let accept): return ("PGRST107", "None of these media types are available: \(accept)", nil, nil)
        case .singularity(let rows):
            return ("PGRST116", "Cannot coerce the result to a single JSON object", "The result contains \(rows) rows", nil)
        case .unknownFunction(let name):
            return ("PGRST202", "Could not find the function public.\(name) in the schema cache", nil, nil)
        case .unknownBodyColumn(let column, let table):
            return ("PGRST204", "Could not find the '\(column)' column of '\(table)' in the schema cache", nil, nil)
        case .unknownTable(let table):
            return ("PGRST205", "Could not find the table 'public.\(table)' in the schema cache", nil, nil)
        case .unknownColumn(let column, let table): return ("42703", "column \(table).\(column) does not exist", nil, nil)
        case .tooManyAffected(let count, let max):
            return ("PGRST124", "Query result exceeds max-affected preference constraint", "The query affects \(count) rows", "max-affected is \(max)")
        case .invalidRange(let message): return ("PGRST103", "Requested range not satisfiable", message, nil)
        case .noAPIKey: return (nil, "No API key found in request", nil, "No `apikey` request header or url param was found.")
        case .invalidAPIKey: return (nil, "Invalid API key", nil, "Double check your Supabase `anon` or `service_role` API key.")
        case .jwt(let error): return (error == .expired ? "PGRST303" : "PGRST301", error.message, nil, nil)
        case .ownership(let table, _):
            return ("42501", "new row violates row-level security policy for table \"\(table)\"", nil, nil)
        case .database(let error, _):
            if error.sqlState == nil { return ("PGRST000", "Database client error. Retrying the connection.", error.message, nil) }
            return (error.sqlState, error.message, error.detail, error.hint)
        }
    }

    public func response(for request: HTTPRequest) -> HTTPResponse {
        let (code, message, details, hint) = body
        func field(_ value: String?) -> String { value.map(jsonString) ?? "null" }
        let json = #"{"code":\#(field(code)),"details":\#(field(details)),"hint":\#(field(hint)),"message":\#(jsonString(message))}"#
        var headers = HTTPHeaders()
        if let code { headers.add("Proxy-Status", "PostgREST; error=\(code)") }
        if case .jwt(let error) = self {
            let description = error == .expired ? "JWT expired" : error.message
            headers.add("WWW-Authenticate", #"Bearer error="invalid_token", error_description="\#(description)""#)
        }
        return .json(status, json, headers: headers)
    }
}
