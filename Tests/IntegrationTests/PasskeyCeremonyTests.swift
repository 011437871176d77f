import Auth
import Foundation
import Identity
import Postgres
import TestSupport
import Testing

/// GoTrue's passkey ceremonies over HTTP with a software authenticator (a real P-256 key and
/// real CBOR): registration stores the credential, authentication signs in with it (`amr`
/// `passkey`); the attacker's answers are refused with GoTrue's errors: a replayed assertion,
/// another origin, another RP id, a counter that goes backwards, a forged signature, an expired
/// challenge.
@Suite("Passkeys: registration and sign-in", .serialized)
struct PasskeyCeremonyTests {
    static let origin = "https://app.example.com"
    let server: TestServer

    init() throws {
        server = try TestServer {
            $0.auth.passkey.enabled = true
            $0.auth.passkey.rpID = "example.com"
            $0.auth.passkey.rpDisplayName = "Example"
            $0.auth.passkey.rpOrigins = [Self.origin]
        }
    }

    func error(_ response: TestResponse) -> [String: String] {
        (response.jsonObject ?? [:]).compactMapValues { $0 as? String }
    }

    static let verificationFailed = ["code": "webauthn_verification_failed", "message": "Credential verification failed"]

    func registrationOptions(_ token: String) throws -> (id: String, options: [String: Any]) {
        let response = try server.post("/auth/v1/passkeys/registration/options", "{}", token: token)
        #expect(response.status == 200, "\(response.text)")
        let body = try #require(response.jsonObject)
        return (try #require(body["challenge_id"] as? String), try #require(body["options"] as? [String: Any]))
    }

    func verify(_ path: String, _ challengeID: String, _ credential: String, token: String? = nil) throws -> TestResponse {
        try server.post("/auth/v1/passkeys/\(path)/verify", #"{"challenge_id":"\#(challengeID)","credential":\#(credential)}"#, token: token)
    }

    /// A user with a registered passkey.
    func registered(_ authenticator: TestPasskeyAuthenticator) throws -> (id: String, token: String) {
        let user = try server.signUp()
        let (challengeID, options) = try registrationOptions(user.token)
        let response = try verify("registration", challengeID, authenticator.create(options: options, origin: Self.origin), token: user.token)
        #expect(response.status == 200, "\(response.text)")
        return (user.id, user.token)
    }

    func authenticationOptions() throws -> (id: String, options: [String: Any]) {
        let response = try server.post("/auth/v1/passkeys/authentication/options", "{}")
        #expect(response.status == 200, "\(response.text)")
        let body = try #require(response.jsonObject)
        return (try #require(body["challenge_id"] as? String), try #require(body["options"] as? [String: Any]))
    }

    @Test func registrationOptionsAreGoTruesAndTheChallengeIsStored() throws {
        let user = try server.signUp()
        let response = try server.post("/auth/v1/passkeys/registration/options", "{}", token: user.token)
        #expect(response.status == 200)
        let body = try #require(response.jsonObject)
        let options = try #require(body["options"] as? [String: Any])
        #expect((options["rp"] as? [String: String]) == ["id": "example.com", "name": "Example"])
        let entity = try #require(options["user"] as? [String: Any])
        #expect(entity["id"] as? String == Base64URL.encode(Array(user.id.utf8)))
        #expect(options["attestation"] as? String == "none")
        let challenge = try #require(options["challenge"] as? String)
        #expect(challenge.count == 43)
        let expiresAt = try #require(body["expires_at"] as? Int)
        #expect(abs(Double(expiresAt) - Date().timeIntervalSince1970 - 300) < 5)
        let database = try Connection(conninfo: server.databaseURL)
        let stored = try database.query(
            "SELECT challenge_type, user_id::text, session_data->>'challenge' FROM auth.webauthn_challenges WHERE id = \(body["challenge_id"] as? String ?? "")::uuid"
        )
        #expect(stored.count == 1 && stored[0, 0] == "registration" && stored[0, 1] == user.id && stored[0, 2] == challenge)
    }

    @Test func registerThenSignInWithAPasskey() throws {
        let authenticator = TestPasskeyAuthenticator()
        authenticator.signCount = 1
        let user = try registered(authenticator)
        let list = try server.get("/auth/v1/passkeys", token: user.token)
        #expect(list.jsonArray?.count == 1 && list.jsonArray?.first?["friendly_name"] as? String == "Passkey")
        let (challengeID, options) = try authenticationOptions()
        #expect(options["rpId"] as? String == "example.com")
        let signedIn = try verify("authentication", challengeID, authenticator.get(options: options, origin: Self.origin))
        #expect(signedIn.status == 200, "\(signedIn.text)")
        let session = try #require(signedIn.jsonObject)
        #expect((session["user"] as? [String: Any])?["id"] as? String == user.id)
        let token = try #require(session["access_token"] as? String)
        let payload = try #require(Base64URL.decode(token.split(separator: ".")[1]))
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        #expect((claims["amr"] as? [[String: Any]])?.first?["method"] as? String == "passkey")
        #expect(try server.get("/auth/v1/user", token: token).status == 200)
        let used = try server.get("/auth/v1/passkeys", token: user.token).jsonArray?.first
        #expect(used?["last_used_at"] != nil)
    }

    @Test func aPackedSelfAttestationRegistersAndANamedAuthenticatorIsNamed() throws {
        // 1Password's AAGUID in GoTrue's list.
        let aaguid: [UInt8] = [0xba, 0xda, 0x55, 0x66, 0xa7, 0xaa, 0x40, 0x1f, 0xbd, 0x96, 0x45, 0x61, 0x9a, 0x55, 0x12, 0x0d]
        let authenticator = TestPasskeyAuthenticator(aaguid: aaguid)
        let user = try server.signUp()
        let (challengeID, options) = try registrationOptions(user.token)
        var bend = TestPasskeyAuthenticator.Bend()
        bend.format = "packed"
        let response = try verify("registration", challengeID, authenticator.create(options: options, origin: Self.origin, bend: bend), token: user.token)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.jsonObject?["friendly_name"] as? String == "1Password")
    }

    @Test func registrationRefusesAnotherOriginTypeRPIDOrAbsentUser() throws {
        let user = try server.signUp()
        var bends: [TestPasskeyAuthenticator.Bend] = []
        bends.append(TestPasskeyAuthenticator.Bend())  // with another origin
        var type = TestPasskeyAuthenticator.Bend()
        type.type = "webauthn.get"
        bends.append(type)
        var rpID = TestPasskeyAuthenticator.Bend()
        rpID.rpID = "evil.example"
        bends.append(rpID)
        var absent = TestPasskeyAuthenticator.Bend()
        absent.flags = 0x04
        bends.append(absent)
        var challenge = TestPasskeyAuthenticator.Bend()
        challenge.challenge = "AAAA"
        bends.append(challenge)
        for (index, bend) in bends.enumerated() {
            let (challengeID, options) = try registrationOptions(user.token)
            let answer = TestPasskeyAuthenticator().create(options: options, origin: index == 0 ? "https://evil.example" : Self.origin, bend: bend)
            let refused = try verify("registration", challengeID, answer, token: user.token)
            #expect(refused.status == 400, "case \(index)")
            #expect(error(refused) == Self.verificationFailed, "case \(index)")
        }
        #expect(try server.get("/auth/v1/passkeys", token: user.token).text == "[]")
    }

    @Test func aRegistrationChallengeIsAnsweredOnceAndOnlyByItsUser() throws {
        let user = try server.signUp()
        let other = try server.signUp()
        let (challengeID, options) = try registrationOptions(user.token)
        let answer = TestPasskeyAuthenticator().create(options: options, origin: Self.origin)
        let stolen = try verify("registration", challengeID, answer, token: other.token)
        #expect(stolen.status == 400 && error(stolen) == ["code": "webauthn_challenge_not_found", "message": "Challenge not found or already used"])
        #expect(try verify("registration", challengeID, answer, token: user.token).status == 200)
        let again = try verify("registration", challengeID, answer, token: user.token)
        #expect(again.status == 400 && error(again)["code"] == "webauthn_challenge_not_found")
    }

    @Test func theSameCredentialIsRegisteredOnce() throws {
        let authenticator = TestPasskeyAuthenticator()
        let user = try registered(authenticator)
        let (challengeID, options) = try registrationOptions(user.token)
        let again = try verify("registration", challengeID, authenticator.create(options: options, origin: Self.origin), token: user.token)
        #expect(again.status == 422 && error(again) == ["code": "webauthn_credential_exists", "message": "This credential is already registered"])
        let excluded = try #require(options["excludeCredentials"] as? [[String: Any]])
        #expect(excluded.count == 1)
    }

    @Test func anAnonymousUserCannotRegister() throws {
        let response = try server.post("/auth/v1/signup", "{}")
        let token = try #require(response.jsonObject?["access_token"] as? String)
        let refused = try server.post("/auth/v1/passkeys/registration/options", "{}", token: token)
        #expect(refused.status == 403 && error(refused)["code"] == "no_authorization")
    }

    @Test func aReplayedAssertionIsRefused() throws {
        let authenticator = TestPasskeyAuthenticator()
        _ = try registered(authenticator)
        let (challengeID, options) = try authenticationOptions()
        let assertion = authenticator.get(options: options, origin: Self.origin)
        #expect(try verify("authentication", challengeID, assertion).status == 200)
        let replayed = try verify("authentication", challengeID, assertion)
        #expect(replayed.status == 400 && error(replayed) == ["code": "webauthn_challenge_not_found", "message": "Challenge not found or already used"])
    }

    @Test func assertionsForAnotherOriginOrRPIDOrWithAForgedSignatureAreRefused() throws {
        let authenticator = TestPasskeyAuthenticator()
        _ = try registered(authenticator)
        var rpID = TestPasskeyAuthenticator.Bend()
        rpID.rpID = "evil.example"
        var forged = TestPasskeyAuthenticator.Bend()
        forged.corruptSignature = true
        var type = TestPasskeyAuthenticator.Bend()
        type.type = "webauthn.create"
        for (origin, bend) in [("https://evil.example", TestPasskeyAuthenticator.Bend()), (Self.origin, rpID), (Self.origin, forged), (Self.origin, type)] {
            let (challengeID, options) = try authenticationOptions()
            let refused = try verify("authentication", challengeID, authenticator.get(options: options, origin: origin, bend: bend))
            #expect(refused.status == 400 && error(refused) == Self.verificationFailed, "\(origin) \(bend)")
        }
        // Another authenticator claiming the registered one's user: no such credential.
        let (challengeID, options) = try authenticationOptions()
        let impostor = TestPasskeyAuthenticator()
        _ = impostor.create(options: ["user": ["id": Base64URL.encode(authenticator.userHandle)]], origin: Self.origin)
        let refused = try verify("authentication", challengeID, impostor.get(options: options, origin: Self.origin))
        #expect(refused.status == 400 && error(refused) == Self.verificationFailed)
    }

    @Test func aCounterThatDoesNotGrowIsAClonedAuthenticator() throws {
        let authenticator = TestPasskeyAuthenticator()
        authenticator.signCount = 5
        _ = try registered(authenticator)
        var (challengeID, options) = try authenticationOptions()
        #expect(try verify("authentication", challengeID, authenticator.get(options: options, origin: Self.origin)).status == 200)
        for count: UInt32 in [6, 3] {
            (challengeID, options) = try authenticationOptions()
            var bend = TestPasskeyAuthenticator.Bend()
            bend.signCount = count
            let refused = try verify("authentication", challengeID, authenticator.get(options: options, origin: Self.origin, bend: bend))
            #expect(refused.status == 400 && error(refused) == Self.verificationFailed, "counter \(count)")
        }
        (challengeID, options) = try authenticationOptions()
        var bend = TestPasskeyAuthenticator.Bend()
        bend.signCount = 9
        #expect(try verify("authentication", challengeID, authenticator.get(options: options, origin: Self.origin, bend: bend)).status == 200)
    }

    @Test func anExpiredChallengeIsRefused() throws {
        let authenticator = TestPasskeyAuthenticator()
        _ = try registered(authenticator)
        let (challengeID, options) = try authenticationOptions()
        let database = try Connection(conninfo: server.databaseURL)
        _ = try database.query("UPDATE auth.webauthn_challenges SET expires_at = now() - interval '1 second' WHERE id = \(challengeID)::uuid")
        let refused = try verify("authentication", challengeID, authenticator.get(options: options, origin: Self.origin))
        #expect(refused.status == 400 && error(refused) == ["code": "webauthn_challenge_expired", "message": "Challenge has expired"])
    }

    @Test func malformedVerifyBodiesGetGoTruesErrors() throws {
        let cases: [(String, String, String)] = [
            ("{}", "validation_failed", "challenge_id is required"),
            (#"{"challenge_id":"x"}"#, "validation_failed", "credential is required"),
            (#"{"challenge_id":"x","credential":{}}"#, "validation_failed", "challenge_id must be a valid UUID")
        ]
        for (body, code, message) in cases {
            let refused = try server.post("/auth/v1/passkeys/authentication/verify", body)
            #expect(refused.status == 400 && error(refused) == ["code": code, "message": message], "\(body)")
        }
        let (challengeID, _) = try authenticationOptions()
        let garbage = try verify("authentication", challengeID, #"{"id":"AAAA","type":"public-key"}"#)
        #expect(garbage.status == 400 && error(garbage) == ["code": "webauthn_verification_failed", "message": "Invalid credential response"])
    }

    @Test func signInOptionsSpendTheClientsPasskeyBudget() throws {
        let limited = try TestServer {
            $0.auth.passkey.enabled = true
            $0.auth.passkey.limit = RateLimit(hits: 2, window: 300)
        }
        for _ in 0..<2 { #expect(try limited.post("/auth/v1/passkeys/authentication/options", "{}").status == 200) }
        let refused = try limited.post("/auth/v1/passkeys/authentication/options", "{}")
        #expect(refused.status == 429 && error(refused)["code"] == "over_request_rate_limit")
        // Verification is not budgeted (a wrong answer still spends its challenge).
        #expect(try limited.post("/auth/v1/passkeys/authentication/verify", "{}").status == 400)
    }
}
