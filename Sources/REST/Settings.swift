import Dispatch
import Foundation
import HTTP
import Postgres
import Synchronization

/// The PostgREST settings Supabase projects change, under PostgREST's names: from the environment
/// (`PGRST_DB_MAX_ROWS`), and from the database as PostgREST reads them — the login role's
/// `pgrst.*` settings (`ALTER ROLE authenticator SET pgrst.db_max_rows = '1000'`, in the database
/// or for every one) and what `db-pre-config`'s function sets — the database's winning. Reloaded
/// on `NOTIFY pgrst, 'reload config'`. Unset, none of them changes a request's SQL.
public struct PostgRESTSettings: Sendable, Equatable {
    /// `db-max-rows`: no read or function answers more rows (a smaller `limit` still applies).
    public var maxRows: Int?
    /// `db-pre-request`: a function called before each request's statement, in its transaction.
    public var preRequest: QualifiedName?
    /// `db-pre-config`: a function whose `set_config('pgrst.…', …)` calls give settings.
    public var preConfig: QualifiedName?
    /// `db-extra-search-path`: schemas after the exposed one in each request's `search_path`.
    public var extraSearchPath: [String]?
    /// `jwt-aud`: tokens must name this audience (`aud`) when they have one.
    public var jwtAudience: String?
    /// `server-timing-enabled`: a `Server-Timing` header with the request's phases.
    public var serverTimingEnabled = false
    /// `db-plan-enabled`: `Accept: application/vnd.pgrst.plan…` answers the statement's plan.
    public var planEnabled = false
    /// `client-error-verbosity`: `minimal` leaves `details` and `hint` out of error bodies.
    public var minimalErrors = false
    /// `app.settings.*` (`PGRST_APP_SETTINGS_NAME`): set for each request, read with
    /// `current_setting('app.settings.name')`. Sorted by name.
    public var appSettings: [(name: String, value: String)] = []
    /// `db-tx-end`: how each request's transaction ends and whether `Prefer: tx` may change it.
    public var transactionEnd = TransactionEnd.commit
    /// `db-schemas`: the schemas a request may choose with `Accept-Profile` / `Content-Profile`;
    /// the first is the one a request without them reads. Never empty.
    public var schemas = ["public"]

    public init() {}

    /// The schema of a request that names none (`db-schemas`' first).
    public var defaultSchema: String { schemas[0] }

    public static func == (lhs: PostgRESTSettings, rhs: PostgRESTSettings) -> Bool {
        lhs.maxRows == rhs.maxRows && lhs.preRequest == rhs.preRequest && lhs.preConfig == rhs.preConfig
            && lhs.extraSearchPath == rhs.extraSearchPath && lhs.jwtAudience == rhs.jwtAudience
            && lhs.serverTimingEnabled == rhs.serverTimingEnabled && lhs.minimalErrors == rhs.minimalErrors && lhs.planEnabled == rhs.planEnabled
            && lhs.appSettings.map(\.name) == rhs.appSettings.map(\.name) && lhs.appSettings.map(\.value) == rhs.appSettings.map(\.value)
            && lhs.schemas == rhs.schemas && lhs.transactionEnd == rhs.transactionEnd
    }

    /// The settings read here, by PostgREST's name.
    public static let names = [
        "db-max-rows", "db-pre-request", "db-pre-config", "db-extra-search-path", "jwt-aud", "server-timing-enabled", "client-error-verbosity",
        "db-plan-enabled", "db-schemas", "db-tx-end"
    ]

    /// A schema-qualified function name (`private.check_request`, or `check_request` in `public`).
    public struct QualifiedName: Sendable, Equatable {
        public var schema: String
        public var name: String

        public init?(_ text: String) {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty }) else { return nil }
            schema = parts.count == 2 ? parts[0] : "public"
            name = parts[parts.count - 1]
        }

        /// `"schema"."name"()`.
        var call: SQL { "SELECT \(ident: schema).\(ident: name)()" }
    }

    /// Sets one setting by PostgREST's name (`db-max-rows`); an empty value unsets it.
    public mutating func apply(_ name: String, _ value: String) throws(SettingError) {
        let text = value.trimmingCharacters(in: .whitespaces)
        func function() throws(SettingError) -> QualifiedName? {
            guard !text.isEmpty else { return nil }
            guard let name = QualifiedName(text) else { throw SettingError(name, text, "a function name, optionally schema-qualified") }
            return name
        }
        switch name {
        case "db-max-rows":
            guard !text.isEmpty else {
                maxRows = nil
                return
            }
            guard let rows = Int(text), rows >= 0 else { throw SettingError(name, text, "a whole number ≥ 0") }
            maxRows = rows
        case "db-pre-request": preRequest = try function()
        case "db-pre-config": preConfig = try function()
        case "db-extra-search-path":
            let schemas = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            extraSearchPath = schemas.isEmpty ? nil : schemas
        case "db-schemas":
            // PostgREST's list: names separated by commas, spaces around them dropped; a name
            // may hold any other character (`SPECIAL "@/\#~_-`).
            let schemas = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            self.schemas = schemas.isEmpty ? ["public"] : schemas
        case "jwt-aud": jwtAudience = text.isEmpty ? nil : text
        case "db-tx-end":
            guard let end = text.isEmpty ? .commit : TransactionEnd(rawValue: text.lowercased()) else {
                throw SettingError(name, text, "commit, commit-allow-override, rollback or rollback-allow-override")
            }
            transactionEnd = end
        case "server-timing-enabled", "db-plan-enabled":
            let enabled: Bool
            switch text.lowercased() {
            case "true", "on", "1", "yes": enabled = true
            case "false", "off", "0", "no", "": enabled = false
            default: throw SettingError(name, text, "true or false")
            }
            if name == "db-plan-enabled" { planEnabled = enabled } else { serverTimingEnabled = enabled }
        case "client-error-verbosity":
            switch text.lowercased() {
            case "verbose", "": minimalErrors = false
            case "minimal": minimalErrors = true
            default: throw SettingError(name, text, "verbose or minimal")
            }
        default:
            throw SettingError(name, text, "a setting this server reads (\(Self.names.joined(separator: ", ")))")
        }
    }

    /// From the environment: `PGRST_DB_MAX_ROWS`, … and `PGRST_APP_SETTINGS_<NAME>`.
    public static func environment(_ values: [String: String]) throws(SettingError) -> PostgRESTSettings {
        var settings = PostgRESTSettings()
        for name in names {
            let variable = "PGRST_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
            if let value = values[variable] { try settings.apply(name, value) }
        }
        settings.appSettings = values.compactMap { key, value in
            key.hasPrefix("PGRST_APP_SETTINGS_") && key.count > "PGRST_APP_SETTINGS_".count
                ? ("app.settings." + key.dropFirst("PGRST_APP_SETTINGS_".count).lowercased(), value) : nil
        }.sorted { $0.name < $1.name }
        return settings
    }

    /// These settings overlaid with the database's: the `pgrst.*` settings of `role`, the role
    /// requests log in as (the database's own over the role's everywhere; the connection's own
    /// login role when nil), then what `db-pre-config` sets. A value the database holds that this
    /// server cannot use is an error (PostgREST refuses to load it too).
    public func overlaid(from connection: Connection, role: String? = nil) throws -> PostgRESTSettings {
        var settings = self
        let stored = try connection.query(
            """
            SELECT substr(setting, 7, strpos(setting, '=') - 7), substr(setting, strpos(setting, '=') + 1)
            FROM pg_catalog.pg_db_role_setting s, unnest(s.setconfig) AS setting
            WHERE s.setrole = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = coalesce(\(role), session_user))
              AND s.setdatabase IN (0, (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database()))
              AND setting LIKE 'pgrst.%=%'
            ORDER BY s.setdatabase
            """)
        for row in 0..<stored.count {
            guard let key = stored[row, 0], let value = stored[row, 1] else { continue }
            let name = key.replacingOccurrences(of: "_", with: "-")
            if Self.names.contains(name) { try settings.apply(name, value) }
        }
        guard let preConfig = settings.preConfig else { return settings }
        // The function sets `pgrst.*` for its transaction; read them back in the same one.
        let reads = Self.names.map { "current_setting('pgrst.\($0.replacingOccurrences(of: "-", with: "_"))', true)" }
        let results = try connection.withTransaction { connection in
            // The names are this type's constants.
            try connection.pipeline([preConfig.call, SQL(unsafeSQL: "SELECT " + reads.joined(separator: ", "))])
        }
        for (index, name) in Self.names.enumerated() where name != "db-pre-config" {
            if let value = results[1][0, index], !value.isEmpty { try settings.apply(name, value) }
        }
        return settings
    }
}

/// A setting whose value cannot be used.
public struct SettingError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ name: String, _ value: String, _ expected: String) {
        description = "PostgREST setting \(name) must be \(expected), not \"\(value)\""
    }
}

/// The settings in force, replaced whole when the configuration is reloaded.
public final class SettingsStore: Sendable {
    private let current: Mutex<(settings: PostgRESTSettings, generation: Int)>

    public init(_ settings: PostgRESTSettings) {
        current = Mutex((settings, 0))
    }

    public var settings: PostgRESTSettings { current.withLock { $0.settings } }

    /// The settings and how many times they were replaced (what plans made under them are valid for).
    var settingsAndGeneration: (settings: PostgRESTSettings, generation: Int) { current.withLock { $0 } }

    public func replace(_ settings: PostgRESTSettings) { current.withLock { $0 = (settings, $0.generation + 1) } }
}

/// PostgREST's `Server-Timing` header (`server-timing-enabled`): milliseconds of each phase of a
/// request, `plan;dur=0.2, transaction;dur=1.3, response;dur=0.1`. Costs nothing when disabled.
struct ServerTiming {
    let enabled: Bool
    private var last: UInt64
    private var phases: [(String, UInt64)] = []

    init(enabled: Bool) {
        self.enabled = enabled
        last = enabled ? DispatchTime.now().uptimeNanoseconds : 0
    }

    /// Ends the phase `name` now.
    mutating func mark(_ name: String) {
        guard enabled else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        phases.append((name, now - last))
        last = now
    }

    func write(into response: inout HTTPResponse) {
        guard enabled else { return }
        let value = phases.map { "\($0.0);dur=\(String(format: "%.1f", Double($0.1) / 1e6))" }.joined(separator: ", ")
        response.headers.replace("Server-Timing", value)
    }
}
