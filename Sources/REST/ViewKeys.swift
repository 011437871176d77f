import Postgres

/// The keys a schema's views carry from their base tables (PostgREST's view key dependencies):
/// a view column that shows a base table's column unchanged (through other views too) stands for
/// it, so a view showing every column of a foreign key, or of a key it references, takes part in
/// that key's relationship (view to table, table to view, view to view), and a view showing every
/// column of a primary key has that key (what makes a view a many-to-many junction).
struct ViewKeys {
    /// A view: its columns by number and the relation column each plain column reference reads.
    struct View {
        let oid: Int
        let name: String
        /// The view is in the cache's schema (the others are only read through).
        let exposed: Bool
        let columns: [(number: Int, name: String)]
        let origins: [Int: (relation: Int, column: Int)]
    }

    /// A primary key or foreign key of a table a view reads, or of a table referencing one.
    /// The names of relations outside the cache's schema are nil.
    struct Constraint {
        let name: String
        let primary: Bool
        let table: Int
        let tableName: String?
        let columns: [(number: Int, name: String)]
        let foreignTable: Int
        let foreignTableName: String?
        let foreignColumns: [(number: Int, name: String)]
        let oneToOne: Bool
    }

    /// The foreign keys through views (the key's name, the views' columns in the key's order;
    /// one per combination when a view shows a key column several times) and each view's
    /// primary key (the first view column showing each key column).
    static func derive(views: [View], constraints: [Constraint]) -> (foreignKeys: [SchemaCache.ForeignKey], primaryKeys: [String: [String]]) {
        let byOid = Dictionary(views.map { ($0.oid, $0) }, uniquingKeysWith: { first, _ in first })
        // The base column a view column shows, following views (a cycle shows none).
        func base(_ relation: Int, _ column: Int, seen: Set<Int>) -> (relation: Int, column: Int)? {
            guard let view = byOid[relation] else { return (relation, column) }
            guard !seen.contains(relation), let next = view.origins[column] else { return nil }
            return base(next.relation, next.column, seen: seen.union([relation]))
        }
        struct BaseColumn: Hashable {
            let relation: Int
            let column: Int
        }
        let exposed = views.filter(\.exposed).map { view -> (name: String, shown: [BaseColumn: [String]]) in
            var shown: [BaseColumn: [String]] = [:]
            for column in view.columns {
                guard let origin = view.origins[column.number], let found = base(origin.relation, origin.column, seen: [view.oid]) else { continue }
                shown[BaseColumn(relation: found.relation, column: found.column), default: []].append(column.name)
            }
            return (view.name, shown)
        }
        // Each view showing every column of a key: the view columns for each key column.
        func dependents(_ table: Int, _ columns: [(number: Int, name: String)]) -> [(view: String, choices: [[String]])] {
            exposed.compactMap { view in
                let each = columns.map { view.shown[BaseColumn(relation: table, column: $0.number)] ?? [] }
                guard !columns.isEmpty, !each.contains(where: \.isEmpty) else { return nil }
                return (view.name, combinations(each))
            }
        }
        var primaryKeys: [String: [String]] = [:]
        var keys: [SchemaCache.ForeignKey] = []
        for constraint in constraints {
            if constraint.primary {
                for dependent in dependents(constraint.table, constraint.columns) {
                    primaryKeys[dependent.view, default: []] += dependent.choices.first ?? []
                }
                continue
            }
            let sources = dependents(constraint.table, constraint.columns)
            let targets = dependents(constraint.foreignTable, constraint.foreignColumns)
            func key(_ table: String, _ columns: [String], _ target: String, _ targetColumns: [String]) -> SchemaCache.ForeignKey {
                SchemaCache.ForeignKey(
                    name: constraint.name, table: table, columns: columns, referencedTable: target, referencedColumns: targetColumns,
                    oneToOne: constraint.oneToOne)
            }
            if let target = constraint.foreignTableName {
                for source in sources {
                    keys += source.choices.map { key(source.view, $0, target, constraint.foreignColumns.map(\.name)) }
                }
            }
            if let table = constraint.tableName {
                for target in targets {
                    keys += target.choices.map { key(table, constraint.columns.map(\.name), target.view, $0) }
                }
            }
            for source in sources {
                for target in targets {
                    for columns in source.choices {
                        keys += target.choices.map { key(source.view, columns, target.view, $0) }
                    }
                }
            }
        }
        return (keys, primaryKeys)
    }

    /// Every way of taking one item of each list, the first list varying slowest.
    static func combinations(_ lists: [[String]]) -> [[String]] {
        lists.reduce([[]]) { partial, options in partial.flatMap { prefix in options.map { prefix + [$0] } } }
    }
}

extension ViewKeys {
    /// `schema`'s views and the views they read, transitively (through the dependencies of their
    /// `_RETURN` rules), as the common table `reached(oid)`.
    static func reachedViews(_ schema: String) -> SQL {
        """
        WITH RECURSIVE reached(oid) AS (
          SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = \(schema) AND c.relkind IN ('v', 'm')
          UNION
          SELECT d.refobjid FROM reached
          JOIN pg_rewrite r ON r.ev_class = reached.oid
          JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid AND d.refclassid = 'pg_class'::regclass
          JOIN pg_class v ON v.oid = d.refobjid AND v.relkind IN ('v', 'm')
        )
        """
    }

    /// The views reached from `schema`: their query trees and their columns.
    static func viewsQuery(_ schema: String) -> SQL {
        reachedViews(schema)
            + """

            SELECT c.oid::text AS oid, n.nspname = \(schema) AS exposed, c.relname::text AS name, r.ev_action::text AS definition,
                   (SELECT json_agg(json_build_array(a.attnum, a.attname::text) ORDER BY a.attnum) FROM pg_attribute a
                    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)::text AS columns
            FROM reached
            JOIN pg_class c ON c.oid = reached.oid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_rewrite r ON r.ev_class = c.oid AND r.rulename = '_RETURN'
            """
    }

    /// The primary keys of the tables those views read, and the foreign keys from or to them
    /// (a partitioned table's, not its partitions'); a relation's name only when it is in
    /// `schema`. `one_to_one` as the foreign keys query computes it.
    static func constraintsQuery(_ schema: String) -> SQL {
        reachedViews(schema)
            + """
            , base(oid) AS (
              SELECT DISTINCT d.refobjid FROM reached
              JOIN pg_rewrite r ON r.ev_class = reached.oid
              JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid AND d.refclassid = 'pg_class'::regclass
              JOIN pg_class t ON t.oid = d.refobjid AND t.relkind IN ('r', 'p', 'f')
            )
            SELECT c.conname::text AS name, c.contype = 'p' AS is_primary,
                   c.conrelid::text AS table_oid, CASE WHEN tn.nspname = \(schema) THEN t.relname::text END AS table_name,
                   (SELECT json_agg(json_build_array(k.n, a.attname::text) ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n)::text AS columns,
                   c.confrelid::text AS foreign_oid, CASE WHEN fn.nspname = \(schema) THEN f.relname::text END AS foreign_table,
                   (SELECT json_agg(json_build_array(k.n, a.attname::text) ORDER BY k.i) FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                    JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n)::text AS foreign_columns,
                   c.contype = 'f' AND (SELECT array_agg(k ORDER BY k) FROM unnest(c.conkey) k) IN (
                     SELECT array_agg(u.k ORDER BY u.k) FROM pg_constraint uc, unnest(uc.conkey) u(k)
                     WHERE uc.conrelid = c.conrelid AND uc.contype IN ('p', 'u') GROUP BY uc.oid
                   ) AS one_to_one
            FROM pg_constraint c
            JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace tn ON tn.oid = t.relnamespace
            LEFT JOIN pg_class f ON f.oid = c.confrelid LEFT JOIN pg_namespace fn ON fn.oid = f.relnamespace
            WHERE c.conparentid = 0 AND NOT t.relispartition AND NOT coalesce(f.relispartition, false)
              AND ((c.contype = 'p' AND c.conrelid IN (SELECT oid FROM base))
                OR (c.contype = 'f' AND (c.conrelid IN (SELECT oid FROM base) OR c.confrelid IN (SELECT oid FROM base))))
            ORDER BY c.conrelid, c.conname
            """
    }

    /// Reads the views and constraints of `schema` and derives their keys.
    static func load(_ connection: Connection, schema: String) throws -> (foreignKeys: [SchemaCache.ForeignKey], primaryKeys: [String: [String]]) {
        let viewRows = try connection.query(viewsQuery(schema)).rows
        guard viewRows.contains(where: { $0.bool("exposed") == true }) else { return ([], [:]) }
        let constraintRows = try connection.query(constraintsQuery(schema)).rows
        let views = viewRows.compactMap { row -> View? in
            guard let oid = Int((row["oid"] ?? nil) ?? ""), let name = row["name"] ?? nil else { return nil }
            return View(
                oid: oid, name: name, exposed: row.bool("exposed") == true, columns: numberedNames(row["columns"] ?? nil),
                origins: NodeTree.viewColumnOrigins((row["definition"] ?? nil) ?? ""))
        }
        let constraints = constraintRows.compactMap { row -> Constraint? in
            guard let name = row["name"] ?? nil, let table = Int((row["table_oid"] ?? nil) ?? "") else { return nil }
            return Constraint(
                name: name, primary: row.bool("is_primary") == true, table: table, tableName: row["table_name"] ?? nil,
                columns: numberedNames(row["columns"] ?? nil), foreignTable: Int((row["foreign_oid"] ?? nil) ?? "") ?? 0,
                foreignTableName: row["foreign_table"] ?? nil, foreignColumns: numberedNames(row["foreign_columns"] ?? nil),
                oneToOne: row.bool("one_to_one") == true)
        }
        return derive(views: views, constraints: constraints)
    }

    /// `[[1,"id"],[2,"name"]]` as (number, name) pairs.
    static func numberedNames(_ text: String?) -> [(number: Int, name: String)] {
        guard let text, case .array(let items)? = JSONValue.parse(Array(text.utf8)) else { return [] }
        return items.compactMap { item in
            guard case .array(let pair) = item, pair.count == 2, case .number(let text) = pair[0], let number = Int(text),
                case .string(let name) = pair[1]
            else { return nil }
            return (number, name)
        }
    }
}
