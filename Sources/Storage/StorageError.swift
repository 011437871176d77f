import HTTP
import Identity
import Postgres

/// Every refusal of `/storage/v1`, rendered in Supabase Storage's shape:
/// `{"statusCode":"404","error":"not_found","message":"Object not found"}` with that HTTP status.
public enum StorageError: Error, Equatable, HTTPResponseError {
    /// No `apikey` and no bearer token.
    case missingAuthorization
    /// An API key or bearer token that is not ours, expired, or malformed.
    case invalidCredentials(String)
    case bucketNotFound
    case objectNotFound
    /// A bucket or object of that name exists already.
    case duplicate
    case bucketNotEmpty
    /// A signed URL's token: missing, not ours, for another object, or expired.
    case invalidSignature(String)
    /// Larger than the bucket's `file_size_limit` or the server's upload limit.
    case payloadTooLarge
    case invalidMimeType(String)
    /// A body, query value or name that cannot be used; the message says which.
    case invalidRequest(String)
    case invalidKey(String)
    case rangeNotSatisfiable(size: Int)
    /// Row-level security refused the statement (42501), with PostgreSQL's message.
    case forbidden(String)
    /// The database or the disk failed; details go to the log only.
    case internalError

    public var statusCode: Int {
        switch self {
        case .missingAuthorization, .invalidRequest, .invalidKey, .invalidSignature: return 400
        case .invalidCredentials: return 401
        case .forbidden: return 403
        case .bucketNotFound, .objectNotFound: return 404
        case .duplicate, .bucketNotEmpty: return 409
        case .payloadTooLarge: return 413
        case .invalidMimeType: return 415
        case .rangeNotSatisfiable: return 416
        case .internalError: return 500
        }
    }

    /// Storage's `error` (its older code names, which the clients show) and `message`.
    public var errorAndMessage: (error: String, message: String) {
        switch self {
        case .missingAuthorization: return ("Error", "headers must have required property 'authorization'")
        case .invalidCredentials(let why): return ("Unauthorized", why)
        case .bucketNotFound: return ("Bucket not found", "Bucket not found")
        case .objectNotFound: return ("not_found", "Object not found")
        case .duplicate: return ("Duplicate", "The resource already exists")
        case .bucketNotEmpty: return ("InvalidRequest", "The bucket you tried to delete is not empty")
        case .invalidSignature(let why): return ("InvalidSignature", why)
        case .payloadTooLarge: return ("Payload too large", "The object exceeded the maximum allowed size")
        case .invalidMimeType(let type): return ("invalid_mime_type", "mime type \(type) is not supported")
        case .invalidRequest(let why): return ("Invalid Input", why)
        case .invalidKey(let key): return ("Invalid Input", "Invalid key: \(key)")
        case .rangeNotSatisfiable: return ("InvalidRange", "The requested range is not satisfiable")
        case .forbidden(let why): return ("Unauthorized", why)
        case .internalError: return ("internal", "Internal Server Error")
        }
    }

    public func response(for request: HTTPRequest) -> HTTPResponse {
        let (error, message) = errorAndMessage
        var headers = HTTPHeaders()
        if case .rangeNotSatisfiable(let size) = self { headers.add("Content-Range", "bytes */\(size)") }
        return .json(
            HTTPStatus(code: statusCode),
            #"{"statusCode":"\#(statusCode)","error":\#(jsonString(error)),"message":\#(jsonString(message))}"#, headers: headers)
    }

    /// PostgreSQL's refusals as Storage words them; anything else is internal.
    static func database(_ error: PostgresError) -> StorageError {
        switch error.sqlState {
        case "42501": return .forbidden(error.message)
        case "23505": return .duplicate
        case "23503": return .bucketNotFound
        default: return .internalError
        }
    }

    static func credentials(_ error: CredentialError) -> StorageError {
        switch error {
        case .noAPIKey: return .missingAuthorization
        case .invalidAPIKey: return .invalidCredentials("Invalid API key")
        case .token(let jwt): return .invalidCredentials(jwt.message)
        }
    }
}
