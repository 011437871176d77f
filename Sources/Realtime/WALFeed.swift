import Foundation
import Postgres

/// The WAL feed: the publication streamed through a temporary logical replication slot
/// (`WALStream`), reopened when its connection drops.
extension ChangeFeed {
    /// A stream in a slot of its own, resuming after the last transaction processed.
    func openStream() throws -> WALStream {
        let number = streams.add(1, ordering: .relaxed).newValue
        return try WALStream(
            feed: self, conninfo: conninfo, slot: "\(slotPrefix)_\(number)",
            resumeFrom: LSN(processed.load(ordering: .relaxed)))
    }

    func runWAL(first: WALStream) {
        var stream: WALStream? = first
        var backoff = Backoff()
        while running.load(ordering: .acquiring) {
            do {
                if stream == nil {
                    stream = try openStream()
                    service.setFeed(.wal, listening: true)
                    backoff.reset()
                    service.logger.info("realtime change feed streaming the WAL again", metadata: ["slot": "\(stream!.slot)"])
                }
                try stream!.pump(seconds: 0.25)
            } catch {
                // The slot was temporary: it went with the connection, and what was committed
                // until a new one exists is not streamed. Clients reconnect and re-read.
                stream = nil
                lost(error)
                backoff.wait()
            }
        }
        stream = nil  // closes the connection: PostgreSQL drops the temporary slot
        service.setFeed(.wal, listening: false)
    }
}
