import Postgres

/// Settings of the REST layer, resolved once by the app.
public struct RESTConfig: Sendable {
    /// Owner column of each table whose rows belong to one user (enforced in Swift before SQL,
    /// and by RLS underneath), given by the application.
    public var ownership: OwnershipPolicy
    /// The ownership middleware; switched off only by tests that show RLS alone holds.
    public var enforceOwnership = true
    /// Roles a request may run as; another `role` claim is refused (403 42501) before any SQL.
    public var allowedRoles: Set<String> = ["anon", "authenticated", "service_role"]
    /// Who may read the OpenAPI document at the root.
    public var openAPIAccess = OpenAPIAccess.serviceRole
    /// PostgREST's `db-aggregates-enabled`: `count()`, `sum()`, … in `select` (off: PGRST123).
    public var aggregatesEnabled = false
    /// Called once for each request that failed because of the database or the connection
    /// (an answer ≥ 500). The app logs and counts it here: the cause is reported once, where it
    /// is mapped.
    public var onServerError: (@Sendable (ServerErrorReport) -> Void)?
    public init(ownership: OwnershipPolicy) {
        self.ownership = ownership
    }

    var policy: OwnershipPolicy { ownership }
}

/// A request answered ≥ 500 because of the database: what may be logged about it. The statement
/// is named by the request's method and resource (`POST /rpc/fn`), never by its SQL or values.
public struct ServerErrorReport: Sendable {
    public let requestID: String
    public let statement: String
    /// PostgreSQL's SQLSTATE; nil when the connection failed or the client refused the query.
    public let sqlState: String?
    /// `server`, `connection` or `client`.
    public let kind: String
    /// The full error, message and details included: not for logs others read.
    public let error: PostgresError
}

/// PostgREST's `db-tx-end`. The default commits and ignores `Prefer: tx`: with an override any
/// caller could try a write and roll it back (a free oracle for throttled functions).
public enum TransactionEnd: String, Sendable, CaseIterable {
    case commit
    case commitAllowOverride = "commit-allow-override"
    case rollback
    case rollbackAllowOverride = "rollback-allow-override"

    public var allowsOverride: Bool { self == .commitAllowOverride || self == .rollbackAllowOverride }
    var rollsBack: Bool { self == .rollback || self == .rollbackAllowOverride }
}

/// The OpenAPI document at `GET /rest/v1/`. Supabase's gateways answer it to the service role
/// only (it lists every table, column and function); `all` restores PostgREST's answer to any
/// caller.
public enum OpenAPIAccess: String, Sendable, CaseIterable {
    case serviceRole = "service_role"
    case all
}
