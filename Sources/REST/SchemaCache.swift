import Postgres
import Synchronization

/// What PostgREST calls the schema cache: the exposed tables, their columns and the functions of
/// the `public` schema, read from the catalog at start-up and again on `NOTIFY pgrst, 'reload
/// schema'`. Every identifier that reaches SQL comes from here.
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

        public init(
            name: String, type: String, nullable: Bool = true, defaultExpression: String? = nil,
            representation: Representation = Representation()
        ) {
            self.name = name
            self.type = type
            self.nullable = nullable
            self.defaultExpression = defaultExpression
            self.representation = representation
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
        public let name: String
        public let columns: [Column]
        public let primaryKey: [String]
        public let insertable: Bool
        public let description: String?
        /// The computed fields over this table's rows, by name (never in `*`).
        public let computed: [String: ComputedField]
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
            computed: [String: ComputedField] = [:]
        ) {
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
            returnsVoid: Bool = false, volatility: Volatility = .volatile
        ) {
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
            "public.\(name)(" + arguments.map { "\($0.name) => \($0.type)" }.joined(separator: ", ") + ")"
        }

        /// PostgREST's callable functions: every parameter named, or one unnamed parameter of a
        /// type a raw body can fill (bytea, json, jsonb, text, xml).
        var isCallable: Bool {
            let unnamed = arguments.filter { $0.name.isEmpty }
            if unnamed.isEmpty { return true }
            return arguments.count == 1 && ["bytea", "json", "jsonb", "text", "xml"].contains(arguments[0].type)
        }
    }

    /// A foreign key between two tables of `public` (what resource embedding follows).
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
        mediaHandlers: [String: [String: MediaHandler]] = [:], computedRelationships: [ComputedRelationship] = []
    ) {
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

    /// The closest exposed table name, for PGRST205's hint (PostgREST uses a fuzzy set).
    public func closestTable(to name: String) -> String? {
        closest(name, among: Array(tables.keys))
    }

    /// The closest function name, for PGRST202's hint (PostgREST's fuzzy set, score ≥ 0.75).
    public func closestFunction(to name: String) -> String? {
        fuzzyClosest(name, among: functions.keys.sorted(), minScore: 0.75)
    }

    private func closest(_ name: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance($0.lowercased(), name.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }) else { return nil }
        // Only a plausible typo: at most a third of the longer name differs.
        return best.1 <= max(2, max(best.0.count, name.count) / 3) ? best.0 : nil
    }

    // MARK: loading

    /// The catalog query for columns of the public schema's tables and views.
    static let columnsQuery: SQL = """
        SELECT c.relname AS table_name, a.attname AS column_name,
               format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable,
               pg_get_expr(d.adbin, d.adrelid) AS default_expression, c.relkind::text AS kind,
               coalesce(a.attnum = ANY (i.indkey), false) AS in_pk,
               obj_description(c.oid, 'pg_class') AS description
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
        LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
        ORDER BY c.relname, a.attnum
        """

    /// The catalog query for the public schema's functions (no triggers, no extensions'), each
    /// overload in creation order. `computed_table`: the table whose row type is the one
    /// parameter of a function that returns one value (a computed field over that table).
    static let functionsQuery: SQL = """
        SELECT p.proname AS name, p.proretset AS returns_set, p.provolatile::text AS volatility,
               format_type(p.prorettype, NULL) AS return_type,
               (t.typtype = 'c' OR coalesce(p.proargmodes::text[] && ARRAY['t', 'o', 'b'], false)) AS returns_composite,
               p.prorettype = 'void'::regtype AS returns_void, p.pronargdefaults AS default_count,
               coalesce((
                 SELECT json_agg(json_build_array(coalesce(a.name, ''), format_type(a.type, NULL), a.mode) ORDER BY a.ord)
                 FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]),
                             coalesce(p.proargmodes, array_fill('i'::"char", ARRAY[cardinality(coalesce(p.proallargtypes, p.proargtypes::oid[]))])),
                             coalesce(p.proargnames, array_fill(''::text, ARRAY[cardinality(coalesce(p.proallargtypes, p.proargtypes::oid[]))])))
                      WITH ORDINALITY AS a(type, mode, name, ord)
                 WHERE a.mode IN ('i', 'b', 'v')
               ), '[]')::text AS arguments,
               CASE WHEN p.pronargs = 1 AND NOT p.proretset AND p.prorettype <> 'void'::regtype THEN (
                 SELECT c.relname::text FROM pg_type rt JOIN pg_class c ON c.oid = rt.typrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace
                 WHERE rt.oid = p.proargtypes[0] AND cn.nspname = 'public' AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
               ) END AS computed_table
        FROM pg_proc p
        JOIN pg_namespace n ON n.oid = p.pronamespace
        JOIN pg_type t ON t.oid = p.prorettype
        WHERE n.nspname = 'public' AND p.prokind = 'f'
          AND p.prorettype <> 'trigger'::regtype
          AND NOT EXISTS (SELECT 1 FROM pg_depend dep WHERE dep.objid = p.oid AND dep.deptype = 'e')
        ORDER BY p.proname, p.oid
        """

    /// The foreign keys between tables of `public`, their columns in key order; `one_to_one`: the
    /// key's columns (as a set) are those of a primary key or unique constraint of its table, as
    /// PostgREST's allM2OandO2ORels compares them (unique indexes that are no constraint do not count).
    static let foreignKeysQuery: SQL = """
        SELECT c.conname::text AS name, src.relname::text AS table_name, dst.relname::text AS foreign_table,
               (SELECT json_agg(a.attname::text ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n)::text AS columns,
               (SELECT json_agg(a.attname::text ORDER BY k.i) FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n)::text AS foreign_columns,
               (SELECT array_agg(k ORDER BY k) FROM unnest(c.conkey) k) IN (
                 SELECT array_agg(u.k ORDER BY u.k) FROM pg_constraint uc, unnest(uc.conkey) u(k)
                 WHERE uc.conrelid = c.conrelid AND uc.contype IN ('p', 'u') GROUP BY uc.oid
               ) AS one_to_one
        FROM pg_constraint c
        JOIN pg_class src ON src.oid = c.conrelid JOIN pg_namespace sn ON sn.oid = src.relnamespace
        JOIN pg_class dst ON dst.oid = c.confrelid JOIN pg_namespace dn ON dn.oid = dst.relnamespace
        WHERE c.contype = 'f' AND sn.nspname = 'public' AND dn.nspname = 'public'
        ORDER BY c.conname
        """

    /// PostgREST's allComputedRels: functions of `public` with one parameter of a table's (or
    /// view's) row type that return a table's rows, to-one unless they return a set of more than
    /// one estimated row.
    static let computedRelationshipsQuery: SQL = """
        SELECT p.proname::text AS name, arg.relname::text AS table_name, ret.relname::text AS target,
               NOT p.proretset OR p.prorows = 1 AS to_one
        FROM pg_proc p
        JOIN pg_class arg ON arg.reltype = p.proargtypes[0] AND arg.relkind IN ('v', 'r', 'm', 'f', 'p')
        JOIN pg_class ret ON ret.reltype = p.prorettype AND ret.relkind IN ('v', 'r', 'm', 'f', 'p')
        WHERE p.pronamespace = 'public'::regnamespace AND p.pronargs = 1
          AND arg.relnamespace = 'public'::regnamespace AND ret.relnamespace = 'public'::regnamespace
        ORDER BY p.proname, p.oid
        """

    /// PostgREST's dataRepresentations: implicit casts by function between a domain and json or
    /// text, either way, whose function the loading role may execute. The types as `format_type`
    /// names them (what a column's type is), the function qualified and quoted.
    static let representationsQuery: SQL = """
        SELECT format_type(c.castsource, NULL) AS source, format_type(c.casttarget, NULL) AS target,
               quote_ident(fn.nspname) || '.' || quote_ident(f.proname) AS function
        FROM pg_catalog.pg_cast c
        JOIN pg_catalog.pg_type src_t ON c.castsource = src_t.oid
        JOIN pg_catalog.pg_type dst_t ON c.casttarget = dst_t.oid
        JOIN pg_catalog.pg_proc f ON f.oid = c.castfunc
        JOIN pg_catalog.pg_namespace fn ON fn.oid = f.pronamespace
        WHERE c.castcontext = 'i' AND c.castmethod = 'f' AND has_function_privilege(c.castfunc, 'execute')
          AND ((src_t.typtype = 'd' AND c.casttarget IN ('json'::regtype, 'text'::regtype))
            OR (dst_t.typtype = 'd' AND c.castsource IN ('json'::regtype, 'text'::regtype)))
        """

    /// PostgREST's mediaHandlers: domains named like a media type, with the aggregates of
    /// `public` over a relation's rows (or `anyelement`) that return one, and the functions of
    /// `public` (not set-returning) that return one.
    static let mediaHandlersQuery: SQL = #"""
        WITH media_types AS (
          SELECT t.oid, lower(t.typname) AS media_type,
                 CASE t.typname WHEN '*/*' THEN 'application/octet-stream' ELSE lower(t.typname) END AS resolved,
                 t.typbasetype = 'bytea'::regtype AS binary
          FROM pg_catalog.pg_type t
          WHERE t.typtype = 'd' AND (t.typname ~* '^[A-Za-z0-9.-]+/[A-Za-z0-9.\+-]+$' OR t.typname = '*/*')
        )
        SELECT quote_ident(ns.nspname) || '.' || quote_ident(p.proname) AS aggregate,
               CASE WHEN a.oid = 'anyelement'::regtype THEN '' ELSE c.relname::text END AS relation,
               m.media_type, m.resolved, m.binary
        FROM media_types m
        JOIN pg_catalog.pg_proc p ON p.prorettype = m.oid
        JOIN pg_catalog.pg_namespace ns ON ns.oid = p.pronamespace
        JOIN pg_catalog.pg_aggregate ag ON ag.aggfnoid = p.oid
        JOIN pg_catalog.pg_type a ON a.oid = p.proargtypes[0]
        LEFT JOIN pg_catalog.pg_class c ON c.reltype = a.oid AND c.relkind IN ('v', 'r', 'm', 'f', 'p')
                                         AND c.relnamespace = 'public'::regnamespace
        WHERE ns.nspname = 'public' AND p.pronargs = 1 AND (a.oid = 'anyelement'::regtype OR c.oid IS NOT NULL)
        UNION ALL
        SELECT NULL, p.proname::text, m.media_type, m.resolved, m.binary
        FROM pg_catalog.pg_proc p
        JOIN media_types m ON p.prorettype = m.oid
        WHERE p.pronamespace = 'public'::regnamespace AND NOT p.proretset AND p.prokind = 'f'
        """#

    /// Reads the `public` schema's tables, views, functions and foreign keys through `connection`.
    public static func load(_ connection: Connection) throws -> SchemaCache {
        let columns = try connection.query(columnsQuery)
        let functions = try connection.query(functionsQuery)
        let keys = try connection.query(foreignKeysQuery)
        let representations = try connection.query(representationsQuery)
        let handlers = try connection.query(mediaHandlersQuery)
        let computed = try connection.query(computedRelationshipsQuery)
        let built = build(columns: columns.rows, functions: functions.rows, representations: representations.rows)
        func names(_ text: String??) -> [String] {
            guard let text = text ?? nil, case .array(let items)? = JSONValue.parse(Array(text.utf8)) else { return [] }
            return items.compactMap { if case .string(let name) = $0 { return name } else { return nil } }
        }
        let foreignKeys = keys.rows.compactMap { row -> ForeignKey? in
            guard let name = row["name"] ?? nil, let table = row["table_name"] ?? nil, let target = row["foreign_table"] ?? nil else { return nil }
            return ForeignKey(
                name: name, table: table, columns: names(row["columns"]), referencedTable: target, referencedColumns: names(row["foreign_columns"]),
                oneToOne: (row["one_to_one"] ?? nil) == "t")
        }
        let computedRelationships = computed.rows.compactMap { row -> ComputedRelationship? in
            guard let name = row["name"] ?? nil, let table = row["table_name"] ?? nil, let target = row["target"] ?? nil else { return nil }
            return ComputedRelationship(function: name, table: table, target: target, toOne: (row["to_one"] ?? nil) == "t")
        }
        return SchemaCache(
            tables: Array(built.tables.values), functions: built.functions.values.flatMap { $0 }, foreignKeys: foreignKeys,
            mediaHandlers: mediaHandlers(handlers.rows), computedRelationships: computedRelationships)
    }

    /// The media handlers from their catalog rows, by relation and media type.
    static func mediaHandlers(_ rows: [[String: String?]]) -> [String: [String: MediaHandler]] {
        var handlers: [String: [String: MediaHandler]] = [:]
        for row in rows {
            guard let relation = row["relation"] ?? nil, let mediaType = row["media_type"] ?? nil, let resolved = row["resolved"] ?? nil else { continue }
            let handler = MediaHandler(aggregate: row["aggregate"] ?? nil, mediaType: mediaType, resolvedType: resolved, binary: (row["binary"] ?? nil) == "t")
            if handlers[relation]?[mediaType] == nil { handlers[relation, default: [:]][mediaType] = handler }
        }
        return handlers
    }

    /// Builds the cache from the catalog queries' rows (column name → text value).
    static func build(columns: [[String: String?]], functions: [[String: String?]], representations: [[String: String?]] = []) -> SchemaCache {
        // Each domain's representation, by the domain's type name.
        var byType: [String: Representation] = [:]
        for row in representations {
            guard let source = row["source"] ?? nil, let target = row["target"] ?? nil, let function = row["function"] ?? nil else { continue }
            switch (source, target) {
            case (_, "json") where source != "text": byType[source, default: Representation()].toJSON = function
            case ("text", _) where target != "json": byType[target, default: Representation()].fromText = function
            case ("json", _) where target != "text": byType[target, default: Representation()].fromJSON = function
            default: break
            }
        }
        struct Pending {
            var columns: [Column] = []
            var pk: [String] = []
            var kind = "r"
            var description: String?
        }
        var order: [String] = []
        var pending: [String: Pending] = [:]
        for row in columns {
            guard let table = row["table_name"] ?? nil, let name = row["column_name"] ?? nil, let type = row["type"] ?? nil else { continue }
            if pending[table] == nil {
                order.append(table)
                pending[table] = Pending(kind: (row["kind"] ?? nil) ?? "r", description: row["description"] ?? nil)
            }
            pending[table]!.columns.append(
                Column(
                    name: name, type: type, nullable: (row["nullable"] ?? nil) == "t",
                    defaultExpression: row["default_expression"] ?? nil,
                    representation: byType[type] ?? Representation()))
            if (row["in_pk"] ?? nil) == "t" { pending[table]!.pk.append(name) }
        }
        var parsed: [Function] = []
        var computed: [String: [String: ComputedField]] = [:]
        for row in functions {
            guard let name = row["name"] ?? nil else { continue }
            var arguments: [Function.Argument] = []
            if let text = row["arguments"] ?? nil, case .array(let items)? = JSONValue.parse(Array(text.utf8)) {
                let defaults = Int((row["default_count"] ?? nil) ?? "0") ?? 0
                for (position, item) in items.enumerated() {
                    guard case .array(let fields) = item, fields.count >= 2, case .string(let argName) = fields[0], case .string(let type) = fields[1] else {
                        continue
                    }
                    var variadic = false
                    if fields.count > 2, case .string(let mode) = fields[2] { variadic = mode == "v" }
                    arguments.append(Function.Argument(name: argName, type: type, hasDefault: position >= items.count - defaults, variadic: variadic))
                }
            }
            let function = Function(
                name: name, arguments: arguments, returnType: (row["return_type"] ?? nil) ?? "void",
                returnsSet: (row["returns_set"] ?? nil) == "t", returnsComposite: (row["returns_composite"] ?? nil) == "t",
                returnsVoid: (row["returns_void"] ?? nil) == "t",
                volatility: Function.Volatility(rawValue: (row["volatility"] ?? nil) ?? "v") ?? .volatile)
            if let table = row["computed_table"] ?? nil, computed[table]?[name] == nil {
                computed[table, default: [:]][name] = ComputedField(name: name, type: function.returnType)
            }
            if function.isCallable { parsed.append(function) }
        }
        let tables = order.map { name in
            let p = pending[name]!
            return Table(
                name: name, columns: p.columns, primaryKey: p.pk, insertable: p.kind != "m", description: p.description,
                computed: computed[name] ?? [:])
        }
        return SchemaCache(tables: tables, functions: parsed)
    }
}

/// The closest of `candidates` to `query` as PostgREST's hints find it (the fuzzyset library:
/// candidates sharing a trigram, else a bigram, of their letters, digits, spaces and commas,
/// scored 1 − Levenshtein distance / the longer length, case-insensitively); nil below `minScore`.
func fuzzyClosest(_ query: String, among candidates: [String], minScore: Double) -> String? {
    func normalized(_ text: String) -> [Character] {
        Array("-" + text.lowercased().filter { $0.isLetter || $0.isNumber || $0 == " " || $0 == "," } + "-")
    }
    func grams(_ text: [Character], _ size: Int) -> Set<String> {
        guard text.count >= size else { return [] }
        return Set((0...(text.count - size)).map { String(text[$0..<($0 + size)]) })
    }
    let lowered = query.lowercased()
    if let exact = candidates.first(where: { $0.lowercased() == lowered }) { return exact }
    for size in [3, 2] {
        let wanted = grams(normalized(query), size)
        let scored = candidates.filter { !grams(normalized($0), size).isDisjoint(with: wanted) }.map { candidate -> (String, Double) in
            let other = candidate.lowercased()
            let longest = max(lowered.count, other.count)
            return (candidate, longest == 0 ? 1 : 1 - Double(editDistance(lowered, other)) / Double(longest))
        }.filter { $0.1 > minScore }
        if let best = scored.max(by: { $0.1 < $1.1 }) { return best.0 }
    }
    return nil
}

/// Levenshtein distance (small strings: table and function names).
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}

/// The current schema cache, swapped whole on reload (readers take a snapshot under the lock).
public final class SchemaCacheStore: Sendable {
    private let current: Mutex<SchemaCache>

    public init(_ cache: SchemaCache) {
        current = Mutex(cache)
    }

    public var cache: SchemaCache { current.withLock { $0 } }

    public func replace(_ cache: SchemaCache) {
        current.withLock { $0 = cache }
    }

    /// Reloads from the catalog (what `NOTIFY pgrst, 'reload schema'` triggers).
    public func reload(using connection: Connection) throws {
        replace(try SchemaCache.load(connection))
    }
}
