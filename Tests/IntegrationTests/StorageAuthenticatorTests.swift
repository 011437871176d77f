import Foundation
import HTTP
import Identity
import Logging
import Postgres
import Storage
import TestSupport
import Testing

/// Storage logged in as `authenticator`, the role that may only switch to anon, authenticated and
/// service_role: every operation still works and the policies still decide, so nothing in
/// Storage needs a superuser's rights.
@Suite("Storage: as the authenticator role")
struct StorageAuthenticatorTests {
    @Test func everyOperationWorksWithoutSuperuserRights() throws {
        let url = try TestPostgres.makeDatabase()
        let superuser = try #require(url.range(of: "postgresql://")).upperBound
        let userEnd = try #require(url.range(of: "@", range: superuser..<url.endIndex)).lowerBound
        let asAuthenticator = url.replacingCharacters(in: superuser..<userEnd, with: "authenticator")
        let pool = Pool(conninfo: asAuthenticator, size: 2)
        defer { pool.close() }
        let login = try pool.withConnection { try $0.query("SELECT current_user::text, rolsuper FROM pg_roles WHERE rolname = current_user") }
        #expect(login[0].string(0) == "authenticator" && login[0].bool(1) == false)

        let secret = "storage-authenticator-secret-of-32-chars"
        let now = Int(Date().timeIntervalSince1970)
        func token(_ claims: [String: Any]) -> String {
            JWT.signHS256(claims: claims.merging(["iat": now, "exp": now + 600]) { $1 }, secret: Array(secret.utf8))
        }
        let anonKey = token(["role": "anon"])
        let serviceKey = token(["role": "service_role"])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("onboard-storage-auth-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = try StorageService(
            pool: pool, keys: KeyConfig(jwtSecret: secret, anonKey: anonKey, serviceRoleKey: serviceKey), config: StorageConfig(directory: folder),
            logger: Logger(label: "storage-test"))
        let ada = UUID().uuidString.lowercased()
        let ben = UUID().uuidString.lowercased()
        func send(_ method: HTTPMethod, _ path: String, as bearer: String, body: String = "", type: String = "application/json") -> HTTPResponse {
            let headers = HTTPHeaders([("apikey", anonKey), ("Authorization", "Bearer \(bearer)"), ("Content-Type", type)])
            return storage.respond(to: HTTPRequest(method: method, target: "/storage/v1" + path, headers: headers, body: Array(body.utf8)))
        }
        let adaToken = token(["role": "authenticated", "sub": ada])
        let benToken = token(["role": "authenticated", "sub": ben])

        #expect(send(.post, "/bucket", as: serviceKey, body: #"{"id":"shared","public":true}"#).status == .ok)
        #expect(send(.post, "/object/avatars/\(ada)/me.png", as: adaToken, body: "ada", type: "image/png").status == .ok)
        #expect(send(.get, "/object/avatars/\(ada)/me.png", as: adaToken).body == Array("ada".utf8))
        #expect(send(.get, "/object/avatars/\(ada)/me.png", as: benToken).status == .notFound)
        #expect(send(.post, "/object/avatars/\(ada)/ben.png", as: benToken, body: "ben", type: "image/png").status == .forbidden)
        let moved = send(.post, "/object/move", as: adaToken, body: #"{"bucketId":"avatars","sourceKey":"\#(ada)/me.png","destinationKey":"\#(ada)/new.png"}"#)
        #expect(moved.status == .ok)
        let signed = send(.post, "/object/sign/avatars/\(ada)/new.png", as: adaToken, body: #"{"expiresIn":60}"#)
        let answer = (try? JSONSerialization.jsonObject(with: Data(signed.body))) as? [String: Any]
        let signedURL = try #require(answer?["signedURL"] as? String)
        let viaLink = storage.respond(to: HTTPRequest(method: .get, target: "/storage/v1" + signedURL))
        #expect(viaLink.body == Array("ada".utf8))
        #expect(send(.post, "/object/shared/file.txt", as: serviceKey, body: "hello", type: "text/plain").status == .ok)
        #expect(storage.respond(to: HTTPRequest(method: .get, target: "/storage/v1/object/public/shared/file.txt")).body == Array("hello".utf8))
        #expect(send(.delete, "/bucket/shared", as: serviceKey).status == .conflict)
        #expect(send(.post, "/bucket/shared/empty", as: serviceKey).status == .ok)
        #expect(send(.delete, "/bucket/shared", as: serviceKey).status == .ok)
        #expect(send(.delete, "/object/avatars/\(ada)/new.png", as: adaToken).status == .ok)
    }
}
