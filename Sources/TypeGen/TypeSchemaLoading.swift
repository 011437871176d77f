import Foundation
import Postgres
import REST

/// The errors of `onboard gen types` before anything is rendered.
public enum TypeGenError: Error, CustomStringConvertible, Equatable {
    case unexposedSchema(String)

    public var description: String {
        switch self {
        case .unexposedSchema(let schema):
            return "the REST API exposes only the schema public; there are no types to generate for \(schema)"
        }
    }
}

extension TypeSchema {
    /// The relations of the schema: whether each is a view, and whether rows can be inserted and
    /// updated through it (`pg_relation_is_updatable`'s bits 8 and 4: a table, an auto-updatable view).
    static let relationsQuery: SQL = """
        SELECT c.relname::text AS name, c.relkind IN ('v', 'm') AS is_view,
               (pg_relation_is_updatable(c.oid, true) & 12) = 12 AS writable
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
        """

    /// The columns PostgreSQL fills in without a default expression: identity and generated ones.
    static let filledColumnsQuery: SQL = """
        SELECT c.relname::text AS table_name, a.attname::text AS column_name
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped AND (a.attidentity <> '' OR a.attgenerated <> '')
        """

    /// The enum types of the schema, each value in its sort order.
    static let enumTypesQuery: SQL = """
        SELECT t.typname::text AS name, e.enumlabel::text AS value
        FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace JOIN pg_enum e ON e.enumtypid = t.oid
        WHERE n.nspname = 'public'
        ORDER BY t.typname, e.enumsortorder
        """

    /// The CHECK constraints on one column of a table of the schema, as PostgreSQL prints them.
    static let checksQuery: SQL = """
        SELECT c.relname::text AS table_name, a.attname::text AS column_name, pg_get_constraintdef(k.oid) AS definition
        FROM pg_constraint k
        JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.conkey[1]
        WHERE k.contype = 'c' AND n.nspname = 'public' AND cardinality(k.conkey) = 1
        ORDER BY c.relname, a.attnum, k.conname
        """

    /// The result columns of the schema's functions that return OUT columns (`RETURNS TABLE`,
    /// OUT/INOUT parameters) or a composite type of no table, by signature (the input types).
    static let resultColumnsQuery: SQL = """
        SELECT p.proname::text AS name, oidvectortypes(p.proargtypes) AS argument_types,
               coalesce(
                 (SELECT json_agg(json_build_array(a.name, format_type(a.type, NULL)) ORDER BY a.ord)
                  FROM unnest(p.proallargtypes, p.proargmodes::text[], p.proargnames) WITH ORDINALITY AS a(type, mode, name, ord)
                  WHERE a.mode IN ('o', 'b', 't')),
                 (SELECT json_agg(json_build_array(att.attname, format_type(att.atttypid, att.atttypmod)) ORDER BY att.attnum)
                  FROM pg_type rt JOIN pg_attribute att ON att.attrelid = rt.typrelid
                  WHERE rt.oid = p.prorettype AND rt.typtype = 'c' AND att.attnum > 0 AND NOT att.attisdropped)
               )::text AS columns
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND p.prokind = 'f'
        """

    /// Reads the schema cache and the catalog facts beside it through `connection`.
    public static func load(_ connection: Connection, schema: String = "public") throws -> TypeSchema {
        guard schema == "public" else { throw TypeGenError.unexposedSchema(schema) }
        let cache = try SchemaCache.load(connection)
        var facts = CatalogFacts()
        for row in try connection.query(relationsQuery).rows {
            guard let name = row["name"] ?? nil else { continue }
            facts.relations[name] = (view: row.bool("is_view") == true, writable: row.bool("writable") == true)
        }
        for row in try connection.query(filledColumnsQuery).rows {
            guard let table = row["table_name"] ?? nil, let column = row["column_name"] ?? nil else { continue }
            facts.filledColumns[table, default: []].insert(column)
        }
        for row in try connection.query(enumTypesQuery).rows {
            guard let name = row["name"] ?? nil, let value = row["value"] ?? nil else { continue }
            facts.enumTypes[name, default: []].append(value)
        }
        for row in try connection.query(checksQuery).rows {
            guard let table = row["table_name"] ?? nil, let column = row["column_name"] ?? nil, let definition = row["definition"] ?? nil,
                let values = allowedValues(definition, column: column)
            else { continue }
            facts.checkedValues[table, default: [:]][column, default: []].append(values)
        }
        for row in try connection.query(resultColumnsQuery).rows {
            guard let name = row["name"] ?? nil, let text = row["columns"] ?? nil,
                let pairs = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String]]
            else { continue }
            let types = ((row["argument_types"] ?? nil) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            facts.resultColumns[signature(name, types.filter { !$0.isEmpty })] = pairs.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
        }
        return build(schema: schema, cache: cache, facts: facts)
    }

    /// The values a CHECK constraint allows a text column, when it is exactly a list of them, as
    /// PostgreSQL prints `col IN ('a', 'b')` (`CHECK ((col = ANY (ARRAY['a'::text, 'b'::text])))`,
    /// casts included for varchar) or `col = 'a'`; nil for any other condition.
    static func allowedValues(_ definition: String, column: String) -> [String]? {
        let quotedColumn = "(?:" + NSRegularExpression.escapedPattern(for: column) + "|\"" + NSRegularExpression.escapedPattern(for: column) + "\")"
        let literal = #"'(?:[^']|'')*'::(?:text|character varying)"#
        let patterns = [
            #"^CHECK \(\(\(?"# + quotedColumn + #"\)?(?:::text)? = ANY \(\(?ARRAY\[("# + literal + "(?:, " + literal + #")*)\](?:\)::text\[\])?\)\)\)$"#,
            #"^CHECK \(\(\(?"# + quotedColumn + #"\)?(?:::text)? = ("# + literal + #")\)\)$"#
        ]
        for pattern in patterns {
            guard let expression = try? NSRegularExpression(pattern: pattern),
                let match = expression.firstMatch(in: definition, range: NSRange(definition.startIndex..., in: definition)),
                let range = Range(match.range(at: 1), in: definition)
            else { continue }
            let list = String(definition[range])
            let item = try! NSRegularExpression(pattern: #"'((?:[^']|'')*)'::"#)
            return item.matches(in: list, range: NSRange(list.startIndex..., in: list)).compactMap { found in
                Range(found.range(at: 1), in: list).map { String(list[$0]).replacingOccurrences(of: "''", with: "'") }
            }
        }
        return nil
    }
}
