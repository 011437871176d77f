import HTTP

/// Every refusal of the analytics routes, rendered in PostHog's shape
/// (`{"type", "code", "detail"}`, whose `detail` the SDKs log) in one place.
public enum AnalyticsError: Error, Equatable, HTTPResponseError {
    /// No `api_key` / `token` anywhere in the request.
    case missingAPIKey
    /// A project key that is not this project's (or several different ones in one batch).
    case invalidAPIKey
    /// The flag definitions without the secret key.
    case notAuthenticated
    /// A body or event that cannot be read: the reason, for the SDK's log.
    case invalidPayload(String)
    /// A body, event or batch over its limit.
    case payloadTooLarge(String)
    /// No flag of that key (the admin API).
    case notFound
    /// The database refused or failed (logged by the caller; never described to the client).
    case unavailable
    /// Over the events a minute of the client or the project key: retry after these seconds.
    case throttled(retryAfter: Int)

    public func response(for request: HTTPRequest) -> HTTPResponse {
        switch self {
        case .missingAPIKey:
            return body(
                .unauthorized, type: "authentication_error", code: "missing_api_key",
                detail: "API key not provided. You can find your project API key in your project settings.")
        case .invalidAPIKey:
            return body(
                .unauthorized, type: "authentication_error", code: "invalid_api_key",
                detail: "Project API key invalid. You can find your project API key in your project settings.")
        case .notAuthenticated:
            return body(.unauthorized, type: "authentication_error", code: "not_authenticated", detail: "Authentication credentials were not provided.")
        case .invalidPayload(let reason):
            return body(.badRequest, type: "validation_error", code: "invalid_payload", detail: "Malformed request data: \(reason)")
        case .payloadTooLarge(let reason):
            return body(.contentTooLarge, type: "validation_error", code: "payload_too_large", detail: reason)
        case .notFound:
            return body(.notFound, type: "invalid_request", code: "not_found", detail: "Not found.")
        case .unavailable:
            return body(.serviceUnavailable, type: "server_error", code: "unavailable", detail: "The event store is unavailable; retry later.")
        case .throttled(let seconds):
            var response = body(
                .tooManyRequests, type: "throttled_error", code: "throttled", detail: "Request was throttled. Expected available in \(seconds) seconds.")
            response.headers.replace("Retry-After", "\(seconds)")
            return response
        }
    }

    private func body(_ status: HTTPStatus, type: String, code: String, detail: String) -> HTTPResponse {
        .json(status, #"{"type":\#(jsonString(type)),"code":\#(jsonString(code)),"detail":\#(jsonString(detail)),"attr":null}"#)
    }
}
