import Postgres

/// Loading the cache: the catalog queries (the `public` schema's tables, views, functions,
/// foreign keys, computed relationships, representations and media handlers) and the cache built
/// from their rows.
extension SchemaCache {
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
                oneToOne: row.bool("one_to_one") == true)
        }
        let computedRelationships = computed.rows.compactMap { row -> ComputedRelationship? in
            guard let name = row["name"] ?? nil, let table = row["table_name"] ?? nil, let target = row["target"] ?? nil else { return nil }
            return ComputedRelationship(function: name, table: table, target: target, toOne: row.bool("to_one") == true)
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
            let handler = MediaHandler(aggregate: row["aggregate"] ?? nil, mediaType: mediaType, resolvedType: resolved, binary: row.bool("binary") == true)
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
                    name: name, type: type, nullable: row.bool("nullable") == true,
                    defaultExpression: row["default_expression"] ?? nil,
                    representation: byType[type] ?? Representation()))
            if row.bool("in_pk") == true { pending[table]!.pk.append(name) }
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
                returnsSet: row.bool("returns_set") == true, returnsComposite: row.bool("returns_composite") == true,
                returnsVoid: row.bool("returns_void") == true,
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
