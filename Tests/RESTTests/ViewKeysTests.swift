import Testing

@testable import REST

/// Relationships through views, short of the catalog: a view's query tree read for where its
/// columns come from, and the keys derived from its base tables'.
@Suite struct ViewKeysTests {
    /// A view's `_RETURN` query as PostgreSQL prints it (shortened: fields the reader skips).
    static let definition = #"""
        ({QUERY :commandType 1 :querySource 0 :canSetTag true :utilityStmt <> :resultRelation 0 \#
        :rtable ({RANGETBLENTRY :alias <> :eref {ALIAS :aliasname t :colnames ("id" "x\ y")} :rtekind 0 :relid 16400 \#
        :relkind r :tablesample <> :lateral false} {RANGETBLENTRY :rtekind 1 :subquery {QUERY :commandType 1 \#
        :targetList ({TARGETENTRY :expr {VAR :varno 1 :varattno 2} :resno 1 :resname inner :resorigtbl 16999 :resorigcol 4 \#
        :resjunk false})}}) \#
        :targetList ({TARGETENTRY :expr {VAR :varno 1 :varattno 1 :vartype 23 :location 7} :resno 1 :resname id \#
        :ressortgroupref 0 :resorigtbl 16400 :resorigcol 1 :resjunk false} {TARGETENTRY :expr {CONST :consttype 23 \#
        :constlen 4 :constbyval true :constisnull false :location 12 :constvalue 4 [ 1 0 0 0 0 0 0 0 ]} :resno 2 \#
        :resname :x :ressortgroupref 0 :resorigtbl 0 :resorigcol 0 :resjunk false} {TARGETENTRY :expr {VAR :varno 1 \#
        :varattno 2} :resno 3 :resname x\ y :resorigtbl 16400 :resorigcol 2 :resjunk false}) :override 0})
        """#

    @Test func readsWhereEachViewColumnComesFrom() throws {
        let origins = NodeTree.viewColumnOrigins(Self.definition)
        // The top query's columns only (not the subquery's), a constant none.
        #expect(origins.keys.sorted() == [1, 3])
        #expect(origins[1]?.relation == 16400 && origins[1]?.column == 1)
        #expect(origins[3]?.relation == 16400 && origins[3]?.column == 2)
        #expect(NodeTree.parse("({QUERY :targetList (") == nil)
        #expect(NodeTree.viewColumnOrigins("not a tree").isEmpty)
    }

    /// A table `t` (oid 1: `id` 1, `parent` 2) with a key to itself, read by `v` showing `parent`
    /// twice; `w` reads `v` (a view over a view); `s` (oid 2) has a key to `t`.
    @Test func derivesKeysThroughViews() {
        let views = [
            ViewKeys.View(
                oid: 10, name: "v", exposed: true, columns: [(1, "id"), (2, "up1"), (3, "up2")],
                origins: [1: (1, 1), 2: (1, 2), 3: (1, 2)]),
            ViewKeys.View(oid: 11, name: "w", exposed: true, columns: [(1, "wid")], origins: [1: (10, 1)]),
            ViewKeys.View(oid: 12, name: "hidden", exposed: false, columns: [(1, "id")], origins: [1: (1, 1)])
        ]
        let constraints = [
            ViewKeys.Constraint(
                name: "t_pkey", primary: true, table: 1, tableName: "t", columns: [(1, "id")], foreignTable: 0, foreignTableName: nil,
                foreignColumns: [], oneToOne: false),
            ViewKeys.Constraint(
                name: "up", primary: false, table: 1, tableName: "t", columns: [(2, "parent")], foreignTable: 1, foreignTableName: "t",
                foreignColumns: [(1, "id")], oneToOne: false),
            ViewKeys.Constraint(
                name: "s_t", primary: false, table: 2, tableName: nil, columns: [(1, "t_id")], foreignTable: 1, foreignTableName: "t",
                foreignColumns: [(1, "id")], oneToOne: false)
        ]
        let derived = ViewKeys.derive(views: views, constraints: constraints)
        #expect(derived.primaryKeys == ["v": ["id"], "w": ["wid"]])
        let keys = derived.foreignKeys.map {
            "\($0.name) \($0.table)(\($0.columns.joined(separator: ","))) \($0.referencedTable)(\($0.referencedColumns.joined(separator: ",")))"
        }
        #expect(
            keys == [
                // v → t (each column showing `parent`), t → v, t → w, v → v, v → w.
                "up v(up1) t(id)", "up v(up2) t(id)", "up t(parent) v(id)", "up t(parent) w(wid)",
                "up v(up1) v(id)", "up v(up2) v(id)", "up v(up1) w(wid)", "up v(up2) w(wid)"
            ])
        #expect(ViewKeys.combinations([["a1", "a2"], ["b1", "b2"]]) == [["a1", "b1"], ["a1", "b2"], ["a2", "b1"], ["a2", "b2"]])
    }
}
