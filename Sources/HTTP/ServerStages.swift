/// The request id: the client's `X-Request-Id` when it is short printable ASCII, else a new
/// random one; set on the request for every later stage and log line, and sent back as
/// `X-Request-Id` on every answer.
public struct RequestIDStage: Middleware {
    public init() {}

    public func handle(_ request: HTTPRequest, next: Next, reply: @escaping Reply) -> Bool {
        var request = request
        request.id = HTTPServer.requestID(from: request.headers["X-Request-Id"])
        let id = request.id
        return next(request) { handled in
            var response = handled
            response.headers.replace("X-Request-Id", id)
            reply(response)
        }
    }
}

/// Cross-origin access: a preflight (`OPTIONS`) is answered here, 204 with the allowed methods
/// (and, for an allowed origin, the allowed headers and a day's cache); every other answer to an
/// allowed origin gets `Access-Control-Allow-Origin` (with `Vary: Origin` unless any origin is
/// allowed) and the exposed headers.
public struct CORSStage: Middleware {
    public let config: CORSConfig

    public init(_ config: CORSConfig) {
        self.config = config
    }

    public func handle(_ request: HTTPRequest, next: Next, reply: @escaping Reply) -> Bool {
        if request.method == .options, config.routedOptionsPrefixes.contains(where: { request.path.hasPrefix($0) }) {
            let preflight = preflight(request)
            return next(request) { handled in
                var response = handled
                for (name, value) in preflight.headers where name.hasPrefix("Access-Control-") { response.headers.replace(name, value) }
                reply(self.finished(response, origin: request.headers["Origin"]))
            }
        }
        guard request.method != .options else {
            reply(finished(preflight(request), origin: request.headers["Origin"]))
            return true
        }
        let origin = request.headers["Origin"]
        return next(request) { reply(finished($0, origin: origin)) }
    }

    func preflight(_ request: HTTPRequest) -> HTTPResponse {
        var response = HTTPResponse(status: .noContent)
        response.headers.add("Allow", CORSConfig.allowedMethods)
        if let origin = request.headers["Origin"], config.allows(origin) {
            response.headers.add("Access-Control-Allow-Methods", CORSConfig.allowedMethods)
            response.headers.add("Access-Control-Allow-Headers", request.headers["Access-Control-Request-Headers"] ?? config.allowedHeaders)
            response.headers.add("Access-Control-Max-Age", "86400")
        }
        return response
    }

    func finished(_ handled: HTTPResponse, origin: String?) -> HTTPResponse {
        guard let origin, config.allows(origin) else { return handled }
        var response = handled
        response.headers.replace("Access-Control-Allow-Origin", config.allowedOrigins.contains("*") ? "*" : origin)
        if !config.allowedOrigins.contains("*") { response.headers.add("Vary", "Origin") }
        if !config.exposedHeaders.isEmpty { response.headers.replace("Access-Control-Expose-Headers", config.exposedHeaders) }
        return response
    }
}
