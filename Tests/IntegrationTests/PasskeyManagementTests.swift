import Foundation
import Postgres
import TestSupport
import Testing

/// The passkeys' data and their management over HTTP against the real database: the admin API
/// (served whatever `PASSKEY_ENABLED` says) and the signed-in user's own list, rename and
/// removal behind the switch; another user's passkey is never listed, renamed or removed.
@Suite("Passkeys: the list, rename and removal", .serialized)
struct PasskeyManagementTests {
    let server: TestServer

    init() throws {
        server = try TestServer { $0.auth.passkey.enabled = true }
    }

    /// A passkey of the user written as registration writes it; its id.
    @discardableResult
    func insertPasskey(_ userID: String, name: String = "", lastUsed: Bool = false) throws -> String {
        let database = try Connection(conninfo: server.databaseURL)
        let id = UUID().uuidString.lowercased()
        let credential = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        _ = try database.query(
            """
            INSERT INTO auth.webauthn_credentials (id, user_id, credential_id, public_key, friendly_name, last_used_at)
            VALUES (\(id)::uuid, \(userID)::uuid, decode(\(credential), 'hex'), '\\x01'::bytea, \(name),
                    CASE WHEN \(lastUsed) THEN now() END)
            """)
        return id
    }

    func names(_ response: TestResponse) -> [String] {
        (response.jsonArray ?? []).map { $0["friendly_name"] as? String ?? "" }
    }

    func error(_ response: TestResponse) -> [String: String] {
        (response.jsonObject ?? [:]).compactMapValues { $0 as? String }
    }

    @Test func adminListsANewUsersPasskeysAsAnEmptyArray() throws {
        let user = try server.signUp()
        let response = try server.service.get("/auth/v1/admin/users/\(user.id)/passkeys")
        #expect(response.status == 200)
        #expect(response.text == "[]")
    }

    @Test func adminListsThePasskeysInGoTruesShapeAndNoOtherUsers() throws {
        let user = try server.signUp()
        let other = try server.signUp()
        let first = try insertPasskey(user.id, name: "YubiKey 5", lastUsed: true)
        let second = try insertPasskey(user.id)
        try insertPasskey(other.id, name: "other's")
        let response = try server.service.get("/auth/v1/admin/users/\(user.id)/passkeys")
        #expect(response.status == 200)
        let items = try #require(response.jsonArray)
        #expect(items.map { $0["id"] as? String } == [first, second])
        #expect(Set(items[0].keys) == ["id", "friendly_name", "created_at", "last_used_at"])
        #expect(items[0]["friendly_name"] as? String == "YubiKey 5")
        // Go's omitempty: no name and no last use are left out.
        #expect(Set(items[1].keys) == ["id", "created_at"])
        let created = try #require(items[1]["created_at"] as? String)
        #expect(
            created.hasSuffix("Z")
                && ISO8601DateFormatter().date(from: created.replacingOccurrences(of: #"\.\d+"#, with: "", options: .regularExpression)) != nil)
    }

    @Test func adminRefusesAnUnknownUser() throws {
        for target in ["/auth/v1/admin/users/\(UUID().uuidString.lowercased())/passkeys", "/auth/v1/admin/users/not-a-uuid/passkeys"] {
            let response = try server.service.get(target)
            #expect(response.status == 404)
            #expect(error(response) == ["code": "user_not_found", "message": "User not found"])
        }
        let removed = try server.service.request("DELETE", "/auth/v1/admin/users/\(UUID().uuidString.lowercased())/passkeys/\(UUID().uuidString)")
        #expect(removed.status == 404)
        #expect(error(removed)["code"] == "user_not_found")
    }

    @Test func adminNeedsTheServiceRole() throws {
        let user = try server.signUp()
        let response = try server.get("/auth/v1/admin/users/\(user.id)/passkeys", token: user.token)
        #expect(response.status == 403)
        #expect(error(response)["code"] == "not_admin")
    }

    @Test func adminRemovesAPasskeyOnceAndNeverAnotherUsers() throws {
        let user = try server.signUp()
        let other = try server.signUp()
        let passkey = try insertPasskey(user.id)
        let othersPasskey = try insertPasskey(other.id)
        let notFound = ["code": "validation_failed", "message": "Passkey not found"]
        for id in [othersPasskey, "not-a-uuid", UUID().uuidString] {
            let refused = try server.service.request("DELETE", "/auth/v1/admin/users/\(user.id)/passkeys/\(id)")
            #expect(refused.status == 404)
            #expect(error(refused) == notFound)
        }
        let removed = try server.service.request("DELETE", "/auth/v1/admin/users/\(user.id)/passkeys/\(passkey)")
        #expect(removed.status == 204 && removed.body.isEmpty)
        #expect(try server.service.get("/auth/v1/admin/users/\(user.id)/passkeys").text == "[]")
        let again = try server.service.request("DELETE", "/auth/v1/admin/users/\(user.id)/passkeys/\(passkey)")
        #expect(again.status == 404 && error(again) == notFound)
        #expect(try server.service.get("/auth/v1/admin/users/\(other.id)/passkeys").jsonArray?.count == 1)
    }

    @Test func theUserListsOnlyTheirOwnPasskeys() throws {
        let user = try server.signUp()
        let other = try server.signUp()
        #expect(try server.get("/auth/v1/passkeys", token: user.token).text == "[]")
        try insertPasskey(user.id, name: "mine")
        try insertPasskey(other.id, name: "theirs")
        let response = try server.get("/auth/v1/passkeys", token: user.token)
        #expect(response.status == 200)
        #expect(names(response) == ["mine"])
        // The anon key as bearer is no signed-in user (GoTrue: 403 bad_jwt, as on /user).
        let anonymous = try server.get("/auth/v1/passkeys")
        #expect(anonymous.status == 403 && error(anonymous)["code"] == "bad_jwt")
        let unsigned = try server.client().request("GET", "/auth/v1/passkeys", headers: [("apikey", server.anonKey)])
        #expect(unsigned.status == 401 && error(unsigned)["error_code"] == "no_authorization")
    }

    @Test func renameKeepsGoTruesRulesAndAnswersThePasskey() throws {
        let user = try server.signUp()
        let passkey = try insertPasskey(user.id, name: "Passkey")
        let target = "/auth/v1/passkeys/\(passkey)"
        let renamed = try server.request("PATCH", target, token: user.token, body: #"{"friendly_name":"Work laptop"}"#)
        #expect(renamed.status == 200, "\(renamed.text)")
        #expect(renamed.jsonObject?["friendly_name"] as? String == "Work laptop" && renamed.jsonObject?["id"] as? String == passkey)
        let refusals: [(String, Int, String, String?)] = [
            ("{}", 400, "validation_failed", "friendly_name is required"),
            (#"{"friendly_name":""}"#, 400, "validation_failed", "friendly_name is required"),
            (#"{"friendly_name":"\#(String(repeating: "é", count: 61))"}"#, 400, "validation_failed", "friendly_name must be 120 characters or less"),
            (#"{"friendly_name":7}"#, 400, "bad_json", nil),
            ("not json", 400, "bad_json", nil)
        ]
        for (body, status, code, message) in refusals {
            let refused = try server.request("PATCH", target, token: user.token, body: body)
            #expect(refused.status == status, "\(body)")
            #expect(error(refused)["code"] == code, "\(body)")
            if let message { #expect(error(refused)["message"] == message) }
        }
        // 120 bytes is allowed.
        let longest = String(repeating: "a", count: 120)
        #expect(try server.request("PATCH", target, token: user.token, body: #"{"friendly_name":"\#(longest)"}"#).status == 200)
        // A malformed id is not found, whatever the body.
        let malformed = try server.request("PATCH", "/auth/v1/passkeys/nope", token: user.token, body: "not json")
        #expect(malformed.status == 404 && error(malformed) == ["code": "validation_failed", "message": "Passkey not found"])
        #expect(names(try server.get("/auth/v1/passkeys", token: user.token)) == [longest])
    }

    @Test func anotherUsersPasskeyIsNeitherRenamedNorRemoved() throws {
        let user = try server.signUp()
        let attacker = try server.signUp()
        let passkey = try insertPasskey(user.id, name: "mine")
        let renamed = try server.request("PATCH", "/auth/v1/passkeys/\(passkey)", token: attacker.token, body: #"{"friendly_name":"owned"}"#)
        #expect(renamed.status == 404 && error(renamed) == ["code": "validation_failed", "message": "Passkey not found"])
        let removed = try server.request("DELETE", "/auth/v1/passkeys/\(passkey)", token: attacker.token)
        #expect(removed.status == 404 && error(removed) == ["code": "validation_failed", "message": "Passkey not found"])
        #expect(names(try server.get("/auth/v1/passkeys", token: user.token)) == ["mine"])
    }

    @Test func theUserRemovesTheirPasskeyOnce() throws {
        let user = try server.signUp()
        let passkey = try insertPasskey(user.id)
        let removed = try server.request("DELETE", "/auth/v1/passkeys/\(passkey)", token: user.token)
        #expect(removed.status == 204 && removed.body.isEmpty)
        #expect(try server.get("/auth/v1/passkeys", token: user.token).text == "[]")
        let again = try server.request("DELETE", "/auth/v1/passkeys/\(passkey)", token: user.token)
        #expect(again.status == 404 && error(again)["message"] == "Passkey not found")
    }

    @Test func withAVerifiedFactorOnlyAnAAL2SessionRemovesAPasskey() throws {
        let user = try server.signUp()
        let passkey = try insertPasskey(user.id)
        let database = try Connection(conninfo: server.databaseURL)
        _ = try database.query(
            "INSERT INTO auth.mfa_factors (id, user_id, friendly_name, factor_type, status) VALUES (gen_random_uuid(), \(user.id)::uuid, 'app', 'totp', 'verified')"
        )
        let refused = try server.request("DELETE", "/auth/v1/passkeys/\(passkey)", token: user.token)
        #expect(refused.status == 403)
        #expect(error(refused) == ["code": "insufficient_aal", "message": "AAL2 session is required to manage passkeys when MFA is enabled"])
        #expect(try server.get("/auth/v1/passkeys", token: user.token).jsonArray?.count == 1)
    }

    @Test func theSwitchOffRefusesTheUsersEndpointsButNotTheAdminAPI() throws {
        let off = try TestServer()
        let user = try off.signUp()
        for (method, path) in [("GET", "passkeys"), ("PATCH", "passkeys/\(UUID().uuidString)"), ("DELETE", "passkeys/x")] {
            for token in [user.token, nil] {
                let refused = try off.request(method, "/auth/v1/\(path)", token: token, body: #"{"friendly_name":"x"}"#)
                #expect(refused.status == 404, "\(method) \(path)")
                #expect(error(refused) == ["code": "passkey_disabled", "message": "Passkeys are disabled"])
            }
        }
        #expect(try off.service.get("/auth/v1/admin/users/\(user.id)/passkeys").status == 200)
    }
}
