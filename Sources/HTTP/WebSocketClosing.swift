/// Where a WebSocket's closing handshake (RFC 6455 §7) stands. Pure: `WebSocket` keeps one under
/// its lock and does what the transitions return; the tests drive it without sockets.
enum WebSocketClosing: Equatable {
    case open
    /// Our Close is queued (since `at`): the connection ends when the peer answers it, or after
    /// the close timeout.
    case closeSent(at: Double, code: WebSocketCloseCode)
    /// The last frame is queued (our answer to the peer's Close, or our Close after the peer broke
    /// the protocol): the connection ends once it is written, or after the close timeout.
    case finishing(since: Double, code: WebSocketCloseCode)
    case ended

    /// What a Close from the peer leads to.
    enum PeerClose: Equatable {
        /// Answer with a Close of the same code, then end once it is written.
        case answer
        /// It answers ours: end now, with this code.
        case end(WebSocketCloseCode)
        /// Already ended.
        case ignore
    }

    /// What the periodic check finds.
    enum Check: Equatable {
        case nothing
        /// Nothing heard from the peer for too long: start the closing handshake.
        case closeIdle
        /// The handshake ran out of time: end with this code.
        case end(WebSocketCloseCode)
    }

    var isOpen: Bool { self == .open }

    /// Whether a frame may still be queued: anything while open, control frames while closing.
    func accepts(control: Bool) -> Bool {
        switch self {
        case .open: return true
        case .closeSent, .finishing: return control
        case .ended: return false
        }
    }

    /// We start the handshake. False when it is already under way or over (nothing to send).
    mutating func close(_ code: WebSocketCloseCode, now: Double) -> Bool {
        guard self == .open else { return false }
        self = .closeSent(at: now, code: code)
        return true
    }

    mutating func peerClosed(code: UInt16?, now: Double) -> PeerClose {
        switch self {
        case .open:
            self = .finishing(since: now, code: code.map(WebSocketCloseCode.init(rawValue:)) ?? .noStatus)
            return .answer
        case .closeSent(_, let ours), .finishing(_, let ours):
            return .end(ours)
        case .ended:
            return .ignore
        }
    }

    /// After a protocol failure our Close is queued: end as soon as it is written.
    mutating func finishAfterClose() {
        if case .closeSent(let at, let code) = self { self = .finishing(since: at, code: code) }
    }

    /// The code to end with now that the queue is empty, when finishing.
    func finished(queueEmpty: Bool) -> WebSocketCloseCode? {
        if case .finishing(_, let code) = self, queueEmpty { return code }
        return nil
    }

    func check(now: Double, lastReceived: Double, idleTimeout: Double, closeTimeout: Double) -> Check {
        switch self {
        case .open:
            return now - lastReceived > idleTimeout ? .closeIdle : .nothing
        case .closeSent(let since, let code), .finishing(let since, let code):
            return now - since > closeTimeout ? .end(code) : .nothing
        case .ended:
            return .nothing
        }
    }

    /// The connection ends. False when it already had.
    mutating func end() -> Bool {
        guard self != .ended else { return false }
        self = .ended
        return true
    }
}
