/// What one HTTP connection is doing, and what happens next. Pure: the I/O code tells it what
/// happened (a parse of the buffered bytes, a response ready, the output drained, a deadline
/// passed) and performs the action each transition returns; the tests drive it without sockets.
struct ConnectionState {
    enum Phase {
        /// Waiting for (the rest of) a request; `continueSent`: its `100 Continue` went out.
        case reading(continueSent: Bool)
        /// The request is with the inline responder or a worker. They own the connection until
        /// they hand back a response: nothing is read, and no deadline runs.
        case responding
        /// A response is being written; `then` is what follows once it is all out.
        case writing(then: AfterWrite)
        /// The connection left HTTP: the WebSocket owns the descriptor.
        case upgraded(WebSocket)
        case closed
    }

    enum AfterWrite {
        case readNext
        case close
        case upgrade(any WebSocketDelegate)
    }

    enum Action {
        /// Wait for more bytes (with the idle deadline when nothing is buffered, else the
        /// request's).
        case read
        /// Send `100 Continue`, then wait for the body.
        case sendContinueAndRead
        /// Hand the request to a responder; the parse used `consumed` bytes of the buffer.
        case respond(HTTPRequest, consumed: Int)
        /// Answer the malformed request with its error, then close.
        case reject(HTTPParseError)
        /// Answer 408 to the half-received request, then close.
        case rejectTimeout
        /// Parse what is already buffered (pipelined requests).
        case parseBuffered
        /// Half-close after the answer, so the client reads it before the close.
        case finish
        case startWebSocket(any WebSocketDelegate)
        case close
        case nothing
    }

    private(set) var phase = Phase.reading(continueSent: false)
    /// The peer sent its FIN: what is buffered is still answered, then the connection closes.
    private(set) var peerClosed = false

    mutating func peerDidClose() { peerClosed = true }

    /// The parser's verdict on the buffered bytes.
    mutating func parsed(_ outcome: HTTPParser.Outcome) -> Action {
        guard case .reading(let continueSent) = phase else { return .nothing }
        switch outcome {
        case .needMore(let headersComplete, let expectsContinue):
            if peerClosed {
                phase = .closed
                return .close
            }
            if headersComplete && expectsContinue && !continueSent {
                phase = .reading(continueSent: true)
                return .sendContinueAndRead
            }
            return .read
        case .request(let request, let consumed):
            phase = .responding
            return .respond(request, consumed: consumed)
        case .failed(let error):
            phase = .writing(then: .close)
            return .reject(error)
        }
    }

    /// The response is ready to be written.
    mutating func responseReady(keepAlive: Bool, upgrade: (any WebSocketDelegate)?) {
        guard case .responding = phase else { return }
        if let upgrade {
            phase = .writing(then: .upgrade(upgrade))
        } else {
            phase = .writing(then: keepAlive ? .readNext : .close)
        }
    }

    /// Every byte of the response is out.
    mutating func drained() -> Action {
        guard case .writing(let next) = phase else { return .nothing }
        switch next {
        case .readNext:
            phase = .reading(continueSent: false)
            return .parseBuffered
        case .close:
            phase = .closed
            return .finish
        case .upgrade(let delegate):
            return .startWebSocket(delegate)
        }
    }

    /// The connection is now the WebSocket's.
    mutating func upgraded(to webSocket: WebSocket) { phase = .upgraded(webSocket) }

    /// The connection's deadline passed (`partialRequest`: some bytes of a request are buffered).
    mutating func deadlinePassed(partialRequest: Bool) -> Action {
        switch phase {
        case .reading where partialRequest:
            phase = .closed
            return .rejectTimeout
        case .reading, .writing:
            phase = .closed
            return .close
        case .responding, .upgraded, .closed:
            return .nothing
        }
    }

    /// The socket failed or was closed: nothing more happens on it.
    mutating func closed() { phase = .closed }

    var isWriting: Bool {
        if case .writing = phase { return true }
        return false
    }

    var webSocket: WebSocket? {
        if case .upgraded(let webSocket) = phase { return webSocket }
        return nil
    }
}
