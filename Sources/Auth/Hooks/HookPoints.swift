import Foundation
import HTTP
import Postgres
import Synchronization

/// Where GoTrue's hooks are called, and how their answers are read. Each hook runs in the
/// transaction of what it decides (one of its own when there is none), so that a refusal leaves
/// nothing of it.
extension AuthService {
    /// Calls `hook` with the event `fields` and GoTrue's `metadata` (`name`: the hook's event
    /// name). A function that fails or runs past the timeout is GoTrue's 500 naming the URI (the
    /// cause goes to the log); an HTTP hook's failures are `HTTPHookClient`'s.
    func invoke(_ hook: AuthHook, name: String, _ connection: Connection, _ fields: [String: JSON]) throws -> JSON {
        var event = fields
        event["metadata"] = .object(["uuid": .string(UUID().uuidString.lowercased()), "name": .string(name), "time": .string(Self.timestamp())])
        do {
            let output = try call(hook, connection, event)
            hookCalls.record(name, ok: true)
            return output
        } catch {
            hookCalls.record(name, ok: false)
            throw error
        }
    }

    private func call(_ hook: AuthHook, _ connection: Connection, _ event: [String: JSON]) throws -> JSON {
        switch hook.target {
        case .http(let url, let keys):
            let hooks = config.hooks
            let client = HTTPHookClient(url: url, keys: keys, timeout: hooks.httpTimeout, attempts: hooks.httpAttempts, backoff: hooks.httpBackoff)
            return try client.post(.object(event))
        case .function(let schema, let function):
            let timeout = config.hooks.timeoutMilliseconds
            do {
                guard connection.isIdle else {
                    return try AuthHook.callFunction(connection, schema: schema, name: function, event: .object(event), timeoutMilliseconds: timeout)
                }
                return try connection.withTransaction {
                    try AuthHook.callFunction($0, schema: schema, name: function, event: .object(event), timeoutMilliseconds: timeout)
                }
            } catch let error as PostgresError {
                logger.error("hook failed", metadata: ["hook": "\(hook.uri)", "sqlstate": "\(error.sqlState ?? "-")", "error": "\(error.message)"])
                throw AuthError.hook(status: .internalServerError, message: "Error running hook URI: \(hook.uri)")
            }
        }
    }

    /// A verification attempt hook's answer: `decision` `reject` (with its message, or
    /// `defaultMessage`) or anything else to go on; whether to end the user's sessions.
    struct AttemptDecision {
        var rejected: String?
        var logOut: Bool
    }

    func attemptDecision(_ output: JSON, defaultMessage: String) throws -> AttemptDecision {
        guard case .object(let members) = output else {
            guard output == .null else { throw AuthError.hook(status: .internalServerError, message: "Error unmarshaling JSON output.") }
            return AttemptDecision(rejected: nil, logOut: false)
        }
        guard members["decision"]?.string == "reject" else { return AttemptDecision(rejected: nil, logOut: false) }
        let message = members["message"]?.string ?? ""
        return AttemptDecision(rejected: message.isEmpty ? defaultMessage : message, logOut: members["should_logout_user"] == .bool(true))
    }

    /// GoTrue's password verification attempt hook, after the password of a known user was
    /// checked: a rejection is `invalid_credentials` with the hook's message, and may end every
    /// session of the user first.
    func passwordAttempt(_ connection: Connection, userID: String, valid: Bool) throws {
        guard let hook = config.hooks.passwordVerificationAttempt else { return }
        let output = try invoke(hook, name: "password-verification", connection, ["user_id": .string(userID), "valid": .bool(valid)])
        let decision = try attemptDecision(output, defaultMessage: "Further password verification attempts will be rejected.")
        guard let message = decision.rejected else { return }
        if decision.logOut { try Sessions.deleteAll(connection, userID: userID) }
        throw AuthError.passwordAttemptRejected(message)
    }

    /// GoTrue's MFA verification attempt hook, after a TOTP code was checked; nil to go on, else
    /// the refusal. A rejection ends every session of the user (on `connection`, whose
    /// transaction the caller commits).
    func mfaAttempt(_ connection: Connection, userID: String, factorID: String, valid: Bool) throws -> AuthError? {
        guard let hook = config.hooks.mfaVerificationAttempt else { return nil }
        let output = try invoke(
            hook, name: "mfa-verification", connection,
            ["user_id": .string(userID), "factor_id": .string(factorID), "factor_type": .string("totp"), "valid": .bool(valid)])
        guard let message = try attemptDecision(output, defaultMessage: "Further MFA verification attempts will be rejected.").rejected else {
            return nil
        }
        try Sessions.deleteAll(connection, userID: userID)
        return .mfaVerificationRejected(message)
    }

    /// GoTrue's before-user-created hook, in the transaction that just created `userID`: the user
    /// as it would be answered; a refusal (the hook's `error`) rolls the creation back.
    func userCreated(_ connection: Connection, userID: String) throws {
        guard let hook = config.hooks.beforeUserCreated else { return }
        guard let json = try Users.json(connection, id: userID), let user = JSON.parse(Array(json.utf8)) else {
            throw AuthError.unexpected("created user")
        }
        _ = try invoke(hook, name: "before-user-created", connection, ["user": user])
    }
}

/// How often each hook was called since the start, by result (`ok`: it answered, a rejection
/// included; `error`: it refused with an error, failed or timed out), for `/metrics`.
public final class AuthHookCalls: Sendable {
    public struct Key: Hashable, Sendable {
        public let hook: String
        public let result: String
    }

    private let state = Mutex<[Key: UInt64]>([:])

    func record(_ hook: String, ok: Bool) {
        state.withLock { $0[Key(hook: hook, result: ok ? "ok" : "error"), default: 0] += 1 }
    }

    public var counts: [Key: UInt64] { state.withLock { $0 } }
}
