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

        public init(name: String, type: String, nullable: Bool = true, defaultExpression: String? = nil) {
            self.name = name
            self.type = type
            self.nullable = nullable
            self.defaultExpression = defaultExpression
        }
    }

    public struct Table: Sendable {
        public let name: String
        public let columns: [Column]
        public let primaryKey: [String]
        public let insertable: Bool
        public let description: String?
        private let index: [String: Int]
        /// Quoted identifiers, computed once (quoting on every request was a fifth of the CPU).
        let quotedName: String
        let quotedColumns: [String: String]
        /// `"t"."a", "t"."b", …` and `pgrst_source."a", …`: the `*` select lists.
        let starSelect: String
        let starReturned: String

        public init(name: String, columns: [Column], primaryKey: [String], insertable: Bool = true, description: String? = nil) {
            self.name = name
            self.columns = columns
            self.primaryKey = primaryKey
            self.insertable = insertable
            self.description = description
            var index: [String: Int] = [:]
            for (position, column) in columns.enumerated() where index[column.name] == nil { index[column.name] = position }
            self.index = index
            let quotedName = quoteIdentifier(name)
            var quoted: [String: String] = [:]
            for column in columns { quoted[column.name] = quoteIdentifier(column.name) }
            self.quotedName = quotedName
            self.quotedColumns = quoted
            starSelect = columns.map { quotedName + "." + quoted[$0.name]! }.joined(separator: ", ")
            starReturned = columns.map { "pgrst_source." + quoted[$0.name]! }.joined(separator: ", ")
        }

        public func column(_ name: String) -> Column? { index[name].map { columns[$0] } }
    }

    public struct Function: Sendable {
        public struct Argument: Sendable, Equatable {
            public let name: String
            public let type: String
            public let hasDefault: Bool
            public init(name: String, type: String, hasDefault: Bool = false) {
                self.name = name
                self.type = type
                self.hasDefault = hasDefault
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

        public init(name: String, arguments: [Argument], returnType: String, returnsSet: Bool, returnsComposite: Bool,
                    returnsVoid: Bool = false, volatility: Volatility = .volatile) {
            self.name = name
            self.arguments = arguments
            self.returnType = returnType
            self.returnsSet = returnsSet
            self.returnsComposite = returnsComposite
            self.returnsVoid = returnsVoid
            self.volatility = volatility
        }

        public func argument(_ name: String) -> Argument? { arguments.first { $0.name == name } }
    }

    /// A foreign key between two tables of `public` (what resource embedding follows).
    public struct ForeignKey: Sendable, Equatable {
        public let name: String
        public let table: String
        public let columns: [String]
        public let referencedTable: String
        public let referencedColumns: [String]

        public init(name: String, table: String, columns: [String], referencedTable: String, referencedColumns: [String]) {
            self.name = name
            self.table = table
            self.columns = columns
            self.referencedTable = referencedTable
            self.referencedColumns = referencedColumns
        }
    }

    public let tables: [String: Table]
    public let functions: [String: Function]
    public let foreignKeys: [ForeignKey]

    public init(tables: [Table], functions: [Function], foreignKeys: [ForeignKey] = []) {
        self.tables = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.functions = Dictionary(functions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.foreignKeys = foreignKeys
    }

    /// The closest exposed table name, for PGRST205's hint (PostgREST uses a fuzzy set).
    public func closestTable(to name: String) -> String? {
        closest(name, among: Array(tables.keys))
    }

    public func closestFunction(to name: String) -> String? {
        closest(name, among: Array(functions.keys))
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

    /// The catalog query for the public schema's callable functions (no triggers, no extensions').
    static let functionsQuery: SQL = """
        SELECT p.proname AS name, p.proretset AS returns_set, p.provolatile::text AS volatility,
               format_type(p.prorettype, NULL) AS return_type,
               (t.typtype = 'c' OR coalesce(p.proargmodes::text[] && ARRAY['t', 'o', 'b'], false)) AS returns_composite,
               p.prorettype = 'void'::regtype AS returns_void, p.pronargdefaults AS default_count,
               coalesce((
                 SELECT json_agg(json_build_array(coalesce(a.name, ''), format_type(a.type, NULL)) ORDER BY a.ord)
                 FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]),
                             coalesce(p.proargmodes, array_fill('i'::"char", ARRAY[cardinality(coalesce(p.proallargtypes, p.proargtypes::oid[]))])),
                             coalesce(p.proargnames, array_fill(''::text, ARRAY[cardinality(coalesce(p.proallargtypes, p.proargtypes::oid[]))])))
                      WITH ORDINALITY AS a(type, mode, name, ord)
                 WHERE a.mode IN ('i', 'b', 'v')
               ), '[]')::text AS arguments
        FROM pg_proc p
        JOIN pg_namespace n ON n.oid = p.pronamespace
        JOIN pg_type t ON t.oid = p.prorettype
        WHERE n.nspname = 'public' AND p.prokind = 'f'
          AND p.prorettype <> 'trigger'::regtype
          AND NOT EXISTS (SELECT 1 FROM pg_depend dep WHERE dep.objid = p.oid AND dep.deptype = 'e')
        ORDER BY p.proname, p.pronargs
        """

    /// The foreign keys between tables of `public`, their columns in key order.
    static let foreignKeysQuery: SQL = """
        SELECT c.conname::text AS name, src.relname::text AS table_name, dst.relname::text AS foreign_table,
               (SELECT json_agg(a.attname::text ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n)::text AS columns,
               (SELECT json_agg(a.attname::text ORDER BY k.i) FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n)::text AS foreign_columns
        FROM pg_constraint c
        JOIN pg_class src ON src.oid = c.conrelid JOIN pg_namespace sn ON sn.oid = src.relnamespace
        JOIN pg_class dst ON dst.oid = c.confrelid JOIN pg_namespace dn ON dn.oid = dst.relnamespace
        WHERE c.contype = 'f' AND sn.nspname = 'public' AND dn.nspname = 'public'
        ORDER BY c.conname
        """

    /// Reads the `public` schema's tables, views, functions and foreign keys through `connection`.
    public static func load(_ connection: Connection) throws -> SchemaCache {
        let columns = try connection.query(columnsQuery)
        let functions = try connection.query(functionsQuery)
        let keys = try connection.query(foreignKeysQuery)
        let built = build(columns: columns.rows, functions: functions.rows)
        func names(_ text: String??) -> [String] {
            guard let text = text ?? nil, case .array(let items)? = JSONValue.parse(Array(text.utf8)) else { return [] }
            return items.compactMap { if case .string(let name) = $0 { return name } else { return nil } }
        }
        let foreignKeys = keys.rows.compactMap { row -> ForeignKey? in
            guard let name = row["name"] ?? nil, let table = row["table_name"] ?? nil, let target = row["foreign_table"] ?? nil else { return nil }
            return ForeignKey(name: name, table: table, columns: names(row["columns"]), referencedTable: target, referencedColumns: names(row["foreign_columns"]))
        }
        return SchemaCache(tables: Array(built.tables.values), functions: Array(built.functions.values), foreignKeys: foreignKeys)
    }

    /// Builds the cache from the two catalog queries' rows (column name → text value).
    static func build(columns: [[String: String?]], functions: [[String: String?]]) -> SchemaCache {
        struct Pending { var columns: [Column] = []; var pk: [String] = []; var kind = "r"; var description: String? }
        var order: [String] = []
        var pending: [String: Pending] = [:]
        for row in columns {
            guard let table = row["table_name"] ?? nil, let name = row["column_name"] ?? nil, let type = row["type"] ?? nil else { continue }
            if pending[table] == nil {
                order.append(table)
                pending[table] = Pending(kind: (row["kind"] ?? nil) ?? "r", description: row["description"] ?? nil)
            }
            pending[table]!.columns.append(Column(name: name, type: type, nullable: (row["nullable"] ?? nil) == "t",
                                                  defaultExpression: row["default_expression"] ?? nil))
            if (row["in_pk"] ?? nil) == "t" { pending[table]!.pk.append(name) }
        }
        let tables = order.map { name in
            let p = pending[name]!
            return Table(name: name, columns: p.columns, primaryKey: p.pk, insertable: p.kind != "m", description: p.description)
        }
        var parsed: [Function] = []
        for row in functions {
            guard let name = row["name"] ?? nil else { continue }
            var arguments: [Function.Argument] = []
            if let text = row["arguments"] ?? nil, case .array(let items)? = JSONValue.parse(Array(text.utf8)) {
                let defaults = Int((row["default_count"] ?? nil) ?? "0") ?? 0
                for (position, item) in items.enumerated() {
                    guard case .array(let pair) = item, pair.count == 2, case .string(let argName) = pair[0], case .string(let type) = pair[1] else { continue }
                    arguments.append(Function.Argument(name: argName, type: type, hasDefault: position >= items.count - defaults))
                }
            }
            parsed.append(Function(
                name: name, arguments: arguments, returnType: (row["return_type"] ?? nil) ?? "void",
                returnsSet: (row["returns_set"] ?? nil) == "t", returnsComposite: (row["returns_composite"] ?? nil) == "t",
                returnsVoid: (row["returns_void"] ?? nil) == "t",
                volatility: Function.Volatility(rawValue: (row["volatility"] ?? nil) ?? "v") ?? .volatile))
        }
        return SchemaCache(tables: tables, functions: parsed)
    }
}

/// Levenshtein distance (small strings: table and function names).
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
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
