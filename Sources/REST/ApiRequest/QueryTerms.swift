import HTTP

// The query language's terms, as the grammar parses them: query pairs, select items and their
// JSON paths, order terms, filters and their logic trees.

public struct QueryPair: Sendable, Equatable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

public struct SelectItem: Sendable, Equatable {
    public var column: String
    public var alias: String?
    public var cast: String?
    /// `rel!hint!inner(…)`: `column` names the related table, embedded through a foreign key.
    public var embed: Embed?
    /// `data->a->>b`: the JSON path into the column (PostgREST's JsonPath).
    public var jsonPath: [JSONPathStep] = []
    /// `age.sum()`, `count()` (then `column` is `*`): an aggregate over the selected rows,
    /// grouped by the other selected columns.
    public var aggregate: Aggregate?
    /// `age.sum()::int`: the cast of the aggregate's result (`cast` is its argument's).
    public var aggregateCast: String?

    public enum Aggregate: String, Sendable, CaseIterable { case count, sum, avg, min, max }

    public struct Embed: Sendable, Equatable {
        /// A foreign key's name or one of its columns, to choose among relationships.
        public var hint: String?
        /// `!inner`: parent rows without a related row are left out.
        public var inner: Bool
        public var select: [SelectItem]
        /// `...rel(…)`: the related row's columns are merged into the parent's object.
        public var spread = false
        /// `rel=is.null` (PostgREST's null filtering on embeds): parent rows with a related row
        /// are left out (`rel=not.is.null` is `!inner`).
        public var anti = false
    }

    public init(
        column: String, alias: String? = nil, cast: String? = nil, jsonPath: [JSONPathStep] = [],
        aggregate: Aggregate? = nil, aggregateCast: String? = nil
    ) {
        self.column = column
        self.alias = alias
        self.cast = cast
        self.jsonPath = jsonPath
        self.aggregate = aggregate
        self.aggregateCast = aggregateCast
    }
    public var isStar: Bool { column == "*" && alias == nil && cast == nil && embed == nil && jsonPath.isEmpty && aggregate == nil }

    /// The key of the item in each row's object, as PostgREST names it: the alias; else the
    /// aggregate's name; else the last key of a JSON path (the column for an index-only path);
    /// else the column (nil for `*`).
    public var outputName: String? {
        if let alias { return alias }
        if let aggregate { return aggregate.rawValue }
        if column == "*" { return nil }
        return JSONPathStep.lastKey(jsonPath) ?? column
    }
}

/// One arrow of a JSON path: `->` (JSON) or `->>` (text), to a key or an array index.
public struct JSONPathStep: Sendable, Equatable {
    public enum Operand: Sendable, Equatable {
        case key(String)
        /// `-?[0-9]+`, as written (PostgreSQL reads it as an integer).
        case index(String)
    }
    /// `->>`: the value as text.
    public var asText: Bool
    public var operand: Operand

    public init(asText: Bool, _ operand: Operand) {
        self.asText = asText
        self.operand = operand
    }

    /// The last key of the path (PostgREST's lastJsonKey): `data->1->mycol->>2` is `mycol`.
    static func lastKey(_ path: [JSONPathStep]) -> String? {
        for step in path.reversed() { if case .key(let key) = step.operand { return key } }
        return nil
    }
}

public struct OrderTerm: Sendable, Equatable {
    public enum Nulls: String, Sendable { case first, last }
    public var column: String
    public var descending: Bool?
    public var nulls: Nulls?
    /// `order=data->>name`: the JSON path into the column.
    public var jsonPath: [JSONPathStep] = []
    /// `order=rel(col)` (PostgREST's OrderRelationTerm): `column` is of the embed named `rel`
    /// (its alias, else its table) of the same level, which must be to-one.
    public var relation: String?
    public init(column: String, descending: Bool? = nil, nulls: Nulls? = nil, jsonPath: [JSONPathStep] = [], relation: String? = nil) {
        self.column = column
        self.descending = descending
        self.nulls = nulls
        self.jsonPath = jsonPath
        self.relation = relation
    }
}

public enum FilterOperator: String, Sendable, CaseIterable {
    case eq, neq, gt, gte, lt, lte, like, ilike, match, imatch, `in`, `is`, isdistinct, cs, cd, ov, sl, sr, nxl, nxr, adj
    case fts, plfts, phfts, wfts
}

public enum IsValue: String, Sendable { case null, notNull = "not_null", `true`, `false`, unknown }

public enum FilterOperand: Sendable, Equatable {
    case value(String)
    case list([String])
    case isValue(IsValue)
}

public struct Filter: Sendable, Equatable {
    public var column: String
    public var op: FilterOperator
    public var operand: FilterOperand
    /// The text-search configuration of `fts(english)`.
    public var language: String?
    /// `like(any).{a*,b*}`: the operand is an array literal, matched with ANY or ALL.
    public var quantifier: Quantifier?
    /// `metadata->>key=eq.x`: the filter is on the JSON path into the column.
    public var jsonPath: [JSONPathStep] = []

    public enum Quantifier: String, Sendable { case any, all }

    /// The operators that take `(any)` / `(all)`, as PostgREST's.
    public static let quantifiable: Set<FilterOperator> = [.eq, .like, .ilike, .gt, .gte, .lt, .lte, .match, .imatch]

    public init(
        column: String, op: FilterOperator, operand: FilterOperand, language: String? = nil, quantifier: Quantifier? = nil,
        jsonPath: [JSONPathStep] = []
    ) {
        self.column = column
        self.op = op
        self.operand = operand
        self.language = language
        self.quantifier = quantifier
        self.jsonPath = jsonPath
    }
}

public indirect enum Condition: Sendable, Equatable {
    case filter(Filter)
    case not(Condition)
    case and([Condition])
    case or([Condition])
    /// Added by the ownership middleware, never parsed from a request.
    case scope(OwnershipScope)
}
