import EventLoop
import Foundation
import Logging
import Postgres
import Synchronization

/// The LISTEN on `realtime_messages`: broadcasts and presence changes of every server (and of
/// realtime.send in the database), on a direct connection of its own; and the presence
/// heartbeat. Notifications come in commit order, after commit.
public final class MessageFeed: Sendable {
    let service: RealtimeService
    let conninfo: String
    private let running = Atomic<Bool>(false)
    private let ended = DispatchSemaphore(value: 0)
    private let listening = Atomic<Bool>(false)

    public init(service: RealtimeService, conninfo: String) {
        self.service = service
        self.conninfo = conninfo
    }

    /// True while the LISTEN connection is up.
    public var isListening: Bool { listening.load(ordering: .acquiring) }

    /// Connects and listens before returning when the database answers (else retries on its
    /// thread), so a broadcast sent right after start reaches this server.
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let ready = DispatchSemaphore(value: 0)
        startThread(name: "message-feed") { [self] in
            run(ready)
            ended.signal()
        }
        _ = ready.wait(timeout: .now() + 10)
    }

    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        _ = ended.wait(timeout: .now() + 5)
    }

    private func connect() throws -> Connection {
        let connection = try Connection(conninfo: conninfo, allowsPreparedStatements: false)
        try connection.listen(RealtimeService.messagesChannel)
        try service.presenceHeartbeat()
        listening.store(true, ordering: .releasing)
        return connection
    }

    /// `ready` is signalled after the first attempt to connect, whatever its outcome.
    private func run(_ ready: DispatchSemaphore) {
        var connection: Connection? = nil
        do {
            connection = try connect()
        } catch {
            service.logger.error("realtime: the broadcast feed cannot reach the database yet; retrying", metadata: ["error": "\(logText(error))"])
        }
        ready.signal()
        var backoff = 0.1
        var renewedAt = Date()
        var cleanedAt = Date.distantPast
        while running.load(ordering: .acquiring) {
            do {
                if connection == nil {
                    connection = try connect()
                    renewedAt = Date()
                    backoff = 0.1
                    service.logger.info("realtime broadcast feed listening")
                }
                for notification in try connection!.waitForNotifications(timeout: 0.25)
                where notification.channel == RealtimeService.messagesChannel {
                    service.receive(notification.payload)
                }
                if Date().timeIntervalSince(renewedAt) > RealtimeService.nodeRenewal {
                    renewedAt = Date()
                    do {
                        try service.presenceHeartbeat()
                    } catch {
                        service.logger.error("realtime: could not renew this server's presence row", metadata: ["error": "\(logText(error))"])
                    }
                }
                if Date().timeIntervalSince(cleanedAt) > RealtimeService.messageCleanupInterval {
                    cleanedAt = Date()
                    do {
                        try service.deleteOldMessages()
                    } catch {
                        service.logger.error("realtime: could not delete old stored broadcasts", metadata: ["error": "\(logText(error))"])
                    }
                }
            } catch {
                // What is broadcast until it listens again would not reach this server's sockets:
                // they close (1001), and their clients reconnect and rejoin.
                if connection != nil { service.closeAll(reason: "broadcast feed lost") }
                connection = nil
                listening.store(false, ordering: .releasing)
                service.logger.error("realtime broadcast feed lost; closing realtime sockets and reconnecting", metadata: ["error": "\(logText(error))"])
                Thread.sleep(forTimeInterval: backoff)
                backoff = min(backoff * 2, 5)
            }
        }
        connection = nil
        listening.store(false, ordering: .releasing)
    }
}
