import Testing

@testable import Postgres

/// `SQL`'s composition: binds are positions between pieces of text, numbered only when the text
/// is read, so fragments join without any placeholder being rewritten.
@Suite struct SQLTests {
    @Test func interpolatedValuesAreNumberedInOrder() {
        let id = "u1"
        let sql: SQL = "SELECT * FROM \(ident: "children") WHERE user_id = \(id) AND age > \(3)"
        #expect(sql.text == #"SELECT * FROM "children" WHERE user_id = $1 AND age > $2"#)
        #expect(sql.binds == ["u1", "3"])
        #expect(sql.types.isEmpty && sql.bindTypes == [0, 0])
    }

    @Test func fragmentsComposeAfterTheBindsSoFar() {
        let first: SQL = "a = \("x") AND "
        let second: SQL = "b = \("y") OR c = \("z")"
        let joined = first + second
        #expect(joined.text == "a = $1 AND b = $2 OR c = $3")
        #expect(joined.binds == ["x", "y", "z"])
        let nested: SQL = "SELECT \(1), (\(second)), \(2)"
        #expect(nested.text == "SELECT $1, (b = $2 OR c = $3), $4")
        #expect(nested.binds == ["1", "y", "z", "2"])
        #expect(SQL.join([first, second, "d"], separator: "; ").text == "a = $1 AND ; b = $2 OR c = $3; d")
    }

    @Test func literalDollarTextIsNeverAPlaceholder() {
        // Text that looks like a placeholder stays as written, wherever the fragment lands.
        let raw = SQL(unsafeSQL: "SELECT '$1', \"$2\", $3x")
        let sql: SQL = "SELECT \("v"); " + raw
        #expect(sql.text == #"SELECT $1; SELECT '$1', "$2", $3x"#)
        #expect(sql.binds == ["v"])
    }

    @Test func typedBindsKeepTheirTypesThroughComposition() {
        let typed: SQL = "x = \("5", type: 23)"
        var sql: SQL = "SELECT \("a") WHERE "
        sql.append(typed)
        sql.append(bind: "b")
        #expect(sql.text == "SELECT $1 WHERE x = $2$3")
        #expect(sql.types == [0, 23, 0])
        let untyped: SQL = "y = \("1")"
        #expect((untyped + untyped).types.isEmpty)
    }

    @Test func appendingBuildsAStatementFrontToBack() {
        var sql = SQL(unsafeSQL: "")
        #expect(sql.isEmpty)
        sql.append(unsafeRaw: "SELECT ")
        sql.append(bind: nil)
        sql.append(unsafeRaw: "::int")
        #expect(sql.text == "SELECT $1::int" && sql.binds == [nil])
        #expect(sql == SQL("SELECT \(nil as String?)::int"))
        #expect(sql.description == "SELECT $1::int [1 binds]")
    }
}
