import Foundation

/// Waits for a condition, never for a fixed time: polls `condition` every 10 ms until it holds
/// or `timeout` seconds pass, and returns its last answer. A busy machine only makes it slower,
/// never wrong; the generous default only bounds how long a real failure takes to report.
public func eventually(timeout: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return true }
        if Date() > deadline { return false }
        usleep(10_000)
    }
}
