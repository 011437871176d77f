import Foundation
import Identity
import TestSupport

/// Sign-In with Ethereum and Solana messages written as supabase-js writes them, for a server
/// whose SITE_URL is `https://app.example`.
enum Web3Text {
    static let site = "https://app.example"

    static func time(_ offset: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date().addingTimeInterval(offset))
    }

    /// supabase-js's `createSiweMessage`, times as offsets from now in seconds.
    static func siwe(
        address: String, domain: String = "app.example", uri: String = "https://app.example/", chainID: String = "1",
        issuedAt: Double = 0, expiresIn: Double? = nil, notBefore: Double? = nil, nonce: String = UUID().uuidString,
        statement: String? = "Sign in to the app"
    ) -> String {
        var text = "\(domain) wants you to sign in with your Ethereum account:\n\(address)\n\n" + (statement.map { "\($0)\n\n" } ?? "")
        text += "URI: \(uri)\nVersion: 1\nChain ID: \(chainID)\nNonce: \(nonce)\nIssued At: \(time(issuedAt))"
        if let expiresIn { text += "\nExpiration Time: \(time(expiresIn))" }
        if let notBefore { text += "\nNot Before: \(time(notBefore))" }
        return text
    }

    /// supabase-js's Sign-In with Solana message (the `signMessage` path).
    static func siws(
        address: String, domain: String = "app.example", uri: String = "https://app.example/", issuedAt: Double = 0, expiresIn: Double? = nil,
        notBefore: Double? = nil, chainID: String? = "solana:mainnet", nonce: String = UUID().uuidString
    ) -> String {
        var lines = ["\(domain) wants you to sign in with your Solana account:", address, "", "Sign in to the app", ""]
        lines += ["Version: 1", "URI: \(uri)", "Issued At: \(time(issuedAt))"]
        if let notBefore { lines.append("Not Before: \(time(notBefore))") }
        if let expiresIn { lines.append("Expiration Time: \(time(expiresIn))") }
        if let chainID { lines.append("Chain ID: \(chainID)") }
        lines.append("Nonce: \(nonce)")
        return lines.joined(separator: "\n")
    }

    static func body(_ chain: String, _ message: String, _ signature: String) -> String {
        JWT.serialize(["chain": chain, "message": message, "signature": signature])
    }

    /// The claims of an access token (its signature is the server's business).
    static func claims(_ token: String) -> [String: Any] {
        let parts = token.split(separator: ".")
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            let claims = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any]
        else { return [:] }
        return claims
    }

    /// GoTrue's OAuth-shaped refusal (400).
    static func invalidGrant(_ description: String) -> [String: String] {
        ["error": "invalid_grant", "error_description": description]
    }

    /// GoTrue's error body with the 2024-01-01 API version.
    static func error(_ code: String, _ message: String) -> [String: String] {
        ["code": code, "message": message]
    }

    /// The response's JSON object as strings (every field of an error body is one).
    static func fields(_ response: TestResponse) -> [String: String] {
        (response.jsonObject ?? [:]).compactMapValues { $0 as? String }
    }
}

extension TestServer {
    /// A server with both Web3 providers on (or as `configure` sets them), SITE_URL
    /// `https://app.example` and room for every sign-in the tests make.
    static func web3(configure: @escaping (inout Web3Switches) -> Void = { _ in }) throws -> TestServer {
        var switches = Web3Switches()
        configure(&switches)
        return try TestServer { config in
            config.auth.siteURL = Web3Text.site
            config.auth.mail.allowList = ["http://localhost:5173/**"]
            config.auth.web3.ethereumEnabled = switches.ethereum
            config.auth.web3.solanaEnabled = switches.solana
            config.auth.web3.limit.hits = 10_000
        }
    }
}

struct Web3Switches {
    var ethereum = true
    var solana = true
}
