import Foundation
import Postgres
import Synchronization

/// What PostgREST calls the schema cache: the exposed tables, their columns and the functions,
/// read from the catalog at start-up and again on `NOTIFY pgrst, 'reload schema'`. Every
/// identifier that reaches SQL comes from here.
public struct SchemaCache: Sendable {
    public struct Column: Sendable, Equatable {
        public let name: String
        /// `format_type` of the column, e.g. `uuid`, `text[]`, `timestamp with time zone`.
        public let type: String
        public let nullable: Bool
        public let hasDefault: Bool
    }

    public struct Table: Sendable {
        public let name: String
        public let columns: [Column]
        public let primaryKey: [String]
        public let insertable: Bool

        public func column(_ name: String) -> Column? { columns.first { $0.name == name } }
    }

    public struct Function: Sendable {
        public struct Argument: Sendable {
            public let name: String
            public let type: String
            public let hasDefault: Bool
        }
        public let name: String
        public let arguments: [Argument]
        public let returnType: String
        public let returnsSet: Bool
        /// Returns a row type (a table's or `RETURNS TABLE`), so results are objects.
        public let returnsComposite: Bool
        public let returnsVoid: Bool
        public let volatile: Bool
    }

    public let tables: [String: Table]
    public let functions: [String: Function]

    public init(tables: [Table], functions: [Function]) {
        self.tables = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.functions = Dictionary(functions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Reads the `public` schema's tables, views and functions.
    public static func load(_ connection: Connection) throws -> SchemaCache {
        let columns = try connection.query("""
            SELECT c.relname AS table_name, a.attname AS column_name,
                   format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable,
                   a.atthasdef AS has_default, c.relkind::text AS kind,
                   coalesce(a.attnum = ANY (i.indkey), false) AS in_pk
            FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
            ORDER BY c.relname, a.attnum
            """)
        var tables: [String: (columns: [Column], pk: [String], kind: String)] = [:]
        for row in 0..<columns.count {
            let table = columns[row, "table_name"]!
            let column = Column(name: columns[row, "column_name"]!, type: columns[row, "type"]!,
                                nullable: columns[row, "nullable"] == "t", hasDefault: columns[row, "has_default"] == "t")
            tables[table, default: ([], [], columns[row, "kind"]!)].columns.append(column)
            if columns[row, "in_pk"] == "t" { tables[table]!.pk.append(column.name) }
        }
        let functions = try connection.query("""
            SELECT p.proname AS name, p.proretset AS returns_set, p.provolatile::text AS volatility,
                   format_type(p.prorettype, NULL) AS return_type,
                   (t.typtype = 'c' OR p.proargmodes::text[] && ARRAY['t', 'o']) AS returns_composite,
                   p.prorettype = 'void'::regtype AS returns_void, p.pronargdefaults AS default_count,
                   coalesce(array_to_json(p.proargnames[1:p.pronargs]), '[]')::text AS arg_names,
                   coalesce((SELECT json_agg(format_type(x, NULL) ORDER BY o) FROM unnest(p.proargtypes) WITH ORDINALITY AS u(x, o)), '[]')::text AS arg_types
            FROM pg_proc p
            JOIN pg_namespace n ON n.oid = p.pronamespace
            JOIN pg_type t ON t.oid = p.prorettype
            WHERE n.nspname = 'public' AND p.prokind = 'f'
              AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
              AND p.prorettype <> 'trigger'::regtype
            ORDER BY p.proname, p.pronargs
            """)
        var parsedFunctions: [Function] = []
        for row in 0..<functions.count {
            let names = (try? JSONSerialization.jsonObject(with: Data(functions[row, "arg_names"]!.utf8))) as? [String] ?? []
            let types = (try? JSONSerialization.jsonObject(with: Data(functions[row, "arg_types"]!.utf8))) as? [String] ?? []
            let defaults = Int(functions[row, "default_count"] ?? "0") ?? 0
            let arguments = types.enumerated().map { index, type in
                Function.Argument(name: index < names.count ? names[index] : "", type: type, hasDefault: index >= types.count - defaults)
            }
            parsedFunctions.append(Function(
                name: functions[row, "name"]!, arguments: arguments, returnType: functions[row, "return_type"]!,
                returnsSet: functions[row, "returns_set"] == "t", returnsComposite: functions[row, "returns_composite"] == "t",
                returnsVoid: functions[row, "returns_void"] == "t", volatile: functions[row, "volatility"] == "v"))
        }
        return SchemaCache(
            tables: tables.map { Table(name: $0.key, columns: $0.value.columns, primaryKey: $0.value.pk, insertable: $0.value.kind != "m") },
            functions: parsedFunctions)
    }
}

/// The current schema cache, swapped whole on reload.
public final class SchemaCacheStore: Sendable {
    private let current: Mutex<SchemaCache>

    public init(_ cache: SchemaCache) {
        current = Mutex(cache)
    }

    public var cache: SchemaCache { current.withLock { $0 } }

    public func replace(_ cache: SchemaCache) {
        current.withLock { $0 = cache }
    }
}
