import Foundation
import Postgres
import TestSupport
import Testing

/// What the PostgREST spec suites share: their fixtures installed and seen by the schema cache,
/// and the spec's way of checking a GET. The spec's requests are anonymous.
extension TestServer {
    /// Runs `fixtures`, then reloads the schema cache until `probe` (a path under `/rest/v1`)
    /// answers 200 to an anonymous request in `profile`. Returns the connection.
    @discardableResult
    func installSpecFixtures(_ fixtures: String, profile: String, probe: String) throws -> Connection {
        try installFixtures(fixtures) {
            try client().request("GET", "/rest/v1" + probe, headers: headers(nil, [("Accept-Profile", profile)])).status == 200
        }
    }

    /// The spec's request (an anonymous GET in `profile`) answers `status` and the spec's JSON.
    func expectSpec(
        _ path: String, _ expected: String, status: Int = 200, profile: String = "spec", sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        let response = try client().request("GET", "/rest/v1" + path, headers: headers(nil, [("Accept-Profile", profile)]))
        let wanted = try JSONSerialization.jsonObject(with: Data(expected.utf8), options: [.fragmentsAllowed]) as? NSObject
        #expect(response.status == status, "\(path): \(response.text)", sourceLocation: sourceLocation)
        #expect((response.json as? NSObject) == wanted, "\(path): \(response.text)", sourceLocation: sourceLocation)
    }
}
