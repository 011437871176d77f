import Auth
import Foundation

/// Auth's hooks from the environment, with GoTrue's names (without its `GOTRUE_` prefix); the
/// configuration table of docs/configuration.md lists them.
extension AuthHooks {
    mutating func apply(environment: [String: String]) throws {
        let env = EnvironmentReader(environment)
        if let milliseconds = try env.integer("HOOK_TIMEOUT_MS", minimum: 1) { timeoutMilliseconds = milliseconds }
        customAccessToken = try Self.hook("CUSTOM_ACCESS_TOKEN", env)
        passwordVerificationAttempt = try Self.hook("PASSWORD_VERIFICATION_ATTEMPT", env)
        mfaVerificationAttempt = try Self.hook("MFA_VERIFICATION_ATTEMPT", env)
        beforeUserCreated = try Self.hook("BEFORE_USER_CREATED", env)
        sendSMS = try Self.hook("SEND_SMS", env)
        sendEmail = try Self.hook("SEND_EMAIL", env)
    }

    /// `HOOK_<name>_ENABLED`, `HOOK_<name>_URI` and `HOOK_<name>_SECRETS` (an HTTP hook's): nil
    /// when off; a URI or secret GoTrue would refuse stops the start.
    static func hook(_ name: String, _ env: EnvironmentReader) throws -> AuthHook? {
        guard try env.boolean("HOOK_\(name)_ENABLED") == true else { return nil }
        guard let uri = env.value("HOOK_\(name)_URI"), !uri.isEmpty else {
            throw ConfigurationError("HOOK_\(name)_ENABLED is true but HOOK_\(name)_URI is unset: give pg-functions://postgres/<schema>/<function>")
        }
        do {
            return try AuthHook(uri: uri, secrets: env.value("HOOK_\(name)_SECRETS"))
        } catch {
            throw ConfigurationError("HOOK_\(name)_\(error.setting): \(error.reason)")
        }
    }

    /// The settings as `--print-config` shows them.
    func summaryRows() -> [(String, String)] {
        [
            ("HOOK_CUSTOM_ACCESS_TOKEN_URI", customAccessToken?.uri ?? "(off)"),
            ("HOOK_PASSWORD_VERIFICATION_ATTEMPT_URI", passwordVerificationAttempt?.uri ?? "(off)"),
            ("HOOK_MFA_VERIFICATION_ATTEMPT_URI", mfaVerificationAttempt?.uri ?? "(off)"),
            ("HOOK_BEFORE_USER_CREATED_URI", beforeUserCreated?.uri ?? "(off)"), ("HOOK_SEND_SMS_URI", sendSMS?.uri ?? "(off)"),
            ("HOOK_SEND_EMAIL_URI", sendEmail?.uri ?? "(off)"),
            ("HOOK_TIMEOUT_MS", "\(timeoutMilliseconds)")
        ]
    }
}
