import Postgres

/// A statement written front to back: trusted text and binds, numbered when the text is read.
struct SQLBuilder {
    private(set) var sql = SQL(unsafeSQL: "")

    init() {}

    /// Trusted text: keywords, and identifiers quoted from the schema cache.
    mutating func raw(_ trusted: String) { sql.append(unsafeRaw: trusted) }

    mutating func bind(_ value: String?) { sql.append(bind: value) }

    /// A fragment built with the `SQL` type (its binds follow those so far).
    mutating func append(_ fragment: SQL) { sql.append(fragment) }
}
