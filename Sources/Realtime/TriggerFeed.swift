import Foundation
import Postgres

/// The trigger feed: the triggers' notifications, heard through the process's LISTEN
/// connection, and the leases that make only watched writes notify, renewed between its waits.
extension ChangeFeed {
    /// Installs the triggers (or logs why not: the server still serves everything else), then
    /// subscribes to their notifications.
    func runTriggers() {
        do {
            try service.installTriggers()
        } catch {
            service.logger.error(
                "realtime: could not install the trigger feed's triggers, so changes of tables without them are not announced; run SELECT realtime.use_triggers(true) as the tables' owner",
                metadata: ["error": "\(logText(error))"])
        }
        listener.subscribe(Self.channel, name: "change-feed") { [self] event in
            guard running.load(ordering: .acquiring) else { return }
            switch event {
            case .connected:
                service.setFeed(.triggers, listening: true)
                service.logger.info("realtime change feed listening")
            case .notified(let payload):
                guard let change = Change(json: payload) else {
                    service.logger.warning("realtime: unreadable change notification")
                    return
                }
                process(change)
            case .lost(let error):
                lost(error)
            case .idle:
                service.logLeaseFailure(service.renewLeases)
            }
        }
    }
}
