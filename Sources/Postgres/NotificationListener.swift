import EventLoop
import Foundation
import Synchronization

/// The process's one LISTEN connection: every channel a subscriber names is LISTENed to on one
/// connection of its own (never a pool's: a pooled session would lose its LISTENs), by one
/// thread, reconnected by one policy (`Backoff`). Each subscriber gets what concerns it on a
/// thread of its own, in order, so a slow one (a schema reload, a change's fan-out) delays no
/// other's notifications.
///
/// A subscriber hears, in this order: `connected` once its channel is LISTENed to (again after
/// every reconnection, `again` true then); its channel's notifications; `lost` when the
/// connection drops after it was connected (what was notified until the next `connected` is not
/// heard); and, between the connection's waits while connected, `idle`, for periodic work.
public final class NotificationListener: Sendable {
    public enum Event: Sendable {
        case connected(again: Bool)
        case notified(payload: String)
        case lost(any Error)
        case idle
    }

    /// The connection is named so in `pg_stat_activity`.
    public static let applicationName = "onboard listener"
    /// The longest a wait for notifications lasts: the pace of `idle` and of taking up new
    /// subscribers and `stop`.
    static let wait = 0.25

    private let conninfo: String
    private let failed: @Sendable (_ error: any Error, _ wasConnected: Bool) -> Void
    private let subscribers = Mutex<[Subscriber]>([])
    private let running = Atomic<Bool>(false)
    private let connected = Atomic<Bool>(false)
    private let thread = Mutex<OSThread?>(nil)

    /// `failed` hears every failure to connect, LISTEN or wait (the listener tries again).
    public init(conninfo: String, failed: @escaping @Sendable (_ error: any Error, _ wasConnected: Bool) -> Void) {
        self.conninfo = conninfo
        self.failed = failed
    }

    /// True while the connection is up.
    public var isConnected: Bool { connected.load(ordering: .acquiring) }

    /// Adds a subscriber to `channel`, before `start` or while running (its LISTEN then follows
    /// within one wait). `handle` runs on the subscriber's own thread, named `name`.
    /// `coalescing`: a notification equal to one still waiting for this subscriber is dropped
    /// (for commands that mean the same however often they come, such as PostgREST's `reload
    /// schema`: a burst of them is one reload).
    public func subscribe(_ channel: String, name: String, coalescing: Bool = false, _ handle: @escaping @Sendable (Event) -> Void) {
        let subscriber = Subscriber(channel: channel, name: name, coalescing: coalescing, handle: handle)
        subscribers.withLock { $0.append(subscriber) }
        if running.load(ordering: .acquiring) { subscriber.start() }
    }

    /// Starts the listener's thread and returns once its first attempt to connect has ended,
    /// whatever its outcome, and when it connected, once every subscriber has handled its first
    /// `connected` (at most `timeout` seconds in all): what subscribers do on connecting (a
    /// server's presence row, a feed marked listening) is done before the server serves.
    public func start(timeout: Double = 10) {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for subscriber in subscribers.withLock({ $0 }) { subscriber.start() }
        let tried = DispatchSemaphore(value: 0)
        let handled = DispatchGroup()
        let started = startThread(name: "listener") { [self] in run(tried, handled) }
        thread.withLock { $0 = started }
        let deadline = DispatchTime.now() + timeout
        _ = tried.wait(timeout: deadline)
        _ = handled.wait(timeout: deadline)
    }

    /// Stops listening, closes the connection, and waits until every subscriber has handled
    /// what it was given.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        thread.withLock { $0 }?.join()
        for subscriber in subscribers.withLock({ $0 }) { subscriber.stop() }
    }

    /// `tried` is signalled after the first attempt; the first attempt's `connected` events
    /// are in `handled` until handled.
    private func run(_ tried: DispatchSemaphore, _ handled: DispatchGroup) {
        var connection: Connection?
        var listened: [Subscriber] = []
        var backoff = Backoff()
        var everConnected = false
        var firstAttempt: DispatchSemaphore? = tried
        while running.load(ordering: .acquiring) {
            do {
                if connection == nil {
                    let fresh = try Connection(conninfo: conninfo, allowsPreparedStatements: false)
                    try fresh.execute(unsafeSQL: "SET application_name TO \(quoteLiteral(Self.applicationName))")
                    connection = fresh
                    connected.store(true, ordering: .releasing)
                }
                // Subscribers not yet LISTENed to on this connection (all of them after a reconnection).
                for subscriber in subscribers.withLock({ $0 }).dropFirst(listened.count) {
                    try connection!.listen(subscriber.channel)
                    listened.append(subscriber)
                    if firstAttempt == nil {
                        subscriber.post(.connected(again: everConnected))
                    } else {
                        handled.enter()
                        subscriber.post(.connected(again: everConnected)) { handled.leave() }
                    }
                }
                firstAttempt?.signal()
                firstAttempt = nil
                backoff.reset()
                let notifications = try connection!.waitForNotifications(timeout: Self.wait)
                for notification in notifications {
                    for subscriber in listened where subscriber.channel == notification.channel {
                        subscriber.post(.notified(payload: notification.payload))
                    }
                }
                for subscriber in listened { subscriber.postIdle() }
            } catch {
                let wasConnected = connection != nil
                connection = nil
                connected.store(false, ordering: .releasing)
                if wasConnected { everConnected = true }
                for subscriber in listened { subscriber.post(.lost(error)) }
                listened = []
                failed(error, wasConnected)
                firstAttempt?.signal()
                firstAttempt = nil
                if running.load(ordering: .acquiring) { backoff.wait() }
            }
        }
        connection = nil
        connected.store(false, ordering: .releasing)
    }
}

/// One subscriber: its channel, and a thread that handles its events in the order posted.
private final class Subscriber: Sendable {
    let channel: String
    let name: String
    let coalescing: Bool
    let handle: @Sendable (NotificationListener.Event) -> Void
    /// An event, and what to do once it is handled.
    typealias Posted = (event: NotificationListener.Event, then: (@Sendable () -> Void)?)
    private let queue = Mutex<(events: [Posted], idlePending: Bool, open: Bool)>(([], false, true))
    private let ready = DispatchSemaphore(value: 0)
    private let thread = Mutex<OSThread?>(nil)

    init(channel: String, name: String, coalescing: Bool, handle: @escaping @Sendable (NotificationListener.Event) -> Void) {
        self.channel = channel
        self.name = name
        self.coalescing = coalescing
        self.handle = handle
    }

    func start() {
        thread.withLock { thread in
            guard thread == nil else { return }
            thread = startThread(name: name) { [self] in run() }
        }
    }

    func post(_ event: NotificationListener.Event, then: (@Sendable () -> Void)? = nil) {
        let posted = queue.withLock { state -> Bool in
            if coalescing, case .notified(let payload) = event, state.events.contains(where: { Self.notifies($0.event, payload) }) { return false }
            state.events.append((event, then))
            return true
        }
        if posted { ready.signal() }
    }

    private static func notifies(_ event: NotificationListener.Event, _ payload: String) -> Bool {
        if case .notified(payload) = event { return true }
        return false
    }

    /// `idle` once: one not yet handled is not posted again.
    func postIdle() {
        let posted = queue.withLock { state -> Bool in
            guard !state.idlePending else { return false }
            state.idlePending = true
            state.events.append((.idle, nil))
            return true
        }
        if posted { ready.signal() }
    }

    /// Handles what was posted, then ends the thread.
    func stop() {
        queue.withLock { $0.open = false }
        ready.signal()
        thread.withLock { $0 }?.join()
    }

    private func run() {
        while true {
            ready.wait()
            let (events, open) = queue.withLock { state -> ([Posted], Bool) in
                defer { state.events = [] }
                return (state.events, state.open)
            }
            for (event, then) in events {
                if case .idle = event { queue.withLock { $0.idlePending = false } }
                handle(event)
                then?()
            }
            if !open { return }
        }
    }
}
