import HTTP

/// GoTrue's API versioning: a request that names a version (`X-Supabase-Api-Version`) is told
/// the one it was answered in, `2024-01-01`, on every answer of Auth's (errors included; their
/// body's shape follows the same header, see `AuthError.response(for:)`).
public struct APIVersionStage: Middleware {
    public static let version = "2024-01-01"

    public init() {}

    public func handle(_ request: HTTPRequest, next: Next, reply: @escaping Reply) -> Bool {
        guard request.headers["X-Supabase-Api-Version"] != nil else { return next(request, reply) }
        return next(request) { handled in
            var response = handled
            response.headers.replace("X-Supabase-Api-Version", Self.version)
            reply(response)
        }
    }
}
