import HTTP

/// What Supabase's gateway adds around the dialects: the wording of the HTTP layer's own
/// refusals, and CORS for browsers (supabase-js) with the headers its clients send and read.
enum Gateway {
    /// PostgREST's four-key error body, for requests no dialect answers (404, 405, malformed).
    static let errorStyle = ErrorStyle { #"{"code":null,"details":null,"hint":null,"message":\#(jsonString($0))}"# }

    /// The request headers the Supabase clients send.
    static let allowedHeaders =
        "apikey, authorization, content-type, accept, accept-profile, content-profile, prefer, range, range-unit, x-client-info, x-supabase-api-version, x-retry-count, x-request-id"
    /// The response headers the Supabase clients read.
    static let exposedHeaders =
        "Content-Range, Content-Location, Location, Preference-Applied, Range-Unit, X-Supabase-Api-Version, X-Request-Id, x-sb-error-code, Proxy-Status"

    static func cors(allowedOrigins: [String] = ["*"]) -> CORSConfig {
        CORSConfig(allowedOrigins: allowedOrigins, allowedHeaders: allowedHeaders, exposedHeaders: exposedHeaders)
    }
}
