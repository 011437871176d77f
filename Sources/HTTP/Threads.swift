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
