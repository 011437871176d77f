import Auth
import Foundation

/// The OAuth 2.1 server's settings from the environment, with GoTrue's names (without its
/// `GOTRUE_` prefix); the README's configuration table lists them.
extension OAuthServerConfig {
    mutating func apply(environment: [String: String]) throws {
        let env = EnvironmentReader(environment)
        if let on = try env.boolean("OAUTH_SERVER_ENABLED") { enabled = on }
        if let on = try env.boolean("OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION") { allowDynamicRegistration = on }
        if let path = env.value("OAUTH_SERVER_AUTHORIZATION_PATH") { authorizationPath = path }
        if let seconds = try env.seconds("OAUTH_SERVER_AUTHORIZATION_TTL") {
            guard seconds > 0 else { throw ConfigurationError("OAUTH_SERVER_AUTHORIZATION_TTL must be positive, not \(seconds)") }
            authorizationTTL = seconds
        }
        if let scope = env.value("OAUTH_SERVER_DEFAULT_SCOPE") { defaultScope = scope }
    }

    /// The settings as `--print-config` shows them.
    func summaryRows() -> [(String, String)] {
        [
            ("OAUTH_SERVER_ENABLED", "\(enabled)"), ("OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION", "\(allowDynamicRegistration)"),
            ("OAUTH_SERVER_AUTHORIZATION_PATH", authorizationPath.isEmpty ? "(unset)" : authorizationPath),
            ("OAUTH_SERVER_AUTHORIZATION_TTL", "\(Int(authorizationTTL)) s"), ("OAUTH_SERVER_DEFAULT_SCOPE", defaultScope)
        ]
    }
}
