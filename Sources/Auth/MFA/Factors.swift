import Foundation
import HTTP
import Identity
import Postgres

/// `/factors…`: TOTP factors as GoTrue's MFA API. A verified code raises the session to `aal2`:
/// its access tokens carry `aal: "aal2"` and a `totp` entry in `amr`, and so do the tokens its
/// refreshes issue.
extension AuthService {
    /// RFC 6238 as authenticator apps use it: SHA-1, 6 digits, 30-second steps, one step of skew.
    static let totpDigits = 6
    static let totpPeriod = 30

    var factorSecrets: FactorSecrets { FactorSecrets(config: config.mfa, jwtSecret: config.keys.jwtSecret) }

    func mfa(_ request: HTTPRequest, _ caller: SignedIn, _ operation: AuthRequest.MFA) throws -> HTTPResponse {
        guard !caller.isAnonymous else { throw AuthError.anonymousNotAllowed }
        guard let sessionID = caller.sessionID else { throw AuthError.sessionNotFound }
        switch operation {
        case .enroll(let enroll):
            return try enrollTOTP(enroll, userID: caller.userID, sessionID: sessionID)
        case .challenge(let factorID):
            let factor = try ownedFactor(factorID, userID: caller.userID)
            guard config.mfa.totpVerifyEnabled else { throw AuthError.mfaVerifyDisabled(.totp) }
            try spend(mfaBudget(request))
            let challengeID = UUID().uuidString.lowercased()
            let expiresAt = try pool.withTransaction {
                try Factors.challenge($0, id: challengeID, factorID: factor.id, ip: clientAddress(request), expiry: config.mfa.challengeExpiry)
            }
            return .json(.ok, #"{"id":"\#(challengeID)","type":"totp","expires_at":\#(expiresAt)}"#)
        case .verify(let factorID, let challengeID, let code):
            let factor = try ownedFactor(factorID, userID: caller.userID)
            guard config.mfa.totpVerifyEnabled else { throw AuthError.mfaVerifyDisabled(.totp) }
            try spend(mfaBudget(request))
            return try verifyTOTP(
                factor: factor, challengeID: challengeID, code: code, userID: caller.userID, sessionID: sessionID, client: clientAddress(request))
        case .unenroll(let factorID):
            let factor = try ownedFactor(factorID, userID: caller.userID)
            let json = try pool.withTransaction { connection -> String? in
                if factor.verified, try Assurance.sessionLevel(connection, sessionID: sessionID) != "aal2" {
                    throw AuthError.insufficientAAL("AAL2 required to unenroll verified factor", status: .unprocessableContent)
                }
                return try Factors.delete(connection, id: factor.id, userID: caller.userID)
            }
            guard json != nil else { throw AuthError.mfaFactorNotFound("Factor not found", status: .notFound) }
            return .json(.ok, #"{"id":"\#(factor.id)"}"#)
        }
    }

    /// The caller's factor, or GoTrue's 404s.
    func ownedFactor(_ factorID: String?, userID: String) throws -> Factors.Row {
        guard let factorID else { throw AuthError.factorIDNotUUID }
        guard let factor = try pool.withConnection({ try Factors.find($0, id: factorID, userID: userID) }) else {
            throw AuthError.mfaFactorNotFound("Factor not found", status: .notFound)
        }
        return factor
    }

    /// A new unverified TOTP factor with a fresh 160-bit secret, answered once with the secret,
    /// its `otpauth://` URI and the URI as a QR code (SVG).
    func enrollTOTP(_ enroll: AuthRequest.Enroll, userID: String, sessionID: String) throws -> HTTPResponse {
        switch enroll.type {
        case .phone: throw AuthError.mfaEnrollDisabled(.phone)
        case .webauthn: throw AuthError.mfaEnrollDisabled(.webauthn)
        case .totp: guard config.mfa.totpEnrollEnabled else { throw AuthError.mfaEnrollDisabled(.totp) }
        }
        let issuer =
            enroll.issuer ?? URLComponents(string: config.siteURL).flatMap { components in
                components.host.map { host in components.port.map { "\(host):\($0)" } ?? host }
            } ?? ""
        let factorID = UUID().uuidString.lowercased()
        let secret = Base32.encode(Crypto.randomBytes(20))
        let sealed = try factorSecrets.seal(secret, factorID: factorID)
        let email: String = try pool.withTransaction { connection in
            guard let factors = try Factors.lockForEnrolment(connection, userID: userID, expiry: config.mfa.factorExpiry) else {
                throw AuthError.userFromTokenNotFound
            }
            if factors.contains(where: { $0.friendlyName == enroll.friendlyName }) { throw AuthError.mfaFactorNameConflict(enroll.friendlyName) }
            let verified = factors.filter(\.verified).count
            if factors.count >= config.mfa.maxEnrolledFactors || verified >= config.mfa.maxVerifiedFactors { throw AuthError.tooManyEnrolledMFAFactors }
            if verified > 0, try Assurance.sessionLevel(connection, sessionID: sessionID) != "aal2" {
                throw AuthError.insufficientAAL("AAL2 required to enroll a new factor", status: .forbidden)
            }
            try Factors.createTOTP(connection, id: factorID, userID: userID, friendlyName: enroll.friendlyName, sealedSecret: sealed)
            return try connection.query("SELECT coalesce(email, '') FROM auth.users WHERE id = \(userID)::uuid").scalar ?? ""
        }
        let uri = Self.otpauthURI(issuer: issuer, account: email, secret: secret)
        let totp = #"{"qr_code":\#(jsonString(QRCode.svg(uri))),"secret":\#(jsonString(secret)),"uri":\#(jsonString(uri))}"#
        return .json(.ok, #"{"id":"\#(factorID)","type":"totp","friendly_name":\#(jsonString(enroll.friendlyName)),"totp":\#(totp)}"#)
    }

    /// The key URI authenticator apps read (Google Authenticator's format, as GoTrue's TOTP
    /// library writes it: the label `issuer:account`, the parameters sorted).
    static func otpauthURI(issuer: String, account: String, secret: String) -> String {
        var pathAllowed = CharacterSet.urlPathAllowed
        pathAllowed.remove(charactersIn: "?#")
        var queryAllowed = CharacterSet.alphanumerics
        queryAllowed.insert(charactersIn: "-._~")
        let label = "/\(issuer):\(account)".addingPercentEncoding(withAllowedCharacters: pathAllowed) ?? ""
        let query = [
            ("algorithm", "SHA1"), ("digits", "\(totpDigits)"), ("issuer", issuer), ("period", "\(totpPeriod)"), ("secret", secret)
        ].map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: queryAllowed) ?? "")" }.joined(separator: "&")
        return "otpauth://totp\(label)?\(query)"
    }

    /// A code against a challenge: refused when the challenge is unknown, used, from another
    /// address or expired, when the factor has had too many wrong codes, and when the code is
    /// wrong or its step was already used (each wrong code counts); accepted, a new session
    /// object at `aal2`.
    func verifyTOTP(factor: Factors.Row, challengeID: String?, code: String, userID: String, sessionID: String, client: String) throws -> HTTPResponse {
        // A wrong code is counted and an expired challenge deleted, both committed, then thrown.
        enum Outcome {
            case session(String)
            case refused(AuthError)
        }
        let failureKey = "mfa_verify:factor:\(factor.id)"
        let outcome = try pool.withTransaction { connection -> Outcome in
            guard let factor = try Factors.find(connection, id: factor.id, userID: userID, lock: true) else {
                throw AuthError.mfaFactorNotFound("Factor not found", status: .notFound)
            }
            guard let challengeID, let challenge = try Factors.lockChallenge(connection, id: challengeID, factorID: factor.id) else {
                throw AuthError.mfaFactorNotFound("MFA factor with the provided challenge ID not found", status: .unprocessableContent)
            }
            guard !challenge.verified, challenge.ip == client else { throw AuthError.mfaIPAddressMismatch }
            if challenge.age > config.mfa.challengeExpiry {
                try Factors.deleteChallenge(connection, id: challengeID)
                return .refused(.mfaChallengeExpired(challengeID))
            }
            // The attempt is counted first, atomically (a concurrent burst gets at most the limit
            // checked), and given back when the code is right.
            try RateLimitCounters.check(connection, keys: [failureKey], limit: config.mfa.verifyFailureLimit)
            guard let sealed = factor.secret, let secret = Base32.decode(try factorSecrets.open(sealed, factorID: factor.id)) else {
                throw AuthError.unexpected("factor without a secret")
            }
            let step = TOTP.matchingStep(
                code, secret: secret, at: Date().timeIntervalSince1970, period: Self.totpPeriod, digits: Self.totpDigits, skew: 1)
            let valid = step.map { $0 > factor.lastStep ?? Int64.min } ?? false
            if let refusal = try mfaAttempt(connection, userID: userID, factorID: factor.id, valid: valid) { return .refused(refusal) }
            guard let step, valid else { return .refused(.mfaVerificationFailed) }
            try RateLimitCounters.giveBack(connection, key: failureKey)
            let refreshToken = Self.newRefreshToken()
            let user =
                try Factors.verified(
                    connection, challengeID: challengeID, factorID: factor.id, step: step, userID: userID, sessionID: sessionID,
                    refreshTokenDigest: Self.digest(refreshToken)) ?? "{}"
            let assurance = try Assurance.of(connection, sessionID: sessionID)
            return .session(
                try sessionJSON(connection, userJSON: user, sessionID: sessionID, refreshToken: refreshToken, assurance: assurance, method: "totp"))
        }
        switch outcome {
        case .session(let json): return .json(.ok, json)
        case .refused(let error): throw error
        }
    }
}
