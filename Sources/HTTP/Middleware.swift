import Logging

/// Where a stage's answer goes: the stage before it, and in the end the connection. Called
/// exactly once per request taken, now (a worker) or later (an inline answer whose database
/// results arrive on the loop).
public typealias Reply = (HTTPResponse) -> Void

/// What comes after a stage: the next stage, or in the end the endpoint. It returns false when
/// the endpoint declined the request (the inline path leaves it to a worker, which runs the whole
/// chain again); then `reply` is never called.
public typealias Next = (HTTPRequest, @escaping Reply) -> Bool

/// One stage every request of a chain passes through (Hummingbird's `MiddlewareProtocol`, in
/// continuation style so that one stage serves the blocking worker path and the inline path
/// alike). A stage passes the request on with `next` (and may change the answer on its way back
/// by wrapping `reply`), or answers it itself with `reply` and returns true. A stage that throws
/// refuses the request: an `HTTPResponseError` renders itself, anything else is a logged 500;
/// the answer goes back through the stages before it.
public protocol Middleware: Sendable {
    func handle(_ request: HTTPRequest, next: Next, reply: @escaping Reply) throws -> Bool
}

/// Stages composed around an endpoint, outermost first.
public struct MiddlewareChain: Sendable {
    public let stages: [any Middleware]
    /// The body of a 500 for an error that does not render itself.
    public var errorStyle: ErrorStyle
    public var logger: Logger

    public init(_ stages: [any Middleware], errorStyle: ErrorStyle = .plain, logger: Logger = Logger(label: "onboard.http")) {
        self.stages = stages
        self.errorStyle = errorStyle
        self.logger = logger
    }

    /// The worker path: the stages around a blocking handler; the answer once they are through.
    public func respond(to request: HTTPRequest, _ handler: (HTTPRequest) throws -> HTTPResponse) -> HTTPResponse {
        var answer: HTTPResponse?
        let taken = withoutActuallyEscaping(handler) { handler in
            run(
                request, from: 0,
                endpoint: { request, reply in
                    reply(try handler(request))
                    return true
                }, reply: { answer = $0 })
        }
        // A blocking handler always takes the request and has answered by the time it returns.
        guard taken, let answer else { return errorStyle.response(.internalServerError, "Internal Server Error") }
        return answer
    }

    /// The inline path: the stages around an endpoint that may answer later (or decline: false,
    /// and `reply` is never called).
    public func respond(
        to request: HTTPRequest, _ endpoint: (HTTPRequest, @escaping Reply) throws -> Bool, reply: @escaping Reply
    ) -> Bool {
        withoutActuallyEscaping(endpoint) { endpoint in run(request, from: 0, endpoint: endpoint, reply: reply) }
    }

    /// The chain as one blocking handler (a route's stages, GoTrue's `r.With(…)`).
    public func handler(_ handler: @escaping Handler) -> Handler {
        { [self] request in respond(to: request, handler) }
    }

    private func run(
        _ request: HTTPRequest, from index: Int, endpoint: (HTTPRequest, @escaping Reply) throws -> Bool, reply: @escaping Reply
    ) -> Bool {
        do {
            guard index < stages.count else { return try endpoint(request, reply) }
            return try stages[index].handle(request, next: { run($0, from: index + 1, endpoint: endpoint, reply: $1) }, reply: reply)
        } catch {
            reply(render(error, for: request))
            return true
        }
    }

    func render(_ error: any Error, for request: HTTPRequest) -> HTTPResponse {
        errorStyle.render(error, for: request, logger: logger)
    }
}

extension ErrorStyle {
    /// The one place an error thrown by a stage, a route's handler or an inline endpoint becomes
    /// HTTP: an `HTTPResponseError` renders itself; anything else is one log line and a bare 500
    /// in this style.
    public func render(_ error: any Error, for request: HTTPRequest, logger: Logger) -> HTTPResponse {
        if let error = error as? any HTTPResponseError { return error.response(for: request) }
        logger.error("unhandled error", metadata: ["request.id": "\(request.id)", "error": "\(error)"])
        return response(.internalServerError, "Internal Server Error")
    }
}
