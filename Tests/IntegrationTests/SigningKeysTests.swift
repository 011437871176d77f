import App
import Foundation
import Identity
import Logging
import Postgres
import Realtime
import TestSupport
import Testing

/// Asymmetric access-token keys (`JWT_KEYS`), their JWKS, a key rotation across two servers, the
/// opaque API keys and `JWT_ADMIN_ROLES`.
@Suite("Auth: signing keys and JWKS", .serialized)
struct SigningKeysTests {
    static func header(_ token: String) -> [String: Any] {
        let part = token.split(separator: ".")[0]
        return (try? JSONSerialization.jsonObject(with: Data(Base64URL.decode(part) ?? []))) as? [String: Any] ?? [:]
    }

    static func keys(_ keys: [SigningKey], signing: SigningKey?) throws -> JWTKeys {
        let entries = keys.map { key -> [String: Any] in
            var jwk = key === signing ? key.privateJWK : key.jwk
            if key !== signing { jwk["key_ops"] = ["verify"] }
            return jwk
        }
        return try KeyConfig.jwtKeys(JWT.serialize(entries))
    }

    @Test func tokensAreSignedWithTheSigningKeyAndItsPublicHalfIsPublished() throws {
        let current = SigningKey(kind: .p256, keyID: "current-es256")
        let previous = SigningKey(kind: .rsa, keyID: "previous-rs256")
        let keys = try Self.keys([current, previous], signing: current)
        let server = try TestServer { $0.keys.use(keys) }
        let user = try server.signUp()
        let header = Self.header(user.token)
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "current-es256")
        // The whole product accepts it: REST, Auth's /user, Realtime's join.
        let http = server.client()
        #expect(try http.request("GET", "/rest/v1/user_profiles?select=id", headers: server.headers(user.token)).text == #"[{"id":"\#(user.id)"}]"#)
        #expect(try http.request("GET", "/auth/v1/user", headers: server.headers(user.token)).status == 200)
        let refreshed = try http.request(
            "POST", "/auth/v1/token?grant_type=refresh_token", headers: server.headers(), body: #"{"refresh_token":"\#(user.refresh)"}"#)
        #expect(Self.header(try #require(refreshed.jsonObject?["access_token"] as? String))["kid"] as? String == "current-es256")
        let phoenix = try PhoenixClient(server)
        let joined = try phoenix.join("realtime:signing", token: user.token, bindings: [])
        #expect(joined.reply["status"] as? String == "ok", "\(joined.reply)")

        // The key set: both public keys, no private member, no secret; open without an apikey.
        let jwks = try http.request("GET", "/auth/v1/.well-known/jwks.json")
        #expect(jwks.status == 200 && jwks.header("Cache-Control") == "public, max-age=600")
        let listed = try #require(jwks.jsonObject?["keys"] as? [[String: Any]])
        #expect(Set(listed.compactMap { $0["kid"] as? String }) == ["current-es256", "previous-rs256"])
        for key in listed {
            #expect(["d", "p", "q", "dp", "dq", "qi", "k"].allSatisfy { key[$0] == nil }, "\(key)")
            #expect(key["key_ops"] as? [String] == ["verify"])
        }
        #expect(!jwks.text.contains(TestServer.secret))
        // What a client does with it (supabase-js's getClaims): verify the token locally.
        let published = try JWKSet(json: Array(jwks.text.utf8))
        #expect(try JWT.verify(user.token, keys: published)["sub"] as? String == user.id)
        let discovery = try http.request("GET", "/auth/v1/.well-known/openid-configuration").jsonObject
        #expect((discovery?["jwks_uri"] as? String)?.hasSuffix("/auth/v1/.well-known/jwks.json") == true)
        #expect((discovery?["id_token_signing_alg_values_supported"] as? [String])?.first == "ES256")
    }

    /// A rotation: the new key signs, the old one stays listed for verification, so a token the
    /// old key signed (on another server, before the rotation) passes REST, Auth and Realtime
    /// until it expires; a key no longer listed is refused.
    @Test func aRotationKeepsTokensOfThePreviousKeyValid() throws {
        let old = SigningKey(kind: .rsa, keyID: "old")
        let new = SigningKey(kind: .p256, keyID: "new")
        let oldKeys = try Self.keys([old], signing: old)
        let before = try TestServer { $0.keys.use(oldKeys) }
        let user = try before.signUp()
        #expect(Self.header(user.token)["kid"] as? String == "old")

        var rotated = before.application.config
        rotated.port = 0
        rotated.migrateOnStart = false
        rotated.keys.use(try Self.keys([new, old], signing: new))
        let after = try Application.start(rotated, logger: Logger(label: "rotated"))
        defer { after.shutdown() }
        let http = TestHTTPClient(port: after.port)
        let headers = before.headers(user.token)
        #expect(try http.request("GET", "/rest/v1/user_profiles?select=id", headers: headers).text == #"[{"id":"\#(user.id)"}]"#)
        #expect(try http.request("GET", "/auth/v1/user", headers: headers).status == 200)
        let fresh = try http.request(
            "POST", "/auth/v1/token?grant_type=password", headers: before.headers(),
            body: #"{"email":"\#(try email(of: user, on: before))","password":"Secret-pass-1"}"#)
        #expect(Self.header(try #require(fresh.jsonObject?["access_token"] as? String))["kid"] as? String == "new")
        let socket = try TestWebSocket(port: after.port, target: "/realtime/v1/websocket?apikey=\(before.anonKey)&vsn=1.0.0")
        try socket.sendText(
            #"{"topic":"realtime:rotation","event":"phx_join","ref":"1","join_ref":"1","payload":{"config":{"postgres_changes":[]},"access_token":"\#(user.token)"}}"#
        )
        #expect(try socket.readText(timeout: 30)?.contains(#""status":"ok""#) == true)

        // Dropped from the set: refused everywhere.
        var retired = rotated
        retired.keys.use(try Self.keys([new], signing: new))
        let third = try Application.start(retired, logger: Logger(label: "retired"))
        defer { third.shutdown() }
        let refused = try TestHTTPClient(port: third.port).request("GET", "/rest/v1/user_profiles?select=id", headers: headers)
        #expect(refused.status == 401 && refused.jsonObject?["code"] as? String == "PGRST301")
    }

    func email(of user: (id: String, token: String, refresh: String), on server: TestServer) throws -> String {
        try #require(try Connection(conninfo: server.databaseURL).query("SELECT email FROM auth.users WHERE id = \(user.id)::uuid").scalar)
    }

    @Test func tokensOfOtherAlgorithmsOrUnknownKeysAreRefused() throws {
        let key = SigningKey(kind: .p256, keyID: "k1")
        let keys = try Self.keys([key], signing: key)
        let server = try TestServer { $0.keys.use(keys) }
        let user = try server.signUp()
        let claims: [String: Any] = ["sub": user.id, "role": "authenticated", "exp": Int(Date().timeIntervalSince1970) + 600]
        let stranger = SigningKey(kind: .p256, keyID: "k1")  // the same kid, another key
        let http = server.client()
        for token in [stranger.sign(claims: claims), key.sign(claims: claims, alg: "RS256"), key.sign(claims: claims, kid: "unknown")] {
            let response = try http.request("GET", "/rest/v1/user_profiles?select=id", headers: server.headers(token))
            #expect(response.status == 401, "\(Self.header(token)): \(response.text)")
        }
        #expect(try http.request("GET", "/rest/v1/user_profiles?select=id", headers: server.headers(key.sign(claims: claims))).status == 200)
        // HS256 tokens signed with JWT_SECRET keep working beside the key set.
        #expect(try http.request("GET", "/rest/v1/user_profiles?select=id", headers: server.headers(server.anonKey)).status == 200)
    }

    /// GoTrue's `oct` keys: an HS256 secret with a `kid` signs (its `kid` in the header), is
    /// accepted, and is never published; the RSA key beside it verifies only.
    @Test func anOctKeySignsHS256AndStaysPrivate() throws {
        let rsa = SigningKey(kind: .rsa, keyID: "rsa-verify")
        var verifyOnly = rsa.privateJWK
        verifyOnly["key_ops"] = ["verify"]
        let oct: [String: Any] = [
            "kty": "oct", "kid": "oct-sign", "k": Base64URL.encode(Array("a-secret-of-thirty-two-bytes-ok!".utf8)), "key_ops": ["sign", "verify"],
            "alg": "HS256"
        ]
        let keys = try KeyConfig.jwtKeys(JWT.serialize([oct, verifyOnly]))
        let server = try TestServer { $0.keys.use(keys) }
        let user = try server.signUp()
        #expect(Self.header(user.token)["alg"] as? String == "HS256" && Self.header(user.token)["kid"] as? String == "oct-sign")
        let http = server.client()
        #expect(try http.request("GET", "/rest/v1/user_profiles?select=id", headers: server.headers(user.token)).text == #"[{"id":"\#(user.id)"}]"#)
        #expect(try http.request("GET", "/auth/v1/user", headers: server.headers(user.token)).status == 200)
        let claims: [String: Any] = ["sub": user.id, "role": "authenticated", "exp": Int(Date().timeIntervalSince1970) + 600]
        #expect(try http.request("GET", "/rest/v1/user_profiles?select=id", headers: server.headers(rsa.sign(claims: claims))).status == 200)
        let listed = try #require(try http.request("GET", "/auth/v1/.well-known/jwks.json").jsonObject?["keys"] as? [[String: Any]])
        #expect(listed.map { $0["kid"] as? String } == ["rsa-verify"] && !listed.contains { $0["k"] != nil || $0["d"] != nil })
    }

    @Test func publishableAndSecretKeysAndAdminRoles() throws {
        let server = try TestServer { config in
            config.keys.publishableKeys = ["sb_publishable_test_1234"]
            config.keys.secretKeys = ["sb_secret_test_5678"]
        }
        let http = server.client()
        let publishable = [("apikey", "sb_publishable_test_1234"), ("Authorization", "Bearer sb_publishable_test_1234"), ("Content-Type", "application/json")]
        #expect(try http.request("GET", "/rest/v1/children?select=id", headers: publishable).text == "[]")
        #expect(try http.request("GET", "/auth/v1/settings", headers: publishable).status == 200)
        #expect(try http.request("GET", "/auth/v1/admin/users", headers: publishable).status == 403)
        let secret = [("apikey", "sb_secret_test_5678"), ("Authorization", "Bearer sb_secret_test_5678")]
        #expect(try http.request("GET", "/auth/v1/admin/users", headers: secret).status == 200)
        #expect(try http.request("GET", "/rest/v1/children?select=id", headers: [("apikey", "sb_publishable_other")]).status == 401)

        let now = Int(Date().timeIntervalSince1970)
        func token(role: String) -> String {
            JWT.signHS256(claims: ["role": role, "iat": now, "exp": now + 600], secret: Array(TestServer.secret.utf8))
        }
        #expect(try http.request("GET", "/auth/v1/admin/users", headers: server.headers(token(role: "supabase_admin"))).status == 200)
        #expect(try http.request("GET", "/auth/v1/admin/users", headers: server.headers(token(role: "authenticated"))).status == 403)
    }
}
