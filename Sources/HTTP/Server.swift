import CSystemLinux
import Dispatch
import EventLoop
import Glibc
import Logging
import Synchronization

/// The HTTP/1.1 server: non-blocking sockets, one epoll thread (the `EventLoop`) for accepting,
/// reading and finishing slow writes, and a fixed pool of worker threads that run the (blocking)
/// handler and write the response. Threads are bounded whatever the load: 1 + `workerThreads`.
///
/// A request the `inline` responder takes is answered on the loop thread instead, without a
/// worker: the responder must not block (it waits for its database results through the same
/// loop) and replies when they arrive.
///
/// Each connection is armed with EPOLLONESHOT, so exactly one thread owns it at any moment: the
/// epoll thread while it waits for bytes or an inline answer, a worker while a request is
/// handled. One request is in flight per connection; pipelined requests are answered in order
/// because the next one is parsed only after the previous response is written (as NIO's pipeline
/// handler does).
public final class HTTPServer: Sendable {
    public let host: String
    public let limits: ServerLimits
    let cors: CORSConfig
    /// The body of the server's own refusals (malformed requests, too many connections).
    let errorStyle: ErrorStyle
    let logger: Logger
    let responder: @Sendable (HTTPRequest) -> HTTPResponse
    let inline: InlineResponder?
    /// The loop the I/O thread runs; others (the database client) may watch descriptors on it.
    public let loop: EventLoop
    let parser: HTTPParser
    private let state = Mutex(State())
    private let workQueue = WorkQueue()
    private let inFlight = Atomic<Int>(0)

    struct State {
        var listener: Int32 = -1
        var epoll: Int32 = -1
        var port = 0
        var connections: [Int32: ClientConnection] = [:]
        /// Connections waiting for bytes, with the time they may wait until.
        var deadlines: [Int32: Double] = [:]
        /// Upgraded connections, checked once a second for idleness.
        var webSockets: [Int32: WebSocket] = [:]
        var stopping = false
        var stopped = false
        var threads: [pthread_t] = []
    }

    public init(host: String = "127.0.0.1", port: Int = 54321, limits: ServerLimits = ServerLimits(), cors: CORSConfig = CORSConfig(),
                errorStyle: ErrorStyle = .plain, logger: Logger = Logger(label: "onboard.http"), loop: EventLoop = EventLoop(),
                inline: InlineResponder? = nil, responder: @escaping @Sendable (HTTPRequest) -> HTTPResponse) {
        self.host = host
        self.limits = limits
        self.cors = cors
        self.errorStyle = errorStyle
        self.logger = logger
        self.responder = responder
        self.inline = inline
        self.loop = loop
        self.parser = HTTPParser(limits: limits)
        state.withLock { $0.port = port }
    }

    /// The bound port (the ephemeral one when started with port 0).
    public var port: Int { state.withLock { $0.port } }

    public var connectionCount: Int { state.withLock { $0.connections.count } }

    /// Binds, listens and starts the threads. Throws if the address can't be bound.
    public func start() throws {
        let requestedPort = port
        let listener = try Socket.listen(host: host, port: requestedPort)
        let epoll = loop.epoll
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: listener.fd))
        epoll_ctl(epoll, EPOLL_CTL_ADD, listener.fd, &event)
        state.withLock {
            $0.listener = listener.fd
            $0.epoll = epoll
            $0.port = listener.port
        }
        var threads: [pthread_t] = [startThread(name: "http-io") { [self] in self.ioLoop() }]
        for index in 0..<max(1, limits.workerThreads) {
            threads.append(startThread(name: "http-worker-\(index)") { [self] in self.workerLoop() })
        }
        state.withLock { $0.threads = threads }
        logger.info("listening", metadata: ["address": "\(host):\(listener.port)"])
    }

    /// Stops accepting, lets in-flight requests finish (up to `limits.shutdownGrace` seconds),
    /// closes every connection and joins the threads.
    public func shutdown() {
        let (listener, alreadyStopping) = state.withLock { state -> (Int32, Bool) in
            defer { state.stopping = true }
            return (state.listener, state.stopping)
        }
        guard !alreadyStopping else { return }
        if listener >= 0 {
            _ = state.withLock { epoll_ctl($0.epoll, EPOLL_CTL_DEL, listener, nil) }
            close(listener)
        }
        let deadline = monotonicNow() + limits.shutdownGrace
        while inFlight.load(ordering: .acquiring) > 0 && monotonicNow() < deadline {
            usleep(10_000)
        }
        let threads = state.withLock { state -> [pthread_t] in
            state.stopped = true
            return state.threads
        }
        for _ in 0..<max(1, limits.workerThreads) { workQueue.push(nil) }
        for thread in threads { pthread_join(thread, nil) }
        let (remaining, webSockets) = state.withLock { state -> ([ClientConnection], [WebSocket]) in
            defer { state.connections.removeAll(); state.deadlines.removeAll(); state.webSockets.removeAll() }
            return (state.connections.values.filter { $0.webSocket == nil }, Array(state.webSockets.values))
        }
        for connection in remaining { close(connection.fd) }
        // Clients reconnect on 1001 (to another replica, or to us after the restart).
        for webSocket in webSockets {
            webSocket.close(.goingAway, reason: "server shutting down")
            webSocket.terminate(code: .goingAway)
        }
        logger.info("stopped")
    }

    // MARK: the epoll thread

    private func ioLoop() {
        if limits.ioThreadNice != 0, onboard_set_thread_nice(limits.ioThreadNice) != 0 {
            logger.warning("could not raise the I/O thread's priority (nice \(limits.ioThreadNice)): it needs CAP_SYS_NICE; it runs at the default priority",
                           metadata: ["errno": "\(errno)"])
        }
        let listener = state.withLock { $0.listener }
        var lastScan = monotonicNow()
        var lastWebSocketScan = lastScan
        while true {
            let ready = loop.wait(timeout: 200)
            if state.withLock({ $0.stopped }) { return }
            for event in ready {
                let fd = event.data.fd
                if fd == listener {
                    acceptConnections(listener)
                } else if let connection = state.withLock({ $0.connections[fd] }) {
                    if let webSocket = connection.webSocket {
                        webSocket.handle(events: event.events)
                    } else {
                        handleEvent(connection, events: event.events)
                    }
                }
            }
            loop.finishRound()
            let now = monotonicNow()
            if now - lastScan >= 0.25 {
                lastScan = now
                expireConnections(now: now)
            }
            if now - lastWebSocketScan >= 1 {
                lastWebSocketScan = now
                for webSocket in state.withLock({ Array($0.webSockets.values) }) { webSocket.tick(now: now) }
            }
        }
    }

    private func acceptConnections(_ listener: Int32) {
        while true {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept(listener, $0, &length)
                }
            }
            guard fd >= 0 else { return }  // EAGAIN: accepted everything pending
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let connection = ClientConnection(fd: fd, remoteAddress: Socket.describe(&address))
            let admitted = state.withLock { state -> Bool in
                guard !state.stopping, state.connections.count < limits.maxConnections else { return false }
                state.connections[fd] = connection
                return true
            }
            guard admitted else {
                // Over the limit (or shutting down): a fast, honest answer instead of a hang.
                let response = serialize(errorStyle.response(503, "Service Unavailable: too many connections"), head: false, keepAlive: false, requestID: nil)
                _ = response.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(fd)
                continue
            }
            armForReading(connection)
        }
    }

    private func handleEvent(_ connection: ClientConnection, events: UInt32) {
        if !connection.pendingOutput.isEmpty {
            flushPending(connection)
            return
        }
        var chunk = [UInt8](repeating: 0, count: 16384)
        var sawEOF = false
        while true {
            let count = recv(connection.fd, &chunk, chunk.count, 0)
            if count > 0 {
                if connection.buffer.isEmpty { connection.requestStarted = monotonicNow() }
                connection.buffer.append(contentsOf: chunk[0..<count])
                if connection.buffer.count > limits.maxHeaderBytes + limits.maxRequestLine + limits.maxBodyBytes + 65536 { break }
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
        connection.peerClosed = sawEOF
        advance(connection)
    }

    /// Parses what the connection has buffered and decides what happens next. Called by the
    /// thread that owns the connection.
    private func advance(_ connection: ClientConnection) {
        switch parser.parse(connection.buffer) {
        case .needMore(let headersComplete, let expectsContinue):
            if connection.peerClosed {
                closeConnection(connection)
                return
            }
            if headersComplete && expectsContinue && !connection.sentContinue {
                connection.sentContinue = true
                let interim = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
                _ = interim.withUnsafeBytes { send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            armForReading(connection)
        case .request(var request, let consumed):
            connection.buffer.removeFirst(consumed)
            connection.sentContinue = false
            request.remoteAddress = connection.remoteAddress
            if let inline, request.method != "OPTIONS", loop.inLoop {
                request.id = Self.requestID(from: request.headers["X-Request-Id"])
                inFlight.add(1, ordering: .acquiringAndReleasing)
                let started = monotonicNow()
                let taken = inline(request) { [self] response in
                    deliver(finished(response, for: request), for: request, on: connection, started: started)
                }
                if taken { return }
                inFlight.add(-1, ordering: .acquiringAndReleasing)
            }
            workQueue.push(Work(connection: connection, request: request))
        case .failed(let error):
            let response = errorStyle.response(error.status, error.status == 501 ? "Not Implemented" : error.message)
            logger.info("rejected request", metadata: ["status": "\(error.status)", "reason": "\(error.message)", "remote": "\(connection.remoteAddress)"])
            connection.buffer.removeAll()
            write(serialize(response, head: false, keepAlive: false, requestID: nil), to: connection, keepAlive: false)
        }
    }

    private func armForReading(_ connection: ClientConnection) {
        let timeout = connection.buffer.isEmpty ? limits.idleTimeout : limits.requestTimeout
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

    private func armForWriting(_ connection: ClientConnection) {
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
    private func expireConnections(now: Double) {
        let expired = state.withLock { state -> [ClientConnection] in
            let fds = state.deadlines.filter { $0.value <= now }.map(\.key)
            return fds.compactMap { fd in
                state.deadlines[fd] = nil
                return state.connections[fd]
            }
        }
        for connection in expired {
            if !connection.pendingOutput.isEmpty || connection.buffer.isEmpty {
                closeConnection(connection)
            } else {
                let response = serialize(.error(408, "Request Timeout"), head: false, keepAlive: false, requestID: nil)
                _ = response.withUnsafeBytes { send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                closeConnection(connection)
            }
        }
    }

    private func closeConnection(_ connection: ClientConnection) {
        state.withLock { state in
            state.connections[connection.fd] = nil
            state.deadlines[connection.fd] = nil
        }
        close(connection.fd)
    }

    // MARK: workers

    private func workerLoop() {
        while let work = workQueue.pop() {
            inFlight.add(1, ordering: .acquiringAndReleasing)
            let started = monotonicNow()
            deliver(respond(to: work.request), for: work.request, on: work.connection, started: started)
        }
    }

    /// Writes a request's response (from a worker, or from the loop for an inline answer) and
    /// ends its time in flight.
    private func deliver(_ response: HTTPResponse, for request: HTTPRequest, on connection: ClientConnection, started: Double) {
        let keepAlive = request.keepsAlive && !state.withLock({ $0.stopping })
        if response.status == 101, let delegate = response.webSocket {
            connection.upgrade = delegate
        }
        let bytes = serialize(response, head: request.method == "HEAD", keepAlive: keepAlive, requestID: response.headers["X-Request-Id"])
        inFlight.add(-1, ordering: .acquiringAndReleasing)
        if logger.logLevel <= .info {
            logger.info("request", metadata: [
                "method": "\(request.method)", "path": "\(request.path)", "status": "\(response.status)",
                "bytes": "\(response.body.count)", "ms": "\(Int((monotonicNow() - started) * 1000))", "request.id": "\(response.headers["X-Request-Id"] ?? "")",
            ])
        }
        write(bytes, to: connection, keepAlive: keepAlive)
    }

    /// Sends as much as the socket takes; the rest goes out from the epoll thread.
    private func write(_ bytes: [UInt8], to connection: ClientConnection, keepAlive: Bool) {
        connection.closeAfterWrite = !keepAlive
        connection.pendingOutput = bytes
        connection.pendingOffset = 0
        flushPending(connection)
    }

    private func flushPending(_ connection: ClientConnection) {
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
        if let delegate = connection.upgrade {
            startWebSocket(connection, delegate: delegate)
        } else if connection.closeAfterWrite {
            // Let the client read the answer before the close (no RST on unread input).
            Glibc.shutdown(connection.fd, Int32(SHUT_WR))
            closeConnection(connection)
        } else {
            advance(connection)
        }
    }

    /// After the 101 is written: the connection leaves HTTP for good and belongs to a WebSocket,
    /// read level-triggered by the epoll thread; bytes read past the request are its first frames.
    private func startWebSocket(_ connection: ClientConnection, delegate: any WebSocketDelegate) {
        connection.upgrade = nil
        let (epoll, stopping) = state.withLock { ($0.epoll, $0.stopping) }
        let webSocket = WebSocket(fd: connection.fd, epoll: epoll, remoteAddress: connection.remoteAddress,
                                  limits: limits.webSocket, delegate: delegate) { [self] fd in
            state.withLock { state in
                state.connections[fd] = nil
                state.deadlines[fd] = nil
                state.webSockets[fd] = nil
            }
        }
        connection.webSocket = webSocket
        state.withLock { state in
            state.deadlines[connection.fd] = nil
            state.webSockets[connection.fd] = webSocket
        }
        let leftover = connection.buffer
        connection.buffer = []
        webSocket.start(leftover: leftover)
        if stopping { webSocket.close(.goingAway, reason: "server shutting down") }
    }

    // MARK: responses

    /// The handler plus what every response gets: request id, CORS, preflight answers.
    func respond(to incoming: HTTPRequest) -> HTTPResponse {
        var request = incoming
        request.id = Self.requestID(from: request.headers["X-Request-Id"])
        let origin = request.headers["Origin"]
        var response: HTTPResponse
        if request.method == "OPTIONS" {
            response = HTTPResponse(status: 204)
            response.headers.add("Allow", CORSConfig.allowedMethods)
            if let origin, cors.allows(origin) {
                response.headers.add("Access-Control-Allow-Methods", CORSConfig.allowedMethods)
                response.headers.add("Access-Control-Allow-Headers", request.headers["Access-Control-Request-Headers"] ?? cors.allowedHeaders)
                response.headers.add("Access-Control-Max-Age", "86400")
            }
        } else {
            response = responder(request)
        }
        return finished(response, for: request)
    }

    /// What every response gets on its way out: CORS and the request id.
    func finished(_ handled: HTTPResponse, for request: HTTPRequest) -> HTTPResponse {
        var response = handled
        if let origin = request.headers["Origin"], cors.allows(origin) {
            response.headers.replace("Access-Control-Allow-Origin", cors.allowedOrigins.contains("*") ? "*" : origin)
            if !cors.allowedOrigins.contains("*") { response.headers.add("Vary", "Origin") }
            if !cors.exposedHeaders.isEmpty { response.headers.replace("Access-Control-Expose-Headers", cors.exposedHeaders) }
        }
        response.headers.replace("X-Request-Id", request.id)
        return response
    }
}

extension HTTPRequest {
    /// RFC 9112 §9.3: HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 only when asked.
    var keepsAlive: Bool {
        let tokens = headers.values("Connection").flatMap { $0.lowercased().split(separator: ",").map { $0.trimmedOWS } }
        if tokens.contains("close") { return false }
        return versionMinor >= 1 || tokens.contains("keep-alive")
    }
}

/// One client connection. Owned by one thread at a time (see `HTTPServer`), hence unchecked.
final class ClientConnection: @unchecked Sendable {
    let fd: Int32
    let remoteAddress: String
    var buffer: [UInt8] = []
    var pendingOutput: [UInt8] = []
    var pendingOffset = 0
    var closeAfterWrite = false
    var sentContinue = false
    var peerClosed = false
    var requestStarted: Double = 0
    /// Set by the worker when the response is a 101; the switch happens once it is written.
    var upgrade: (any WebSocketDelegate)?
    /// Set once the connection is upgraded; from then on the WebSocket owns the descriptor.
    var webSocket: WebSocket?

    init(fd: Int32, remoteAddress: String) {
        self.fd = fd
        self.remoteAddress = remoteAddress
    }
}

/// Answers a request on the loop thread without blocking, or declines (false) and leaves it to a
/// worker. Having taken it, the responder calls `reply` exactly once, on the loop thread, now or
/// when its database results arrive.
public typealias InlineResponder = @Sendable (HTTPRequest, _ reply: @escaping (HTTPResponse) -> Void) -> Bool

struct Work: Sendable {
    let connection: ClientConnection
    let request: HTTPRequest
}
