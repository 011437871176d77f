import Foundation
import Glibc
import HTTP
import Logging
import Postgres
import Synchronization

/// One JSON object per line on standard output (`LOG_FORMAT=json`), for log shippers:
/// `{"ts":…,"level":…,"logger":…,"msg":…, <metadata>…}`.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    static let output = Mutex<Void>(())

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = metadata
        if let explicit = event.metadata { fields.merge(explicit) { $1 } }
        if let error = event.error { fields["error"] = "\(logText(error))" }
        var text =
            #"{"ts":\#(jsonString(Self.timestamp())),"level":\#(jsonString(event.level.rawValue)),"logger":\#(jsonString(label)),"msg":\#(jsonString(event.message.description))"#
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) where !["ts", "level", "logger", "msg"].contains(key) {
            text += "," + jsonString(key) + ":" + jsonString("\(value)")
        }
        text += "}\n"
        Self.output.withLock { _ in FileHandle.standardOutput.write(Data(text.utf8)) }
    }

    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var time = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &time)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", time.tm_year + 1900, time.tm_mon + 1, time.tm_mday,
            time.tm_hour, time.tm_min, time.tm_sec, now.tv_nsec / 1_000_000)
    }
}
