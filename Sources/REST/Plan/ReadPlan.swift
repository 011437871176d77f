/// The plan as values (PostgREST's `Plan/ReadPlan.hs` and `MutatePlan`): what the planning
/// passes decide after checking every name against the schema cache. Nothing here is SQL; the
/// writers in `Query/` turn these values into one statement.

/// A relation or function by schema and name, as the schema cache names it (rendered by
/// `QueryWriter.write(_:QualifiedIdentifier)`, the one place a qualified name becomes text).
struct QualifiedIdentifier: Sendable, Hashable {
    var schema: String
    var name: String
}

extension SchemaCache.Table {
    /// The table's name with its schema.
    var qualifiedName: QualifiedIdentifier { QualifiedIdentifier(schema: schema, name: name) }

    /// A function of the table's schema (a computed field or relationship).
    func function(_ name: String) -> QualifiedIdentifier { QualifiedIdentifier(schema: qualifiedName.schema, name: name) }

    /// The table's columns under another name (an embed's alias, `pgrst_1`): what its
    /// columns are qualified with in a subquery.
    func aliased(_ alias: String) -> SchemaCache.Table {
        SchemaCache.Table(name: alias, columns: columns, primaryKey: primaryKey, computed: computed, schema: schema)
    }
}

extension SchemaCache.Function {
    /// The function's name with its schema.
    var qualifiedName: QualifiedIdentifier { QualifiedIdentifier(schema: schema, name: name) }
}

/// One level of a read: the rows of a table (or of `pgrst_source`, a write's returned rows),
/// what is selected of them, which rows and in what order.
struct ReadPlan: Sendable {
    /// The table whose columns the level names: the table itself, or its copy named by an
    /// embed's alias.
    var table: SchemaCache.Table
    var from: FromItem
    /// `pgrst_source` when the selected columns and `order` are those of a write's rows.
    var qualifier: String? = nil
    var select: Projection
    var conditions: [Predicate] = []
    /// The caller may read none of the rows (`WHERE false`).
    var denyAll = false
    /// Positions of the select list to GROUP BY (with an aggregate: every other column).
    var grouping: [Int] = []
    var order: [OrderPlan] = []
    var limit: Int? = nil
    var offset = 0
}

/// What a level's FROM reads.
enum FromItem: Sendable {
    /// A table by its name: `"public"."children"`.
    case table(QualifiedIdentifier)
    /// Tables under aliases: an embed's table, and a many-to-many's junction after it.
    case aliased([(table: QualifiedIdentifier, alias: String)])
    /// A computed relationship: the function's rows of the parent row (`ROW(…)` of
    /// `pgrst_source`'s columns when `returned`), as `alias`.
    case function(QualifiedIdentifier, parent: SchemaCache.Table, returned: Bool, rowType: QualifiedIdentifier, alias: String)
    /// `pgrst_source`: a write's returned rows.
    case source
    /// A function's rows: `f(…) pgrst_call`.
    case call(CallPlan.Invocation)
}

/// What a level selects.
indirect enum Projection: Sendable {
    /// The select list (`NULL` when empty).
    case fields([SelectField])
    /// `1` (an `EXISTS`, the planned count's rows).
    case one
    /// `pg_catalog.count(*)` (the exact total).
    case count
    /// `ctid` (the rows a limited PATCH or DELETE touches).
    case ctid
    /// One column of the level's one row (a `rel(col)` order term's value).
    case field(String, path: [JSONPathStep])
    /// One value of a spread's rows, named `value` when `named` (collected into an array).
    case scalar(ScalarPlan, named: Bool)
    /// A function's rows: the select list, then (`star`) every column of its row; only the
    /// columns when the list is empty.
    case callRows([SelectField], star: Bool)
}

/// One entry of a select list.
enum SelectField: Sendable {
    /// A column, `*`, a cast or an aggregate of the level's rows, as the request wrote it.
    case item(SelectItem)
    /// An embed's rows as JSON, named; `::jsonb` when the rows are grouped (json has no equality).
    case embed(EmbedPlan, name: String, jsonb: Bool)
    /// A column a spread puts beside the parent's; `jsonb` likewise.
    case spread(SpreadColumn, jsonb: Bool)
}

/// `rel(…)`: the related rows under `alias` (its rows' alias is `alias_row`), an array for a
/// to-many relationship, else the one object.
struct EmbedPlan: Sendable {
    var alias: String
    var toMany: Bool
    var rows: ReadPlan
}

/// One column of a spread (`...rel(col)`), with the aggregate its parent's level applies to it.
struct SpreadColumn: Sendable {
    var value: ScalarPlan
    var name: String
    var aggregate: SelectItem.Aggregate? = nil
    var aggregateCast: String? = nil
    /// An embed's JSON, or a to-many spread's array.
    var isJSON = false
}

/// A value in a spread's column.
indirect enum ScalarPlan: Sendable {
    /// A column of the related row (`table`: its alias), cast as the item says (no aggregate).
    case field(SchemaCache.Table, SelectItem)
    /// `1` (what `count()` counts).
    case one
    case embed(EmbedPlan)
    /// The value read from a spread's rows: the one row's, or (`toMany`) every row's as a JSON
    /// array. `rows` has the FROM, WHERE, order and range; its projection is replaced.
    case spread(ReadPlan, ScalarPlan, toMany: Bool)
}

/// One term of `order`: a column of the level, (`related`) the column of an embedded to-one
/// row, read by its own subquery, or (`position`) a column a to-one spread puts in the level's
/// select list, by its place there (grouped rows order by what they group by).
struct OrderPlan: Sendable {
    var term: OrderTerm
    var related: ReadPlan? = nil
    var position: Int? = nil
}

/// One condition of a level's WHERE.
indirect enum Predicate: Sendable {
    /// A filter or ownership rule over the level's table.
    case condition(Condition)
    /// One over another table of the level (a many-to-many's junction).
    case on(SchemaCache.Table, Condition)
    /// A join: a related row's column equals its parent's field.
    case equal(ColumnReference, ColumnReference)
    /// `!inner`: some related row exists.
    case exists(ReadPlan)
    /// `rel=is.null`: no related row exists.
    case notExists(ReadPlan)
}

/// A column of a table (a computed field is its function on the row), of `pgrst_source`'s
/// rows when `qualifier` says so.
struct ColumnReference: Sendable {
    var table: SchemaCache.Table
    var name: String
    var qualifier: String? = nil
}
