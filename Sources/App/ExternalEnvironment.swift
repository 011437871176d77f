import Auth
import Foundation
import Identity

/// The OAuth redirect flow's providers from the environment, with GoTrue's names (without its
/// `GOTRUE_` prefix): `EXTERNAL_<NAME>_ENABLED`, `_CLIENT_ID`, `_SECRET`, `_REDIRECT_URI`,
/// `_URL`; Apple's client-secret key as `EXTERNAL_APPLE_TEAM_ID`, `_KEY_ID`, `_PRIVATE_KEY`.
/// As in GoTrue, a provider enabled without its client id or secret starts; `/authorize`
/// names what it misses.
enum ExternalEnvironment {
    static func providers(_ environment: [String: String]) throws -> [String: ExternalProvider] {
        let env = EnvironmentReader(environment)
        var providers: [String: ExternalProvider] = [:]
        for kind in ExternalProvider.Kind.allCases {
            let prefix = "EXTERNAL_\(kind.rawValue.uppercased())_"
            let names = ["ENABLED", "CLIENT_ID", "SECRET", "REDIRECT_URI", "URL"].map { prefix + $0 }
            let appleNames = ["EXTERNAL_APPLE_TEAM_ID", "EXTERNAL_APPLE_KEY_ID", "EXTERNAL_APPLE_PRIVATE_KEY"]
            guard (names + (kind == .apple ? appleNames : [])).contains(where: { env.value($0) != nil }) else { continue }
            var provider = ExternalProvider(
                kind: kind, enabled: try env.boolean(prefix + "ENABLED") ?? false, clientID: env.list(prefix + "CLIENT_ID").first ?? "",
                secret: env.value(prefix + "SECRET") ?? "", redirectURI: env.value(prefix + "REDIRECT_URI"), url: env.value(prefix + "URL"))
            if kind == .apple {
                provider.appleTeamID = env.value("EXTERNAL_APPLE_TEAM_ID")
                if let text = env.value("EXTERNAL_APPLE_PRIVATE_KEY") {
                    // The key's PEM text, or the path of its `.p8` file.
                    let pem = text.contains("-----BEGIN") ? text : try? String(contentsOfFile: text, encoding: .utf8)
                    guard let pem, let key = SigningKey(pkcs8PEM: pem, keyID: env.value("EXTERNAL_APPLE_KEY_ID") ?? "") else {
                        throw ConfigurationError("EXTERNAL_APPLE_PRIVATE_KEY must be a P-256 private key (PKCS #8 PEM, Apple's .p8) or the path of one")
                    }
                    provider.appleKey = key
                }
            }
            providers[kind.rawValue] = provider
        }
        return providers
    }

    /// The settings as `--print-config` shows them (secrets never).
    static func summaryRows(_ providers: [String: ExternalProvider]) -> [(String, String)] {
        ExternalProvider.Kind.allCases.map { kind in
            let name = "EXTERNAL_\(kind.rawValue.uppercased())_ENABLED"
            guard let provider = providers[kind.rawValue], provider.enabled else { return (name, "false") }
            let url = provider.url.map { ", url \($0)" } ?? ""
            return (name, "true (client \(provider.clientID.isEmpty ? "(unset)" : provider.clientID)\(url))")
        }
    }
}
