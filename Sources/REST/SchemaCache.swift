import Postgres
import Synchronization

/// What PostgREST calls the schema cache, for one exposed schema (`public`, or another of
/// `db-schemas`): its tables, their columns, its functions and the foreign keys between its
/// tables, read from the catalog at start-up and again on `NOTIFY pgrst, 'reload schema'`. Every
/// identifier that reaches SQL comes from here.
public struct SchemaCache: Sendable {
    public struct Column: Sendable, Equatable {
        public let name: String
        /// `format_type` of the column, e.g. `uuid`, `text[]`, `timestamp with time zone`.
        public let type: String
        public let nullable: Bool
        /// The default expression from the catalog (`pg_get_expr`), for `Prefer: missing=default`.
        public let defaultExpression: String?
        public var hasDefault: Bool { defaultExpression != nil }
        /// The domain representation of the column's type, if it has one.
        public let representation: Representation
        /// The type is a domain over tsvector (directly or through other domains).
        public let tsvectorDomain: Bool
        /// Full-text filters search the column as it is (no `to_tsvector`).
        public var isTSVector: Bool { type == "tsvector" || tsvectorDomain }

        public init(
            name: String, type: String, nullable: Bool = true, defaultExpression: String? = nil,
            representation: Representation = Representation(), tsvectorDomain: Bool = false
        ) {
            self.name = name
            self.type = type
            self.nullable = nullable
            self.defaultExpression = defaultExpression
            self.representation = representation
            self.tsvectorDomain = tsvectorDomain
        }
    }

    /// PostgREST's domain representations: the functions of a domain's implicit casts to and from
    /// json or text (PostgreSQL ignores casts on domains; PostgREST applies them). Each is a
    /// function's qualified, quoted name, from the catalog.
    public struct Representation: Sendable, Equatable {
        /// domain → json: how a selected value of the column is written in a response.
        public var toJSON: String?
        /// text → domain: how a filter's value (query-string text) is read.
        public var fromText: String?
        /// json → domain: how a body's value is read on insert and update.
        public var fromJSON: String?

        public init(toJSON: String? = nil, fromText: String? = nil, fromJSON: String? = nil) {
            self.toJSON = toJSON
            self.fromText = fromText
            self.fromJSON = fromJSON
        }

        public var isEmpty: Bool { toJSON == nil && fromText == nil && fromJSON == nil }
    }

    /// A computed field (PostgREST's computed columns): a function `f(t table) returns scalar`,
    /// read as `t.f` (PostgreSQL's attribute notation) in `select`, filters and `order`.
    public struct ComputedField: Sendable, Equatable {
        public let name: String
        /// `format_type` of the result.
        public let type: String
        public init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    public struct Table: Sendable {
        /// The table's schema (one of `db-schemas`).
        public let schema: String
        public let name: String
        public let columns: [Column]
        public let primaryKey: [String]
        public let insertable: Bool
        public let description: String?
        /// The computed fields over this table's rows, by name (never in `*`).
        public let computed: [String: ComputedField]
        /// A view (or materialized view): embeds name it only by its name, never by a key's
        /// name or column (as PostgREST).
        public let isView: Bool
        /// A view's primary key as its base tables' primary keys carry through it (`ViewKeys`);
        /// what lets a view be a many-to-many junction.
        public var viewKey: [String] = []
        private let index: [String: Int]
        /// Quoted identifiers, computed once (quoting on every request was a fifth of the CPU).
        let quotedName: String
        let quotedColumns: [String: String]
        /// `"t"."a", "t"."b", …` and `pgrst_source."a", …`: the `*` select lists.
        let starSelect: String
        let starReturned: String
        /// `pgrst_source."a", …` as stored (no representation): a row of the table's type again.
        let rowReturned: String

        public init(
            name: String, columns: [Column], primaryKey: [String], insertable: Bool = true, description: String? = nil,
            computed: [String: ComputedField] = [:], schema: String = "public", isView: Bool = false
        ) {
            self.schema = schema
            self.isView = isView
            self.name = name
            self.columns = columns
            self.primaryKey = primaryKey
            self.insertable = insertable
            self.description = description
            self.computed = computed
            var index: [String: Int] = [:]
            for (position, column) in columns.enumerated() where index[column.name] == nil { index[column.name] = position }
            self.index = index
            let quotedName = quoteIdentifier(name)
            var quoted: [String: String] = [:]
            for column in columns { quoted[column.name] = quoteIdentifier(column.name) }
            self.quotedName = quotedName
            self.quotedColumns = quoted
            // A column with a domain representation is written through its json function, named
            // as the column (PostgREST expands `*` for it).
            func star(_ qualifier: String) -> String {
                columns.map { column in
                    let field = qualifier + "." + quoted[column.name]!
                    guard let output = column.representation.toJSON else { return field }
                    return output + "(" + field + ") AS " + quoted[column.name]!
                }.joined(separator: ", ")
            }
            starSelect = star(quotedName)
            starReturned = star("pgrst_source")
            rowReturned = columns.map { "pgrst_source." + quoted[$0.name]! }.joined(separator: ", ")
        }

        public func column(_ name: String) -> Column? { index[name].map { columns[$0] } }

        /// A column or a computed field: what `select`, filters and `order` may name.
        public func hasField(_ name: String) -> Bool { index[name] != nil || computed[name] != nil }

        /// The type of a column or computed field.
        public func fieldType(_ name: String) -> String? { column(name)?.type ?? computed[name]?.type }

        /// The key a many-to-many junction's keys must lie in: its primary key, or a view's.
        var junctionKey: Set<String> { Set(primaryKey + viewKey) }
    }

    public struct Function: Sendable {
        public struct Argument: Sendable, Equatable {
            /// Empty for an unnamed parameter.
            public let name: String
            public let type: String
            public let hasDefault: Bool
            /// `VARIADIC v text[]`: called with `VARIADIC v := array`.
            public let variadic: Bool
            public init(name: String, type: String, hasDefault: Bool = false, variadic: Bool = false) {
                self.name = name
                self.type = type
                self.hasDefault = hasDefault
                self.variadic = variadic
            }
        }
        public enum Volatility: String, Sendable { case immutable = "i", stable = "s", volatile = "v" }

        /// The function's schema (one of `db-schemas`).
        public let schema: String
        public let name: String
        /// The input arguments (IN, INOUT, VARIADIC), in order.
        public let arguments: [Argument]
        public let returnType: String
        public let returnsSet: Bool
        /// Returns rows (a table's type, `RETURNS TABLE`, OUT parameters): results are objects.
        public let returnsComposite: Bool
        public let returnsVoid: Bool
        public let volatility: Volatility

        public init(
            name: String, arguments: [Argument], returnType: String, returnsSet: Bool, returnsComposite: Bool,
            returnsVoid: Bool = false, volatility: Volatility = .volatile, schema: String = "public"
        ) {
            self.schema = schema
            self.name = name
            self.arguments = arguments
            self.returnType = returnType
            self.returnsSet = returnsSet
            self.returnsComposite = returnsComposite
            self.returnsVoid = returnsVoid
            self.volatility = volatility
        }

        public func argument(_ name: String) -> Argument? { arguments.first { $0.name == name } }

        /// `public.f(a => integer, b => text)`, as PostgREST lists overloads (PGRST203).
        public var signature: String {
            "\(schema).\(name)(" + arguments.map { "\($0.name) => \($0.type)" }.joined(separator: ", ") + ")"
        }

        /// PostgREST's callable functions: every parameter named, or one unnamed parameter of a
        /// type a raw body can fill (bytea, json, jsonb, text, xml).
        var isCallable: Bool {
            let unnamed = arguments.filter { $0.name.isEmpty }
            if unnamed.isEmpty { return true }
            return arguments.count == 1 && ["bytea", "json", "jsonb", "text", "xml"].contains(arguments[0].type)
        }
    }

    /// A foreign key between two tables of the schema (what resource embedding follows), or the
    /// same key seen through views of either side (`ViewKeys`: a view's columns in place of its
    /// table's).
    public struct ForeignKey: Sendable, Equatable {
        public let name: String
        public let table: String
        public let columns: [String]
        public let referencedTable: String
        public let referencedColumns: [String]
        /// The key's columns are exactly those of its table's primary key or of one of its unique
        /// constraints: at most one row on either side (PostgREST's one-to-one, O2O).
        public let oneToOne: Bool

        public init(name: String, table: String, columns: [String], referencedTable: String, referencedColumns: [String], oneToOne: Bool = false) {
            self.name = name
            self.table = table
            self.columns = columns
            self.referencedTable = referencedTable
            self.referencedColumns = referencedColumns
            self.oneToOne = oneToOne
        }
    }

    /// A computed relationship (PostgREST's): a function of `public` taking one row of `table`
    /// and returning rows of `target` (one, or `SETOF … ROWS 1`: to-one), embedded by its name.
    public struct ComputedRelationship: Sendable, Equatable {
        public let function: String
        public let table: String
        public let target: String
        public let toOne: Bool

        public init(function: String, table: String, target: String, toOne: Bool) {
            self.function = function
            self.table = table
            self.target = target
            self.toOne = toOne
        }
    }

    /// A custom media type handler (PostgREST's media type handlers): a domain named like a media
    /// type (`"text/plain"`, `"image/png"`, `"*/*"`) that an aggregate over a table's rows (or over
    /// `anyelement`) returns, or that a function returns.
    public struct MediaHandler: Sendable, Equatable {
        /// The aggregate, qualified and quoted; nil for a function returning the domain (its value
        /// is the body).
        public let aggregate: String?
        /// The media type the domain is named for, lower-cased (`"*/*"` included).
        public let mediaType: String
        /// What the response says it is: the domain's name, `application/octet-stream` for `"*/*"`.
        public let resolvedType: String
        /// The domain is over bytea: the body is its bytes.
        public let binary: Bool

        public init(aggregate: String?, mediaType: String, resolvedType: String, binary: Bool) {
            self.aggregate = aggregate
            self.mediaType = mediaType
            self.resolvedType = resolvedType
            self.binary = binary
        }
    }

    /// The schema this cache describes.
    public let schema: String
    public let tables: [String: Table]
    /// Every overload of each function name, in creation order (PostgREST chooses among them
    /// by the arguments' names).
    public let functions: [String: [Function]]
    public let foreignKeys: [ForeignKey]
    /// Media handlers by relation (a table's or a function's name; "" for `anyelement`) and
    /// media type: `mediaHandlers["lines"]?["image/png"]`.
    public let mediaHandlers: [String: [String: MediaHandler]]
    public let computedRelationships: [ComputedRelationship]

    public init(
        tables: [Table], functions: [Function], foreignKeys: [ForeignKey] = [],
        mediaHandlers: [String: [String: MediaHandler]] = [:], computedRelationships: [ComputedRelationship] = [],
        schema: String = "public"
    ) {
        self.schema = schema
        self.computedRelationships = computedRelationships
        self.tables = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var grouped: [String: [Function]] = [:]
        for function in functions { grouped[function.name, default: []].append(function) }
        self.functions = grouped
        self.foreignKeys = foreignKeys
        self.mediaHandlers = mediaHandlers
    }

    /// The handler of `mediaType` for `relation` (nil: the one over `anyelement`).
    public func mediaHandler(_ relation: String?, _ mediaType: String) -> MediaHandler? {
        mediaHandlers[relation ?? ""]?[mediaType]
    }

    /// The closest exposed table name, for PGRST205's hint (PostgREST's fuzzy set, score ≥ 0.75).
    public func closestTable(to name: String) -> String? {
        fuzzyClosest(name, among: tables.keys.sorted(), minScore: 0.75)
    }

    /// The closest function name, for PGRST202's hint (PostgREST's fuzzy set, score ≥ 0.75).
    public func closestFunction(to name: String) -> String? {
        fuzzyClosest(name, among: functions.keys.sorted(), minScore: 0.75)
    }

}

/// The schema caches of the exposed schemas (`db-schemas`), by schema; `public`'s is always
/// there (Realtime and the ownership rules are about `public`, exposed or not).
public struct SchemaCaches: Sendable {
    public let bySchema: [String: SchemaCache]

    public init(_ caches: [SchemaCache]) {
        var bySchema: [String: SchemaCache] = [:]
        for cache in caches where bySchema[cache.schema] == nil { bySchema[cache.schema] = cache }
        if bySchema["public"] == nil { bySchema["public"] = SchemaCache(tables: [], functions: []) }
        self.bySchema = bySchema
    }

    /// `public`'s cache.
    public var `public`: SchemaCache { bySchema["public"]! }

    /// The cache of `schema`; an empty one for a schema not loaded (none of its tables exists).
    public subscript(schema: String) -> SchemaCache { bySchema[schema] ?? SchemaCache(tables: [], functions: [], schema: schema) }

    /// These caches with `cache` in place of its schema's.
    public func replacing(_ cache: SchemaCache) -> SchemaCaches {
        SchemaCaches([cache] + bySchema.values.filter { $0.schema != cache.schema })
    }
}

/// The current schema caches, swapped whole on reload (readers take a snapshot under the lock),
/// with how many times they were replaced (what plans made from them are valid for).
public final class SchemaCacheStore: Sendable {
    private let current: Mutex<(caches: SchemaCaches, generation: Int)>

    public init(_ cache: SchemaCache) {
        current = Mutex((SchemaCaches([cache]), 0))
    }

    public init(_ caches: SchemaCaches) {
        current = Mutex((caches, 0))
    }

    /// `public`'s cache (what Realtime and the metrics read).
    public var cache: SchemaCache { current.withLock { $0.caches.public } }

    /// Every exposed schema's cache.
    public var caches: SchemaCaches { current.withLock { $0.caches } }

    /// How many times the caches were replaced (what is derived from them is valid for).
    public var generation: Int { current.withLock { $0.generation } }

    /// The caches and their generation.
    var cachesAndGeneration: (caches: SchemaCaches, generation: Int) { current.withLock { $0 } }

    /// Replaces the cache of `cache.schema`, keeping the others.
    public func replace(_ cache: SchemaCache) {
        current.withLock { $0 = ($0.caches.replacing(cache), $0.generation + 1) }
    }

    public func replace(_ caches: SchemaCaches) {
        current.withLock { $0 = (caches, $0.generation + 1) }
    }

    /// Reloads `schemas` (and `public`) from the catalog (what `NOTIFY pgrst, 'reload schema'`
    /// triggers, and a configuration reload).
    public func reload(using connection: Connection, schemas: [String] = ["public"]) throws {
        replace(try SchemaCaches.load(connection, schemas: schemas))
    }
}
