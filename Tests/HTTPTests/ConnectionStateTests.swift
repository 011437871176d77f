import Testing

@testable import HTTP

/// The connection's state machine, driven without sockets: each step is what the I/O code
/// reports, each expectation the action it must then perform.
@Suite("HTTP connection state")
struct ConnectionStateTests {
    let parser = HTTPParser()

    func parse(_ text: String) -> HTTPParser.Outcome { parser.parse(Array(text.utf8)) }

    final class Upgrade: WebSocketDelegate {
        func webSocketOpened(_ socket: WebSocket) {}
        func webSocket(_ socket: WebSocket, received message: WebSocketMessage) {}
        func webSocketClosed(_ socket: WebSocket, code: WebSocketCloseCode) {}
    }

    @Test func aKeepAliveRequestIsAnsweredAndTheNextOneRead() {
        var state = ConnectionState()
        guard case .read = state.parsed(parse("GET / HTTP/1.1\r\nHost: x\r\n")) else {
            Issue.record("expected read")
            return
        }
        let whole = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
        guard case .respond(let request, let consumed) = state.parsed(parse(whole + "GET /b")) else {
            Issue.record("expected respond")
            return
        }
        #expect(request.path == "/a" && consumed == whole.utf8.count)
        // While the responder has it, nothing is parsed and no deadline closes it.
        guard case .nothing = state.parsed(parse("GET /b HTTP/1.1\r\nHost: x\r\n\r\n")) else {
            Issue.record("parsed while responding")
            return
        }
        guard case .nothing = state.deadlinePassed(partialRequest: false) else {
            Issue.record("closed while responding")
            return
        }
        state.responseReady(keepAlive: true, upgrade: nil)
        #expect(state.isWriting)
        guard case .parseBuffered = state.drained() else {
            Issue.record("expected parseBuffered")
            return
        }
        guard case .reading(continueSent: false) = state.phase else {
            Issue.record("expected reading")
            return
        }
    }

    @Test func aResponseWithoutKeepAliveHalfClosesAfterItIsWritten() {
        var state = ConnectionState()
        _ = state.parsed(parse("GET / HTTP/1.0\r\n\r\n"))
        state.responseReady(keepAlive: false, upgrade: nil)
        guard case .finish = state.drained() else {
            Issue.record("expected finish")
            return
        }
        guard case .closed = state.phase else {
            Issue.record("expected closed")
            return
        }
        guard case .nothing = state.drained() else {
            Issue.record("drained twice")
            return
        }
    }

    @Test func continueIsSentOncePerRequest() {
        var state = ConnectionState()
        let head = "POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"
        guard case .sendContinueAndRead = state.parsed(parse(head)) else {
            Issue.record("expected continue")
            return
        }
        guard case .read = state.parsed(parse(head + "ab")) else {
            Issue.record("continue sent twice")
            return
        }
        guard case .respond = state.parsed(parse(head + "abcd")) else {
            Issue.record("expected respond")
            return
        }
        state.responseReady(keepAlive: true, upgrade: nil)
        _ = state.drained()
        // The next request may ask again.
        guard case .sendContinueAndRead = state.parsed(parse(head)) else {
            Issue.record("expected continue again")
            return
        }
    }

    @Test func aMalformedRequestIsRejectedThenClosed() {
        var state = ConnectionState()
        guard case .reject(let error) = state.parsed(parse("GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n")) else {
            Issue.record("expected reject")
            return
        }
        #expect(error.status == .badRequest)
        guard case .finish = state.drained() else {
            Issue.record("expected finish")
            return
        }
    }

    @Test func thePeersCloseEndsTheConnectionOnlyOnceWhatItSentIsAnswered() {
        var state = ConnectionState()
        state.peerDidClose()
        guard case .respond = state.parsed(parse("GET / HTTP/1.1\r\nHost: x\r\n\r\n")) else {
            Issue.record("expected respond")
            return
        }
        state.responseReady(keepAlive: true, upgrade: nil)
        guard case .parseBuffered = state.drained() else {
            Issue.record("expected parseBuffered")
            return
        }
        guard case .close = state.parsed(parse("")) else {
            Issue.record("expected close")
            return
        }
    }

    @Test func deadlines() {
        var idle = ConnectionState()
        guard case .close = idle.deadlinePassed(partialRequest: false) else {
            Issue.record("idle: expected close")
            return
        }
        var slow = ConnectionState()
        _ = slow.parsed(parse("GET / HTTP/1.1\r\n"))
        guard case .rejectTimeout = slow.deadlinePassed(partialRequest: true) else {
            Issue.record("slow: expected 408")
            return
        }
        var stuck = ConnectionState()
        _ = stuck.parsed(parse("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
        stuck.responseReady(keepAlive: true, upgrade: nil)
        // A client that does not read its answer: closed, even with a pipelined request buffered.
        guard case .close = stuck.deadlinePassed(partialRequest: true) else {
            Issue.record("writing: expected close")
            return
        }
    }

    @Test func aSwitchingProtocolsAnswerHandsTheConnectionToTheWebSocket() {
        var state = ConnectionState()
        _ = state.parsed(parse("GET /ws HTTP/1.1\r\nHost: x\r\n\r\n"))
        state.responseReady(keepAlive: true, upgrade: Upgrade())
        guard case .startWebSocket = state.drained() else {
            Issue.record("expected startWebSocket")
            return
        }
        #expect(state.webSocket == nil)
    }
}
