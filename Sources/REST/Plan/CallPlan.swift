/// A function call as values (PostgREST's CallPlan): the invocation and how its result is read.
struct CallPlan: Sendable {
    /// `schema.f(name := $1::type, …)`, or `schema.f($1::type)` with one positional argument.
    struct Invocation: Sendable {
        var function: QualifiedIdentifier
        var arguments: [Argument]
    }

    /// One argument: its value bound as text and cast to the parameter's type (from the catalog).
    struct Argument: Sendable {
        /// nil: positional.
        var name: String?
        var value: String?
        var type: String
        var variadic = false
    }

    /// What the function returns.
    enum Result: Sendable {
        /// `void`: called, nothing read.
        case void
        /// Rows of a table type or of OUT columns, selected, filtered, grouped and ordered as a
        /// table's (`ReadPlan` over `FROM f(…) pgrst_call`).
        case rows(ReadPlan)
        /// One value per row (`pgrst_scalar`), in the body's media.
        case scalar(ScalarBody)
    }

    /// The body over a scalar function's values.
    enum ScalarBody: Sendable {
        /// A media handler's aggregate.
        case custom(ApiRequest.CustomMedia)
        /// A JSON array of the values.
        case array
        /// The first value (`nullForNone`: `null` when there is none, else empty).
        case first(nullForNone: Bool)
    }

    var invocation: Invocation
    var result: Result
    /// An empty array of objects: the function is called on no row (`WHERE false`).
    var callsNothing = false
    var limit: Int? = nil
    var offset = 0
    /// `Prefer: count`: the rows are kept whole (`pgrst_all`) for the total.
    var counted = false
    /// The answer over `pgrst_source` (for rows).
    var answer: AnswerPlan
}
