import CSystemLinux
import Glibc

/// One connection's life on the server: bytes read and parsed, the request handed to the inline
/// responder or a worker, the response written (the rest from the epoll thread when the socket
/// is full), the next request, timeouts, the switch to a WebSocket.
extension HTTPServer {
    func handleEvent(_ connection: ClientConnection, events: UInt32) {
        if connection.state.isWriting {
            flushPending(connection)
            return
        }
        // One receive buffer for the epoll thread (the only caller), not one per event.
        let chunk = receiveBuffer.bytes
        var sawEOF = false
        while true {
            let count = recv(connection.fd, chunk.baseAddress, chunk.count, 0)
            if count > 0 {
                if connection.buffer.isEmpty { connection.requestStarted = monotonicNow() }
                connection.buffer.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[0..<count]))
                if connection.buffer.count > limits.maxHeaderBytes + limits.maxRequestLine + limits.largestBodyBytes + 65536 { break }
                if count < chunk.count { break }
            } else if count == 0 {
                sawEOF = true
                break
            } else {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { sawEOF = true }
                break
            }
        }
        if sawEOF && connection.buffer.isEmpty {
            closeConnection(connection)
            return
        }
        if sawEOF { connection.state.peerDidClose() }
        advance(connection)
    }

    /// Parses what the connection has buffered and does what its state says comes next. Called
    /// by the thread that owns the connection.
    func advance(_ connection: ClientConnection) {
        switch connection.state.parsed(parser.parse(connection.buffer)) {
        case .read:
            armForReading(connection)
        case .sendContinueAndRead:
            let interim = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
            _ = interim.withUnsafeBytes { send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            armForReading(connection)
        case .respond(var request, let consumed):
            connection.buffer.removeFirst(consumed)
            // The responder owns the connection until it answers, however long that takes.
            state.withLock { _ = $0.deadlines.removeValue(forKey: connection.fd) }
            request.remoteAddress = connection.remoteAddress
            if let inline, request.method != .options, loop.inLoop {
                inFlight.add(1, ordering: .acquiringAndReleasing)
                let started = monotonicNow()
                let taken = chain.respond(to: request, inline) { [self] response in
                    deliver(response, for: request, on: connection, started: started)
                }
                if taken { return }
                inFlight.add(-1, ordering: .acquiringAndReleasing)
            }
            workQueue.push(Work(connection: connection, request: request))
        case .reject(let error):
            let response = errorStyle.response(error.status, error.status == .notImplemented ? "Not Implemented" : error.message)
            logger.info("rejected request", metadata: ["status": "\(error.status)", "reason": "\(error.message)", "remote": "\(connection.remoteAddress)"])
            connection.buffer.removeAll()
            write(serialize(response, head: false, keepAlive: false, requestID: nil), to: connection)
        case .close:
            closeConnection(connection)
        case .nothing:
            break
        }
    }

    func armForReading(_ connection: ClientConnection) {
        let timeout = connection.buffer.isEmpty ? limits.idleTimeout : limits.requestTimeout(buffered: connection.buffer.count)
        let startedAt = connection.buffer.isEmpty ? monotonicNow() : connection.requestStarted
        let epoll = state.withLock { state -> Int32 in
            state.deadlines[connection.fd] = startedAt + timeout
            return state.epoll
        }
        var event = epoll_event(events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLONESHOT.rawValue, data: epoll_data_t(fd: connection.fd))
        if epoll_ctl(epoll, EPOLL_CTL_MOD, connection.fd, &event) != 0 {
            epoll_ctl(epoll, EPOLL_CTL_ADD, connection.fd, &event)
        }
    }

    func armForWriting(_ connection: ClientConnection) {
        let epoll = state.withLock { state -> Int32 in
            state.deadlines[connection.fd] = monotonicNow() + limits.idleTimeout
            return state.epoll
        }
        var event = epoll_event(events: EPOLLOUT.rawValue | EPOLLONESHOT.rawValue, data: epoll_data_t(fd: connection.fd))
        epoll_ctl(epoll, EPOLL_CTL_MOD, connection.fd, &event)
    }

    /// Closes connections whose wait ran out: a half-received request gets 408, an idle
    /// keep-alive connection is just closed. Runs on the epoll thread, which owns every armed
    /// connection between its epoll_wait calls.
    func expireConnections(now: Double) {
        let expired = state.withLock { state -> [ClientConnection] in
            let fds = state.deadlines.filter { $0.value <= now }.map(\.key)
            return fds.compactMap { fd in
                state.deadlines[fd] = nil
                return state.connections[fd]
            }
        }
        for connection in expired {
            switch connection.state.deadlinePassed(partialRequest: !connection.buffer.isEmpty) {
            case .rejectTimeout:
                let response = serialize(.error(.requestTimeout, "Request Timeout"), head: false, keepAlive: false, requestID: nil)
                _ = response.withUnsafeBytes { send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                closeConnection(connection)
            case .close:
                closeConnection(connection)
            case .nothing:
                break
            }
        }
    }

    func closeConnection(_ connection: ClientConnection) {
        connection.state.closed()
        state.withLock { state in
            state.connections[connection.fd] = nil
            state.deadlines[connection.fd] = nil
        }
        close(connection.fd)
    }

    /// Writes a request's response (from a worker, or from the loop for an inline answer) and
    /// ends its time in flight.
    func deliver(_ response: HTTPResponse, for request: HTTPRequest, on connection: ClientConnection, started: Double) {
        let keepAlive = request.keepsAlive && !state.withLock({ $0.stopping })
        connection.state.responseReady(keepAlive: keepAlive, upgrade: response.status == .switchingProtocols ? response.webSocket : nil)
        let bytes = serialize(response, head: request.method == .head, keepAlive: keepAlive, requestID: response.headers["X-Request-Id"])
        inFlight.add(-1, ordering: .acquiringAndReleasing)
        if logger.logLevel <= .info {
            logger.info(
                "request",
                metadata: [
                    "method": "\(request.method)", "path": "\(request.path)", "status": "\(response.status)",
                    "bytes": "\(response.body.count)", "ms": "\(Int((monotonicNow() - started) * 1000))",
                    "request.id": "\(response.headers["X-Request-Id"] ?? "")"
                ])
        }
        write(bytes, to: connection)
    }

    /// Sends as much as the socket takes; the rest goes out from the epoll thread.
    func write(_ bytes: [UInt8], to connection: ClientConnection) {
        connection.pendingOutput = bytes
        connection.pendingOffset = 0
        flushPending(connection)
    }

    func flushPending(_ connection: ClientConnection) {
        while connection.pendingOffset < connection.pendingOutput.count {
            let sent = connection.pendingOutput.withUnsafeBytes { raw in
                send(connection.fd, raw.baseAddress! + connection.pendingOffset, raw.count - connection.pendingOffset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                connection.pendingOffset += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                armForWriting(connection)
                return
            } else {
                closeConnection(connection)
                return
            }
        }
        connection.pendingOutput = []
        connection.pendingOffset = 0
        switch connection.state.drained() {
        case .parseBuffered:
            advance(connection)
        case .finish:
            // Let the client read the answer before the close (no RST on unread input).
            Glibc.shutdown(connection.fd, Int32(SHUT_WR))
            closeConnection(connection)
        case .startWebSocket(let delegate):
            startWebSocket(connection, delegate: delegate)
        case .nothing:
            break
        }
    }

    /// After the 101 is written: the connection leaves HTTP for good and belongs to a WebSocket,
    /// read level-triggered by the epoll thread; bytes read past the request are its first frames.
    func startWebSocket(_ connection: ClientConnection, delegate: any WebSocketDelegate) {
        let (epoll, stopping) = state.withLock { ($0.epoll, $0.stopping) }
        let webSocket = WebSocket(
            fd: connection.fd, epoll: epoll, remoteAddress: connection.remoteAddress,
            limits: limits.webSocket, delegate: delegate
        ) { [self] fd in
            state.withLock { state in
                state.connections[fd] = nil
                state.deadlines[fd] = nil
                state.webSockets[fd] = nil
            }
        }
        connection.state.upgraded(to: webSocket)
        state.withLock { state in
            state.deadlines[connection.fd] = nil
            state.webSockets[connection.fd] = webSocket
        }
        let leftover = connection.buffer
        connection.buffer = []
        webSocket.start(leftover: leftover)
        if stopping { webSocket.close(.goingAway, reason: "server shutting down") }
    }
}

/// One client connection. Owned by one thread at a time (see `HTTPServer`), hence unchecked.
final class ClientConnection: @unchecked Sendable {
    let fd: Int32
    let remoteAddress: String
    var state = ConnectionState()
    /// Bytes read and not yet parsed into a request.
    var buffer: [UInt8] = []
    /// The response being written, and how much of it is out.
    var pendingOutput: [UInt8] = []
    var pendingOffset = 0
    /// When the first byte of the request being read arrived (its deadline counts from there).
    var requestStarted: Double = 0

    init(fd: Int32, remoteAddress: String) {
        self.fd = fd
        self.remoteAddress = remoteAddress
    }
}

/// The epoll thread's receive buffer: allocated once, used only by that thread (`handleEvent`).
final class ReceiveBuffer: @unchecked Sendable {
    let bytes: UnsafeMutableBufferPointer<UInt8>

    init(size: Int = 16384) {
        bytes = .allocate(capacity: size)
        bytes.initialize(repeating: 0)
    }

    deinit { bytes.deallocate() }
}
