import CSystemLinux
import Glibc
import Synchronization

/// One epoll set, run by one thread, shared by whoever has descriptors to watch: the HTTP
/// server's sockets and the database connections that answer its requests, so that a request's
/// whole exchange (read, query, result, write) happens on the thread that reads it, with no
/// hand-off between threads.
///
/// The thread that runs the loop (`wait`) owns every registered handler: handlers, `afterBatch`
/// work and tasks run there, one at a time. Other threads reach the loop only through
/// `execute`, which wakes it.
public final class EventLoop: @unchecked Sendable {  // handlers/afterBatch: loop thread only; tasks: Mutex
    public let epoll: Int32
    /// Event bits for `register` and `modify`, and the ones handlers receive.
    public static let readable = EPOLLIN.rawValue
    public static let writable = EPOLLOUT.rawValue
    public static let failed = EPOLLERR.rawValue | EPOLLHUP.rawValue
    private let wakeDescriptor: Int32
    private var handlers: [Int32: (UInt32) -> Void] = [:]
    private var afterBatch: [() -> Void] = []
    private let tasks = Mutex<[@Sendable () -> Void]>([])
    private let owner = Atomic<UInt>(0)
    private var events = [epoll_event](repeating: epoll_event(), count: 256)

    public init() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        precondition(epoll >= 0 && wakeDescriptor >= 0, "epoll_create1/eventfd failed: \(errno)")
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: wakeDescriptor))
        epoll_ctl(epoll, EPOLL_CTL_ADD, wakeDescriptor, &event)
    }

    deinit {
        close(wakeDescriptor)
        close(epoll)
    }

    /// True on the thread that runs the loop.
    public var inLoop: Bool { owner.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// Watches `fd` (level-triggered) and calls `handler` with the ready events. Loop thread only.
    public func register(_ fd: Int32, events: UInt32, handler: @escaping (UInt32) -> Void) {
        precondition(inLoop, "EventLoop.register off the loop thread")
        handlers[fd] = handler
        var event = epoll_event(events: events, data: epoll_data_t(fd: fd))
        if epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) != 0 { epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event) }
    }

    /// Changes the events watched on a registered descriptor. Loop thread only.
    public func modify(_ fd: Int32, events: UInt32) {
        var event = epoll_event(events: events, data: epoll_data_t(fd: fd))
        epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event)
    }

    /// Stops watching `fd` (before it is closed). Loop thread only, or once the loop has stopped.
    public func unregister(_ fd: Int32) {
        handlers[fd] = nil
        epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil)
    }

    /// Runs `work` once the events of the current round are handled, before the loop waits
    /// again: e.g. one write for everything queued to a database connection during the round.
    /// Loop thread only.
    public func afterThisRound(_ work: @escaping () -> Void) {
        afterBatch.append(work)
    }

    /// Runs `task` on the loop thread, soon. Any thread.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        tasks.withLock { $0.append(task) }
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
    }

    /// Waits up to `timeout` milliseconds, runs the handlers of the registered descriptors that
    /// are ready and the tasks, and returns the ready events of descriptors added to `epoll` by
    /// the caller itself (the loop's owner handles those). Only ever called by one thread.
    public func wait(timeout: Int32) -> ArraySlice<epoll_event> {
        owner.store(UInt(pthread_self()), ordering: .relaxed)
        let count = epoll_wait(epoll, &events, Int32(events.count), timeout)
        guard count > 0 else { return [] }
        var unclaimed = 0
        for index in 0..<Int(count) {
            let event = events[index]
            if event.data.fd == wakeDescriptor {
                var value: UInt64 = 0
                _ = read(wakeDescriptor, &value, 8)
                for task in tasks.withLock({ tasks in
                    defer { tasks.removeAll() }
                    return tasks
                }) { task() }
            } else if let handler = handlers[event.data.fd] {
                handler(event.events)
            } else {
                events[unclaimed] = event
                unclaimed += 1
            }
        }
        return events[0..<unclaimed]
    }

    /// Runs the work queued with `afterThisRound`. The owner calls it after handling the round's
    /// own events.
    public func finishRound() {
        while !afterBatch.isEmpty {
            let work = afterBatch
            afterBatch.removeAll(keepingCapacity: true)
            for item in work { item() }
        }
    }
}
