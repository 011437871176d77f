import Testing

@testable import HTTP

/// The connection's state machine, driven event by event and checked by the exact action each
/// transition returns (as Hummingbird's and postgres-nio's state machine tests do).
@Suite("HTTP connection state actions")
struct ConnectionStateActionTests {
    /// The parser and the WebSocket delegate of `ConnectionStateTests`, driven the same way.
    let events = ConnectionStateTests()
    typealias Upgrade = ConnectionStateTests.Upgrade

    func parse(_ text: String) -> HTTPParser.Outcome { events.parse(text) }

    @Test func twoPipelinedRequestsThenTheIdleDeadline() {
        var state = ConnectionState()
        let first = "GET /a?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"
        let second = "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"
        #expect(state.parsed(parse("GET /a")) == .read)
        #expect(
            state.parsed(parse(first + second))
                == .respond(HTTPRequest(method: .get, target: "/a?x=1", headers: ["Host": "x"]), consumed: first.utf8.count))
        #expect(state.parsed(parse(second)) == .nothing)
        #expect(state.deadlinePassed(partialRequest: true) == .nothing)
        #expect(state.drained() == .nothing)
        state.responseReady(keepAlive: true, upgrade: nil)
        #expect(state.drained() == .parseBuffered)
        #expect(
            state.parsed(parse(second))
                == .respond(
                    HTTPRequest(method: .post, target: "/b", headers: ["Host": "x", "Content-Length": "2"], body: Array("hi".utf8)),
                    consumed: second.utf8.count))
        state.responseReady(keepAlive: true, upgrade: nil)
        #expect(state.drained() == .parseBuffered)
        #expect(state.parsed(parse("")) == .read)
        #expect(state.deadlinePassed(partialRequest: false) == .close)
        #expect(state.parsed(parse("GET / HTTP/1.1\r\n\r\n")) == .nothing)
    }

    @Test func anotherRequestIsNotTheSameAction() {
        var state = ConnectionState()
        let action = state.parsed(parse("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(action != .respond(HTTPRequest(method: .get, target: "/b", headers: ["Host": "x"]), consumed: 28))
        #expect(action != .respond(HTTPRequest(method: .get, target: "/a", headers: ["Host": "y"]), consumed: 28))
        #expect(action != .respond(HTTPRequest(method: .get, target: "/a", headers: ["Host": "x"]), consumed: 27))
        #expect(action == .respond(HTTPRequest(method: .get, target: "/a", headers: ["Host": "x"]), consumed: 28))
        #expect(action != .read && action != .nothing)
    }

    @Test func continueThenARejectedRequestThenTheClose() {
        var state = ConnectionState()
        let head = "POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"
        #expect(state.parsed(parse(head)) == .sendContinueAndRead)
        #expect(state.parsed(parse(head + "ab")) == .read)
        var rejected = ConnectionState()
        #expect(
            rejected.parsed(parse("GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"))
                == .reject(HTTPParseError(status: .badRequest, message: "Bad Request: more than one Host header")))
        #expect(rejected.drained() == .finish)
        #expect(rejected.drained() == .nothing)
        #expect(rejected.deadlinePassed(partialRequest: false) == .nothing)
    }

    @Test func aSlowRequestGets408AndAPeerThatLeftIsClosed() {
        var slow = ConnectionState()
        #expect(slow.parsed(parse("GET / HTTP/1.1\r\n")) == .read)
        #expect(slow.deadlinePassed(partialRequest: true) == .rejectTimeout)
        var gone = ConnectionState()
        gone.peerDidClose()
        #expect(gone.parsed(parse("GET / HTT")) == .close)
    }

    @Test func theUpgradeNamesItsDelegate() {
        var state = ConnectionState()
        let delegate = Upgrade()
        _ = state.parsed(parse("GET /ws HTTP/1.1\r\nHost: x\r\n\r\n"))
        state.responseReady(keepAlive: true, upgrade: delegate)
        let action = state.drained()
        #expect(action == .startWebSocket(delegate))
        #expect(action != .startWebSocket(Upgrade()))
    }
}
