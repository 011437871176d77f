import Testing

@testable import HTTP

/// The WebSocket closing handshake (RFC 6455 §7), driven without sockets.
@Suite("WebSocket closing handshake")
struct WebSocketClosingTests {
    @Test func weCloseAndThePeerAnswers() {
        var closing = WebSocketClosing.open
        #expect(closing.accepts(control: false))
        let first = closing.close(.goingAway, now: 10)
        let second = closing.close(.normal, now: 11)
        #expect(first && !second, "a second close sends nothing")
        #expect(!closing.accepts(control: false) && closing.accepts(control: true))
        #expect(closing.check(now: 14, lastReceived: 0, idleTimeout: 60, closeTimeout: 5) == .nothing)
        let answer = closing.peerClosed(code: 1000, now: 12)
        #expect(answer == .end(.goingAway))
        let ended = closing.end()
        let endedAgain = closing.end()
        #expect(ended && !endedAgain)
        #expect(!closing.accepts(control: true))
    }

    @Test func thePeerClosesAndWeAnswerThenEndOnceItIsWritten() {
        var closing = WebSocketClosing.open
        let answer = closing.peerClosed(code: nil, now: 3)
        #expect(answer == .answer)
        #expect(!closing.isOpen)
        #expect(closing.finished(queueEmpty: false) == nil)
        #expect(closing.finished(queueEmpty: true) == .noStatus)
        // A peer that never reads our answer: ended after the close timeout.
        #expect(closing.check(now: 9, lastReceived: 0, idleTimeout: 60, closeTimeout: 5) == .end(.noStatus))
    }

    @Test func aProtocolFailureEndsOnceOurCloseIsWritten() {
        var closing = WebSocketClosing.open
        _ = closing.close(.protocolError, now: 1)
        #expect(closing.finished(queueEmpty: true) == nil, "a plain close waits for the peer")
        closing.finishAfterClose()
        #expect(closing.finished(queueEmpty: true) == .protocolError)
    }

    @Test func anIdlePeerIsClosedAndAnUnansweredCloseEnds() {
        var closing = WebSocketClosing.open
        #expect(closing.check(now: 100, lastReceived: 50, idleTimeout: 60, closeTimeout: 5) == .nothing)
        #expect(closing.check(now: 111, lastReceived: 50, idleTimeout: 60, closeTimeout: 5) == .closeIdle)
        _ = closing.close(.normal, now: 111)
        #expect(closing.check(now: 116.5, lastReceived: 50, idleTimeout: 60, closeTimeout: 5) == .end(.normal))
        _ = closing.end()
        let late = closing.peerClosed(code: 1000, now: 117)
        #expect(late == .ignore)
    }
}
