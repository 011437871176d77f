import Foundation
import Identity
import TestSupport
import Testing

/// `POST /auth/v1/token?grant_type=web3` through the real server: wallets with fresh keys sign
/// Sign-In with Ethereum / Solana messages as supabase-js writes them; the wallet's user is
/// created, found again, and its `web3` identity links and unlinks like any other.
@Suite("Web3 sign-in", .serialized)
struct Web3SignInTests {
    static let googleClient = "web3-test.apps.googleusercontent.com"
    let google = SigningKey(kind: .rsa, keyID: "g1")
    let server: TestServer

    init() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("onboard-web3-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let googleFile = folder.appendingPathComponent("google.json")
        try Data(JWT.serialize(["keys": [google.jwk]]).utf8).write(to: googleFile)
        server = try TestServer { config in
            config.auth.siteURL = Web3Text.site
            config.auth.web3.ethereumEnabled = true
            config.auth.web3.solanaEnabled = true
            config.auth.web3.limit.hits = 10_000
            config.auth.providers["google"] = .google(clientIDs: [Self.googleClient], jwks: googleFile.path)
        }
    }

    func signIn(_ chain: String, _ message: String, _ signature: String, token: String? = nil) throws -> TestResponse {
        try server.post("/auth/v1/token?grant_type=web3", Web3Text.body(chain, message, signature), token: token)
    }

    /// The session's user, after checking what every Web3 session carries.
    func checkedUser(_ response: TestResponse, chain: String, address: String) throws -> [String: Any] {
        #expect(response.status == 200, "\(response.text)")
        let session = try #require(response.jsonObject)
        let token = try #require(session["access_token"] as? String)
        #expect(session["refresh_token"] as? String != nil)
        let claims = Web3Text.claims(token)
        #expect((claims["amr"] as? [[String: Any]])?.map { $0["method"] as? String } == ["web3"])
        #expect(claims["aal"] as? String == "aal1")
        let user = try #require(session["user"] as? [String: Any])
        let app = try #require(user["app_metadata"] as? [String: Any])
        #expect(app["provider"] as? String == "web3")
        #expect(app["providers"] as? [String] == ["web3"])
        #expect(user["email"] as? String == "")
        let identity = try #require((user["identities"] as? [[String: Any]])?.first)
        #expect(identity["provider"] as? String == "web3")
        #expect(identity["id"] as? String == "web3:\(chain):\(address)")
        let data = try #require(identity["identity_data"] as? [String: Any])
        #expect(data["sub"] as? String == "web3:\(chain):\(address)")
        let custom = try #require(data["custom_claims"] as? [String: Any])
        #expect(custom["address"] as? String == address)
        #expect(custom["chain"] as? String == chain)
        #expect(custom["domain"] as? String == "app.example")
        #expect(custom["statement"] as? String == "Sign in to the app")
        // The session is a real one: /user answers with the same user.
        let current = try server.get("/auth/v1/user", token: token)
        #expect(current.status == 200 && current.jsonObject?["id"] as? String == user["id"] as? String)
        return user
    }

    @Test func anEthereumWalletSignsUpThenSignsIn() throws {
        let wallet = EthereumTestWallet()
        let first = Web3Text.siwe(address: wallet.address)
        let created = try checkedUser(try signIn("ethereum", first, wallet.sign(first)), chain: "ethereum", address: wallet.address)
        let custom = ((created["identities"] as? [[String: Any]])?.first?["identity_data"] as? [String: Any])?["custom_claims"] as? [String: Any]
        #expect(custom?["network"] as? String == "1")
        #expect((created["user_metadata"] as? [String: Any])?["sub"] as? String == "web3:ethereum:\(wallet.address)")
        // A new message from the same wallet finds the same user (v as 0/1 works too).
        let second = Web3Text.siwe(address: wallet.address, chainID: "137")
        var signature = wallet.sign(second)
        let v = UInt8(signature.suffix(2), radix: 16)! - 27
        signature = String(signature.dropLast(2)) + String(format: "%02x", v)
        let found = try checkedUser(try signIn("ethereum", second, signature), chain: "ethereum", address: wallet.address)
        #expect(found["id"] as? String == created["id"] as? String)
        let network = ((found["identities"] as? [[String: Any]])?.first?["identity_data"] as? [String: Any])?["custom_claims"] as? [String: Any]
        #expect(network?["network"] as? String == "137")
    }

    @Test func aSolanaWalletSignsUpThenSignsIn() throws {
        let wallet = SolanaTestWallet()
        let first = Web3Text.siws(address: wallet.address)
        let created = try checkedUser(try signIn("solana", first, wallet.sign(first)), chain: "solana", address: wallet.address)
        // supabase-js sends the signature URL-safe without padding; a message without Chain ID.
        let second = Web3Text.siws(address: wallet.address, chainID: nil)
        let urlSafe = Base64URL.encode(wallet.signature(Array(second.utf8)))
        #expect(urlSafe.count == 86)
        let found = try checkedUser(try signIn("solana", second, urlSafe), chain: "solana", address: wallet.address)
        #expect(found["id"] as? String == created["id"] as? String)
    }

    @Test func aLedgerSignedSolanaMessageIsAccepted() throws {
        let wallet = SolanaTestWallet()
        let message = Web3Text.siws(address: wallet.address)
        // Solana's off-chain message envelope, as a Ledger signs it.
        let raw = Array(message.utf8)
        let domain = Array("app.example".utf8)
        var envelope: [UInt8] = [0xff] + Array("solana offchain".utf8) + [0] + domain + [UInt8](repeating: 0, count: 32 - domain.count)
        envelope += [0, 1] + wallet.publicKey + [UInt8(raw.count & 0xff), UInt8(raw.count >> 8)] + raw
        let signature = Data(wallet.signature(envelope)).base64EncodedString()
        _ = try checkedUser(try signIn("solana", message, signature), chain: "solana", address: wallet.address)
    }

    @Test func aLocalhostMessageNeedsNoHTTPSNorMatchingDomain() throws {
        let server = try TestServer.web3()
        let wallet = EthereumTestWallet()
        // URI_ALLOW_LIST allows http://localhost:5173/**; GoTrue skips the domain check for localhost.
        let message = Web3Text.siwe(address: wallet.address, domain: "localhost:5173", uri: "http://localhost:5173/", statement: nil)
        let response = try server.post("/auth/v1/token?grant_type=web3", Web3Text.body("ethereum", message, wallet.sign(message)))
        #expect(response.status == 200, "\(response.text)")
        // No statement: GoTrue's SIWE statement is a nil pointer, null in the identity's data.
        let identity = try #require(((response.jsonObject?["user"] as? [String: Any])?["identities"] as? [[String: Any]])?.first)
        let custom = try #require((identity["identity_data"] as? [String: Any])?["custom_claims"] as? [String: Any])
        #expect(custom["statement"] is NSNull)
        #expect(custom["domain"] as? String == "localhost:5173")
    }

    @Test func aWeb3IdentityLinksAndUnlinksLikeAnyOther() throws {
        let wallet = EthereumTestWallet()
        let message = Web3Text.siwe(address: wallet.address)
        let session = try #require(try signIn("ethereum", message, wallet.sign(message)).jsonObject)
        let token = try #require(session["access_token"] as? String)
        let userID = try #require((session["user"] as? [String: Any])?["id"] as? String)
        let web3Identity = try #require(((session["user"] as? [String: Any])?["identities"] as? [[String: Any]])?.first?["identity_id"] as? String)
        let http = server.client()
        // Its only identity cannot go.
        let only = try http.request("DELETE", "/auth/v1/user/identities/\(web3Identity)", headers: server.headers(token))
        #expect(only.status == 422 && Web3Text.fields(only)["code"] == "single_identity_not_deletable", "\(only.text)")
        // A Google identity linked to the wallet's user.
        let now = Int(Date().timeIntervalSince1970)
        let idToken = google.sign(claims: [
            "iss": "https://accounts.google.com", "aud": Self.googleClient, "sub": UUID().uuidString, "iat": now, "exp": now + 600,
            "email": "w-\(UUID().uuidString.prefix(8).lowercased())@gmail.com", "email_verified": true
        ])
        let linked = try server.post(
            "/auth/v1/token?grant_type=id_token", JWT.serialize(["provider": "google", "id_token": idToken, "link_identity": true]), token: token)
        #expect(linked.status == 200, "\(linked.text)")
        let user = try #require(linked.jsonObject?["user"] as? [String: Any])
        #expect(user["id"] as? String == userID)
        #expect(((user["app_metadata"] as? [String: Any])?["providers"] as? [String]) == ["web3", "google"])
        let newToken = try #require(linked.jsonObject?["access_token"] as? String)
        // The wallet still signs in to the same user, which now has both identities.
        let again = Web3Text.siwe(address: wallet.address)
        let found = try #require(try signIn("ethereum", again, wallet.sign(again)).jsonObject?["user"] as? [String: Any])
        #expect(found["id"] as? String == userID)
        #expect((found["identities"] as? [[String: Any]])?.compactMap { $0["provider"] as? String }.sorted() == ["google", "web3"])
        // Unlinked, the wallet is nobody's: its next sign-in makes a new user.
        let unlinked = try http.request("DELETE", "/auth/v1/user/identities/\(web3Identity)", headers: server.headers(newToken))
        #expect(unlinked.status == 200, "\(unlinked.text)")
        let later = Web3Text.siwe(address: wallet.address)
        let fresh = try #require(try signIn("ethereum", later, wallet.sign(later)).jsonObject?["user"] as? [String: Any])
        #expect(fresh["id"] as? String != userID)
    }

    @Test func signUpsSwitchedOffRefuseANewWalletButNotAKnownOne() throws {
        let database = try TestPostgres.makeDatabase()
        let open = try TestServer(databaseURL: database) { config in
            config.auth.siteURL = Web3Text.site
            config.auth.web3.ethereumEnabled = true
        }
        let known = EthereumTestWallet()
        let first = Web3Text.siwe(address: known.address)
        #expect(try open.post("/auth/v1/token?grant_type=web3", Web3Text.body("ethereum", first, known.sign(first))).status == 200)
        let closed = try TestServer(databaseURL: database) { config in
            config.auth.siteURL = Web3Text.site
            config.auth.web3.ethereumEnabled = true
            config.auth.disableSignup = true
        }
        let again = Web3Text.siwe(address: known.address)
        #expect(try closed.post("/auth/v1/token?grant_type=web3", Web3Text.body("ethereum", again, known.sign(again))).status == 200)
        let stranger = EthereumTestWallet()
        let message = Web3Text.siwe(address: stranger.address)
        let refused = try closed.post("/auth/v1/token?grant_type=web3", Web3Text.body("ethereum", message, stranger.sign(message)))
        #expect(refused.status == 422)
        #expect(Web3Text.fields(refused) == Web3Text.error("signup_disabled", "Signups not allowed for this instance"))
    }
}
