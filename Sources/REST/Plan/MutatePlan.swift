/// A table request's statement as values: the rows it reads or writes (`pgrst_source`), then
/// the one row the executor reads (`total`, `page_total`, `body`, `inserted`) built over them.
struct TableStatementPlan: Sendable {
    enum Source: Sendable {
        case read(ReadPlan)
        case mutate(MutatePlan)
    }
    var source: Source
    var answer: AnswerPlan
    /// `Prefer: count=planned`: the rows whose estimate (`EXPLAIN`) is the total.
    var plannedCount: ReadPlan? = nil
    /// `Prefer: count=estimated` under `db-max-rows`: that limit (`ActionPlan.estimatedBeyond`).
    var estimatedBeyond: Int? = nil
}

/// A write (PostgREST's MutatePlan): INSERT (with its conflict handling), UPDATE or DELETE of
/// one table, and what it returns.
struct MutatePlan: Sendable {
    enum Action: Sendable {
        case insert(InsertPlan)
        /// `SET` each key from the body (`missingDefaults`: a key the body lacks takes its default).
        case update(keys: [String], payload: Payload, missingDefaults: Bool)
        /// PATCH with nothing to set: nothing is updated (PostgREST's answer), no row returned.
        case updateNothing
        case delete
    }

    /// What RETURNING reads of the written rows.
    enum Returning: Sendable {
        /// `1`: nothing of the rows, so a role without SELECT privilege may still write.
        case nothing
        /// The primary key's columns (for `Location`).
        case columns([String])
        /// The whole rows.
        case rows
    }

    var table: SchemaCache.Table
    var action: Action
    /// UPDATE and DELETE: the rows touched.
    var conditions: [Predicate] = []
    var denyAll = false
    /// PATCH and DELETE with `limit`: the rows (their `ctid`) in `order` within the range.
    var limited: ReadPlan? = nil
    var returning = Returning.rows
    /// An upsert that merges: whether each row was inserted (`pgrst_inserted`).
    var returnsInserted = false
}

/// An INSERT's rows and conflict handling.
struct InsertPlan: Sendable {
    /// The columns written, sorted (the statement's text does not depend on the body's order).
    var keys: [String]
    var payload: Payload
    /// `Prefer: missing=default`: a key a row lacks takes the column's default.
    var applyDefaults: Bool
    /// `ON CONFLICT (…)`: the conflict target, when the request upserts.
    var conflict: [String] = []
    /// `DO UPDATE SET` the keys (else `DO NOTHING`).
    var merge = false
    /// An upsert may not take over another user's row: the owner column must stay the caller's.
    var owner: (column: String, user: String)? = nil
}

/// The outer query: the answer's row over `pgrst_source` (PostgREST's outer aggregate).
struct AnswerPlan: Sendable {
    enum Total: Sendable {
        /// `NULL::bigint`: not counted (or counted by the planner's estimate, separately).
        case none
        /// The rows counted by their own subquery (the exact count of a read).
        case rows(ReadPlan)
        /// The rows of a subquery counted, at most its `limit` (`count=estimated` under
        /// `db-max-rows`: exact up to the limit, the planner's estimate beyond).
        case capped(ReadPlan)
        /// `pgrst_all`'s rows: a function's whole result before its range.
        case all
        /// The page's own count: without a limit or an offset the page is every row, so no
        /// second count (PostgREST's countF).
        case page
    }
    enum Rows: Sendable {
        /// `pgrst_source` as it is.
        case source
        /// A select over `pgrst_source` (a write's representation: its select list, embeds
        /// and order).
        case read(ReadPlan)
    }
    var media: ApiRequest.Media
    var total = Total.none
    /// `inserted`: the rows an upsert inserted rather than updated.
    var countsInserted = false
    var rows = Rows.source
    /// `return=headers-only`: the body is the key values of each row (for `Location`).
    var locationKeys: [String] = []
    /// A single object of no row is `null` (a function returning one row), not empty.
    var nullForEmptyObject = false
}
