import Foundation
import REST

/// What `onboard gen types` renders: the exposed schema's tables, views, enums and functions, each
/// type resolved to the few kinds a client language distinguishes. Built from the schema cache
/// (what the REST API serves) and the catalog facts the cache does not keep (relation kinds,
/// CHECK-constrained text, functions' result columns).
public struct TypeSchema: Sendable, Equatable {
    /// A PostgreSQL type as client code sees it in JSON.
    public indirect enum FieldType: Sendable, Equatable {
        case bool
        case int16, int32, int64
        case float, double, numeric
        case uuid
        /// text, varchar, dates and times, bytea, intervals, network types: JSON strings.
        case string
        case json
        /// An enum of this schema (a PostgreSQL enum, or text limited by a CHECK to a list of values).
        case enumeration(String)
        /// A row of a table or view of this schema (a function's argument or result).
        case row(String)
        case array(FieldType)
        /// A type the generator does not know: any JSON value.
        case unknown
    }

    public struct Field: Sendable, Equatable {
        public let name: String
        public let type: FieldType
        public let nullable: Bool
        public let hasDefault: Bool
        public init(name: String, type: FieldType, nullable: Bool, hasDefault: Bool = false) {
            self.name = name
            self.type = type
            self.nullable = nullable
            self.hasDefault = hasDefault
        }
    }

    public struct Relationship: Sendable, Equatable {
        public let name: String
        public let columns: [String]
        public let oneToOne: Bool
        public let referencedRelation: String
        public let referencedColumns: [String]
    }

    public struct Relation: Sendable, Equatable {
        public enum Kind: Sendable, Equatable { case table, view }
        public let name: String
        public let kind: Kind
        public let fields: [Field]
        public let primaryKey: [String]
        /// Rows can be inserted and updated through it (every table; an auto-updatable view).
        public let writable: Bool
        public let relationships: [Relationship]
        public let description: String?
    }

    public struct Enumeration: Sendable, Equatable {
        public let name: String
        public let values: [String]
    }

    public struct Function: Sendable, Equatable {
        public enum Result: Sendable, Equatable {
            case void
            case value(FieldType)
            /// Rows of a table or view of this schema.
            case row(String)
            /// `RETURNS TABLE (…)` or OUT parameters: these columns (PostgreSQL does not say whether they may be null).
            case columns([Field])
        }
        public let name: String
        /// Arguments named as a JSON body names them; `hasDefault` ones may be left out.
        public let arguments: [Field]
        public let result: Result
        public let returnsSet: Bool
    }

    public let schema: String
    public let relations: [Relation]
    public let enums: [Enumeration]
    /// Overloads of one name in creation order.
    public let functions: [Function]

    public init(schema: String, relations: [Relation], enums: [Enumeration], functions: [Function]) {
        self.schema = schema
        self.relations = relations
        self.enums = enums
        self.functions = functions
    }

    public var tables: [Relation] { relations.filter { $0.kind == .table } }
    public var views: [Relation] { relations.filter { $0.kind == .view } }
}

extension TypeSchema {
    /// The catalog facts beside the cache, as the loader reads them.
    public struct CatalogFacts: Sendable {
        /// Relation name → (is a view, can be inserted into and updated).
        public var relations: [String: (view: Bool, writable: Bool)] = [:]
        /// Table → its identity and generated columns (filled in without a default expression).
        public var filledColumns: [String: Set<String>] = [:]
        /// The enum types of the schema, values in their sort order.
        public var enumTypes: [String: [String]] = [:]
        /// (table, column) → the values its CHECK constraints allow, each constraint's list.
        public var checkedValues: [String: [String: [[String]]]] = [:]
        /// Function signature (`name(type, …)`) → its result columns (name, format_type), if it returns OUT columns or a composite.
        public var resultColumns: [String: [(name: String, type: String)]] = [:]
        public init() {}
    }

    /// The signature by which a function of the cache and its catalog facts meet.
    static func signature(_ name: String, _ argumentTypes: [String]) -> String {
        name + "(" + argumentTypes.joined(separator: ", ") + ")"
    }

    /// Resolves the cache's relations and functions against the catalog's facts.
    public static func build(schema: String, cache: SchemaCache, facts: CatalogFacts) -> TypeSchema {
        // Enums: the schema's enum types by their own name; CHECK lists by column name, or
        // table_column when two tables' columns of one name allow different values.
        var enums: [String: [String]] = facts.enumTypes
        var checkEnum: [String: [String: String]] = [:]
        var listsByColumn: [String: [(table: String, values: [String])]] = [:]
        for (table, columns) in facts.checkedValues.sorted(by: { $0.key < $1.key }) {
            for (column, lists) in columns.sorted(by: { $0.key < $1.key }) {
                guard let first = lists.first, !first.isEmpty else { continue }
                // Several lists on one column: only the values every one allows.
                let allowed = lists.dropFirst().reduce(first) { kept, next in kept.filter(next.contains) }
                guard !allowed.isEmpty else { continue }
                listsByColumn[column, default: []].append((table, allowed))
            }
        }
        for (column, lists) in listsByColumn.sorted(by: { $0.key < $1.key }) {
            let shared = Set(lists.map(\.values)).count == 1 && enums[column] == nil
            for list in lists {
                let name = shared ? column : list.table + "_" + column
                enums[name] = list.values
                checkEnum[list.table, default: [:]][column] = name
            }
        }
        let tableNames = Set(cache.tables.keys)
        func resolve(_ formatted: String) -> FieldType {
            fieldType(formatted, enums: Set(facts.enumTypes.keys), relations: tableNames, schema: schema)
        }
        let relations = cache.tables.values.sorted { $0.name < $1.name }.map { table -> Relation in
            let fact = facts.relations[table.name] ?? (view: false, writable: table.insertable)
            let fields = table.columns.map { column in
                let type = checkEnum[table.name]?[column.name].map(FieldType.enumeration) ?? resolve(column.type)
                let filled = facts.filledColumns[table.name]?.contains(column.name) ?? false
                return Field(name: column.name, type: type, nullable: column.nullable, hasDefault: column.hasDefault || filled)
            }
            let relationships = cache.foreignKeys.filter { $0.table == table.name }.sorted { $0.name < $1.name }.map {
                Relationship(
                    name: $0.name, columns: $0.columns, oneToOne: $0.oneToOne, referencedRelation: $0.referencedTable,
                    referencedColumns: $0.referencedColumns)
            }
            return Relation(
                name: table.name, kind: fact.view ? .view : .table, fields: fields, primaryKey: table.primaryKey, writable: fact.writable,
                relationships: relationships, description: table.description)
        }
        var functions: [Function] = []
        for name in cache.functions.keys.sorted() {
            for function in cache.functions[name] ?? [] {
                let arguments = function.arguments.map {
                    Field(name: $0.name, type: resolve($0.type), nullable: $0.hasDefault, hasDefault: $0.hasDefault)
                }
                let result: Function.Result
                let returned = resolve(function.returnType)
                if function.returnsVoid {
                    result = .void
                } else if case .row(let relation) = returned {
                    result = .row(relation)
                } else if function.returnsComposite,
                    let columns = facts.resultColumns[signature(function.name, function.arguments.map(\.type))]
                {
                    result = .columns(columns.map { Field(name: $0.name, type: resolve($0.type), nullable: true) })
                } else if function.returnsComposite {
                    result = .value(.unknown)
                } else {
                    result = .value(returned)
                }
                functions.append(Function(name: function.name, arguments: arguments, result: result, returnsSet: function.returnsSet))
            }
        }
        return TypeSchema(
            schema: schema, relations: relations,
            enums: enums.keys.sorted().map { Enumeration(name: $0, values: enums[$0]!) }, functions: functions)
    }

    /// The client-side kind of a `format_type` name (`integer`, `text[]`, `character varying(255)`,
    /// `public.mood`, `"Quoted"`).
    static func fieldType(_ formatted: String, enums: Set<String>, relations: Set<String>, schema: String) -> FieldType {
        var name = formatted.trimmingCharacters(in: .whitespaces)
        if name.hasSuffix("[]") { return .array(fieldType(String(name.dropLast(2)), enums: enums, relations: relations, schema: schema)) }
        // Type modifiers: varchar(255), numeric(10,2), timestamp(3) with time zone.
        if let open = name.firstIndex(of: "("), let close = name[open...].firstIndex(of: ")") {
            name = String(name[..<open]) + String(name[name.index(after: close)...])
        }
        if name.hasPrefix(schema + ".") { name.removeFirst(schema.count + 1) }
        if name.hasPrefix("\""), name.hasSuffix("\""), name.count >= 2 {
            name = String(name.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
        }
        if enums.contains(name) { return .enumeration(name) }
        if relations.contains(name) { return .row(name) }
        switch name {
        case "boolean": return .bool
        case "smallint": return .int16
        case "integer": return .int32
        case "bigint": return .int64
        case "real": return .float
        case "double precision": return .double
        case "numeric", "money": return .numeric
        case "uuid": return .uuid
        case "json", "jsonb": return .json
        case "text", "character varying", "character", "\"char\"", "name", "citext", "bytea", "date", "interval", "inet", "cidr", "macaddr", "tsvector",
            "time without time zone", "time with time zone", "timestamp without time zone", "timestamp with time zone", "xml", "bit", "bit varying":
            return .string
        default: return .unknown
        }
    }
}
