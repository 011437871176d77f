/// Which relationship an embed follows (PostgREST's `findRel`): the foreign keys of the schema
/// cache seen from the parent, many-to-many through junction tables, computed relationships, and
/// a hint's choice among them.
extension Planner {
    /// A foreign key seen from the parent: its rows point at one target row (many-to-one), many
    /// target rows point at it (one-to-many), a junction's rows point at both (many-to-many), or
    /// a key that is also unique pairs one row with at most one (one-to-one, either way).
    struct Relationship {
        enum Cardinality: String {
            case manyToOne = "many-to-one", oneToMany = "one-to-many", manyToMany = "many-to-many", oneToOne = "one-to-one"
        }
        /// Many-to-many: the junction's key to the parent.
        let key: SchemaCache.ForeignKey
        let cardinality: Cardinality
        /// Many-to-many: the junction's key to the target.
        var targetKey: SchemaCache.ForeignKey? = nil

        /// One-to-one: the parent's rows hold the key (seen from the key's table, as many-to-one).
        var heldByParent = false
        /// The embedded table (set by `resolve`).
        var targetTable = ""
        /// A computed relationship: the function whose rows (of the parent row) are embedded; `key`
        /// then joins nothing (no columns).
        var function: String? = nil

        /// (target column, parent column) pairs; many-to-many: (junction, parent) pairs.
        var joins: [(target: String, parent: String)] {
            switch cardinality {
            case .manyToOne: return Array(zip(key.referencedColumns, key.columns))
            case .oneToOne where heldByParent: return Array(zip(key.referencedColumns, key.columns))
            case .oneToOne, .oneToMany, .manyToMany: return Array(zip(key.columns, key.referencedColumns))
            }
        }

        var isToMany: Bool { cardinality == .oneToMany || cardinality == .manyToMany }
    }

    /// The one relationship between `parent` and `target` the hint (a foreign key's name or one
    /// of its columns; a junction's name) leaves; PGRST200 when there is none, PGRST201 when
    /// several remain. `target` names a table, or (PostgREST's findRel) a foreign key of the
    /// parent's by its name or its one column; a table's key to itself follows PostgREST's
    /// convention: `t(…)` the rows pointing at this one, `t!col(…)` those pointing at it through
    /// `col`, `col(…)` the row this one points at.
    func resolve(_ parent: String, _ target: String, hint: String?) throws(RESTError) -> Relationship {
        // A computed relationship: the function named `target` over the parent's rows; it
        // overrides the foreign keys to a table of the same name, and no hint is checked (as
        // PostgREST's getOverrideRelationshipsMap and findRel).
        if let computed = cache.computedRelationships.first(where: { $0.table == parent && $0.function == target }) {
            let key = SchemaCache.ForeignKey(name: computed.function, table: parent, columns: [], referencedTable: computed.target, referencedColumns: [])
            return Relationship(key: key, cardinality: computed.toOne ? .manyToOne : .oneToMany, targetTable: computed.target, function: computed.function)
        }
        var candidates: [Relationship] = []
        for key in cache.foreignKeys where key.table == parent || key.referencedTable == parent {
            // The key from its table (many-to-one or one-to-one) and from the referenced table
            // (one-to-many or one-to-one); `own`/`other`: the key's columns on the parent's side
            // and on the target's.
            var sides: [(relationship: Relationship, own: [String], other: [String])] = []
            if key.table == parent {
                sides.append(
                    (
                        Relationship(key: key, cardinality: key.oneToOne ? .oneToOne : .manyToOne, heldByParent: true, targetTable: key.referencedTable),
                        key.columns, key.referencedColumns
                    ))
            }
            if key.referencedTable == parent {
                sides.append(
                    (Relationship(key: key, cardinality: key.oneToOne ? .oneToOne : .oneToMany, targetTable: key.table), key.referencedColumns, key.columns))
            }
            for side in sides {
                let relationship = side.relationship
                if key.table == key.referencedTable {
                    // A table's key to itself (PostgREST's convention; not for one-to-one).
                    if relationship.cardinality == .oneToMany {
                        if target == parent && (hint == nil || side.other == [hint]) { candidates.append(relationship) }
                    } else if relationship.cardinality == .manyToOne, hint == nil, side.own == [target] {
                        candidates.append(relationship)
                    }
                } else if let hint {
                    if target == relationship.targetTable && (key.name == hint || key.columns.contains(hint) || key.referencedColumns == [hint]) {
                        candidates.append(relationship)
                    }
                } else if target == relationship.targetTable {
                    candidates.append(relationship)
                } else if (target == key.name || side.own == [target]) && cache.tables[relationship.targetTable]?.isView != true {
                    // A key's name or column as the target names a table's relationship, never a view's.
                    candidates.append(relationship)
                }
            }
        }
        // Many-to-many (PostgREST's rule): a table with keys to both sides, whose columns are
        // all part of its primary key (keys that are not one-to-one, as PostgREST builds them
        // from its many-to-one relationships); a hint names the junction. A view is one when it
        // shows a base table's primary key and both keys.
        for key in cache.foreignKeys where key.referencedTable == parent && !key.oneToOne {
            guard let junction = cache.tables[key.table], hint == nil || hint == junction.name else { continue }
            let primaryKey = junction.junctionKey
            for targetKey in cache.foreignKeys
            where targetKey.table == key.table && targetKey.referencedTable == target && targetKey.name != key.name && !targetKey.oneToOne {
                if Set(key.columns + targetKey.columns).isSubset(of: primaryKey) {
                    candidates.append(Relationship(key: key, cardinality: .manyToMany, targetKey: targetKey, targetTable: target))
                }
            }
        }
        guard !candidates.isEmpty else { throw .noRelationship(parent: parent, target: target, hint: hint) }
        guard candidates.count == 1 else {
            throw .ambiguousRelationship(
                parent: parent, target: target,
                candidates: candidates.sorted(by: Self.listedBefore).map {
                    if let targetKey = $0.targetKey {
                        return (
                            cardinality: $0.cardinality.rawValue, name: targetKey.table,
                            description:
                                "\(targetKey.table) using \($0.key.name)(\($0.key.columns.joined(separator: ", "))) and \(targetKey.name)(\(targetKey.columns.joined(separator: ", ")))"
                        )
                    }
                    // PostgREST's compressedRel: the key, then the parent's columns and the target's.
                    let own = $0.heldByParent ? $0.key.columns : $0.key.referencedColumns
                    let other = $0.heldByParent ? $0.key.referencedColumns : $0.key.columns
                    return (
                        cardinality: $0.cardinality.rawValue, name: $0.key.name,
                        description:
                            "\($0.key.name) using \(parent)(\(own.joined(separator: ", "))) and \($0.targetTable)(\(other.joined(separator: ", ")))"
                    )
                })
        }
        return candidates[0]
    }

    /// PGRST201 lists the candidates in the order of PostgREST's relationships: by target, a
    /// table's relationships with itself last, one-to-many, many-to-one, one-to-one, then
    /// many-to-many; then by key (a many-to-many's junction, then its two keys) and columns
    /// (pairs of the parent's and the target's; a junction's), a one-to-one held by the parent
    /// first.
    static func listedBefore(_ a: Relationship, _ b: Relationship) -> Bool {
        func order(_ relationship: Relationship) -> (target: String, isSelf: Bool, rank: Int, names: [String], columns: [String], held: Bool) {
            let key = relationship.key
            let rank: Int
            switch relationship.cardinality {
            case .oneToMany: rank = 0
            case .manyToOne: rank = 1
            case .oneToOne: rank = 2
            case .manyToMany: rank = 3
            }
            func pairs(_ first: [String], _ second: [String]) -> [String] { zip(first, second).flatMap { [$0, $1] } }
            if let targetKey = relationship.targetKey {
                return (
                    relationship.targetTable, targetKey.referencedTable == key.referencedTable, rank, [key.table, key.name, targetKey.name],
                    pairs(key.referencedColumns, key.columns) + pairs(targetKey.referencedColumns, targetKey.columns), false
                )
            }
            let own = relationship.heldByParent ? key.columns : key.referencedColumns
            let other = relationship.heldByParent ? key.referencedColumns : key.columns
            return (
                relationship.targetTable, key.table == key.referencedTable, rank, [key.name], pairs(own, other),
                relationship.cardinality == .oneToOne && !relationship.heldByParent
            )
        }
        let (x, y) = (order(a), order(b))
        if x.target != y.target { return x.target < y.target }
        if x.isSelf != y.isSelf { return !x.isSelf }
        if x.rank != y.rank { return x.rank < y.rank }
        if x.names != y.names { return x.names.lexicographicallyPrecedes(y.names) }
        if x.columns != y.columns { return x.columns.lexicographicallyPrecedes(y.columns) }
        return !x.held && y.held
    }
}
