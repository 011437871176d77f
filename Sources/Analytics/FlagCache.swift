import Postgres
import Synchronization

/// The feature flags in memory, so that `/flags` reads no table. Every change to
/// `product_analytics.feature_flags` (through any server, or SQL) notifies `channel` after its
/// commit, and each server forgets its copy when told; the next read loads it again. The copy is
/// trusted only while the LISTEN connection is up: before the first `connected`, after a `lost`,
/// or without a listener, every read goes to the table, so a server that may have missed a
/// notification never answers from an old copy. A load that a change overtook (its generation
/// moved on) is answered but not kept.
final class FlagCache: Sendable {
    /// The channel the table's trigger notifies.
    static let channel = "onboard_feature_flags"

    private struct State {
        var flags: [FeatureFlag]?
        var generation = 0
        var trusted = false

        mutating func forget(trusted: Bool) {
            flags = nil
            generation += 1
            self.trusted = trusted
        }
    }

    private let state = Mutex(State())

    /// The flags, from memory when the copy is current, else from `load` (kept when nothing
    /// changed meanwhile).
    func flags(load: () throws(AnalyticsError) -> [FeatureFlag]) throws(AnalyticsError) -> [FeatureFlag] {
        let (cached, generation) = state.withLock { ($0.trusted ? $0.flags : nil, $0.generation) }
        if let cached { return cached }
        let loaded = try load()
        state.withLock { if $0.trusted && $0.generation == generation { $0.flags = loaded } }
        return loaded
    }

    /// Forgets the copy (a change this server made: read again at once, before its notification).
    func invalidate() {
        state.withLock { $0.forget(trusted: $0.trusted) }
    }

    /// Keeps the copy current through `listener`'s notifications of `channel`.
    func follow(_ listener: NotificationListener) {
        listener.subscribe(Self.channel, name: "flag-cache", coalescing: true) { [self] event in
            switch event {
            // Notifications may have been missed while the connection was down.
            case .connected: state.withLock { $0.forget(trusted: true) }
            case .notified: state.withLock { $0.forget(trusted: $0.trusted) }
            case .lost: state.withLock { $0.forget(trusted: false) }
            case .idle: break
            }
        }
    }
}
