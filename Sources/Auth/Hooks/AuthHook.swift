import Foundation
import HTTP
import Postgres

/// A GoTrue hook as a PostgreSQL function, `pg-functions://<database>/<schema>/<function>`
/// (`HOOK_<NAME>_ENABLED`, `HOOK_<NAME>_URI`): called with the event as `jsonb` inside the
/// transaction of what it decides, under a statement timeout; its `jsonb` answer is the output,
/// or `{"error": {"http_code": …, "message": …}}` to refuse.
public struct AuthHook: Sendable, Equatable {
    public let uri: String
    public let schema: String
    public let function: String

    /// Why a hook's URI is refused at start.
    public struct InvalidURI: Error, Equatable {
        public let reason: String
    }

    /// GoTrue's checks of a hook's URI: the scheme, then the path's schema and function names
    /// (`^[a-zA-Z_][a-zA-Z0-9_]{0,62}$`).
    public init(uri: String) throws(InvalidURI) {
        guard let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased() else {
            throw InvalidURI(reason: "\(uri) is not a URI")
        }
        switch scheme {
        case "pg-functions":
            break
        case "http", "https":
            throw InvalidURI(reason: "HTTP hooks are not offered by this server yet; give a PostgreSQL function as pg-functions://postgres/<schema>/<function>")
        default:
            throw InvalidURI(reason: "only postgres hooks and HTTPS functions are supported at the moment")
        }
        let parts = components.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3 else { throw InvalidURI(reason: "URI path does not contain enough parts") }
        guard Self.isName(parts[1]) else { throw InvalidURI(reason: "invalid schema name: \(parts[1])") }
        guard Self.isName(parts[2]) else { throw InvalidURI(reason: "invalid table name: \(parts[2])") }
        self.uri = uri
        schema = parts[1]
        function = parts[2]
    }

    static func isName(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func letter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7a || byte == 0x5f }
        guard let first = bytes.first, letter(first), bytes.count <= 63 else { return false }
        return bytes.dropFirst().allSatisfy { letter($0) || ($0 >= 0x30 && $0 <= 0x39) }
    }

    /// Calls the function with `event` on `connection`, which must be in the transaction of what
    /// the answer decides (so that a refusal leaves nothing of it); the answer as parsed JSON
    /// (`.null` for SQL NULL). A hook's own refusal (`error.message`) throws its status and
    /// message as an `AuthError`; a failing or slow function throws its `PostgresError`.
    func call(_ connection: Connection, event: JSON, timeoutMilliseconds: Int) throws -> JSON {
        let results = try connection.pipeline(
            [
                "SELECT set_config('statement_timeout', \(String(timeoutMilliseconds)), true)",
                "SELECT \(ident: schema).\(ident: function)(\(event.text)::jsonb)::text",
                "SET LOCAL statement_timeout TO DEFAULT"
            ], prepared: false)
        let answer = results[1].scalar
        guard let answer else { return .null }
        guard let output = JSON.parse(Array(answer.utf8)) else {
            throw AuthError.hook(status: .internalServerError, message: "Error unmarshaling JSON output.")
        }
        // GoTrue's reading: an `error` object with a message refuses; without an `http_code`, as 500.
        if case .object(let failure)? = output["error"], case .string(let message)? = failure["message"], !message.isEmpty {
            var status = HTTPStatus.internalServerError
            if case .number(let code)? = failure["http_code"], code == code.rounded(), (100...599).contains(code) { status = HTTPStatus(code: Int(code)) }
            throw AuthError.hook(status: status, message: message)
        }
        return output
    }
}

/// The hooks this server calls, each nil when off.
public struct AuthHooks: Sendable, Equatable {
    /// `HOOK_CUSTOM_ACCESS_TOKEN_*`: the claims of every access token issued (sign-in, refresh,
    /// MFA verification).
    public var customAccessToken: AuthHook?
    /// `HOOK_PASSWORD_VERIFICATION_ATTEMPT_*`: told of each password checked for a known user;
    /// may reject the sign-in (and end the user's sessions).
    public var passwordVerificationAttempt: AuthHook?
    /// `HOOK_MFA_VERIFICATION_ATTEMPT_*`: told of each TOTP code checked; may reject it, which
    /// ends the user's sessions.
    public var mfaVerificationAttempt: AuthHook?
    /// `HOOK_BEFORE_USER_CREATED_*`: shown each user a sign-up, a first sign-in with a provider,
    /// an invitation or a generated link creates, in its transaction; may refuse it.
    public var beforeUserCreated: AuthHook?
    /// How long a hook function may run before it is cancelled (GoTrue's 2 s).
    public var timeoutMilliseconds = 2000

    public init() {}
}
