import Synchronization
import Testing

@testable import HTTP

/// The chain of stages around an endpoint, on the blocking (worker) and the inline path.
@Suite("Middleware chain")
struct MiddlewareTests {
    /// What the stages and endpoints saw, in order.
    final class Trace: Sendable {
        let steps = Mutex<[String]>([])
        func add(_ step: String) { steps.withLock { $0.append(step) } }
        var all: [String] { steps.withLock { $0 } }
    }

    /// Notes its name on the way in and on the way out, and marks the answer.
    struct Tracing: Middleware {
        let name: String
        let trace: Trace

        func handle(_ request: HTTPRequest, next: Next, reply: @escaping Reply) -> Bool {
            trace.add("\(name)>")
            return next(request) { [trace, name] handled in
                trace.add("<\(name)")
                var response = handled
                response.headers.add("X-Passed", name)
                reply(response)
            }
        }
    }

    struct Forbidden: Error, HTTPResponseError {
        func response(for request: HTTPRequest) -> HTTPResponse { .json(.forbidden, #"{"refused":true}"#) }
    }

    /// Refuses every request by throwing.
    struct Refusing: Middleware {
        let error: any Error
        func handle(_ request: HTTPRequest, next: Next, reply: @escaping Reply) throws -> Bool { throw error }
    }

    @Test func stagesRunOutermostFirstAroundTheHandlerAndBackInReverse() {
        let trace = Trace()
        let chain = MiddlewareChain([Tracing(name: "a", trace: trace), Tracing(name: "b", trace: trace)])
        let response = chain.respond(to: HTTPRequest(method: .get, target: "/x")) { _ in
            trace.add("handler")
            return .json(.ok, "{}")
        }
        #expect(trace.all == ["a>", "b>", "handler", "<b", "<a"])
        #expect(response.status == .ok)
        #expect(response.headers.values("X-Passed") == ["b", "a"])
    }

    @Test func aRefusalNeverReachesTheHandlerAndItsAnswerPassesTheOuterStagesOnly() {
        let trace = Trace()
        let chain = MiddlewareChain([Tracing(name: "outer", trace: trace), Refusing(error: Forbidden()), Tracing(name: "inner", trace: trace)])
        let response = chain.respond(to: HTTPRequest(method: .post, target: "/x")) { _ in
            trace.add("handler")
            return .json(.ok, "{}")
        }
        #expect(trace.all == ["outer>", "<outer"])
        #expect(response.status == .forbidden && String(decoding: response.body, as: UTF8.self) == #"{"refused":true}"#)
        #expect(response.headers.values("X-Passed") == ["outer"])
    }

    @Test func anErrorThatDoesNotRenderItselfIsA500InTheChainsStyle() {
        struct Opaque: Error {}
        let chain = MiddlewareChain([Refusing(error: Opaque())], errorStyle: ErrorStyle { #"{"oops":\#(jsonString($0))}"# })
        let response = chain.respond(to: HTTPRequest(method: .get, target: "/x")) { _ in .json(.ok, "{}") }
        #expect(response.status == .internalServerError)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"oops":"Internal Server Error"}"#)
        let thrown = MiddlewareChain([]).respond(to: HTTPRequest(method: .get, target: "/x")) { _ throws -> HTTPResponse in throw Forbidden() }
        #expect(thrown.status == .forbidden)
    }

    @Test func theInlinePathRunsTheSameStagesAndAnAnswerGivenLaterPassesThemOnItsWayOut() {
        let trace = Trace()
        let chain = MiddlewareChain([Tracing(name: "a", trace: trace), Tracing(name: "b", trace: trace)])
        var pending: Reply?
        var answered: [HTTPResponse] = []
        let taken = chain.respond(
            to: HTTPRequest(method: .get, target: "/x"),
            { _, reply in
                trace.add("endpoint")
                pending = reply
                return true
            }, reply: { answered.append($0) })
        #expect(taken)
        #expect(trace.all == ["a>", "b>", "endpoint"])
        #expect(answered.isEmpty)
        pending?(.json(.ok, "{}"))
        #expect(trace.all == ["a>", "b>", "endpoint", "<b", "<a"])
        #expect(answered.count == 1 && answered.first?.headers.values("X-Passed") == ["b", "a"])
    }

    @Test func aDeclinedInlineRequestIsNotAnswered() {
        let trace = Trace()
        let chain = MiddlewareChain([Tracing(name: "a", trace: trace)])
        var answered = 0
        let taken = chain.respond(to: HTTPRequest(method: .get, target: "/x"), { _, _ in false }, reply: { _ in answered += 1 })
        #expect(!taken)
        #expect(answered == 0)
        #expect(trace.all == ["a>"])
    }

    @Test func requestIDStageEchoesAShortIDOrMakesOneAndSetsItForLaterStages() {
        let chain = MiddlewareChain([RequestIDStage()])
        var seen = ""
        let echoed = chain.respond(to: HTTPRequest(method: .get, target: "/x", headers: ["X-Request-Id": "abc-123"])) { request in
            seen = request.id
            return .json(.ok, "{}")
        }
        #expect(seen == "abc-123" && echoed.headers["X-Request-Id"] == "abc-123")
        let made = chain.respond(to: HTTPRequest(method: .get, target: "/x", headers: ["X-Request-Id": "has space"])) { request in
            seen = request.id
            return .json(.ok, "{}")
        }
        #expect(seen.count == 16 && made.headers["X-Request-Id"] == seen)
    }

    @Test func corsStageAnswersPreflightsItselfAndMarksAnswersToAllowedOrigins() {
        let trace = Trace()
        let cors = CORSConfig(allowedOrigins: ["https://app.example"], exposedHeaders: "X-Request-Id")
        let chain = MiddlewareChain([CORSStage(cors), Tracing(name: "inner", trace: trace)])
        let preflight = chain.respond(
            to: HTTPRequest(
                method: .options, target: "/x", headers: ["Origin": "https://app.example", "Access-Control-Request-Headers": "apikey"])
        ) { _ in
            trace.add("handler")
            return .json(.ok, "{}")
        }
        #expect(trace.all.isEmpty)
        #expect(preflight.status == .noContent)
        #expect(preflight.headers["Access-Control-Allow-Headers"] == "apikey")
        #expect(preflight.headers["Access-Control-Allow-Origin"] == "https://app.example")
        let allowed = chain.respond(to: HTTPRequest(method: .get, target: "/x", headers: ["Origin": "https://app.example"])) { _ in .json(.ok, "{}") }
        #expect(allowed.headers["Access-Control-Allow-Origin"] == "https://app.example" && allowed.headers["Vary"] == "Origin")
        #expect(allowed.headers["Access-Control-Expose-Headers"] == "X-Request-Id")
        let other = chain.respond(to: HTTPRequest(method: .get, target: "/x", headers: ["Origin": "https://evil.example"])) { _ in .json(.ok, "{}") }
        #expect(other.headers["Access-Control-Allow-Origin"] == nil)
    }
}
