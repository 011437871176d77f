import Auth
import Foundation
import Identity
import Postgres
import TestSupport
import Testing

/// RFC 6238 (and RFC 4226) test vectors for the TOTP function.
@Suite("MFA TOTP vectors")
struct MFATOTPVectorTests {
    /// RFC 6238 appendix B, SHA-1 with the 20-byte ASCII seed "12345678901234567890": the
    /// 8-digit values and their 6-digit truncations (the last six digits).
    static let rfc6238: [(time: Double, step: Int64, eight: String, six: String)] = [
        (59, 0x1, "94287082", "287082"),
        (1_111_111_109, 0x23523EC, "07081804", "081804"),
        (1_111_111_111, 0x23523ED, "14050471", "050471"),
        (1_234_567_890, 0x273EF07, "89005924", "005924"),
        (2_000_000_000, 0x3F940AA, "69279037", "279037"),
        (20_000_000_000, 0x27BC86AA, "65353130", "353130")
    ]
    static let seed = Array("12345678901234567890".utf8)

    @Test(arguments: rfc6238.indices)
    func rfc6238AppendixB(_ index: Int) {
        let vector = Self.rfc6238[index]
        let step = TOTP.step(at: vector.time)
        #expect(step == vector.step)
        #expect(TOTP.code(secret: Self.seed, counter: step, digits: 8) == vector.eight)
        #expect(TOTP.code(secret: Self.seed, counter: step, digits: 6) == vector.six)
        #expect(TOTP.matchingStep(vector.six, secret: Self.seed, at: vector.time) == vector.step)
    }

    /// RFC 4226 appendix D: HOTP of counters 0…9, 6 digits.
    @Test func rfc4226AppendixD() {
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        #expect((0..<10).map { TOTP.code(secret: Self.seed, counter: Int64($0)) } == expected)
    }

    @Test func skewIsOneStepEitherWay() {
        let now = 1_111_111_111.0
        let step = TOTP.step(at: now)
        for offset: Int64 in -1...1 {
            #expect(TOTP.matchingStep(TOTP.code(secret: Self.seed, counter: step + offset), secret: Self.seed, at: now) == step + offset)
        }
        for offset: Int64 in [-3, -2, 2, 3] {
            #expect(TOTP.matchingStep(TOTP.code(secret: Self.seed, counter: step + offset), secret: Self.seed, at: now) == nil)
        }
        #expect(TOTP.matchingStep("", secret: Self.seed, at: now) == nil)
        #expect(TOTP.matchingStep("0708180", secret: Self.seed, at: now) == nil)
    }

    @Test func base32RoundTripsAndMatchesRFC4648() {
        #expect(Base32.encode(Array("foobar".utf8)) == "MZXW6YTBOI")
        #expect(Base32.encode(Array("fooba".utf8)) == "MZXW6YTB")
        #expect(Base32.decode("MZXW6YTBOI======") == Array("foobar".utf8))
        #expect(Base32.decode("mzxw6ytb") == Array("fooba".utf8))
        #expect(Base32.decode("MZ1W") == nil)
        let random = Crypto.randomBytes(20)
        #expect(Base32.decode(Base32.encode(random)) == random)
    }

    @Test func aesGCMRoundTripsAndRejectsTampering() throws {
        let key = Crypto.hkdfSHA256(key: Crypto.randomBytes(32), info: Array("factor".utf8))
        let nonce = Crypto.randomBytes(12)
        let sealed = try #require(Crypto.aesGCMSeal(key: key, nonce: nonce, plaintext: Array("JBSWY3DPEHPK3PXP".utf8)))
        #expect(sealed.count == 16 + 16)
        #expect(Crypto.aesGCMOpen(key: key, nonce: nonce, sealed: sealed) == Array("JBSWY3DPEHPK3PXP".utf8))
        var tampered = sealed
        tampered[0] ^= 1
        #expect(Crypto.aesGCMOpen(key: key, nonce: nonce, sealed: tampered) == nil)
        #expect(Crypto.aesGCMOpen(key: Crypto.randomBytes(32), nonce: nonce, sealed: sealed) == nil)
    }

    /// RFC 5869 test case 3 (empty salt and info), first 32 bytes of OKM.
    @Test func hkdfMatchesRFC5869() {
        let okm = Crypto.hkdfSHA256(key: [UInt8](repeating: 0x0b, count: 22), info: [])
        #expect(Crypto.hex(okm) == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d")
    }
}

/// GoTrue's MFA API over HTTP against the real database: enrolment, challenges, verification
/// to `aal2`, refresh, unenrolment, the errors, the admin calls, the tables' protection, and a
/// row-level-security policy that requires `aal2`.
@Suite("MFA over HTTP", .serialized)
struct MFATests {
    let server: TestServer

    init() throws {
        server = try TestServer { $0.auth.mfa.verifyFailureLimit = RateLimit(hits: 4, window: 300) }
    }

    func request(_ method: String, _ path: String, _ body: String? = nil, token: String) throws -> TestResponse {
        try server.client().request(method, "/auth/v1\(path)", headers: server.headers(token), body: body)
    }

    func claims(_ token: String) throws -> [String: Any] {
        try JWT.verifyHS256(token, secret: Array(TestServer.secret.utf8)).claims
    }

    struct Enrolled {
        var id: String
        var secret: [UInt8]
    }

    func enroll(_ token: String, name: String = "phone app") throws -> Enrolled {
        let response = try request("POST", "/factors", #"{"factor_type":"totp","friendly_name":"\#(name)"}"#, token: token)
        #expect(response.status == 200, "\(response.text)")
        let body = try #require(response.jsonObject)
        let totp = try #require(body["totp"] as? [String: Any])
        let secret = try #require(totp["secret"] as? String)
        return Enrolled(id: try #require(body["id"] as? String), secret: try #require(Base32.decode(secret)))
    }

    func challenge(_ token: String, _ factor: String) throws -> String {
        let response = try request("POST", "/factors/\(factor)/challenge", "{}", token: token)
        #expect(response.status == 200, "\(response.text)")
        return try #require(response.jsonObject?["id"] as? String)
    }

    func code(_ secret: [UInt8], offset: Int64 = 0) -> String {
        TOTP.code(secret: secret, counter: TOTP.step(at: Date().timeIntervalSince1970) + offset)
    }

    func verify(_ token: String, _ factor: String, _ challenge: String, _ code: String) throws -> TestResponse {
        try request("POST", "/factors/\(factor)/verify", #"{"challenge_id":"\#(challenge)","code":"\#(code)"}"#, token: token)
    }

    func signIn(_ email: String) throws -> (token: String, refresh: String) {
        let response = try server.client().request(
            "POST", "/auth/v1/token?grant_type=password", headers: server.headers(), body: #"{"email":"\#(email)","password":"Secret-pass-1"}"#)
        let body = try #require(response.jsonObject)
        return (try #require(body["access_token"] as? String), try #require(body["refresh_token"] as? String))
    }

    func refresh(_ token: String) throws -> TestResponse {
        try server.client().request("POST", "/auth/v1/token?grant_type=refresh_token", headers: server.headers(), body: #"{"refresh_token":"\#(token)"}"#)
    }

    static func email() -> String { "mfa-\(UUID().uuidString.prefix(12).lowercased())@example.com" }

    @Test func enrolChallengeVerifyRaisesTheSessionToAAL2AndRefreshKeepsIt() throws {
        let address = Self.email()
        let user = try server.signUp(email: address)
        // Another session of the user, at aal1: verification ends it, as GoTrue does.
        let other = try signIn(address)

        let enrolled = try request("POST", "/factors", #"{"factor_type":"totp","friendly_name":"Phone","issuer":"Onboard Test"}"#, token: user.token)
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

        let listed = try #require(try request("GET", "/user", token: user.token).jsonObject?["factors"] as? [[String: Any]])
        #expect(listed.count == 1 && listed[0]["id"] as? String == factorID && listed[0]["status"] as? String == "unverified")
        #expect(listed[0]["friendly_name"] as? String == "Phone" && listed[0]["factor_type"] as? String == "totp")
        #expect(listed[0]["secret"] == nil)

        let challenged = try request("POST", "/factors/\(factorID)/challenge", token: user.token)
        #expect(challenged.status == 200, "\(challenged.text)")
        let challengeID = try #require(challenged.jsonObject?["id"] as? String)
        #expect(challenged.jsonObject?["type"] as? String == "totp")
        let expiresAt = try #require(challenged.jsonObject?["expires_at"] as? Int)
        #expect(abs(expiresAt - (Int(Date().timeIntervalSince1970) + 300)) <= 2)

        let key = try #require(Base32.decode(secret))
        let verified = try verify(user.token, factorID, challengeID, code(key))
        #expect(verified.status == 200, "\(verified.text)")
        let session = try #require(verified.jsonObject)
        let access = try claims(try #require(session["access_token"] as? String))
        #expect(access["aal"] as? String == "aal2")
        let amr = try #require(access["amr"] as? [[String: Any]])
        #expect(amr.map { $0["method"] as? String } == ["totp", "password"])
        #expect(access["session_id"] as? String == (try claims(user.token))["session_id"] as? String)
        #expect(((session["user"] as? [String: Any])?["factors"] as? [[String: Any]])?.first?["status"] as? String == "verified")

        // The refresh token of the aal1 session no longer refreshes; the new one keeps aal2.
        #expect(try refresh(user.refresh).jsonObject?["code"] as? String == "refresh_token_not_found")
        let refreshed = try refresh(try #require(session["refresh_token"] as? String))
        #expect(refreshed.status == 200, "\(refreshed.text)")
        let again = try claims(try #require(refreshed.jsonObject?["access_token"] as? String))
        #expect(again["aal"] as? String == "aal2")
        #expect((again["amr"] as? [[String: Any]])?.map { $0["method"] as? String } == ["totp", "password"])

        // The other aal1 session ended.
        let ended = try request("GET", "/user", token: other.token)
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
            let response = try request(method, path, body, token: user.token)
            #expect(response.status == status, "\(method) \(path)")
            #expect(response.text == text, "\(method) \(path)")
        }
        // Another user's factor is not found.
        let stranger = try server.signUp()
        #expect(try request("POST", "/factors/\(factor.id)/challenge", token: stranger.token).status == 404)
        // Without a token, and as an anonymous user.
        #expect(try server.client().request("POST", "/auth/v1/factors", headers: server.headers(), body: #"{"factor_type":"totp"}"#).status == 403)
        let anonymous = try server.client().request("POST", "/auth/v1/signup", headers: server.headers(), body: "{}")
        let anonymousToken = try #require(anonymous.jsonObject?["access_token"] as? String)
        let refused = try request("POST", "/factors", #"{"factor_type":"totp"}"#, token: anonymousToken)
        #expect(refused.status == 403)
        #expect(refused.text == #"{"code":"no_authorization","message":"Anonymous user not allowed to perform these actions"}"#)
    }

    @Test func aSecondFactorAndUnenrolmentNeedAAL2AndUnenrolmentLowersTheSession() throws {
        let address = Self.email()
        let user = try server.signUp(email: address)
        let factor = try enroll(user.token)
        let verified = try verify(user.token, factor.id, try challenge(user.token, factor.id), code(factor.secret))
        let aal2 = try #require(verified.jsonObject?["access_token"] as? String)
        let aal2Refresh = try #require(verified.jsonObject?["refresh_token"] as? String)
        let aal1 = try signIn(address)
        #expect(try claims(aal1.token)["aal"] as? String == "aal1")

        let enrol = try request("POST", "/factors", #"{"factor_type":"totp","friendly_name":"second"}"#, token: aal1.token)
        #expect(enrol.status == 403)
        #expect(enrol.text == #"{"code":"insufficient_aal","message":"AAL2 required to enroll a new factor"}"#)
        let unenrol = try request("DELETE", "/factors/\(factor.id)", token: aal1.token)
        #expect(unenrol.status == 422)
        #expect(unenrol.text == #"{"code":"insufficient_aal","message":"AAL2 required to unenroll verified factor"}"#)
        // An unverified factor may be removed at aal1; at aal2 a second one may be enrolled.
        let second = try enroll(aal2, name: "second")
        #expect(try request("DELETE", "/factors/\(second.id)", token: aal1.token).text == #"{"id":"\#(second.id)"}"#)

        let removed = try request("DELETE", "/factors/\(factor.id)", token: aal2)
        #expect(removed.status == 200 && removed.text == #"{"id":"\#(factor.id)"}"#)
        #expect(try request("GET", "/user", token: aal2).jsonObject?["factors"] == nil)
        let lowered = try refresh(aal2Refresh)
        let access = try claims(try #require(lowered.jsonObject?["access_token"] as? String))
        #expect(access["aal"] as? String == "aal1")
        #expect((access["amr"] as? [[String: Any]])?.map { $0["method"] as? String } == ["password"])
    }

    @Test func enrolmentIsLimitedAndStaleUnverifiedFactorsExpire() throws {
        let user = try server.signUp()
        for index in 0..<10 { _ = try enroll(user.token, name: "factor \(index)") }
        let eleventh = try request("POST", "/factors", #"{"factor_type":"totp","friendly_name":"eleventh"}"#, token: user.token)
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
            let rest = try server.client().request("GET", "/rest/v1/\(table)", headers: server.headers(user.token, [("Accept-Profile", "auth")]))
            #expect(rest.status >= 400 && !rest.text.contains(factor.id), "\(table): \(rest.status) \(rest.text)")
        }
    }

    @Test func adminListsAndDeletesFactorsAndFactorsGoWithTheUser() throws {
        let user = try server.signUp()
        let factor = try enroll(user.token)
        let service = server.serviceKey
        let listed = try request("GET", "/admin/users/\(user.id)/factors", token: service)
        #expect(listed.status == 200)
        #expect(listed.jsonArray?.map { $0["id"] as? String } == [factor.id])
        #expect(try request("GET", "/admin/users/\(user.id)/factors", token: user.token).status == 403)
        #expect(try request("GET", "/admin/users/\(UUID().uuidString)/factors", token: service).status == 404)
        let renamed = try request("PUT", "/admin/users/\(user.id)/factors/\(factor.id)", #"{"friendly_name":"renamed"}"#, token: service)
        #expect(renamed.jsonObject?["friendly_name"] as? String == "renamed")
        let deleted = try request("DELETE", "/admin/users/\(user.id)/factors/\(factor.id)", token: service)
        #expect(deleted.status == 200 && deleted.jsonObject?["id"] as? String == factor.id)
        #expect(try request("DELETE", "/admin/users/\(user.id)/factors/\(factor.id)", token: service).status == 404)

        let again = try enroll(user.token)
        _ = try challenge(user.token, again.id)
        #expect(try request("DELETE", "/admin/users/\(user.id)", token: service).status == 200)
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
                return (try? server.client().request("GET", "/rest/v1/mfa_vault?select=note", headers: server.headers(user.token)))?.status == 200
            })
        let aal1 = try server.client().request("GET", "/rest/v1/mfa_vault?select=note", headers: server.headers(user.token))
        #expect(aal1.text == "[]")
        let factor = try enroll(user.token)
        let verified = try verify(user.token, factor.id, try challenge(user.token, factor.id), code(factor.secret))
        let aal2 = try #require(verified.jsonObject?["access_token"] as? String)
        let rows = try server.client().request("GET", "/rest/v1/mfa_vault?select=note", headers: server.headers(aal2))
        #expect(rows.text == #"[{"note":"secret note"}]"#)
    }
}
