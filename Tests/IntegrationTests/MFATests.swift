import Auth
import Foundation
import Identity
import Postgres
import TestSupport
import Testing

/// GoTrue's MFA API over HTTP against the real database: enrolment, challenges, verification
/// to `aal2`, refresh, unenrolment, the errors, the admin calls, the tables' protection, and a
/// row-level-security policy that requires `aal2`.
@Suite("MFA over HTTP", .serialized)
struct MFATests {
    let server: TestServer

    init() throws {
        server = try TestServer { $0.auth.mfa.verifyFailureLimit = RateLimit(hits: 4, window: 300) }
    }

    struct Enrolled {
        var id: String
        var secret: [UInt8]
    }

    func enroll(_ token: String, name: String = "phone app") throws -> Enrolled {
        let response = try server.post("/auth/v1/factors", #"{"factor_type":"totp","friendly_name":"\#(name)"}"#, token: token)
        #expect(response.status == 200, "\(response.text)")
        let body = try #require(response.jsonObject)
        let totp = try #require(body["totp"] as? [String: Any])
        let secret = try #require(totp["secret"] as? String)
        return Enrolled(id: try #require(body["id"] as? String), secret: try #require(Base32.decode(secret)))
    }

    func challenge(_ token: String, _ factor: String) throws -> String {
        let response = try server.post("/auth/v1/factors/\(factor)/challenge", "{}", token: token)
        #expect(response.status == 200, "\(response.text)")
        return try #require(response.jsonObject?["id"] as? String)
    }

    func code(_ secret: [UInt8], offset: Int64 = 0) -> String {
        TOTP.code(secret: secret, counter: TOTP.step(at: Date().timeIntervalSince1970) + offset)
    }

    func verify(_ token: String, _ factor: String, _ challenge: String, _ code: String) throws -> TestResponse {
        try server.post("/auth/v1/factors/\(factor)/verify", #"{"challenge_id":"\#(challenge)","code":"\#(code)"}"#, token: token)
    }

    func signIn(_ email: String) throws -> (token: String, refresh: String) {
        let response = try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"Secret-pass-1"}"#)
        let body = try #require(response.jsonObject)
        return (try #require(body["access_token"] as? String), try #require(body["refresh_token"] as? String))
    }

    func refresh(_ token: String) throws -> TestResponse {
        try server.post("/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"\#(token)"}"#)
    }

    @Test func enrolChallengeVerifyRaisesTheSessionToAAL2AndRefreshKeepsIt() throws {
        let address = TestServer.email("mfa")
        let user = try server.signUp(email: address)
        // Another session of the user, at aal1: verification ends it, as GoTrue does.
        let other = try signIn(address)

        let enrolled = try server.post("/auth/v1/factors", #"{"factor_type":"totp","friendly_name":"Phone","issuer":"Onboard Test"}"#, token: user.token)
        #expect(enrolled.status == 200, "\(enrolled.text)")
        let body = try #require(enrolled.jsonObject)
        #expect(body["type"] as? String == "totp" && body["friendly_name"] as? String == "Phone")
        let factorID = try #require(body["id"] as? String)
        let totp = try #require(body["totp"] as? [String: Any])
        let secret = try #require(totp["secret"] as? String)
        #expect(secret.count == 32 && Base32.decode(secret)?.count == 20)
        #expect(
            totp["uri"] as? String
                == "otpauth://totp/Onboard%20Test:\(address)?algorithm=SHA1&digits=6&issuer=Onboard%20Test&period=30&secret=\(secret)")
        #expect((totp["qr_code"] as? String)?.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\"") == true)

        let listed = try #require(try server.get("/auth/v1/user", token: user.token).jsonObject?["factors"] as? [[String: Any]])
        #expect(listed.count == 1 && listed[0]["id"] as? String == factorID && listed[0]["status"] as? String == "unverified")
        #expect(listed[0]["friendly_name"] as? String == "Phone" && listed[0]["factor_type"] as? String == "totp")
        #expect(listed[0]["secret"] == nil)

        let challenged = try server.request("POST", "/auth/v1/factors/\(factorID)/challenge", token: user.token)
        #expect(challenged.status == 200, "\(challenged.text)")
        let challengeID = try #require(challenged.jsonObject?["id"] as? String)
        #expect(challenged.jsonObject?["type"] as? String == "totp")
        let expiresAt = try #require(challenged.jsonObject?["expires_at"] as? Int)
        #expect(abs(expiresAt - (Int(Date().timeIntervalSince1970) + 300)) <= 2)

        let key = try #require(Base32.decode(secret))
        let verified = try verify(user.token, factorID, challengeID, code(key))
        #expect(verified.status == 200, "\(verified.text)")
        let session = try #require(verified.jsonObject)
        let access = try TestServer.claims(try #require(session["access_token"] as? String))
        #expect(access["aal"] as? String == "aal2")
        let amr = try #require(access["amr"] as? [[String: Any]])
        #expect(amr.map { $0["method"] as? String } == ["totp", "password"])
        #expect(access["session_id"] as? String == (try TestServer.claims(user.token))["session_id"] as? String)
        #expect(((session["user"] as? [String: Any])?["factors"] as? [[String: Any]])?.first?["status"] as? String == "verified")

        // The refresh token of the aal1 session no longer refreshes; the new one keeps aal2.
        #expect(try refresh(user.refresh).jsonObject?["code"] as? String == "refresh_token_not_found")
        let refreshed = try refresh(try #require(session["refresh_token"] as? String))
        #expect(refreshed.status == 200, "\(refreshed.text)")
        let again = try TestServer.claims(try #require(refreshed.jsonObject?["access_token"] as? String))
        #expect(again["aal"] as? String == "aal2")
        #expect((again["amr"] as? [[String: Any]])?.map { $0["method"] as? String } == ["totp", "password"])

        // The other aal1 session ended.
        let ended = try server.get("/auth/v1/user", token: other.token)
        #expect(ended.status == 403 && ended.jsonObject?["code"] as? String == "session_not_found")
    }

    @Test func wrongReusedAndExpiredCodesAreRefused() throws {
        let user = try server.signUp()
        let factor = try enroll(user.token)
        let first = try challenge(user.token, factor.id)
        let wrong = try verify(user.token, factor.id, first, TOTP.code(secret: factor.secret, counter: 1))
        #expect(wrong.status == 422)
        #expect(wrong.text == #"{"code":"mfa_verification_failed","message":"Invalid TOTP code entered"}"#)
        // A code two steps away is outside the skew.
        #expect(try verify(user.token, factor.id, first, code(factor.secret, offset: 2)).status == 422)

        let accepted = code(factor.secret)
        let ok = try verify(user.token, factor.id, first, accepted)
        #expect(ok.status == 200, "\(ok.text)")
        let aal2 = try #require(ok.jsonObject?["access_token"] as? String)

        // The verified challenge cannot be used again.
        let used = try verify(aal2, factor.id, first, code(factor.secret, offset: 1))
        #expect(used.status == 422)
        #expect(used.text == #"{"code":"mfa_ip_address_mismatch","message":"Challenge and verify IP addresses mismatch."}"#)
        // The same code against a new challenge: each step's code is accepted once.
        let second = try challenge(aal2, factor.id)
        let reused = try verify(aal2, factor.id, second, accepted)
        #expect(reused.status == 422 && reused.jsonObject?["code"] as? String == "mfa_verification_failed")
        // The next step's code is accepted (within the skew).
        #expect(try verify(aal2, factor.id, second, code(factor.secret, offset: 1)).status == 200)

        // An expired challenge is refused and removed.
        let third = try challenge(aal2, factor.id)
        let admin = try Connection(conninfo: server.databaseURL)
        _ = try admin.query("UPDATE auth.mfa_challenges SET created_at = now() - interval '301 seconds' WHERE id = \(third)::uuid")
        let expired = try verify(aal2, factor.id, third, code(factor.secret, offset: 1))
        #expect(expired.status == 422)
        #expect(
            expired.text
                == #"{"code":"mfa_challenge_expired","message":"MFA challenge \#(third) has expired, verify against another challenge or create a new challenge."}"#
        )
        let gone = try verify(aal2, factor.id, third, code(factor.secret, offset: 1))
        #expect(gone.status == 422)
        #expect(gone.text == #"{"code":"mfa_factor_not_found","message":"MFA factor with the provided challenge ID not found"}"#)
    }

    @Test func wrongCodesAreLimitedPerFactor() throws {
        let user = try server.signUp()
        let factor = try enroll(user.token)
        let id = try challenge(user.token, factor.id)
        for _ in 0..<4 {
            #expect(try verify(user.token, factor.id, id, "000000").jsonObject?["code"] as? String == "mfa_verification_failed")
        }
        // Over the limit, even the right code is refused until the window ends.
        let limited = try verify(user.token, factor.id, id, code(factor.secret))
        #expect(limited.status == 429 && limited.jsonObject?["code"] as? String == "over_request_rate_limit")
        #expect(limited.header("Retry-After").flatMap { Int($0) }.map { (1...300).contains($0) } == true)
        // Another factor of another user is not affected.
        let other = try server.signUp()
        let otherFactor = try enroll(other.token)
        #expect(try verify(other.token, otherFactor.id, try challenge(other.token, otherFactor.id), code(otherFactor.secret)).status == 200)
    }

    @Test func challengesAndVerificationsAreLimitedPerClient() throws {
        let limited = try TestServer { $0.auth.mfa.challengeAndVerifyLimit = RateLimit(hits: 2, window: 60) }
        let user = try limited.signUp()
        let enrolled = try limited.client().request("POST", "/auth/v1/factors", headers: limited.headers(user.token), body: #"{"factor_type":"totp"}"#)
        let factor = try #require(enrolled.jsonObject?["id"] as? String)
        let statuses = try (0..<3).map { _ in
            try limited.client().request("POST", "/auth/v1/factors/\(factor)/challenge", headers: limited.headers(user.token)).status
        }
        #expect(statuses == [200, 200, 429])
    }

    @Test func requestErrorsAnswerAsGoTrue() throws {
        let user = try server.signUp()
        let factor = try enroll(user.token)
        let cases: [(String, String, String?, Int, String)] = [
            (
                "POST", "/factors", #"{"factor_type":"phone","phone":"+15550100"}"#, 422,
                #"{"code":"mfa_phone_enroll_not_enabled","message":"MFA enroll is disabled for Phone"}"#
            ),
            (
                "POST", "/factors", #"{"factor_type":"webauthn"}"#, 422,
                #"{"code":"mfa_webauthn_enroll_not_enabled","message":"MFA enroll is disabled for WebAuthn"}"#
            ),
            ("POST", "/factors", #"{"factor_type":"sms"}"#, 400, #"{"code":"validation_failed","message":"factor_type needs to be totp, phone, or webauthn"}"#),
            (
                "POST", "/factors", #"{"factor_type":5}"#, 400,
                #"{"code":"validation_failed","message":"Could not read request body: factor_type must be a string"}"#
            ),
            (
                "POST", "/factors", #"{"factor_type":"totp","friendly_name":"phone app"}"#, 422,
                #"{"code":"mfa_factor_name_conflict","message":"A factor with the friendly name \"phone app\" for this user already exists"}"#
            ),
            ("POST", "/factors/not-a-uuid/challenge", nil, 404, #"{"code":"validation_failed","message":"factor_id must be an UUID"}"#),
            ("POST", "/factors/\(UUID().uuidString)/challenge", nil, 404, #"{"code":"mfa_factor_not_found","message":"Factor not found"}"#),
            ("DELETE", "/factors/\(UUID().uuidString)", nil, 404, #"{"code":"mfa_factor_not_found","message":"Factor not found"}"#),
            (
                "POST", "/factors/\(factor.id)/verify", #"{"challenge_id":"\#(UUID().uuidString)","code":""}"#, 400,
                #"{"code":"validation_failed","message":"Code needs to be non-empty"}"#
            ),
            (
                "POST", "/factors/\(factor.id)/verify", #"{"challenge_id":"\#(UUID().uuidString)","code":"123456"}"#, 422,
                #"{"code":"mfa_factor_not_found","message":"MFA factor with the provided challenge ID not found"}"#
            ),
            (
                "POST", "/factors/\(factor.id)/verify", #"{"challenge_id":"x","code":"123456"}"#, 400,
                #"{"code":"validation_failed","message":"Could not read request body: challenge_id must be a UUID"}"#
            )
        ]
        for (method, path, body, status, text) in cases {
            let response = try server.request(method, "/auth/v1" + path, token: user.token, body: body)
            #expect(response.status == status, "\(method) \(path)")
            #expect(response.text == text, "\(method) \(path)")
        }
        // Another user's factor is not found.
        let stranger = try server.signUp()
        #expect(try server.request("POST", "/auth/v1/factors/\(factor.id)/challenge", token: stranger.token).status == 404)
        // Without a token, and as an anonymous user.
        #expect(try server.post("/auth/v1/factors", #"{"factor_type":"totp"}"#).status == 403)
        let anonymous = try server.post("/auth/v1/signup", "{}")
        let anonymousToken = try #require(anonymous.jsonObject?["access_token"] as? String)
        let refused = try server.post("/auth/v1/factors", #"{"factor_type":"totp"}"#, token: anonymousToken)
        #expect(refused.status == 403)
        #expect(refused.text == #"{"code":"no_authorization","message":"Anonymous user not allowed to perform these actions"}"#)
    }

    @Test func aSecondFactorAndUnenrolmentNeedAAL2AndUnenrolmentLowersTheSession() throws {
        let address = TestServer.email("mfa")
        let user = try server.signUp(email: address)
        let factor = try enroll(user.token)
        let verified = try verify(user.token, factor.id, try challenge(user.token, factor.id), code(factor.secret))
        let aal2 = try #require(verified.jsonObject?["access_token"] as? String)
        let aal2Refresh = try #require(verified.jsonObject?["refresh_token"] as? String)
        let aal1 = try signIn(address)
        #expect(try TestServer.claims(aal1.token)["aal"] as? String == "aal1")

        let enrol = try server.post("/auth/v1/factors", #"{"factor_type":"totp","friendly_name":"second"}"#, token: aal1.token)
        #expect(enrol.status == 403)
        #expect(enrol.text == #"{"code":"insufficient_aal","message":"AAL2 required to enroll a new factor"}"#)
        let unenrol = try server.request("DELETE", "/auth/v1/factors/\(factor.id)", token: aal1.token)
        #expect(unenrol.status == 422)
        #expect(unenrol.text == #"{"code":"insufficient_aal","message":"AAL2 required to unenroll verified factor"}"#)
        // An unverified factor may be removed at aal1; at aal2 a second one may be enrolled.
        let second = try enroll(aal2, name: "second")
        #expect(try server.request("DELETE", "/auth/v1/factors/\(second.id)", token: aal1.token).text == #"{"id":"\#(second.id)"}"#)

        let removed = try server.request("DELETE", "/auth/v1/factors/\(factor.id)", token: aal2)
        #expect(removed.status == 200 && removed.text == #"{"id":"\#(factor.id)"}"#)
        #expect(try server.get("/auth/v1/user", token: aal2).jsonObject?["factors"] == nil)
        let lowered = try refresh(aal2Refresh)
        let access = try TestServer.claims(try #require(lowered.jsonObject?["access_token"] as? String))
        #expect(access["aal"] as? String == "aal1")
        #expect((access["amr"] as? [[String: Any]])?.map { $0["method"] as? String } == ["password"])
    }

    /// GoTrue's rule: with a verified factor, the password and the address change only at aal2
    /// (a phished password alone must not lock the owner out); metadata changes at aal1.
    @Test func anAAL1SessionChangesNoCredentialOfAUserWithMFA() throws {
        let address = TestServer.email("mfa")
        let user = try server.signUp(email: address)
        let factor = try enroll(user.token)
        let aal2 = try #require(
            try verify(user.token, factor.id, try challenge(user.token, factor.id), code(factor.secret)).jsonObject?["access_token"] as? String)
        let aal1 = try signIn(address)
        let refusal = #"{"code":"insufficient_aal","message":"AAL2 session is required to update email or password when MFA is enabled."}"#
        for body in [#"{"password":"Another-pass-2"}"#, #"{"email":"other-\#(address)"}"#, #"{"password":"Another-pass-2","data":{"a":1}}"#] {
            let refused = try server.request("PUT", "/auth/v1/user", token: aal1.token, body: body)
            #expect(refused.status == 401 && refused.text == refusal, "\(body): \(refused.status) \(refused.text)")
        }
        #expect(try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(address)","password":"Another-pass-2"}"#).status == 400)
        let user1 = try server.get("/auth/v1/user", token: aal1.token).jsonObject
        #expect(user1?["email"] as? String == address && user1?["new_email"] == nil && (user1?["user_metadata"] as? [String: Any])?["a"] == nil)
        // The same address and metadata alone pass at aal1; at aal2 the password changes.
        #expect(try server.request("PUT", "/auth/v1/user", token: aal1.token, body: #"{"email":"\#(address.uppercased())","data":{"a":1}}"#).status == 200)
        let changed = try server.request("PUT", "/auth/v1/user", token: aal2, body: #"{"password":"Another-pass-2"}"#)
        #expect(changed.status == 200, "\(changed.text)")
        #expect(try server.post("/auth/v1/token?grant_type=password", #"{"email":"\#(address)","password":"Another-pass-2"}"#).status == 200)
    }

    @Test func enrolmentIsLimitedAndStaleUnverifiedFactorsExpire() throws {
        let user = try server.signUp()
        for index in 0..<10 { _ = try enroll(user.token, name: "factor \(index)") }
        let eleventh = try server.post("/auth/v1/factors", #"{"factor_type":"totp","friendly_name":"eleventh"}"#, token: user.token)
        #expect(eleventh.status == 422)
        #expect(eleventh.text == #"{"code":"too_many_enrolled_mfa_factors","message":"Maximum number of verified factors reached, unenroll to continue"}"#)
        // Unverified factors never challenged go after five minutes, at the next enrolment.
        let admin = try Connection(conninfo: server.databaseURL)
        _ = try admin.query("UPDATE auth.mfa_factors SET created_at = now() - interval '301 seconds' WHERE user_id = \(user.id)::uuid")
        _ = try enroll(user.token, name: "eleventh")
        #expect(try admin.query("SELECT count(*) FROM auth.mfa_factors WHERE user_id = \(user.id)::uuid").scalar == "1")
    }

    @Test func secretsAreSealedAndTheTablesAreNotReadableByClients() throws {
        let user = try server.signUp()
        let factor = try enroll(user.token)
        let admin = try Connection(conninfo: server.databaseURL)
        let stored = try #require(try admin.query("SELECT secret FROM auth.mfa_factors WHERE id = \(factor.id)::uuid").scalar)
        let sealed = try #require(try JSONSerialization.jsonObject(with: Data(stored.utf8)) as? [String: Any])
        #expect(sealed["alg"] as? String == "aes-gcm-hkdf" && sealed["key_id"] as? String == "jwt")
        #expect(!stored.contains(Base32.encode(factor.secret)))
        #expect((sealed["nonce"] as? String).flatMap { Data(base64Encoded: $0) }?.count == 12)

        for table in ["mfa_factors", "mfa_challenges", "mfa_amr_claims"] {
            for role in ["anon", "authenticated"] {
                #expect(throws: PostgresError.self, "\(role) reads auth.\(table)") {
                    try admin.withTransaction { connection in
                        try connection.execute(unsafeSQL: "SET LOCAL ROLE \(role)")
                        _ = try connection.query("SELECT * FROM auth.\(ident: table)")
                    }
                }
            }
            let rest = try server.get("/rest/v1/\(table)", token: user.token, headers: [("Accept-Profile", "auth")])
            #expect(rest.status >= 400 && !rest.text.contains(factor.id), "\(table): \(rest.status) \(rest.text)")
        }
    }

    @Test func adminListsAndDeletesFactorsAndFactorsGoWithTheUser() throws {
        let user = try server.signUp()
        let factor = try enroll(user.token)
        let service = server.serviceKey
        let listed = try server.get("/auth/v1/admin/users/\(user.id)/factors", token: service)
        #expect(listed.status == 200)
        #expect(listed.jsonArray?.map { $0["id"] as? String } == [factor.id])
        #expect(try server.get("/auth/v1/admin/users/\(user.id)/factors", token: user.token).status == 403)
        #expect(try server.get("/auth/v1/admin/users/\(UUID().uuidString)/factors", token: service).status == 404)
        let renamed = try server.request("PUT", "/auth/v1/admin/users/\(user.id)/factors/\(factor.id)", token: service, body: #"{"friendly_name":"renamed"}"#)
        #expect(renamed.jsonObject?["friendly_name"] as? String == "renamed")
        let deleted = try server.request("DELETE", "/auth/v1/admin/users/\(user.id)/factors/\(factor.id)", token: service)
        #expect(deleted.status == 200 && deleted.jsonObject?["id"] as? String == factor.id)
        #expect(try server.request("DELETE", "/auth/v1/admin/users/\(user.id)/factors/\(factor.id)", token: service).status == 404)

        let again = try enroll(user.token)
        _ = try challenge(user.token, again.id)
        #expect(try server.request("DELETE", "/auth/v1/admin/users/\(user.id)", token: service).status == 200)
        let admin = try Connection(conninfo: server.databaseURL)
        #expect(try admin.query("SELECT count(*) FROM auth.mfa_factors WHERE id = \(again.id)::uuid").scalar == "0")
        #expect(try admin.query("SELECT count(*) FROM auth.mfa_challenges WHERE factor_id = \(again.id)::uuid").scalar == "0")
    }

    @Test func aPolicyRequiringAAL2AnswersRowsOnlyAtAAL2() throws {
        let admin = try Connection(conninfo: server.databaseURL)
        try admin.execute(
            """
            CREATE TABLE IF NOT EXISTS public.mfa_vault (id serial PRIMARY KEY, owner uuid NOT NULL, note text NOT NULL);
            ALTER TABLE public.mfa_vault ENABLE ROW LEVEL SECURITY;
            DROP POLICY IF EXISTS vault_aal2 ON public.mfa_vault;
            CREATE POLICY vault_aal2 ON public.mfa_vault FOR SELECT TO authenticated
                USING (owner = auth.uid() AND (auth.jwt() ->> 'aal') = 'aal2');
            """)
        let user = try server.signUp()
        _ = try admin.query("INSERT INTO public.mfa_vault (owner, note) VALUES (\(user.id)::uuid, 'secret note')")
        // The server may not listen for reloads yet when a first NOTIFY goes out: ask until it has the table.
        #expect(
            eventually {
                try? admin.execute("NOTIFY pgrst, 'reload schema'")
                return (try? server.get("/rest/v1/mfa_vault?select=note", token: user.token))?.status == 200
            })
        let aal1 = try server.get("/rest/v1/mfa_vault?select=note", token: user.token)
        #expect(aal1.text == "[]")
        let factor = try enroll(user.token)
        let verified = try verify(user.token, factor.id, try challenge(user.token, factor.id), code(factor.secret))
        let aal2 = try #require(verified.jsonObject?["access_token"] as? String)
        let rows = try server.get("/rest/v1/mfa_vault?select=note", token: aal2)
        #expect(rows.text == #"[{"note":"secret note"}]"#)
    }
}
