import CSystemLinux
import Glibc
import Synchronization

/// An OS thread started by `startThread`. `join` waits for it to end; a thread whose handle is
/// let go without being joined is detached (its resources go back when it ends).
public final class OSThread: Sendable {
    private let thread: pthread_t
    private let joined = Atomic<Bool>(false)

    fileprivate init(_ thread: pthread_t) { self.thread = thread }

    /// Waits until the thread's body has returned. Once per thread, from another thread.
    public func join() {
        guard !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pthread_join(thread, nil)
    }

    deinit {
        if !joined.load(ordering: .acquiring) { pthread_detach(thread) }
    }
}

/// Starts an OS thread named `name` (what `top -H` and a debugger show; Linux keeps 15 bytes)
/// running `body`: every thread of the server starts here, outside Swift
/// concurrency's pool, so that blocking calls (libpq, epoll, SMTP) never starve it.
@discardableResult
public func startThread(name: String, _ body: @escaping @Sendable () -> Void) -> OSThread {
    final class Start: @unchecked Sendable {  // handed to the new thread once
        let name: String
        let body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    var thread = pthread_t()
    let start = Unmanaged.passRetained(Start(name, body)).toOpaque()
    let created = pthread_create(
        &thread, nil,
        { pointer in
            let start = Unmanaged<Start>.fromOpaque(pointer!).takeRetainedValue()
            _ = onboard_set_thread_name(start.name)
            start.body()
            return nil
        }, start)
    precondition(created == 0, "could not start the thread \(name)")
    return OSThread(thread)
}
