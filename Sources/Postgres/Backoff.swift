import Foundation

/// How a loop that keeps a connection of its own (the LISTEN connection, the WAL stream) waits
/// before trying the database again: 0.1 s, doubling up to 5 s, and 0.1 s again once it is back.
public struct Backoff: Sendable {
    public static let shortest = 0.1
    public static let longest = 5.0
    /// The next wait, in seconds.
    public private(set) var delay = shortest

    public init() {}

    /// Sleeps the current delay, and doubles the next one (up to `longest`).
    public mutating func wait() {
        Thread.sleep(forTimeInterval: delay)
        delay = min(delay * 2, Self.longest)
    }

    /// The database answered: the next failure waits the shortest delay again.
    public mutating func reset() { delay = Self.shortest }
}
