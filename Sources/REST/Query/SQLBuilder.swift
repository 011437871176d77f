import Postgres

/// A statement written front to back: trusted text and binds, numbered when the text is read.
struct SQLBuilder {
    private(set) var sql = SQL(unsafeSQL: "")

    init() {}

    /// Trusted text only: keywords, and identifiers quoted from the schema cache (never a value:
    /// those go through `bind`). Named as `SQL.append(unsafeRaw:)` is, so review finds every site.
    mutating func unsafeRaw(_ trusted: String) { sql.append(unsafeRaw: trusted) }

    mutating func bind(_ value: String?) { sql.append(bind: value) }

    /// A fragment built with the `SQL` type (its binds follow those so far).
    mutating func append(_ fragment: SQL) { sql.append(fragment) }
}
