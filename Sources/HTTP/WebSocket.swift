import COpenSSL
import CSystemLinux
import Glibc
import Synchronization

/// What an application does with an upgraded connection. Callbacks come from the server's epoll
/// thread (and `opened` from the thread that finished the handshake): they must not block.
public protocol WebSocketDelegate: AnyObject, Sendable {
    func webSocketOpened(_ socket: WebSocket)
    func webSocket(_ socket: WebSocket, received message: WebSocketMessage)
    /// Once, when the connection is gone: the peer's close code, or the one we closed with.
    func webSocketClosed(_ socket: WebSocket, code: WebSocketCloseCode)
}

/// The opening handshake (RFC 6455 §4.2): checks the request and builds the 101 response.
public enum WebSocketHandshake {
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The 101 response that hands the connection to `delegate`, or the error response (400, or
    /// 426 for a version we do not speak).
    public static func accept(_ request: HTTPRequest, delegate: any WebSocketDelegate, style: ErrorStyle = .plain) -> HTTPResponse {
        if let refusal = check(request, style: style) { return refusal }
        var response = HTTPResponse(status: .switchingProtocols)
        response.headers.add("Upgrade", "websocket")
        response.headers.add("Sec-WebSocket-Accept", acceptValue(for: request.headers["Sec-WebSocket-Key"]!.trimmedOWS))
        response.webSocket = delegate
        return response
    }

    /// Nil when `request` is a valid upgrade; else the response refusing it.
    public static func check(_ request: HTTPRequest, style: ErrorStyle = .plain) -> HTTPResponse? {
        guard request.method == .get, request.versionMinor >= 1 else { return style.response(.badRequest, "WebSocket upgrade needs GET over HTTP/1.1") }
        guard request.headers.values("Upgrade").contains(where: { $0.trimmedOWS.equalsIgnoringASCIICase("websocket") }) else {
            return style.response(.badRequest, "Expected Upgrade: websocket")
        }
        let connectionTokens = request.headers.values("Connection").flatMap { $0.split(separator: ",").map(\.trimmedOWS) }
        guard connectionTokens.contains(where: { $0.equalsIgnoringASCIICase("upgrade") }) else {
            return style.response(.badRequest, "Expected Connection: Upgrade")
        }
        guard request.headers["Sec-WebSocket-Version"]?.trimmedOWS == "13" else {
            var headers = HTTPHeaders()
            headers.add("Sec-WebSocket-Version", "13")
            return style.response(.upgradeRequired, "Unsupported WebSocket version (13 is supported)", headers: headers)
        }
        guard let key = request.headers["Sec-WebSocket-Key"]?.trimmedOWS, decodedBase64Length(key) == 16 else {
            return style.response(.badRequest, "Sec-WebSocket-Key must be base64 of 16 bytes")
        }
        return nil
    }

    /// base64(SHA-1(key + GUID)).
    public static func acceptValue(for key: String) -> String {
        let input = Array((key + guid).utf8)
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        _ = SHA1(input, input.count, &digest)
        var encoded = [UInt8](repeating: 0, count: 29)
        let length = EVP_EncodeBlock(&encoded, digest, Int32(digest.count))
        return String(decoding: encoded[0..<Int(length)], as: UTF8.self)
    }

    /// The byte length `text` decodes to when it is canonical padded base64, else nil.
    static func decodedBase64Length(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count % 4 == 0 else { return nil }
        let padding = bytes.reversed().prefix(while: { $0 == UInt8(ascii: "=") }).count
        guard padding <= 2 else { return nil }
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        guard bytes.dropLast(padding).allSatisfy(alphabet.contains) else { return nil }
        return bytes.count / 4 * 3 - padding
    }
}

/// One upgraded connection. Frames are read on the server's epoll thread; `send` and `close`
/// may be called from any thread: the output queue and the descriptor are guarded by one lock,
/// and the descriptor is closed under it, so a late send never reaches a reused descriptor.
public final class WebSocket: Sendable {
    public let remoteAddress: String
    let limits: WebSocketLimits
    let delegate: any WebSocketDelegate
    private let state: Mutex<Output>
    /// Touched only by the thread that reads the connection.
    private let reader: Mutex<WebSocketDecoder>
    private let onTerminate: @Sendable (Int32) -> Void

    struct Output {
        let fd: Int32
        let epoll: Int32
        var queue: [UInt8] = []
        var offset = 0
        var closing = WebSocketClosing.open
        var interest = Interest.unregistered
        var lastReceived: Double
    }

    /// What epoll watches the descriptor for.
    enum Interest {
        /// Until `start` has decoded the bytes that came with the handshake: no epoll change may
        /// hand the descriptor to the epoll thread before that.
        case unregistered
        case read
        /// Also writable: queued bytes wait for room in the socket.
        case readWrite
    }

    init(
        fd: Int32, epoll: Int32, remoteAddress: String, limits: WebSocketLimits,
        delegate: any WebSocketDelegate, onTerminate: @escaping @Sendable (Int32) -> Void
    ) {
        self.remoteAddress = remoteAddress
        self.limits = limits
        self.delegate = delegate
        self.onTerminate = onTerminate
        state = Mutex(Output(fd: fd, epoll: epoll, lastReceived: monotonicNow()))
        reader = Mutex(WebSocketDecoder(maxFrameBytes: limits.maxMessageBytes, maxMessageBytes: limits.maxMessageBytes))
    }

    /// Sends one text message. False when the connection is closing or gone.
    @discardableResult
    public func send(text: String) -> Bool {
        enqueue(WebSocketEncoder.frame(.text, Array(text.utf8)))
    }

    /// Sends one binary message. False when the connection is closing or gone.
    @discardableResult
    public func send(binary: [UInt8]) -> Bool {
        enqueue(WebSocketEncoder.frame(.binary, binary))
    }

    /// Starts the closing handshake: our Close now, the connection ends when the client answers
    /// (or after `limits.closeTimeout`).
    public func close(_ code: WebSocketCloseCode = .normal, reason: String = "") {
        let first = state.withLock { $0.closing.close(code, now: monotonicNow()) }
        if first { enqueue(WebSocketEncoder.close(code, reason: reason), control: true) }
    }

    public var isOpen: Bool { state.withLock { $0.closing.isOpen } }

    /// Bytes waiting to be written (for tests and metrics).
    public var queuedBytes: Int { state.withLock { $0.queue.count - $0.offset } }

    @discardableResult
    private func enqueue(_ frame: [UInt8], control: Bool = false) -> Bool {
        var overflow = false
        let accepted = state.withLock { output -> Bool in
            guard output.closing.accepts(control: control) else { return false }
            if output.queue.count - output.offset + frame.count > limits.maxQueuedBytes {
                overflow = true
                return false
            }
            output.queue.append(contentsOf: frame)
            flushLocked(&output)
            return true
        }
        if overflow {
            // A client that does not read loses its connection, not our memory.
            terminate(code: .policyViolation)
        } else if let code = finishedCode() {
            terminate(code: code)
        }
        return accepted
    }

    /// Writes what the socket takes; asks epoll for EPOLLOUT while bytes remain.
    private func flushLocked(_ output: inout Output) {
        guard output.closing != .ended else { return }
        while output.offset < output.queue.count {
            let sent = output.queue.withUnsafeBytes { raw in
                Glibc.send(output.fd, raw.baseAddress! + output.offset, raw.count - output.offset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                output.offset += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else {
                // The peer is gone; the reader sees it and terminates.
                output.queue = []
                output.offset = 0
                return
            }
        }
        if output.offset == output.queue.count {
            output.queue = []
            output.offset = 0
        } else if output.offset > 65536 {
            output.queue.removeFirst(output.offset)
            output.offset = 0
        }
        let interest: Interest = output.queue.isEmpty ? .read : .readWrite
        if output.interest != .unregistered && interest != output.interest {
            output.interest = interest
            var event = epoll_event(
                events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (interest == .readWrite ? EPOLLOUT.rawValue : 0),
                data: epoll_data_t(fd: output.fd))
            epoll_ctl(output.epoll, EPOLL_CTL_MOD, output.fd, &event)
        }
    }

    /// The code to end with, when the last frame has been written.
    private func finishedCode() -> WebSocketCloseCode? {
        state.withLock { $0.closing.finished(queueEmpty: $0.queue.isEmpty) }
    }

    // MARK: called by the server

    /// Registers the descriptor with epoll (level-triggered) and decodes bytes that arrived with
    /// the handshake.
    func start(leftover: [UInt8]) {
        delegate.webSocketOpened(self)
        if !leftover.isEmpty { process(leftover) }
        state.withLock { output in
            guard output.closing != .ended else { return }
            output.interest = output.queue.isEmpty ? .read : .readWrite
            var event = epoll_event(
                events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (output.interest == .readWrite ? EPOLLOUT.rawValue : 0),
                data: epoll_data_t(fd: output.fd))
            if epoll_ctl(output.epoll, EPOLL_CTL_MOD, output.fd, &event) != 0 {
                epoll_ctl(output.epoll, EPOLL_CTL_ADD, output.fd, &event)
            }
        }
    }

    /// The epoll thread's handler for this descriptor.
    func handle(events: UInt32) {
        if events & EPOLLOUT.rawValue != 0 {
            state.withLock { flushLocked(&$0) }
            if let code = finishedCode() {
                terminate(code: code)
                return
            }
        }
        guard events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            // Under the lock: another thread may terminate (and close) the descriptor meanwhile.
            let (count, error) = state.withLock { output -> (Int, Int32) in
                guard output.closing != .ended else { return (0, 0) }
                let count = recv(output.fd, &chunk, chunk.count, 0)
                return (count, count < 0 ? errno : 0)
            }
            if count > 0 {
                process(chunk[0..<count])
                if count < chunk.count || state.withLock({ $0.closing == .ended }) { return }
            } else if count == 0 {
                terminate(code: .abnormal)
                return
            } else {
                if error == EINTR { continue }
                if error != EAGAIN && error != EWOULDBLOCK { terminate(code: .abnormal) }
                return
            }
        }
    }

    private func process(_ bytes: some Collection<UInt8>) {
        let events = reader.withLock { $0.feed(bytes) }
        state.withLock { $0.lastReceived = monotonicNow() }
        for event in events {
            switch event {
            case .message(let message):
                delegate.webSocket(self, received: message)
            case .ping(let payload):
                enqueue(WebSocketEncoder.frame(.pong, payload), control: true)
            case .pong:
                break
            case .close(let code, _):
                // Answer with the same code (none → none), then close TCP ourselves (RFC 6455 §7.1.1).
                switch state.withLock({ $0.closing.peerClosed(code: code, now: monotonicNow()) }) {
                case .answer:
                    let frame = code.map { WebSocketEncoder.close(WebSocketCloseCode(rawValue: $0), reason: "") } ?? WebSocketEncoder.frame(.close, [UInt8]())
                    enqueue(frame, control: true)
                case .end(let ours):
                    terminate(code: ours)
                case .ignore:
                    break
                }
                return
            case .fail(let code, let reason):
                close(code, reason: reason)
                state.withLock { $0.closing.finishAfterClose() }
                if finishedCode() != nil { terminate(code: code) }
                return
            }
        }
    }

    /// Periodic check from the epoll thread: idle clients are closed, unanswered Closes end.
    func tick(now: Double) {
        let check = state.withLock { output in
            output.closing.check(now: now, lastReceived: output.lastReceived, idleTimeout: limits.idleTimeout, closeTimeout: limits.closeTimeout)
        }
        switch check {
        case .end(let code): terminate(code: code)
        case .closeIdle: close(.normal, reason: "idle timeout")
        case .nothing: break
        }
    }

    /// Ends the connection now: descriptor closed (under the lock), server told, delegate told once.
    func terminate(code: WebSocketCloseCode) {
        let fd = state.withLock { output -> Int32? in
            guard output.closing.end() else { return nil }
            output.queue = []
            output.offset = 0
            epoll_ctl(output.epoll, EPOLL_CTL_DEL, output.fd, nil)
            Glibc.shutdown(output.fd, Int32(SHUT_RDWR))
            onTerminate(output.fd)
            Glibc.close(output.fd)
            return output.fd
        }
        if fd != nil { delegate.webSocketClosed(self, code: code) }
    }
}
