import Foundation
import Postgres
import Synchronization
import TestSupport
import Testing

/// The process's one LISTEN connection against a real server: channels × subscribers, each in
/// order on a thread of its own, and one reconnection for all of them.
@Suite("One LISTEN connection")
struct NotificationListenerTests {
    /// What one subscriber heard, in order (`idle` left out: its pace is the listener's).
    final class Heard: Sendable {
        private let events = Mutex<[String]>([])

        func record(_ event: NotificationListener.Event) {
            switch event {
            case .connected(let again): events.withLock { $0.append(again ? "connected again" : "connected") }
            case .notified(let payload): events.withLock { $0.append(payload) }
            case .lost: events.withLock { $0.append("lost") }
            case .idle: break
            }
        }

        var all: [String] { events.withLock { $0 } }
    }

    let url: String
    let admin: Connection

    init() throws {
        url = try TestPostgres.makeDatabase(migrated: false)
        admin = try Connection(conninfo: url)
    }

    private func listenerCount() throws -> Int {
        let count = try admin.query(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = \(NotificationListener.applicationName)")
        return Int(count.scalar ?? "") ?? -1
    }

    @Test func everyChannelOnOneConnectionEachSubscriberInOrder() throws {
        let listener = NotificationListener(conninfo: url) { _, _ in }
        let first = Heard()
        let second = Heard()
        let both = Heard()
        listener.subscribe("first", name: "test-first") { first.record($0) }
        listener.subscribe("second", name: "test-second") { second.record($0) }
        listener.subscribe("second", name: "test-both") { both.record($0) }
        listener.start()
        defer { listener.stop() }
        #expect(listener.isConnected)
        #expect(try listenerCount() == 1)
        for number in 1...5 { _ = try admin.query("SELECT pg_notify('first', \(String(number)))") }
        _ = try admin.query("SELECT pg_notify('second', 'b')")
        #expect(eventually { first.all.count == 6 && second.all.count == 2 && both.all.count == 2 })
        #expect(first.all == ["connected", "1", "2", "3", "4", "5"])
        #expect(second.all == ["connected", "b"])
        #expect(both.all == second.all)
    }

    /// `start` returns once every subscriber has handled its first `connected`: what they do
    /// on connecting is done before the server serves.
    @Test func startWaitsForWhatSubscribersDoOnConnecting() throws {
        let listener = NotificationListener(conninfo: url) { _, _ in }
        let prepared = Atomic<Bool>(false)
        listener.subscribe("ready", name: "test-ready") { event in
            guard case .connected = event else { return }
            Thread.sleep(forTimeInterval: 0.3)
            prepared.store(true, ordering: .releasing)
        }
        listener.start()
        let done = prepared.load(ordering: .acquiring)
        #expect(done)
        listener.stop()
    }

    /// A subscriber busy with one notification holds up no other subscriber.
    @Test func aSlowSubscriberDelaysNoOther() throws {
        let listener = NotificationListener(conninfo: url) { _, _ in }
        let release = DispatchSemaphore(value: 0)
        let fast = Heard()
        listener.subscribe("slow", name: "test-slow") { event in
            if case .notified = event { _ = release.wait(timeout: .now() + 30) }
        }
        listener.subscribe("fast", name: "test-fast") { fast.record($0) }
        listener.start()
        _ = try admin.query("SELECT pg_notify('slow', 'x')")
        _ = try admin.query("SELECT pg_notify('fast', 'y')")
        #expect(eventually { fast.all == ["connected", "y"] })
        release.signal()
        listener.stop()
    }

    /// A coalescing subscriber drops a notification equal to one still waiting for it; one that
    /// does not coalesce hears every one.
    @Test func aCoalescingSubscriberHearsABurstOnce() throws {
        let listener = NotificationListener(conninfo: url) { _, _ in }
        let release = DispatchSemaphore(value: 0)
        let coalesced = Heard()
        let every = Heard()
        listener.subscribe("reload", name: "test-coalesced", coalescing: true) { event in
            coalesced.record(event)
            if case .notified = event, coalesced.all.count == 2 { _ = release.wait(timeout: .now() + 30) }
        }
        listener.subscribe("reload", name: "test-every") { every.record($0) }
        listener.start()
        defer { listener.stop() }
        _ = try admin.query("SELECT pg_notify('reload', 'schema')")
        #expect(eventually { coalesced.all == ["connected", "schema"] })
        // While the first is being handled: four more of the same, then another.
        for _ in 1...4 { _ = try admin.query("SELECT pg_notify('reload', 'schema')") }
        _ = try admin.query("SELECT pg_notify('reload', 'config')")
        #expect(eventually { every.all.count == 7 })
        release.signal()
        #expect(eventually { coalesced.all == ["connected", "schema", "schema", "config"] })
        #expect(every.all == ["connected", "schema", "schema", "schema", "schema", "schema", "config"])
    }

    /// A lost connection is reported to every subscriber, and once back each hears `connected`
    /// again and its channel's notifications; a subscriber added while running is listened to
    /// on the same connection.
    @Test func aLostConnectionComesBackForEverySubscriber() throws {
        let failures = Mutex<[Bool]>([])
        let listener = NotificationListener(conninfo: url) { _, wasConnected in failures.withLock { $0.append(wasConnected) } }
        let heard = Heard()
        listener.subscribe("changes", name: "test-changes") { heard.record($0) }
        listener.start()
        defer { listener.stop() }
        let late = Heard()
        listener.subscribe("late", name: "test-late") { late.record($0) }
        #expect(eventually { late.all == ["connected"] })
        #expect(try listenerCount() == 1)

        _ = try admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = \(NotificationListener.applicationName)"
        )
        #expect(eventually { heard.all == ["connected", "lost", "connected again"] && late.all == ["connected", "lost", "connected again"] })
        #expect(failures.withLock { $0.first } == true)
        _ = try admin.query("SELECT pg_notify('changes', 'after'), pg_notify('late', 'too')")
        #expect(eventually { heard.all.last == "after" && late.all.last == "too" })
        #expect(try listenerCount() == 1)
    }

    /// A database that does not answer yet: `start` returns after the first attempt, and the
    /// failures are reported as not connected.
    @Test func anUnreachableDatabaseIsTriedAgain() throws {
        let failures = Mutex<[Bool]>([])
        let listener = NotificationListener(conninfo: "postgresql://nobody@127.0.0.1:1/none?connect_timeout=1") { _, wasConnected in
            failures.withLock { $0.append(wasConnected) }
        }
        let heard = Heard()
        listener.subscribe("changes", name: "test-unreached") { heard.record($0) }
        listener.start()
        #expect(!listener.isConnected)
        #expect(eventually { failures.withLock { $0.count } >= 2 })
        #expect(failures.withLock { $0.allSatisfy { !$0 } })
        listener.stop()
        #expect(heard.all.isEmpty)
    }
}
