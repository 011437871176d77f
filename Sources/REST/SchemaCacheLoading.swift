import Postgres

/// Loading the cache: the catalog queries (one schema's tables, views, functions, foreign keys,
/// computed relationships, representations and media handlers; the schema's name a bound
/// parameter) and the cache built from their rows.
extension SchemaCache {
    /// The catalog query for columns of `schema`'s tables and views (a partition is not one of
    /// them: PostgREST exposes its partitioned table only).
    static func columnsQuery(_ schema: String) -> SQL {
        """
        SELECT c.relname AS table_name, a.attname AS column_name,
               format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable,
               pg_get_expr(d.adbin, d.adrelid) AS default_expression, c.relkind::text AS kind,
               coalesce(a.attnum = ANY (i.indkey), false) AS in_pk,
               obj_description(c.oid, 'pg_class') AS description,
               t.typtype = 'd' AND 'tsvector'::regtype IN (
                 WITH RECURSIVE base(oid, typtype, typbasetype) AS (
                   SELECT t.oid, t.typtype, t.typbasetype
                   UNION ALL
                   SELECT b.oid, b.typtype, b.typbasetype FROM pg_type b JOIN base ON b.oid = base.typbasetype WHERE base.typtype = 'd'
                 ) SELECT oid FROM base
               ) AS tsvector_domain
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        JOIN pg_type t ON t.oid = a.atttypid
        LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
        LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
        WHERE n.nspname = \(schema) AND c.relkind IN ('r', 'v', 'm', 'p', 'f') AND NOT c.relispartition
        ORDER BY c.relname, a.attnum
        """
    }

    /// The catalog query for `schema`'s functions (no triggers, no extensions'), each
    /// overload in creation order. `computed_table`: the table whose row type is the one
    /// parameter of a function that returns one value (a computed field over that table).
    static func functionsQuery(_ schema: String) -> SQL {
        """
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
                 WHERE rt.oid = p.proargtypes[0] AND cn.nspname = \(schema) AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
               ) END AS computed_table
        FROM pg_proc p
        JOIN pg_namespace n ON n.oid = p.pronamespace
        JOIN pg_type t ON t.oid = p.prorettype
        WHERE n.nspname = \(schema) AND p.prokind = 'f'
          AND p.prorettype <> 'trigger'::regtype
          AND NOT EXISTS (SELECT 1 FROM pg_depend dep WHERE dep.objid = p.oid AND dep.deptype = 'e')
        ORDER BY p.proname, p.oid
        """
    }

    /// The foreign keys between tables of `schema` (a partitioned table's, not the copies on its
    /// partitions), their columns in key order; `one_to_one`: the
    /// key's columns (as a set) are those of a primary key or unique constraint of its table, as
    /// PostgREST's allM2OandO2ORels compares them (unique indexes that are no constraint do not count).
    static func foreignKeysQuery(_ schema: String) -> SQL {
        """
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
        WHERE c.contype = 'f' AND c.conparentid = 0 AND NOT src.relispartition AND NOT dst.relispartition
          AND sn.nspname = \(schema) AND dn.nspname = \(schema)
        ORDER BY c.conname
        """
    }

    /// PostgREST's allComputedRels: functions of `schema` with one parameter of a table's (or
    /// view's) row type that return a table's rows, to-one unless they return a set of more than
    /// one estimated row.
    static func computedRelationshipsQuery(_ schema: String) -> SQL {
        """
        SELECT p.proname::text AS name, arg.relname::text AS table_name, ret.relname::text AS target,
               NOT p.proretset OR p.prorows = 1 AS to_one
        FROM pg_proc p
        JOIN pg_class arg ON arg.reltype = p.proargtypes[0] AND arg.relkind IN ('v', 'r', 'm', 'f', 'p')
        JOIN pg_class ret ON ret.reltype = p.prorettype AND ret.relkind IN ('v', 'r', 'm', 'f', 'p')
        JOIN pg_namespace n ON n.oid = p.pronamespace AND n.nspname = \(schema)
        WHERE p.pronargs = 1 AND arg.relnamespace = n.oid AND ret.relnamespace = n.oid
        ORDER BY p.proname, p.oid
        """
    }

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
    /// `schema` over a relation's rows (or `anyelement`) that return one, and the functions of
    /// `schema` (not set-returning) that return one. The domains may be in any schema.
    static func mediaHandlersQuery(_ schema: String) -> SQL {
        #"""
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
                                         AND c.relnamespace = ns.oid
        WHERE ns.nspname = \#(schema) AND p.pronargs = 1 AND (a.oid = 'anyelement'::regtype OR c.oid IS NOT NULL)
        UNION ALL
        SELECT NULL, p.proname::text, m.media_type, m.resolved, m.binary
        FROM pg_catalog.pg_proc p
        JOIN media_types m ON p.prorettype = m.oid
        JOIN pg_catalog.pg_namespace ns ON ns.oid = p.pronamespace AND ns.nspname = \#(schema)
        WHERE NOT p.proretset AND p.prokind = 'f'
        """#
    }

    /// Reads `schema`'s tables, views, functions and foreign keys (with those through views)
    /// through `connection`. Another
    /// schema than `public` is read with `search_path` set to it alone, as its requests run: the
    /// types the catalog names (`format_type`) are then its own unqualified, others qualified.
    public static func load(_ connection: Connection, schema: String = "public") throws -> SchemaCache {
        guard schema != "public" else { return try loadQueries(connection, schema: schema) }
        return try connection.withTransaction { connection in
            _ = try connection.query("SELECT set_config('search_path', quote_ident(\(schema)), true)")
            return try loadQueries(connection, schema: schema)
        }
    }

    private static func loadQueries(_ connection: Connection, schema: String) throws -> SchemaCache {
        let columns = try connection.query(columnsQuery(schema))
        let functions = try connection.query(functionsQuery(schema))
        let keys = try connection.query(foreignKeysQuery(schema))
        let representations = try connection.query(representationsQuery)
        let handlers = try connection.query(mediaHandlersQuery(schema))
        let computed = try connection.query(computedRelationshipsQuery(schema))
        let built = build(columns: columns.rows, functions: functions.rows, representations: representations.rows, schema: schema)
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
        // The views' keys, from their base tables'.
        let viewKeys = try ViewKeys.load(connection, schema: schema)
        let tables = built.tables.values.map { table in
            var table = table
            table.viewKey = viewKeys.primaryKeys[table.name] ?? []
            return table
        }
        return SchemaCache(
            tables: tables, functions: built.functions.values.flatMap { $0 }, foreignKeys: foreignKeys + viewKeys.foreignKeys,
            mediaHandlers: mediaHandlers(handlers.rows), computedRelationships: computedRelationships, schema: schema)
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
    static func build(
        columns: [[String: String?]], functions: [[String: String?]], representations: [[String: String?]] = [], schema: String = "public"
    ) -> SchemaCache {
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
                    representation: byType[type] ?? Representation(), tsvectorDomain: row.bool("tsvector_domain") == true))
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
                volatility: Function.Volatility(rawValue: (row["volatility"] ?? nil) ?? "v") ?? .volatile, schema: schema)
            if let table = row["computed_table"] ?? nil, computed[table]?[name] == nil {
                computed[table, default: [:]][name] = ComputedField(name: name, type: function.returnType)
            }
            if function.isCallable { parsed.append(function) }
        }
        let tables = order.map { name in
            let p = pending[name]!
            return Table(
                name: name, columns: p.columns, primaryKey: p.pk, insertable: p.kind != "m", description: p.description,
                computed: computed[name] ?? [:], schema: schema, isView: p.kind == "v" || p.kind == "m")
        }
        return SchemaCache(tables: tables, functions: parsed, schema: schema)
    }
}

extension SchemaCaches {
    /// Reads the cache of each of `schemas` (and `public`'s, which Realtime and the ownership
    /// rules read whether it is exposed or not).
    public static func load(_ connection: Connection, schemas: [String]) throws -> SchemaCaches {
        var caches: [SchemaCache] = []
        for schema in schemas.contains("public") ? schemas : schemas + ["public"] where !caches.contains(where: { $0.schema == schema }) {
            caches.append(try SchemaCache.load(connection, schema: schema))
        }
        return SchemaCaches(caches)
    }
}
