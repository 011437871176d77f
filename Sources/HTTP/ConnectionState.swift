/// What one HTTP connection is doing, and what happens next. Pure: the I/O code tells it what
/// happened (a parse of the buffered bytes, a response ready, the output drained, a deadline
/// passed) and performs the action each transition returns, one small enum per transition so
/// that every switch over them is exhaustive; the tests drive it without sockets.
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

    /// What `parsed` asks the I/O code to do.
    enum ParseAction: Equatable {
        /// Wait for more bytes (with the idle deadline when nothing is buffered, else the
        /// request's).
        case read
        /// Send `100 Continue`, then wait for the body.
        case sendContinueAndRead
        /// Hand the request to a responder; the parse used `consumed` bytes of the buffer.
        case respond(HTTPRequest, consumed: Int)
        /// Answer the malformed request with its error, then close.
        case reject(HTTPParseError)
        /// The peer closed before a whole request arrived.
        case close
        /// A responder or the writer has the connection: the bytes wait.
        case nothing

        /// Requests are compared as parsed: method, target, version, headers and body (the rest
        /// derives from the target or is filled in after the parse).
        static func == (lhs: ParseAction, rhs: ParseAction) -> Bool {
            switch (lhs, rhs) {
            case (.read, .read), (.sendContinueAndRead, .sendContinueAndRead), (.close, .close), (.nothing, .nothing):
                return true
            case (.respond(let left, let leftConsumed), .respond(let right, let rightConsumed)):
                return leftConsumed == rightConsumed && left.method == right.method && left.target == right.target
                    && left.versionMinor == right.versionMinor && left.body == right.body
                    && left.headers.fields.elementsEqual(right.headers.fields) { $0.name == $1.name && $0.value == $1.value }
            case (.reject(let left), .reject(let right)):
                return left == right
            case (.read, _), (.sendContinueAndRead, _), (.respond, _), (.reject, _), (.close, _), (.nothing, _):
                return false
            }
        }
    }

    /// What `drained` asks the I/O code to do.
    enum DrainAction: Equatable {
        /// Parse what is already buffered (pipelined requests).
        case parseBuffered
        /// Half-close after the answer, so the client reads it before the close.
        case finish
        /// The 101 is out: the connection becomes this delegate's WebSocket.
        case startWebSocket(any WebSocketDelegate)
        /// Nothing was being written.
        case nothing

        static func == (lhs: DrainAction, rhs: DrainAction) -> Bool {
            switch (lhs, rhs) {
            case (.parseBuffered, .parseBuffered), (.finish, .finish), (.nothing, .nothing):
                return true
            case (.startWebSocket(let left), .startWebSocket(let right)):
                return left === right
            case (.parseBuffered, _), (.finish, _), (.startWebSocket, _), (.nothing, _):
                return false
            }
        }
    }

    /// What `deadlinePassed` asks the I/O code to do.
    enum DeadlineAction: Equatable {
        /// Answer 408 to the half-received request, then close.
        case rejectTimeout
        /// Close the idle (or stuck writing) connection.
        case close
        /// A responder or the WebSocket owns the connection, or it is closed: no deadline applies.
        case nothing
    }

    private(set) var phase = Phase.reading(continueSent: false)
    /// The peer sent its FIN: what is buffered is still answered, then the connection closes.
    private(set) var peerClosed = false

    mutating func peerDidClose() { peerClosed = true }

    /// The parser's verdict on the buffered bytes.
    mutating func parsed(_ outcome: HTTPParser.Outcome) -> ParseAction {
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
    mutating func drained() -> DrainAction {
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
    mutating func deadlinePassed(partialRequest: Bool) -> DeadlineAction {
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
