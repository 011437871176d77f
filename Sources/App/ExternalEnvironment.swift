import Auth
import Foundation
import Identity

/// The OAuth redirect flow's providers from the environment, with GoTrue's names (without its
/// `GOTRUE_` prefix): `EXTERNAL_<NAME>_ENABLED`, `_CLIENT_ID`, `_SECRET`, `_REDIRECT_URI`,
/// `_URL`; Apple's client-secret key as `EXTERNAL_APPLE_TEAM_ID`, `_KEY_ID`, `_PRIVATE_KEY`.
enum ExternalEnvironment {
    static func providers(_ environment: [String: String]) throws -> [String: ExternalProvider] {
        let env = EnvironmentReader(environment)
        var providers: [String: ExternalProvider] = [:]
        for kind in ExternalProvider.Kind.allCases {
            let prefix = "EXTERNAL_\(kind.rawValue.uppercased())_"
            guard try env.boolean(prefix + "ENABLED") == true else { continue }
            // GoTrue's `ValidateOAuth`: a client id and a secret (Apple's may be made from its key).
            guard let clientID = env.list(prefix + "CLIENT_ID").first else { throw ConfigurationError("\(prefix)CLIENT_ID is required when \(prefix)ENABLED") }
            var provider = ExternalProvider(
                kind: kind, clientID: clientID, secret: env.value(prefix + "SECRET") ?? "", redirectURI: env.value(prefix + "REDIRECT_URI"),
                url: env.value(prefix + "URL"))
            if kind == .apple, let team = env.value("EXTERNAL_APPLE_TEAM_ID") {
                guard let keyID = env.value("EXTERNAL_APPLE_KEY_ID"), let path = env.value("EXTERNAL_APPLE_PRIVATE_KEY") else {
                    throw ConfigurationError("EXTERNAL_APPLE_TEAM_ID needs EXTERNAL_APPLE_KEY_ID and EXTERNAL_APPLE_PRIVATE_KEY")
                }
                guard let pem = try? String(contentsOfFile: path, encoding: .utf8), let key = SigningKey(pkcs8PEM: pem, keyID: keyID) else {
                    throw ConfigurationError("EXTERNAL_APPLE_PRIVATE_KEY: \(path) is not a readable P-256 private key (PKCS #8 PEM, Apple's .p8)")
                }
                provider.appleKey = ExternalProvider.AppleKey(teamID: team, key: key)
            }
            guard !provider.secret.isEmpty || provider.appleKey != nil else { throw ConfigurationError("\(prefix)SECRET is required when \(prefix)ENABLED") }
            guard kind != .oidc || provider.url != nil else {
                throw ConfigurationError("EXTERNAL_OIDC_URL (the issuer) is required when EXTERNAL_OIDC_ENABLED")
            }
            providers[kind.rawValue] = provider
        }
        return providers
    }

    /// The settings as `--print-config` shows them (secrets never).
    static func summaryRows(_ providers: [String: ExternalProvider]) -> [(String, String)] {
        ExternalProvider.Kind.allCases.map { kind in
            guard let provider = providers[kind.rawValue] else { return ("EXTERNAL_\(kind.rawValue.uppercased())_ENABLED", "false") }
            let url = provider.url.map { ", url \($0)" } ?? ""
            return ("EXTERNAL_\(kind.rawValue.uppercased())_ENABLED", "true (client \(provider.clientID)\(url))")
        }
    }
}
