import Foundation
import Postgres
import TestSupport
import Testing

@testable import TypeGen

/// `onboard gen types` against the migrated schema: what the catalog says, and the generated code
/// checked by each language's own compiler (swiftc; tsc and mypy where installed: CI installs them).
@Suite struct TypeGenTests {
    /// The migrated schema plus what it lacks: an enum type, an auto-updatable view, and columns
    /// named with each language's reserved words.
    static func schema() throws -> TypeSchema {
        let connection = try Connection(conninfo: try TestPostgres.makeDatabase())
        try connection.execute(
            """
            CREATE TYPE public.mood AS ENUM ('calm', 'busy', 'no-idea');
            CREATE TABLE public.odd_names (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                "from" text, "class" integer NOT NULL, "default" public.mood[] NOT NULL DEFAULT '{}',
                "Weird Name" numeric(10, 2), picked varchar(8) CHECK (picked IN ('a', 'it''s'))
            );
            CREATE VIEW public.child_names AS SELECT id, name FROM public.children;
            """)
        return try TypeSchema.load(connection)
    }

    @Test func readsEnumsViewsAndFunctionsFromTheCatalog() throws {
        let types = try Self.schema()
        let enums = Dictionary(uniqueKeysWithValues: types.enums.map { ($0.name, $0.values) })
        #expect(
            enums["onboarding_state"] == ["NOT_STARTED", "USER_INFO", "CHILD_INFO", "GOALS", "TOPICS", "DISPOSITIONS", "REVIEW", "COMPLETE"])
        #expect(enums["role"] == ["owner", "parent"])
        #expect(enums["mood"] == ["calm", "busy", "no-idea"])
        #expect(enums["picked"] == ["a", "it's"])

        let profiles = try #require(types.relations.first { $0.name == "user_profiles" })
        #expect(profiles.kind == .table && profiles.writable)
        let state = try #require(profiles.fields.first { $0.name == "onboarding_state" })
        #expect(state.type == .enumeration("onboarding_state") && !state.nullable && state.hasDefault)
        let children = try #require(types.relations.first { $0.name == "children" })
        #expect(children.fields.first { $0.name == "goals" }?.type == .array(.string))
        #expect(children.fields.first { $0.name == "user_id" }?.hasDefault == true)
        #expect(children.fields.first { $0.name == "name" }.map { !$0.nullable && !$0.hasDefault } == true)
        let view = try #require(types.relations.first { $0.name == "child_names" })
        #expect(view.kind == .view && view.writable)
        let odd = try #require(types.relations.first { $0.name == "odd_names" })
        #expect(odd.fields.first { $0.name == "default" }?.type == .array(.enumeration("mood")))
        #expect(odd.fields.first { $0.name == "Weird Name" }?.type == .numeric)
        #expect(profiles.relationships.contains { $0.referencedRelation == "children" && $0.columns == ["current_child_id", "id"] })

        let functions = Dictionary(grouping: types.functions, by: \.name)
        #expect(functions["complete_onboarding"]?.first?.result == .row("user_profiles"))
        #expect(functions["delete_account"]?.first?.result == .void)
        #expect(functions["get_family"]?.first?.result == .value(.json))
        let profile = try #require(functions["get_user_with_profile"]?.first)
        #expect(profile.returnsSet && profile.arguments == [.init(name: "p_user_id", type: .uuid, nullable: false)])
        guard case .columns(let columns) = profile.result else {
            Issue.record("get_user_with_profile returns \(profile.result)")
            return
        }
        #expect(columns.first { $0.name == "email" }?.type == .string)
        #expect(functions["all_children"]?.first?.arguments.first?.type == .row("user_profiles"))
    }

    @Test func readsOnlyListsOfValuesAsEnums() {
        #expect(
            TypeSchema.allowedValues("CHECK ((onboarding_state = ANY (ARRAY['NOT_STARTED'::text, 'COMPLETE'::text])))", column: "onboarding_state")
                == ["NOT_STARTED", "COMPLETE"])
        #expect(
            TypeSchema.allowedValues(
                "CHECK (((picked)::text = ANY ((ARRAY['a'::character varying, 'it''s'::character varying])::text[])))", column: "picked")
                == ["a", "it's"])
        #expect(TypeSchema.allowedValues("CHECK ((kind = 'only'::text))", column: "kind") == ["only"])
        #expect(TypeSchema.allowedValues("CHECK ((temperament_talkative >= 1) AND (temperament_talkative <= 10))", column: "temperament_talkative") == nil)
        #expect(TypeSchema.allowedValues("CHECK ((role = ANY (ARRAY['a'::text])) OR (other IS NULL))", column: "role") == nil)
        #expect(TypeSchema.allowedValues("CHECK ((other = ANY (ARRAY['a'::text])))", column: "role") == nil)
    }

    @Test func onlyThePublicSchemaIsExposed() throws {
        let connection = try Connection(conninfo: try TestPostgres.makeDatabase())
        #expect(throws: TypeGenError.unexposedSchema("auth")) { try TypeSchema.load(connection, schema: "auth") }
    }

    // MARK: - the generated code through each language's compiler

    @Test func swiftTypesCompileAgainstSupabaseSwiftShapedCode() throws {
        let swiftc = try #require(Tool.find("swiftc"))
        let folder = try Tool.temporaryFolder("swift")
        let generated = SwiftTypes.render(try Self.schema())
        try generated.write(to: folder.appendingPathComponent("Database.swift"), atomically: true, encoding: .utf8)
        try SwiftUsage.client.write(to: folder.appendingPathComponent("Client.swift"), atomically: true, encoding: .utf8)
        try SwiftUsage.valid.write(to: folder.appendingPathComponent("Usage.swift"), atomically: true, encoding: .utf8)
        let files = ["Database.swift", "Client.swift"].map { folder.appendingPathComponent($0).path }
        let good = try Tool.run(swiftc, ["-typecheck", "-swift-version", "6"] + files + [folder.appendingPathComponent("Usage.swift").path])
        #expect(good.status == 0, "swiftc:\n\(good.output)")

        // The types are as strict as the schema: each of these must not compile.
        for (name, body, diagnostic) in SwiftUsage.invalid {
            let file = folder.appendingPathComponent("\(name).swift")
            try body.write(to: file, atomically: true, encoding: .utf8)
            let bad = try Tool.run(swiftc, ["-typecheck", "-swift-version", "6"] + files + [file.path])
            #expect(bad.status != 0 && bad.output.contains(diagnostic), "\(name) should fail with \(diagnostic):\n\(bad.output)")
        }
    }

    @Test(.enabled(if: Tool.find("tsc") != nil, "tsc is not installed (Debian: node-typescript; scripts/install-deps.sh installs it)"))
    func typeScriptTypesTypeCheckAgainstSupabaseJSShapedCode() throws {
        let tsc = try #require(Tool.find("tsc"))
        let folder = try Tool.temporaryFolder("ts")
        try TypeScriptTypes.render(try Self.schema()).write(to: folder.appendingPathComponent("database.ts"), atomically: true, encoding: .utf8)
        try TypeScriptUsage.source.write(to: folder.appendingPathComponent("usage.ts"), atomically: true, encoding: .utf8)
        let result = try Tool.run(
            tsc,
            ["--noEmit", "--strict", "--target", "es2020", "--moduleResolution", "node", folder.appendingPathComponent("usage.ts").path])
        #expect(result.status == 0, "tsc:\n\(result.output)")
    }

    @Test(.enabled(if: Tool.find("mypy") != nil, "mypy is not installed (Debian: mypy; scripts/install-deps.sh installs it)"))
    func pythonTypesTypeCheckWithMypy() throws {
        let mypy = try #require(Tool.find("mypy"))
        let folder = try Tool.temporaryFolder("py")
        try PythonTypes.render(try Self.schema()).write(to: folder.appendingPathComponent("database.py"), atomically: true, encoding: .utf8)
        try PythonUsage.source.write(to: folder.appendingPathComponent("usage.py"), atomically: true, encoding: .utf8)
        let result = try Tool.run(
            mypy, ["--strict", "--warn-unused-ignores", "--no-incremental", "--cache-dir", "/dev/null", "database.py", "usage.py"], in: folder)
        #expect(result.status == 0, "mypy:\n\(result.output)")
    }
}

/// Running the languages' tools.
enum Tool {
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func temporaryFolder(_ label: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("onboard-typegen-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Runs `tool` to its end; its standard output and error together.
    static func run(_ tool: String, _ arguments: [String], in folder: URL? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        if let folder { process.currentDirectoryURL = folder }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
