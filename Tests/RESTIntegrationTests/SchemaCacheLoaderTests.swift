import Postgres
import TestSupport
import Testing

@testable import REST

/// The schema cache loader against the real migrated catalog.
@Suite struct SchemaCacheLoaderTests {
    @Test func loadsTablesColumnsAndFunctions() throws {
        let connection = try Connection(conninfo: try TestPostgres.makeDatabase())
        let cache = try SchemaCache.load(connection)
        let children = try #require(cache.tables["children"])
        #expect(children.primaryKey == ["id"])
        #expect(children.column("goals")?.type == "text[]")
        #expect(children.column("goals")?.defaultExpression == "'{}'::text[]")
        #expect(children.column("birthday")?.type == "date")
        #expect(children.column("created_at")?.type == "timestamp with time zone")
        #expect(children.column("name")?.nullable == false)
        #expect(children.column("user_id")?.defaultExpression == "auth.uid()")
        #expect(children.column("age")?.hasDefault == false)
        let profiles = try #require(cache.tables["user_profiles"])
        #expect(profiles.primaryKey == ["id"])
        #expect(profiles.column("onboarding_state")?.defaultExpression == "'NOT_STARTED'::text")

        let rpc = try #require(cache.functions["get_user_with_profile"]?.first)
        #expect(rpc.arguments == [.init(name: "p_user_id", type: "uuid", hasDefault: false)])
        #expect(rpc.returnsSet && rpc.returnsComposite && !rpc.returnsVoid && rpc.volatility == .stable)
        let complete = try #require(cache.functions["complete_onboarding"]?.first)
        #expect(complete.arguments.isEmpty && !complete.returnsSet && complete.returnsComposite && complete.volatility == .volatile)
        let delete = try #require(cache.functions["delete_account"]?.first)
        #expect(delete.returnsVoid)
        // Trigger functions are not callable.
        #expect(cache.functions["keep_row_owner"] == nil)
        #expect(cache.tables["users"] == nil)  // auth.users is not exposed

        // Reload picks up a new table.
        let store = SchemaCacheStore(cache)
        try connection.execute("CREATE TABLE public.pets (id uuid PRIMARY KEY, owner_id uuid NOT NULL)")
        #expect(store.cache.tables["pets"] == nil)
        try store.reload(using: connection)
        #expect(store.cache.tables["pets"]?.column("owner_id")?.type == "uuid")
    }

    /// Keys through views from the real catalog: a view of a view in another schema (renamed
    /// columns followed to the base table), a materialized view, a view showing no key column.
    @Test func loadsKeysThroughViews() throws {
        let connection = try Connection(conninfo: try TestPostgres.makeDatabase())
        try connection.execute(
            unsafeSQL: """
                CREATE SCHEMA vk_private;
                CREATE SCHEMA vk;
                CREATE TABLE vk_private.parents (id int PRIMARY KEY, name text);
                CREATE TABLE vk_private.kids (id int PRIMARY KEY, parent_id int CONSTRAINT kid_parent REFERENCES vk_private.parents);
                CREATE VIEW vk_private.kids_inner AS SELECT id AS kid, parent_id AS up FROM vk_private.kids;
                CREATE VIEW vk.kids AS SELECT kid AS id, up AS parent, 1 AS one FROM vk_private.kids_inner;
                CREATE MATERIALIZED VIEW vk.parents AS SELECT id, upper(name) AS name FROM vk_private.parents;
                CREATE VIEW vk.names AS SELECT name FROM vk_private.parents;
                """)
        let cache = try SchemaCache.load(connection, schema: "vk")
        #expect(cache.tables["kids"]?.isView == true && cache.tables["parents"]?.isView == true)
        #expect(cache.tables["kids"]?.viewKey == ["id"] && cache.tables["parents"]?.viewKey == ["id"] && cache.tables["names"]?.viewKey == [])
        #expect(
            cache.foreignKeys == [
                SchemaCache.ForeignKey(name: "kid_parent", table: "kids", columns: ["parent"], referencedTable: "parents", referencedColumns: ["id"])
            ])
        // In the base tables' schema: the key, and the one through its view.
        #expect(try SchemaCache.load(connection, schema: "vk_private").foreignKeys.map(\.table).sorted() == ["kids", "kids_inner"])
    }
}
