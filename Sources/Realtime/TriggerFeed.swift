import Foundation
import Postgres

/// The trigger feed: the triggers' notifications LISTENed to on a connection of its own, the
/// leases that make only watched writes notify renewed between waits.
extension ChangeFeed {
    /// LISTENs for the triggers' notifications, with the triggers installed first (or an error
    /// logged: the server still serves everything else).
    func runTriggers() {
        do {
            try service.installTriggers()
        } catch {
            service.logger.error(
                "realtime: could not install the trigger feed's triggers, so changes of tables without them are not announced; run SELECT realtime.use_triggers(true) as the tables' owner",
                metadata: ["error": "\(logText(error))"])
        }
        var connection: Connection?
        var backoff = 0.1
        while running.load(ordering: .acquiring) {
            do {
                if connection == nil {
                    let fresh = try Connection(conninfo: conninfo, allowsPreparedStatements: false)
                    try fresh.listen(Self.channel)
                    connection = fresh
                    service.setFeed(.triggers, listening: true)
                    backoff = 0.1
                    service.logger.info("realtime change feed listening")
                }
                for notification in try connection!.waitForNotifications(timeout: 0.25) where notification.channel == Self.channel {
                    guard let change = Change(json: notification.payload) else {
                        service.logger.warning("realtime: unreadable change notification")
                        continue
                    }
                    process(change)
                }
                if running.load(ordering: .acquiring) { service.logLeaseFailure(service.renewLeases) }
            } catch {
                connection = nil
                lost(error)
                Thread.sleep(forTimeInterval: backoff)
                backoff = min(backoff * 2, 5)
            }
        }
        service.setFeed(.triggers, listening: false)
    }
}
