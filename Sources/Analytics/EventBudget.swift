import Foundation
import Synchronization

/// Events a minute, per client address and for the project key as a whole, counted in memory on
/// this server. A capture that would go over either is refused whole (nothing of it stored), as
/// PostHog's throttle answers; the window starts with the first event after the last one ended.
final class EventBudget: Sendable {
    let perClient: Int
    let perProject: Int
    private let window = Mutex<(start: Double, project: Int, clients: [String: Int])>((0, 0, [:]))

    init(perClient: Int, perProject: Int) {
        self.perClient = perClient
        self.perProject = perProject
    }

    /// Nil when `count` more events of `client` fit (they are counted), else the whole seconds
    /// until the window ends.
    func spend(_ count: Int, client: String, now: Double = Date().timeIntervalSince1970) -> Int? {
        window.withLock { window in
            if now - window.start >= 60 { window = (now, 0, [:]) }
            let used = window.clients[client] ?? 0
            guard used + count <= perClient, window.project + count <= perProject else {
                return max(1, Int((window.start + 60 - now).rounded(.up)))
            }
            window.clients[client] = used + count
            window.project += count
            return nil
        }
    }
}
