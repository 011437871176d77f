import Foundation
import Identity
import Postgres

/// The requests the integration suites send, as supabase-py sends them, each on a new connection
/// (`client()` keeps one for a test that needs it); fixtures of a test's own, installed and seen
/// by the schema cache; addresses and claims.
extension TestServer {
    /// supabase-py's headers with `token` as bearer (the anon key by default) and `extra` laid
    /// over them: a header of the same name replaces supabase-py's, any other is added.
    public func headers(_ token: String?, replacing extra: [(String, String)]) -> [(String, String)] {
        let names = Set(extra.map { $0.0.lowercased() })
        return headers(token).filter { !names.contains($0.0.lowercased()) } + extra
    }

    /// One request with supabase-py's headers (see `headers(_:replacing:)`).
    public func request(
        _ method: String, _ target: String, token: String? = nil, headers extra: [(String, String)] = [], body: String? = nil
    ) throws -> TestResponse {
        try client().request(method, target, headers: headers(token, replacing: extra), body: body)
    }

    public func get(_ target: String, token: String? = nil, headers extra: [(String, String)] = []) throws -> TestResponse {
        try request("GET", target, token: token, headers: extra)
    }

    public func post(_ target: String, _ body: String, token: String? = nil, headers extra: [(String, String)] = []) throws -> TestResponse {
        try request("POST", target, token: token, headers: extra, body: body)
    }

    /// Requests as the service role (its key as bearer).
    public var service: Caller { Caller(server: self, token: serviceKey) }

    /// Requests with `token` as bearer (nil: the anon key).
    public func caller(_ token: String?) -> Caller { Caller(server: self, token: token) }

    /// `request`, `get` and `post` with one bearer token.
    public struct Caller: Sendable {
        public let server: TestServer
        public let token: String?

        public func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: String? = nil) throws -> TestResponse {
            try server.request(method, target, token: token, headers: headers, body: body)
        }

        public func get(_ target: String, headers: [(String, String)] = []) throws -> TestResponse {
            try server.get(target, token: token, headers: headers)
        }

        public func post(_ target: String, _ body: String, headers: [(String, String)] = []) throws -> TestResponse {
            try server.post(target, body, token: token, headers: headers)
        }
    }

    /// Runs `sql` (tables, functions, rows of a test's own, not in migrations/) on the server's
    /// database, then has the server reload its schema cache until `ready` holds. The server may
    /// not listen for reloads yet when the first NOTIFY goes out (it starts listening just after
    /// it serves), so the NOTIFY is sent again until then. Returns the connection, for reading
    /// past the API.
    @discardableResult
    public func installFixtures(_ sql: String, until ready: () throws -> Bool) throws -> Connection {
        let admin = try Connection(conninfo: databaseURL)
        try admin.execute(unsafeSQL: sql)
        let seen = eventually {
            try? admin.execute("NOTIFY pgrst, 'reload schema'")
            return (try? ready()) == true
        }
        guard seen else { throw TestHTTPError.protocolError("the schema cache never showed the fixtures") }
        return admin
    }

    /// `installFixtures(_:until:)` until `probe` answers 200 to the service role.
    @discardableResult
    public func installFixtures(_ sql: String, probe: String) throws -> Connection {
        try installFixtures(sql) { try service.get(probe).status == 200 }
    }

    /// A new address, `prefix-` and 12 random characters at example.com.
    public static func email(_ prefix: String = "user") -> String {
        "\(prefix)-\(UUID().uuidString.prefix(12).lowercased())@example.com"
    }

    /// The claims of a token this server signed (HS256 with `secret`), checked.
    public static func claims(_ token: String) throws -> [String: Any] {
        try JWT.verifyHS256(token, secret: Array(secret.utf8)).claims
    }
}

extension TestResponse {
    /// The body's JSON written again compactly with sorted keys (the text as it is when it is not
    /// JSON), for comparing whole bodies with PostgREST's.
    public var compactJSON: String {
        guard let value = json, let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) else {
            return text
        }
        return String(decoding: data, as: UTF8.self)
    }
}
