import Postgres

/// A statement written front to back: trusted text and `$n` binds numbered as they are added.
struct SQLBuilder {
    private(set) var text = ""
    private(set) var binds: [String?] = []

    init() { text.reserveCapacity(1024) }

    /// Trusted text: keywords, and identifiers quoted from the schema cache.
    mutating func raw(_ trusted: String) { text += trusted }

    mutating func bind(_ value: String?) {
        binds.append(value)
        text += "$"
        text += String(binds.count)
    }

    /// A fragment built with the `SQL` type (renumbered after the binds so far).
    mutating func append(_ fragment: SQL) {
        var base = SQL(unsafeSQL: text, binds: binds)
        base.append(fragment)
        text = base.text
        binds = base.binds
    }

    var sql: SQL { SQL(unsafeSQL: text, binds: binds) }
}
