import Logging
import Synchronization

/// A log that keeps every entry, for tests that read what the server logged.
public final class CapturedLog: Sendable {
    public struct Entry: Sendable {
        public let level: Logger.Level
        public let message: String
        public let metadata: [String: String]
    }

    private let storage = Mutex<[Entry]>([])

    public init() {}

    public var entries: [Entry] { storage.withLock { $0 } }

    /// A logger writing here (every level from `level` up).
    public func logger(label: String, level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: label) { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    func append(_ entry: Entry) { storage.withLock { $0.append(entry) } }

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var fields = metadata
            fields.merge(event.metadata ?? [:]) { $1 }
            log.append(Entry(level: event.level, message: "\(event.message)", metadata: fields.mapValues { "\($0)" }))
        }
    }
}
