import Foundation
import Logging
import Postgres

/// The login REST's requests use, as PostgREST's: a role that can do nothing by itself and only
/// switches to `anon`, `authenticated` or `service_role` per request (`authenticator`, NOINHERIT,
/// made by the first migration). A mistake in built SQL then meets that role's rights, never a
/// superuser's (`RESET ROLE` returns to `authenticator`; `COPY … TO PROGRAM` is refused). The
/// database's own login (migrations, replication, LISTEN, Auth, Realtime, the mail outbox) stays
/// apart.
public struct RequestLogin: Sendable, Equatable {
    /// The URL the request path connects with.
    public var url: String
    /// The role it logs in as (whose `pgrst.*` settings apply).
    public var role: String

    /// The request login of a database: `url` with the user `role` and, when given, its password
    /// (the database's own password is dropped: libpq takes the role's from `PGPASSWORD` or the
    /// password file).
    public static func url(_ url: String, role: String, password: String?) -> String {
        for scheme in ["postgresql://", "postgres://"] where url.hasPrefix(scheme) {
            let rest = url.dropFirst(scheme.count)
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            let hosts = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
            var user = percentEncoded(role)
            if let password { user += ":" + percentEncoded(password) }
            // `user=` and `password=` in the query would override the userinfo: they go.
            var tail = String(rest[authorityEnd...])
            if let question = tail.firstIndex(of: "?") {
                let kept = tail[tail.index(after: question)...].split(separator: "&").filter {
                    !$0.hasPrefix("user=") && !$0.hasPrefix("password=")
                }
                tail = String(tail[..<question]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
            }
            return scheme + user + "@" + hosts + tail
        }
        // A key=value conninfo: a later keyword wins over an earlier one (a password in it stays
        // unless one is given).
        var conninfo = url + " user=" + quotedValue(role)
        if let password { conninfo += " password=" + quotedValue(password) }
        return conninfo
    }

    /// Prepares the request login of `databaseURL` over the database's own connection `admin`:
    /// sets the role's password when one is configured, then logs in once to check it. A login
    /// that fails stops the start with what to do; a superuser login is logged as a warning.
    public static func prepare(admin: Connection, databaseURL: String, config: ServerConfig, logger: Logger) throws -> RequestLogin {
        if let password = config.requestPassword { try setPassword(admin, role: config.requestRole, password: password) }
        let login = RequestLogin(url: url(databaseURL, role: config.requestRole, password: config.requestPassword), role: config.requestRole)
        let probe: Connection
        do {
            probe = try Connection(conninfo: login.url)
        } catch {
            throw RequestLoginError(role: config.requestRole, cause: "\(error)")
        }
        if try probe.query("SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user").scalar == "t" {
            logger.warning("the request login is a superuser: a mistake in built SQL would have every right", metadata: ["role": "\(config.requestRole)"])
        }
        return login
    }

    /// Gives the role its password (ALTER ROLE takes no bound parameters: a quoted literal).
    public static func setPassword(_ admin: Connection, role: String, password: String) throws {
        try admin.execute(unsafeSQL: "ALTER ROLE \(quoteIdentifier(role)) PASSWORD \(quoteLiteral(password))")
    }

    private static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }

    private static func quotedValue(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}

extension ReadReplicaConfig {
    /// The same standbys, logged in as the request role: their reads are requests too.
    func loggingIn(as role: String, password: String?) -> ReadReplicaConfig {
        var copy = self
        copy.urls = urls.map { RequestLogin.url($0, role: role, password: password) }
        return copy
    }
}

/// The request login failed: the server does not start.
public struct RequestLoginError: Error, CustomStringConvertible {
    public let role: String
    public let cause: String

    public var description: String {
        """
        requests log in as the role "\(role)" (DB_REQUEST_ROLE), and that login failed: \(cause)
        Give the role a password the server can use (DB_REQUEST_PASSWORD sets it at start, or PGPASSWORD / the password file), \
        allow it in pg_hba.conf, and let a connection pooler pass it through (not force another user); DB_REQUEST_ROLE set to \
        the database's own user logs requests in as that user instead, with all of its rights.
        """
    }
}
