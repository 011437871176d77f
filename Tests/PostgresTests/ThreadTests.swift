import Dispatch
import EventLoop
import Foundation
import Synchronization
import Testing

/// `startThread`, the one way the server starts a thread.
@Suite("Threads")
struct ThreadTests {
    final class Observed: Sendable {
        let name = Mutex<String?>(nil)
        let finished = Atomic<Bool>(false)
        let named = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        var seenName: String? { name.withLock { $0 } }
        var hasFinished: Bool { finished.load(ordering: .acquiring) }
    }

    /// The thread runs the body under its name (cut to the 15 bytes Linux keeps), and `join`
    /// returns only once the body has.
    @Test func aThreadRunsUnderItsNameAndJoinWaitsForIt() throws {
        let observed = Observed()
        let thread = startThread(name: "onboard-test-thread") {
            let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            observed.name.withLock { $0 = comm }
            observed.named.signal()
            observed.release.wait()
            observed.finished.store(true, ordering: .releasing)
        }
        #expect(observed.named.wait(timeout: .now() + 10) == .success)
        #expect(observed.seenName == "onboard-test-th\n")
        #expect(!observed.hasFinished)
        observed.release.signal()
        thread.join()
        #expect(observed.hasFinished)
    }

    /// A thread whose handle is dropped runs to its end all the same (it is detached).
    @Test func aDroppedHandleDetachesTheThread() {
        let observed = Observed()
        startThread(name: "detached") {
            observed.finished.store(true, ordering: .releasing)
            observed.named.signal()
        }
        #expect(observed.named.wait(timeout: .now() + 10) == .success)
        #expect(observed.hasFinished)
    }
}
