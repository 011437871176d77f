import HTTP
import Identity
import Postgres

/// Every way a REST request fails, rendered in one place as PostgREST renders it
/// (`src/PostgREST/Error.hs`): body `{"code","details","hint","message"}` (all four keys, `code`
/// a string), the status from PostgREST's tables, and `Proxy-Status: PostgREST; error=CODE`.
public enum RESTError: Error, HTTPResponseError, Equatable {
    /// How PGRST202 says what was searched for (PostgREST's NoRpc, by method and media).
    public enum FunctionSearch: Sendable, Equatable {
        /// GET, or a form body: the parameter names.
        case plain
        /// A JSON body: the names, or a single unnamed json/jsonb parameter.
        case json
        /// A text, XML or binary body: a single unnamed parameter of that type (`text`, `xml`, `bytea`).
        case unnamed(String)
        /// `Prefer: params=single-object`: a single json/jsonb parameter.
        case singleObject

        /// Whether the message lists the arguments (and a hint may name a close function).
        var namesArguments: Bool {
            switch self {
            case .plain, .json: return true
            case .unnamed, .singleObject: return false
            }
        }
    }

    public enum RangeProblem: Sendable, Equatable {
        case lowerGreaterThanUpper
        /// `limit=-1`.
        case negativeLimit
        case outOfBounds(offset: Int, total: Int)
    }

    // PGRST1xx: the request.
    /// PGRST100: the query string doesn't parse.
    case parse(message: String, details: String?)
    /// PGRST101: a method RPC doesn't take.
    case invalidRPCMethod(String)
    /// PGRST102: the body isn't valid JSON (or the wrong shape); `hint` says what to do.
    case invalidBody(String, hint: String? = nil)
    /// PGRST103: a range that can't be satisfied.
    case invalidRange(RangeProblem)
    /// PGRST105: PUT filters must be exactly the primary key with `eq`.
    case invalidFilters
    /// PGRST106: a profile naming a schema that is not exposed (`exposed`: `db-schemas`).
    case invalidSchema(String, exposed: [String] = ["public"])
    /// PGRST107: `Accept` can't be satisfied.
    case notAcceptable(String)
    /// `options=analyze` on a write or a volatile call while `db-tx-end` allows no override: the
    /// plan media type is refused (its forced rollback would make every try free and uncounted).
    case analyzeNeedsOverride(String)
    /// PGRST114
    case putLimitNotAllowed
    /// PGRST115
    case putMatchingPK
    /// PGRST116: the object Accept with 0 or several rows.
    case singularity(rows: Int)
    /// PGRST117
    case unsupportedMethod(String)
    /// PGRST108: `order=rel(col)` names no embed of its level.
    case notEmbedded(String)
    /// PGRST118: `order=rel(col)` on an embed that is not to-one.
    case relatedOrderNotToOne(origin: String, target: String)
    /// PGRST127: a feature PostgREST does not implement (aggregates in a to-many spread); the
    /// details say which.
    case notImplemented(String)
    /// PGRST123: an aggregate in `select` while `PGRST_DB_AGGREGATES_ENABLED` is off.
    case aggregatesNotAllowed
    /// PGRST122: unknown preferences with `handling=strict`.
    case invalidPreferences([String])
    /// PGRST124: `Prefer: max-affected` exceeded with `handling=strict`.
    case tooManyAffected(Int)
    /// PGRST125
    case invalidResourcePath
    /// PGRST111: a function set `response.headers` to something other than a JSON array of
    /// one-member objects with string values.
    case invalidResponseHeaders
    /// PGRST112: a function set `response.status` to something other than a status code.
    case invalidResponseStatus
    // PGRST2xx: the schema cache.
    /// PGRST200: no foreign key between the two tables (or none the hint names).
    case noRelationship(parent: String, target: String, hint: String? = nil, schema: String = "public")
    /// PGRST201: several; the hint must choose.
    case ambiguousRelationship(parent: String, target: String, candidates: [(cardinality: String, name: String, description: String)])
    /// PGRST202: no such function (or not with these arguments); `hint` is what follows
    /// "Perhaps you meant to call the function public.".
    case unknownFunction(name: String, arguments: [String], hint: String?, search: FunctionSearch = .json, schema: String = "public")
    /// PGRST203: several overloads fit the arguments (their signatures).
    case ambiguousFunction([String])
    /// PGRST204: a body column the table lacks.
    case unknownBodyColumn(column: String, table: String)
    /// PGRST205: no such table.
    case unknownTable(String, hint: String?, schema: String = "public")
    /// 42703: a column in select/filter/order the table lacks.
    case unknownColumn(column: String, table: String)
    // Credentials (PGRST3xx, and Supabase's gateway).
    /// The gateway's answer without an apikey.
    case noAPIKey
    case invalidAPIKey
    /// PGRST301/PGRST303: a bad or expired bearer token.
    case jwt(JWTError)
    /// PGRST301: `Authorization: Bearer` with no token after it (PostgREST's EmptyAuthHeader).
    case emptyToken
    /// 42501 raised by the ownership middleware before any SQL runs.
    case ownership(table: String, authenticated: Bool)
    /// A PostgreSQL error, mapped by SQLSTATE (`authenticated`: the role isn't anon).
    case database(PostgresError, authenticated: Bool)

    public var status: HTTPStatus {
        switch self {
        case .parse, .invalidBody, .unknownBodyColumn, .unknownColumn, .tooManyAffected, .invalidPreferences,
            .putLimitNotAllowed, .putMatchingPK, .notImplemented, .aggregatesNotAllowed, .notEmbedded, .relatedOrderNotToOne:
            return .badRequest
        case .invalidRPCMethod, .invalidFilters, .unsupportedMethod: return .methodNotAllowed
        case .invalidSchema, .notAcceptable, .analyzeNeedsOverride, .singularity: return .notAcceptable
        case .unknownFunction, .unknownTable, .invalidResourcePath: return .notFound
        case .noRelationship: return .badRequest
        case .ambiguousRelationship, .ambiguousFunction: return .multipleChoices
        case .invalidRange: return .rangeNotSatisfiable
        case .invalidResponseHeaders, .invalidResponseStatus: return .internalServerError
        case .noAPIKey, .invalidAPIKey, .jwt, .emptyToken: return .unauthorized
        case .ownership(_, let authenticated): return authenticated ? .forbidden : .unauthorized
        case .database(let error, let authenticated):
            if let raised = Self.raisedByFunction(error) { return raised.status }
            if Self.unreadableRaise(error) != nil { return .internalServerError }
            return Self.status(for: error, authenticated: authenticated)
        }
    }

    /// The four body fields.
    public var fields: (code: String?, message: String, details: String?, hint: String?) {
        switch self {
        case .parse(let message, let details): return ("PGRST100", message, details, nil)
        case .invalidRPCMethod(let method): return ("PGRST101", "Cannot use the \(method) method on RPC", nil, nil)
        case .invalidBody(let message, let hint): return ("PGRST102", message, nil, hint)
        case .invalidRange(let problem):
            switch problem {
            case .negativeLimit: return ("PGRST103", "Requested range not satisfiable", "Limit should be greater than or equal to zero.", nil)
            case .lowerGreaterThanUpper:
                return (
                    "PGRST103", "Requested range not satisfiable", "The lower boundary must be lower than or equal to the upper boundary in the Range header.",
                    nil
                )
            case .outOfBounds(let offset, let total):
                return ("PGRST103", "Requested range not satisfiable", "An offset of \(offset) was requested, but there are only \(total) rows.", nil)
            }
        case .invalidFilters: return ("PGRST105", "Filters must include all and only primary key columns with 'eq' operators", nil, nil)
        case .invalidSchema(let schema, let exposed):
            return ("PGRST106", "Invalid schema: \(schema)", nil, "Only the following schemas are exposed: \(exposed.joined(separator: ", "))")
        case .notAcceptable(let accept): return ("PGRST107", "None of these media types are available: \(accept)", nil, nil)
        case .analyzeNeedsOverride(let accept):
            return (
                "PGRST107", "None of these media types are available: \(accept)",
                "options=analyze runs the statement; on a write or a volatile function call it is answered only when db-tx-end allows overrides",
                "Set db-tx-end to commit-allow-override or rollback-allow-override, or leave out options=analyze"
            )
        case .putLimitNotAllowed: return ("PGRST114", "limit/offset querystring parameters are not allowed for PUT", nil, nil)
        case .putMatchingPK: return ("PGRST115", "Payload values do not match URL in primary key column(s)", nil, nil)
        case .singularity(let rows):
            return ("PGRST116", "Cannot coerce the result to a single JSON object", "The result contains \(rows) rows", nil)
        case .unsupportedMethod(let method): return ("PGRST117", "Unsupported HTTP method: \(method)", nil, nil)
        case .notEmbedded(let resource):
            return (
                "PGRST108", "'\(resource)' is not an embedded resource in this request", nil,
                "Verify that '\(resource)' is included in the 'select' query parameter."
            )
        case .relatedOrderNotToOne(let origin, let target):
            return (
                "PGRST118", "A related order on '\(target)' is not possible",
                "'\(origin)' and '\(target)' do not form a many-to-one or one-to-one relationship", nil
            )
        case .notImplemented(let details): return ("PGRST127", "Feature not implemented", details, nil)
        case .aggregatesNotAllowed: return ("PGRST123", "Use of aggregate functions is not allowed", nil, nil)
        case .invalidPreferences(let prefs):
            return ("PGRST122", "Invalid preferences given with handling=strict", "Invalid preferences: \(prefs.joined(separator: ", "))", nil)
        case .tooManyAffected(let count):
            return ("PGRST124", "Query result exceeds max-affected preference constraint", "The query affects \(count) rows", nil)
        case .invalidResourcePath: return ("PGRST125", "Invalid path specified in request URL", nil, nil)
        case .invalidResponseHeaders:
            return ("PGRST111", "response.headers guc must be a JSON array composed of objects with a single key and a string value", nil, nil)
        case .invalidResponseStatus: return ("PGRST112", "response.status guc must be a valid status code", nil, nil)
        case .unknownFunction(let name, let arguments, let hint, let search, let schema):
            let parameters = arguments.isEmpty ? " without parameters" : "(\(arguments.joined(separator: ", ")))"
            let named =
                arguments.isEmpty
                ? " without parameters"
                : " with parameter\(arguments.count > 1 ? "s" : "") \(arguments.joined(separator: ", "))"
            let searched: String
            switch search {
            case .plain: searched = named
            case .json: searched = named + " or with a single unnamed json/jsonb parameter"
            case .unnamed(let type): searched = " with a single unnamed \(type) parameter"
            case .singleObject: searched = " with a single json/jsonb parameter"
            }
            return (
                "PGRST202", "Could not find the function \(schema).\(name)\(search.namesArguments ? parameters : "") in the schema cache",
                "Searched for the function \(schema).\(name)\(searched), but no matches were found in the schema cache.",
                search.namesArguments ? hint.map { "Perhaps you meant to call the function \(schema).\($0)" } : nil
            )
        case .ambiguousFunction(let signatures):
            return (
                "PGRST203", "Could not choose the best candidate function between: \(signatures.joined(separator: ", "))", nil,
                "Try renaming the parameters or the function itself in the database so function overloading can be resolved"
            )
        case .noRelationship(let parent, let target, let embedHint, let schema):
            return (
                "PGRST200", "Could not find a relationship between '\(parent)' and '\(target)' in the schema cache",
                "Searched for a foreign key relationship between '\(parent)' and '\(target)'\(embedHint.map { " using the hint '\($0)'" } ?? "") in the schema '\(schema)', but no matches were found.",
                nil
            )
        case .ambiguousRelationship(let parent, let target, let candidates):
            return (
                "PGRST201", "Could not embed because more than one relationship was found for '\(parent)' and '\(target)'", nil,
                "Try changing '\(target)' to one of the following: \(candidates.map { "'\(target)!\($0.name)'" }.joined(separator: ", ")). Find the desired relationship in the 'details' key."
            )
        case .unknownBodyColumn(let column, let table):
            return ("PGRST204", "Could not find the '\(column)' column of '\(table)' in the schema cache", nil, nil)
        case .unknownTable(let table, let hint, let schema):
            return (
                "PGRST205", "Could not find the table '\(schema).\(table)' in the schema cache", nil,
                hint.map { "Perhaps you meant the table '\(schema).\($0)'" }
            )
        case .unknownColumn(let column, let table): return ("42703", "column \(table).\(column) does not exist", nil, nil)
        case .noAPIKey: return (nil, "No API key found in request", nil, "No `apikey` request header or url param was found.")
        case .invalidAPIKey: return (nil, "Invalid API key", nil, "Double check your Supabase `anon` or `service_role` API key.")
        case .jwt(let error):
            let (code, message, details) = Self.jwtFields(error)
            return (code, message, details, nil)
        case .emptyToken: return ("PGRST301", Self.emptyTokenMessage, nil, nil)
        case .ownership(let table, _):
            return ("42501", "new row violates row-level security policy for table \"\(table)\"", nil, nil)
        case .database(let error, _):
            guard error.kind == .server, let state = error.sqlState else {
                if error.sqlState == "08000" { return ("PGRST003", "Timed out acquiring connection from connection pool.", nil, nil) }
                return ("PGRST000", "Database client error. Retrying the connection.", error.message, nil)
            }
            if let raised = Self.raisedByFunction(error) {
                return ((raised.fields["code"] ?? nil), (raised.fields["message"] ?? nil) ?? "", raised.fields["details"] ?? nil, raised.fields["hint"] ?? nil)
            }
            if let (details, hint) = Self.unreadableRaise(error) {
                return ("PGRST121", "Could not parse JSON in the \"RAISE SQLSTATE 'PGRST'\" error", details, hint)
            }
            return (state, error.message, error.detail, error.hint)
        }
    }

    static let emptyTokenMessage = "Empty JWT is sent in Authorization header"

    /// Whether an `Authorization` value is the Bearer scheme with no token after it (`Bearer`,
    /// `Bearer `, any case): what PostgREST (wai's extractBearerAuth: the scheme up to the first
    /// space, the rest without leading spaces) reads as an empty token and refuses (PGRST301).
    /// Another scheme, or no header, is no token at all.
    public static func isEmptyBearer(_ authorization: String?) -> Bool {
        guard let authorization else { return false }
        let isBlank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0x0B || $0 == 0x0C }
        let bytes = Array(authorization.utf8)
        guard let start = bytes.firstIndex(where: { !isBlank($0) }) else { return false }
        let rest = bytes[start...]
        guard rest.count >= 6, zip(rest.prefix(6), "bearer".utf8).allSatisfy({ ($0 | 0x20) == $1 }) else { return false }
        return rest.dropFirst(6).allSatisfy(isBlank)
    }

    /// A refused bearer token as PostgREST words it (Error.hs's JwtDecodeErr, PGRST301, and
    /// JwtClaimsErr, PGRST303), from what its JWT library (jose) answers for each failure.
    static func jwtFields(_ error: JWTError) -> (code: String, message: String, details: String?) {
        switch error {
        case .malformed(let message) where message.hasPrefix("Expected 3 parts in JWT"):
            return ("PGRST301", message, nil)
        case .malformed:
            // A header that does not decode.
            return ("PGRST301", "JWT cryptographic operation failed", nil)
        case .unsupportedAlgorithm("none"):
            return ("PGRST301", "Wrong or unsupported encoding algorithm", "JWT is unsecured but expected 'alg' was not 'none'")
        case .badSignature, .unsupportedAlgorithm:
            // No configured key verifies it (another secret, or another algorithm).
            return ("PGRST301", "No suitable key or wrong key type", "None of the keys was able to decode the JWT")
        case .expired, .notYetValid, .issuedInFuture, .wrongAudience, .claims:
            return ("PGRST303", error.message, nil)
        }
    }

    /// The JSON body: always the four keys, nulls allowed, `code` a string.
    public var body: String {
        let (code, message, details, hint) = fields
        func field(_ value: String?) -> String { value.map(jsonString) ?? "null" }
        var detailsJSON = field(details)
        if case .ambiguousRelationship(let parent, let target, let candidates) = self {
            // PostgREST lists the candidates as objects.
            detailsJSON =
                "["
                + candidates.map {
                    #"{"cardinality":\#(jsonString($0.cardinality)),"embedding":\#(jsonString(parent + " with " + target)),"relationship":\#(jsonString($0.description))}"#
                }.joined(separator: ",") + "]"
        }
        return #"{"code":\#(field(code)),"details":\#(detailsJSON),"hint":\#(field(hint)),"message":\#(jsonString(message))}"#
    }

    public var headers: HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json; charset=utf-8")
        if let code = fields.code { headers.add("Proxy-Status", "PostgREST; error=\(code)") }
        switch self {
        case .jwt(let error):
            headers.add("WWW-Authenticate", #"Bearer error="invalid_token", error_description=\#(jsonString(Self.jwtFields(error).message))"#)
        case .emptyToken:
            headers.add("WWW-Authenticate", #"Bearer error="invalid_token", error_description=\#(jsonString(Self.emptyTokenMessage))"#)
        case .noAPIKey, .invalidAPIKey:
            break
        case .invalidRange(.outOfBounds(_, let total)):
            // PostgREST's 416 says how many rows there are.
            headers.add("Content-Range", "*/\(total)")
        case .database(let error, _):
            if let raised = Self.raisedByFunction(error) {
                for (name, value) in raised.headers { headers.replace(name, value) }
            } else if status == .unauthorized {
                headers.add("WWW-Authenticate", "Bearer")
            }
        default:
            if status == .unauthorized { headers.add("WWW-Authenticate", "Bearer") }
        }
        return headers
    }

    public func response(for request: HTTPRequest) -> HTTPResponse {
        // HEAD answers carry no body; the client reads the code from Proxy-Status.
        HTTPResponse(status: status, headers: headers, body: request.method == .head ? [] : Array(body.utf8))
    }

    /// The response under `client-error-verbosity = minimal`: `code` and `message` only
    /// (`details` and `hint` null), the status and headers unchanged.
    public func minimalResponse(for request: HTTPRequest) -> HTTPResponse {
        let (code, message, _, _) = fields
        let body = #"{"code":\#(code.map(jsonString) ?? "null"),"details":null,"hint":null,"message":\#(jsonString(message))}"#
        return HTTPResponse(status: status, headers: headers, body: request.method == .head ? [] : Array(body.utf8))
    }

    public static func == (lhs: RESTError, rhs: RESTError) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body
    }
}

extension RESTError {
    /// This error as it reads for a request about `schema` (the schema cache's errors name it).
    func inSchema(_ schema: String) -> RESTError {
        guard schema != "public" else { return self }
        switch self {
        case .unknownTable(let table, let hint, _): return .unknownTable(table, hint: hint, schema: schema)
        case .unknownFunction(let name, let arguments, let hint, let search, _):
            return .unknownFunction(name: name, arguments: arguments, hint: hint, search: search, schema: schema)
        case .noRelationship(let parent, let target, let hint, _): return .noRelationship(parent: parent, target: target, hint: hint, schema: schema)
        default: return self
        }
    }
}
