import Dispatch
import Glibc
import Synchronization

/// A blocking FIFO for the workers; `nil` tells a worker to stop.
final class WorkQueue: Sendable {
    private let items = Mutex<[Work?]>([])
    private let available = DispatchSemaphore(value: 0)

    func push(_ work: Work?) {
        items.withLock { $0.append(work) }
        available.signal()
    }

    func pop() -> Work? {
        available.wait()
        return items.withLock { $0.removeFirst() }
    }
}

func monotonicNow() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Starts a detached-from-Swift-concurrency OS thread.
func startThread(name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    pthread_create(
        &thread, nil,
        { pointer in
            let box = Unmanaged<Box>.fromOpaque(pointer!).takeRetainedValue()
            box.body()
            return nil
        }, box)
    return thread
}
