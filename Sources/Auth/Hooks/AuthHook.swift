import Foundation
import HTTP
import Postgres

/// A GoTrue hook (`HOOK_<NAME>_ENABLED`, `HOOK_<NAME>_URI`, `HOOK_<NAME>_SECRETS`): a PostgreSQL
/// function, `pg-functions://<database>/<schema>/<function>`, called with the event as `jsonb`
/// inside the transaction of what it decides, under a statement timeout; or an HTTPS endpoint
/// (plain HTTP on loopback only) the event is POSTed to, signed as Standard Webhooks
/// (`HTTPHookClient`). The answer is the output, or `{"error": {"http_code": …, "message": …}}`
/// to refuse.
public struct AuthHook: Sendable, Equatable {
    public let uri: String
    public let target: Target

    public enum Target: Sendable, Equatable {
        case function(schema: String, name: String)
        /// `keys`: the Standard Webhooks keys the request is signed with (one signature each).
        case http(URL, keys: [[UInt8]])
    }

    /// Why a hook's URI or secrets are refused at start, and which (`URI`, `SECRETS`).
    public struct InvalidURI: Error, Equatable {
        public let reason: String
        public var setting = "URI"
    }

    /// GoTrue's checks of a hook's URI: the scheme, then the path's schema and function names
    /// (`^[a-zA-Z_][a-zA-Z0-9_]{0,62}$`), or for HTTP the host (loopback for plain HTTP) and the
    /// secrets (`v1,whsec_<base64>`, separated by `|`).
    public init(uri: String, secrets: String? = nil) throws(InvalidURI) {
        guard let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased() else {
            throw InvalidURI(reason: "\(uri) is not a URI")
        }
        self.uri = uri
        switch scheme {
        case "pg-functions":
            let parts = components.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 3 else { throw InvalidURI(reason: "URI path does not contain enough parts") }
            guard Self.isName(parts[1]) else { throw InvalidURI(reason: "invalid schema name: \(parts[1])") }
            guard Self.isName(parts[2]) else { throw InvalidURI(reason: "invalid table name: \(parts[2])") }
            target = .function(schema: parts[1], name: parts[2])
        case "http", "https":
            guard let host = components.host, !host.isEmpty, let url = components.url else { throw InvalidURI(reason: "\(uri) names no host") }
            if scheme == "http" && !["localhost", "127.0.0.1", "::1", "[::1]", "host.docker.internal"].contains(host) {
                throw InvalidURI(reason: "only localhost, 127.0.0.1, and ::1 are supported with http")
            }
            target = .http(url, keys: try Self.webhookKeys(secrets ?? ""))
        default:
            throw InvalidURI(reason: "only postgres hooks and HTTPS functions are supported at the moment")
        }
    }

    /// `v1,whsec_<base64>` secrets (GoTrue's format, `|`-separated) as their keys.
    static func webhookKeys(_ text: String) throws(InvalidURI) -> [[UInt8]] {
        var keys: [[UInt8]] = []
        for secret in text.split(separator: "|").map(String.init) where !secret.isEmpty {
            if secret.hasPrefix("v1a,") {
                throw InvalidURI(reason: "asymmetric (v1a) hook secrets are not supported; give v1,whsec_<base64>", setting: "SECRETS")
            }
            let encoded = String(secret.dropFirst("v1,whsec_".count))
            guard secret.hasPrefix("v1,whsec_"), (32...88).contains(encoded.count), let key = Data(base64Encoded: encoded) else {
                throw InvalidURI(reason: "invalid secret format", setting: "SECRETS")
            }
            keys.append(Array(key))
        }
        return keys
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
    static func callFunction(_ connection: Connection, schema: String, name: String, event: JSON, timeoutMilliseconds: Int) throws -> JSON {
        let results = try connection.pipeline(
            [
                "SELECT set_config('statement_timeout', \(String(timeoutMilliseconds)), true)",
                "SELECT \(ident: schema).\(ident: name)(\(event.text)::jsonb)::text",
                "SET LOCAL statement_timeout TO DEFAULT"
            ], prepared: false)
        guard let answer = results[1].scalar else { return .null }
        return try output(Array(answer.utf8))
    }

    /// A hook's answer read as GoTrue reads it: JSON, or its `error` object with a message
    /// refusing (without an `http_code`, as 500).
    static func output(_ answer: [UInt8]) throws -> JSON {
        guard let output = JSON.parse(answer) else { throw AuthError.hook(status: .internalServerError, message: "Error unmarshaling JSON output.") }
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
    /// `HOOK_SEND_SMS_*`: sends each SMS code instead of the SMS provider (the user and
    /// `sms: {otp, phone, sms_type}`); its error refuses the request.
    public var sendSMS: AuthHook?
    /// `HOOK_SEND_EMAIL_*`: sends each Auth mail instead of the mail server (the user and
    /// `email_data`: the tokens, the action, `redirect_to`, `site_url`), through the outbox:
    /// called by the mail senders after the request's commit, tried again after a failure.
    public var sendEmail: AuthHook?
    /// How long a hook function may run before it is cancelled (GoTrue's 2 s).
    public var timeoutMilliseconds = 2000
    /// An HTTP hook's time for all its attempts, and its attempts (GoTrue's 5 s and 3; 2 s apart
    /// after a connection failure).
    public var httpTimeout: Double = 5
    public var httpAttempts = 3
    public var httpBackoff: Double = 2

    public init() {}
}
