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
/// loop) and replies when they arrive. Both paths run the same `chain` of stages around their
/// endpoint.
///
/// Each connection is armed with EPOLLONESHOT, so exactly one thread owns it at any moment: the
/// epoll thread while it waits for bytes or an inline answer, a worker while a request is
/// handled. One request is in flight per connection; pipelined requests are answered in order
/// because the next one is parsed only after the previous response is written (as NIO's pipeline
/// handler does).
public final class HTTPServer: Sendable {
    public let host: String
    public let limits: ServerLimits
    /// What every request passes through, on the worker path and the inline path alike: the
    /// request id, CORS (preflights answered here), then the application's stages.
    let chain: MiddlewareChain
    /// The body of the server's own refusals (malformed requests, too many connections).
    let errorStyle: ErrorStyle
    let logger: Logger
    let responder: @Sendable (HTTPRequest) -> HTTPResponse
    let inline: InlineResponder?
    /// The loop the I/O thread runs; others (the database client) may watch descriptors on it.
    public let loop: EventLoop
    let parser: HTTPParser
    let state = Mutex(State())
    let workQueue = WorkQueue()
    let receiveBuffer = ReceiveBuffer()
    let inFlight = Atomic<Int>(0)

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
        var threads: [OSThread] = []
    }

    public init(
        host: String = "127.0.0.1", port: Int = 54321, limits: ServerLimits = ServerLimits(), cors: CORSConfig = CORSConfig(),
        errorStyle: ErrorStyle = .plain, logger: Logger = Logger(label: "onboard.http"), loop: EventLoop = EventLoop(),
        middleware: [any Middleware] = [], inline: InlineResponder? = nil, responder: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) {
        self.host = host
        self.limits = limits
        self.chain = MiddlewareChain([RequestIDStage(), CORSStage(cors)] + middleware, errorStyle: errorStyle, logger: logger)
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
        var threads: [OSThread] = [startThread(name: "http-io") { [self] in self.ioLoop() }]
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
        let threads = state.withLock { state -> [OSThread] in
            state.stopped = true
            return state.threads
        }
        for _ in 0..<max(1, limits.workerThreads) { workQueue.push(nil) }
        for thread in threads { thread.join() }
        let (remaining, webSockets) = state.withLock { state -> ([ClientConnection], [WebSocket]) in
            defer {
                state.connections.removeAll()
                state.deadlines.removeAll()
                state.webSockets.removeAll()
            }
            return (state.connections.values.filter { $0.state.webSocket == nil }, Array(state.webSockets.values))
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
            logger.warning(
                "could not raise the I/O thread's priority (nice \(limits.ioThreadNice)): it needs CAP_SYS_NICE; it runs at the default priority",
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
                    if let webSocket = connection.state.webSocket {
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
                let response = serialize(
                    errorStyle.response(.serviceUnavailable, "Service Unavailable: too many connections"), head: false, keepAlive: false, requestID: nil)
                _ = response.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(fd)
                continue
            }
            armForReading(connection)
        }
    }

    // MARK: workers

    private func workerLoop() {
        while let work = workQueue.pop() {
            inFlight.add(1, ordering: .acquiringAndReleasing)
            let started = monotonicNow()
            deliver(chain.respond(to: work.request, responder), for: work.request, on: work.connection, started: started)
        }
    }
}

extension HTTPRequest {
    /// RFC 9112 §9.3: HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 only when asked.
    var keepsAlive: Bool {
        let values = headers.values("Connection")
        // Most requests send no `Connection`, or just `keep-alive`: decided without splitting.
        if values.isEmpty { return versionMinor >= 1 }
        if values.count == 1, values[0].equalsIgnoringASCIICase("keep-alive") { return true }
        let tokens = values.flatMap { $0.lowercased().split(separator: ",").map { $0.trimmedOWS } }
        if tokens.contains("close") { return false }
        return versionMinor >= 1 || tokens.contains("keep-alive")
    }
}

/// Answers a request on the loop thread without blocking, or declines (false) and leaves it to a
/// worker. Having taken it, the responder calls `reply` exactly once, on the loop thread, now or
/// when its database results arrive. A refusal it throws before taking the request is rendered
/// by the server's chain, as a worker's handler's is.
public typealias InlineResponder = @Sendable (HTTPRequest, _ reply: @escaping (HTTPResponse) -> Void) throws -> Bool

struct Work: Sendable {
    let connection: ClientConnection
    let request: HTTPRequest
}
