import Foundation
import Logging
import Postgres
import Synchronization

/// Broadcasts and presence changes of every server (and of realtime.send in the database): the
/// notifications on `realtime_messages`, heard through the process's LISTEN connection; and the
/// presence heartbeat and the stored broadcasts' cleanup, between its waits. Notifications come
/// in commit order, after commit.
public final class MessageFeed: Sendable {
    let service: RealtimeService
    private let renewedAt = Mutex(Date())
    private let cleanedAt = Mutex(Date.distantPast)

    /// Subscribes to `listener` (before it starts: a broadcast sent once the server has started
    /// reaches this server).
    public init(service: RealtimeService, listener: NotificationListener) {
        self.service = service
        listener.subscribe(RealtimeService.messagesChannel, name: "message-feed") { [self] event in handle(event) }
    }

    private func handle(_ event: NotificationListener.Event) {
        switch event {
        case .connected(let again):
            if again { service.logger.info("realtime broadcast feed listening again") }
            renewPresence()
        case .notified(let payload):
            service.receive(payload)
        case .lost:
            // What is broadcast until it listens again would not reach this server's sockets:
            // they close (1001), and their clients reconnect and rejoin.
            service.closeAll(reason: "broadcast feed lost")
            service.logger.error("realtime broadcast feed lost; closing realtime sockets")
        case .idle:
            if renewedAt.withLock({ Date().timeIntervalSince($0) > RealtimeService.nodeRenewal }) { renewPresence() }
            if cleanedAt.withLock({ Date().timeIntervalSince($0) > RealtimeService.messageCleanupInterval }) { deleteOldMessages() }
        }
    }

    private func renewPresence() {
        renewedAt.withLock { $0 = Date() }
        do {
            try service.presenceHeartbeat()
        } catch {
            service.logger.error("realtime: could not renew this server's presence row", metadata: ["error": "\(logText(error))"])
        }
    }

    private func deleteOldMessages() {
        cleanedAt.withLock { $0 = Date() }
        do {
            try service.deleteOldMessages()
        } catch {
            service.logger.error("realtime: could not delete old stored broadcasts", metadata: ["error": "\(logText(error))"])
        }
    }
}
