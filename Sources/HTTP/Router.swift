import Logging

/// Errors that know how they look on the wire. The router renders them; anything else a handler
/// throws becomes a bare 500 and one log line.
public protocol HTTPResponseError: Error {
    func response(for request: HTTPRequest) -> HTTPResponse
}

/// A request handler. It runs on a worker thread and may block (e.g. on libpq).
public typealias Handler = @Sendable (HTTPRequest) throws -> HTTPResponse

/// Method + path pattern → handler. Patterns are literal segments, `:name` parameters and a
/// trailing `*` that matches the rest.
public struct Router: Sendable {
    struct Route: Sendable {
        let method: HTTPMethod
        let segments: [Substring]
        let handler: Handler
    }

    private var routes: [Route] = []
    public var logger: Logger
    /// The body of the router's own answers (404, 405, 500).
    public var errorStyle: ErrorStyle

    public init(logger: Logger = Logger(label: "onboard.http"), errorStyle: ErrorStyle = .plain) {
        self.logger = logger
        self.errorStyle = errorStyle
    }

    public mutating func add(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping Handler) {
        routes.append(Route(method: method, segments: pattern.split(separator: "/"), handler: handler))
    }

    /// A route whose requests pass `stages` (outermost first) before its handler, as GoTrue's
    /// `r.With(…)`; a stage's refusal is rendered by the chain, like a handler's error.
    public mutating func add(_ method: HTTPMethod, _ pattern: String, through stages: [any Middleware], _ handler: @escaping Handler) {
        add(method, pattern, MiddlewareChain(stages, errorStyle: errorStyle, logger: logger).handler(handler))
    }

    /// Finds the route, runs its handler, and renders errors.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: true)
        var allowed: [HTTPMethod] = []
        for route in routes {
            guard let parameters = match(route.segments, segments) else { continue }
            guard route.method == request.method || (route.method == .get && request.method == .head) else {
                allowed.append(route.method)
                continue
            }
            var routed = request
            routed.pathParameters = parameters
            do {
                return try route.handler(routed)
            } catch {
                return errorStyle.render(error, for: routed, logger: logger)
            }
        }
        if !allowed.isEmpty {
            var headers = HTTPHeaders()
            headers.add("Allow", Set(allowed + (allowed.contains(.get) ? [.head] : [])).map(\.rawValue).sorted().joined(separator: ", "))
            return errorStyle.response(.methodNotAllowed, "Method Not Allowed", headers: headers)
        }
        return errorStyle.response(.notFound, "Not Found")
    }

    private func match(_ pattern: [Substring], _ path: [Substring]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (index, segment) in pattern.enumerated() {
            if segment == "*" { return parameters }
            guard index < path.count else { return nil }
            if segment.hasPrefix(":") {
                parameters[String(segment.dropFirst())] = String(path[index])
            } else if segment != path[index] {
                return nil
            }
        }
        return pattern.count == path.count ? parameters : nil
    }
}
