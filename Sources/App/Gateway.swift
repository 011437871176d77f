import Auth
import HTTP
import Identity

/// What Supabase's gateway adds around the dialects: the wording of the HTTP layer's own
/// refusals, the `apikey` rule in front of Auth, and CORS for browsers (supabase-js) with the
/// headers its clients send and read.
enum Gateway {
    /// PostgREST's four-key error body, for requests no dialect answers (404, 405, malformed).
    static let errorStyle = ErrorStyle { #"{"code":null,"details":null,"hint":null,"message":\#(jsonString($0))}"# }

    /// The request headers the Supabase clients send (Storage's uploads: `x-upsert`,
    /// `x-metadata`, `cache-control`; its downloads: `if-none-match`; its resumable uploads: TUS's
    /// headers and `x-signature`).
    static let allowedHeaders =
        "apikey, authorization, content-type, accept, accept-profile, content-profile, prefer, range, range-unit, x-client-info, x-supabase-api-version, x-retry-count, x-request-id, x-upsert, x-metadata, cache-control, if-none-match, tus-resumable, upload-length, upload-offset, upload-metadata, x-signature"
    /// The response headers the Supabase clients read.
    static let exposedHeaders =
        "Content-Range, Content-Location, Location, Preference-Applied, Range-Unit, X-Supabase-Api-Version, X-Request-Id, x-sb-error-code, Proxy-Status, ETag, Last-Modified, Content-Disposition, Accept-Ranges, Tus-Resumable, Tus-Version, Tus-Extension, Tus-Max-Size, Tus-Complete, Upload-Offset, Upload-Length, Upload-Metadata, Upload-Expires"

    static func cors(allowedOrigins: [String] = ["*"]) -> CORSConfig {
        // Storage's resumable uploads answer OPTIONS themselves (TUS's capabilities).
        CORSConfig(
            allowedOrigins: allowedOrigins, allowedHeaders: allowedHeaders, exposedHeaders: exposedHeaders,
            routedOptionsPrefixes: ["/storage/v1/upload/resumable"])
    }

    /// The `apikey` header (any case) or query parameter, as Supabase's gateway accepts it.
    static func apiKey(_ request: HTTPRequest) -> String? {
        request.headers["apikey"] ?? request.queryValue("apikey")
    }
}

/// The gateway's refusals, as Supabase's gateway words them (Kong's key-auth: a two-key body).
enum GatewayError: Error, Equatable, HTTPResponseError {
    /// No `apikey` header or query parameter, or an empty one.
    case noAPIKey
    /// A key that is none of the configured anon, service-role, publishable or secret keys.
    case invalidAPIKey

    func response(for request: HTTPRequest) -> HTTPResponse {
        switch self {
        case .noAPIKey:
            return .json(.unauthorized, #"{"message":"No API key found in request","hint":"No `apikey` request header or url param was found."}"#)
        case .invalidAPIKey:
            return .json(.unauthorized, #"{"message":"Invalid API key","hint":"Double check your Supabase `anon` or `service_role` API key."}"#)
        }
    }
}

/// The gateway's rule in front of `/auth/v1`: every route needs one of our keys as `apikey`,
/// except those `isOpen` names (the links opened from e-mails and OAuth redirects, the
/// discovery documents). A refused request never reaches Auth.
struct APIKeyStage: Middleware {
    let keys: KeyConfig
    /// The path prefix the open routes are named after (`/auth/v1`).
    let prefix: String
    let isOpen: @Sendable (String) -> Bool

    func handle(_ request: HTTPRequest, next: Next, reply: @escaping Reply) throws(GatewayError) -> Bool {
        if !isOpen(String(request.path.dropFirst(prefix.count))) {
            guard let key = Gateway.apiKey(request), !key.isEmpty else { throw .noAPIKey }
            guard keys.role(ofKey: key) != nil else { throw .invalidAPIKey }
        }
        return next(request, reply)
    }
}
