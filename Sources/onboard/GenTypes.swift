import App
import ArgumentParser
import Foundation
import Migrations
import TypeGen

struct Gen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate code from the database.",
        subcommands: [GenTypes.self]
    )
}

/// `onboard gen types`: the exposed schema's tables, views, enums and functions as types of the
/// client's language, read from the database as it stands (the schema cache the REST API serves).
struct GenTypes: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "types",
        abstract: "Print the schema's types for a client: Swift (supabase-swift), TypeScript (supabase-js) or Python (supabase-py).",
        discussion: "Reads the database as it is: run `onboard migrate up` (or `make run`) first. Example: onboard gen types --lang swift > Database.swift"
    )

    enum Language: String, ExpressibleByArgument, CaseIterable {
        case swift, typescript, python
    }

    @Option(help: "The client's language.") var lang: Language
    @Option(help: "The schema to generate (the REST API exposes public).") var schema = "public"
    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.") var output: String?
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard schema == "public" else { throw ValidationError(TypeGenError.unexposedSchema(schema).description) }
    }

    func run() throws {
        do {
            let (types, pending) = try Migrate.withDatabase(database) { connection in
                let pending = (try? Migrator(directory: database.migrations).status(connection))?.filter { $0.kind == .pending }.count ?? 0
                return (try TypeSchema.load(connection, schema: schema), pending)
            }
            if pending > 0 {
                FileHandle.standardError.write(Data("warning: \(pending) migration(s) not applied yet; the types follow the database as it is\n".utf8))
            }
            let text: String
            switch lang {
            case .swift: text = SwiftTypes.render(types)
            case .typescript: text = TypeScriptTypes.render(types)
            case .python: text = PythonTypes.render(types)
            }
            if let output {
                try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        } catch {
            throw fail(error)
        }
    }
}
