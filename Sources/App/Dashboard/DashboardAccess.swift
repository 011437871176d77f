import Auth
import Foundation
import HTTP
import Identity
import Postgres

/// Who may use the dashboard: off unless a way to sign in is configured.
public struct DashboardConfig: Sendable {
    /// `DASHBOARD_PASSWORD`: signing in with it.
    public var password: String?
    /// `DASHBOARD_SERVICE_KEY_SIGN_IN`: signing in with the service-role key (on with `--dev`).
    public var serviceKeySignIn = false
    /// `DASHBOARD_SESSION_HOURS`: how long a session cookie is valid.
    public var sessionSeconds = 8 * 3600
    /// `DASHBOARD_STEP_LABELS`: the names the charts give onboarding states
    /// (`CHILD_INFO=About the child`); unnamed states read as words ("Child info").
    public var stepLabels: [String: String] = [:]

    public init() {}

    public var isEnabled: Bool { password != nil || serviceKeySignIn }
}

/// The dashboard's sessions: a signed cookie (`v1.<expiry>.<nonce>.<mac>`), HMAC-SHA256 under a
/// key derived from the JWT secret and the configured sign-in secrets, so changing either ends
/// every session. Each session's CSRF token is an HMAC of its nonce; the one write (deleting a
/// user) and signing out require it in `X-CSRF-Token` or the form field `csrf_token`. Signing out
/// revokes the session in PostgreSQL (`auth.dashboard_revoked_sessions`), so a copy of the cookie
/// is refused by every server sharing the database. Failed sign-ins are counted there too, per
/// client (`RATE_LIMIT_HEADER`'s last hop behind a proxy, else the TCP peer).
final class DashboardAccess: Sendable {
    static let cookieName = "onboard_dashboard"
    let config: DashboardConfig
    let serviceRoleKey: String
    private let key: [UInt8]
    private let pool: Pool
    /// Failed sign-ins allowed per client within the window (seconds).
    static let failureLimit = RateLimit(hits: 10, window: 300)

    init(config: DashboardConfig, keys: KeyConfig, pool: Pool) {
        self.config = config
        self.pool = pool
        serviceRoleKey = keys.serviceRoleKey
        var material = Array("onboard-dashboard-session\u{0}".utf8)
        material += Crypto.sha256(Array((config.password ?? "").utf8))
        material += Crypto.sha256(Array((config.serviceKeySignIn ? keys.serviceRoleKey : "").utf8))
        key = Crypto.hmacSHA256(key: keys.jwtSecret, data: material)
    }

    struct Session: Sendable {
        let nonce: String
        let expires: Int
        let csrfToken: String
    }

    // MARK: sign-in

    /// `throttled`: the seconds until the client's window ends (`Retry-After`).
    enum SignInResult { case accepted, refused, throttled(retryAfter: Int) }

    /// Checks a submitted secret against the password and (when allowed) the service-role key,
    /// in constant time. Each check takes one of the client's attempts first (one atomic
    /// statement, so concurrent guesses get no more than the limit); a right secret clears them.
    func signIn(secret: String, client: String) throws -> SignInResult {
        let counter = "dashboard_sign_in:\(client)"
        let left = try pool.withConnection { connection -> Int? in
            try RateLimitCounters.hit(connection, keys: [counter], limit: Self.failureLimit)
                ? nil : try RateLimitCounters.secondsLeft(connection, keys: [counter], limit: Self.failureLimit)
        }
        if let left { return .throttled(retryAfter: left) }
        let given = Crypto.sha256(Array(secret.utf8))
        var accepted = false
        if let password = config.password, Crypto.constantTimeEquals(given, Crypto.sha256(Array(password.utf8))) { accepted = true }
        if config.serviceKeySignIn, Crypto.constantTimeEquals(given, Crypto.sha256(Array(serviceRoleKey.utf8))) { accepted = true }
        if secret.isEmpty { accepted = false }
        if accepted { try pool.withConnection { try RateLimitCounters.reset($0, key: counter) } }
        return accepted ? .accepted : .refused
    }

    /// A new session's cookie value.
    func newSession(now: Date = Date()) -> (cookie: String, session: Session) {
        let nonce = Crypto.hex(Crypto.randomBytes(16))
        let expires = Int(now.timeIntervalSince1970) + config.sessionSeconds
        let payload = "v1.\(expires).\(nonce)"
        return (payload + "." + mac(payload), Session(nonce: nonce, expires: expires, csrfToken: csrf(nonce)))
    }

    /// The request's valid, unexpired, not signed-out session, if any.
    func session(_ request: HTTPRequest, now: Date = Date()) throws -> Session? {
        guard let value = Self.cookie(request, Self.cookieName) else { return nil }
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "v1", let expires = Int(parts[1]), parts[2].count == 32 else { return nil }
        let payload = "v1.\(parts[1]).\(parts[2])"
        guard Crypto.constantTimeEquals(Array(mac(payload).utf8), Array(parts[3].utf8)) else { return nil }
        guard expires > Int(now.timeIntervalSince1970) else { return nil }
        let nonce = String(parts[2])
        let revoked = try pool.withConnection {
            try $0.query("SELECT EXISTS (SELECT 1 FROM auth.dashboard_revoked_sessions WHERE nonce = \(nonce))").first?.bool(0) == true
        }
        guard !revoked else { return nil }
        return Session(nonce: String(parts[2]), expires: expires, csrfToken: csrf(String(parts[2])))
    }

    /// Ends a session (sign-out) for every server; forgets sessions whose cookies have expired.
    func revoke(_ session: Session) throws {
        _ = try pool.withConnection {
            try $0.pipeline([
                "DELETE FROM auth.dashboard_revoked_sessions WHERE expires_at < now()",
                """
                INSERT INTO auth.dashboard_revoked_sessions (nonce, expires_at) VALUES (\(session.nonce), to_timestamp(\(session.expires)))
                ON CONFLICT (nonce) DO NOTHING
                """
            ])
        }
    }

    /// Whether the request carries the session's CSRF token (header, or form field for forms).
    func hasCSRFToken(_ request: HTTPRequest, session: Session) -> Bool {
        let given = request.headers["X-CSRF-Token"] ?? Self.formValue(request, "csrf_token") ?? ""
        return Crypto.constantTimeEquals(Array(given.utf8), Array(session.csrfToken.utf8))
    }

    func setCookie(_ value: String, secure: Bool) -> String {
        "\(Self.cookieName)=\(value); Path=/dashboard; Max-Age=\(config.sessionSeconds); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    static func clearCookie(secure: Bool) -> String {
        "\(cookieName)=; Path=/dashboard; Max-Age=0; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    private func mac(_ payload: String) -> String {
        Crypto.hex(Crypto.hmacSHA256(key: key, data: Array(("session\u{0}" + payload).utf8)))
    }

    private func csrf(_ nonce: String) -> String {
        Crypto.hex(Crypto.hmacSHA256(key: key, data: Array(("csrf\u{0}" + nonce).utf8)))
    }

    // MARK: request helpers

    /// A cookie's value from the `Cookie` header(s).
    static func cookie(_ request: HTTPRequest, _ name: String) -> String? {
        for header in request.headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = pair.trimmingCharacters(in: .whitespaces)
                guard let equals = trimmed.firstIndex(of: "=") else { continue }
                if trimmed[..<equals] == name { return String(trimmed[trimmed.index(after: equals)...]) }
            }
        }
        return nil
    }

    /// A field of an `application/x-www-form-urlencoded` body.
    static func formValue(_ request: HTTPRequest, _ name: String) -> String? {
        guard request.headers["Content-Type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else { return nil }
        return HTTPRequest(method: .get, target: "/?" + request.bodyText).queryValue(name)
    }

    /// Whether the request came over HTTPS (directly, or as a proxy in front says).
    static func isSecure(_ request: HTTPRequest) -> Bool {
        request.headers["X-Forwarded-Proto"]?.lowercased() == "https"
    }

    /// A browser's cross-site form post: refused before the password is looked at (SameSite=Strict
    /// protects the cookie; this protects the sign-in itself). Browsers say where a request comes
    /// from in `Sec-Fetch-Site`; older ones only in `Origin`.
    static func isCrossOrigin(_ request: HTTPRequest) -> Bool {
        if let site = request.headers["Sec-Fetch-Site"]?.lowercased() { return site != "same-origin" && site != "none" }
        guard let origin = request.headers["Origin"], origin != "null" else { return false }
        guard let host = request.headers["Host"] else { return true }
        let stripped = origin.replacingOccurrences(of: "https://", with: "").replacingOccurrences(of: "http://", with: "")
        return stripped.lowercased() != host.lowercased()
    }
}
