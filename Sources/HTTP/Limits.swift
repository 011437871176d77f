/// Every limit of the HTTP layer, with its default. Each one that a client can hit has the
/// status a browser or proxy expects.
public struct ServerLimits: Sendable {
    /// Request line longer than this → 414.
    public var maxRequestLine = 8 * 1024
    /// Header section larger than this → 431.
    public var maxHeaderBytes = 16 * 1024
    /// More header fields than this → 431.
    public var maxHeaderCount = 100
    /// Body larger than this → 413, answered as soon as the headers say so.
    public var maxBodyBytes = 1024 * 1024
    /// Larger limits for paths under a prefix (Storage's uploads), in place of `maxBodyBytes`.
    public var bodyLimits: [BodyLimit] = []
    /// Seconds to receive a whole request once its first byte arrived (slowloris) → 408 + close.
    public var requestTimeout: Double = 10
    /// A body larger than `maxBodyBytes` (an upload a `bodyLimits` path allows) gets one more
    /// second per this many bytes received beyond it, so that a large upload at this rate or
    /// faster is not cut at `requestTimeout`.
    public var largeBodyBytesPerSecond = 256 * 1024
    /// Seconds an idle keep-alive connection is kept.
    public var idleTimeout: Double = 60
    /// Open connections beyond this get a fast 503 and are closed.
    public var maxConnections = 10_000
    /// Threads that run handlers (they may block on the database).
    public var workerThreads = 16
    /// The I/O thread's nice value. That one thread serves every connection (and answers REST
    /// inline), while the kernel shares the CPU per thread: next to busy PostgreSQL backends at
    /// the same priority it is often preempted, and then every client waits. -10 keeps it
    /// scheduled (it needs CAP_SYS_NICE; without it the thread stays at 0, with a warning).
    public var ioThreadNice: Int32 = -10
    /// Seconds graceful shutdown waits for in-flight requests.
    public var shutdownGrace: Double = 10
    /// Upgraded connections (they count against `maxConnections` too).
    public var webSocket = WebSocketLimits()

    public init() {}

    /// The body limit of a request for `path`.
    public func maxBodyBytes(forPath path: String) -> Int {
        bodyLimits.first { path.hasPrefix($0.pathPrefix) }?.maxBytes ?? maxBodyBytes
    }

    /// Seconds to receive a request of which `buffered` bytes have arrived.
    public func requestTimeout(buffered: Int) -> Double {
        requestTimeout + Double(max(0, buffered - maxBodyBytes)) / Double(max(1, largeBodyBytesPerSecond))
    }

    /// The largest body any path accepts (what a connection may buffer).
    public var largestBodyBytes: Int { bodyLimits.reduce(maxBodyBytes) { max($0, $1.maxBytes) } }
}

/// A body limit for the paths that start with `pathPrefix`.
public struct BodyLimit: Sendable, Equatable {
    public var pathPrefix: String
    public var maxBytes: Int

    public init(pathPrefix: String, maxBytes: Int) {
        self.pathPrefix = pathPrefix
        self.maxBytes = maxBytes
    }
}

/// Limits of one WebSocket connection (RFC 6455 §10.4).
public struct WebSocketLimits: Sendable {
    /// A bigger frame or reassembled message → close 1009.
    public var maxMessageBytes = 1024 * 1024
    /// Bytes queued for a client that does not read → the connection is dropped (the delegate
    /// hears 1008; no room is left to send a Close).
    public var maxQueuedBytes = 4 * 1024 * 1024
    /// Seconds without any frame from the client → close 1000 (Phoenix: 60 s; clients beat every 25 s).
    public var idleTimeout: Double = 60
    /// Seconds to wait for the client's Close after ours.
    public var closeTimeout: Double = 5
    public init() {}
}

/// Cross-origin access for browsers: which origins, and which request headers a preflight
/// allows when it names none and which response headers scripts may read (the application's
/// dialects decide those lists).
public struct CORSConfig: Sendable {
    /// `["*"]` allows any origin.
    public var allowedOrigins: [String]
    public var allowedHeaders: String
    public var exposedHeaders: String
    /// Paths whose `OPTIONS` the router answers (a protocol that uses it, as TUS does), with the
    /// preflight's headers added to that answer.
    public var routedOptionsPrefixes: [String]

    public init(
        allowedOrigins: [String] = ["*"], allowedHeaders: String = "authorization, content-type, accept", exposedHeaders: String = "",
        routedOptionsPrefixes: [String] = []
    ) {
        self.allowedOrigins = allowedOrigins
        self.allowedHeaders = allowedHeaders
        self.exposedHeaders = exposedHeaders
        self.routedOptionsPrefixes = routedOptionsPrefixes
    }

    func allows(_ origin: String) -> Bool {
        allowedOrigins.contains("*") || allowedOrigins.contains(origin)
    }

    static let allowedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"
}
