import App
import ArgumentParser
import Foundation

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the HTTP server (Auth, REST, health).")
    @OptionGroup var database: DatabaseOptions
    @Option(help: "Address to bind (env ONBOARD_HOST).") var host: String?
    @Option(help: "Port to listen on (env ONBOARD_PORT).") var port: Int?

    func run() throws {
        throw ValidationError("serve is not wired yet")
    }
}
