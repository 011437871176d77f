import Foundation
import Identity

/// The factor types of GoTrue's `factor_type`; only `totp` is offered here.
public enum MFAFactorType: String, Sendable, Equatable {
    case totp, phone, webauthn

    /// As GoTrue's messages name it.
    var displayName: String {
        switch self {
        case .totp: return "TOTP"
        case .phone: return "Phone"
        case .webauthn: return "WebAuthn"
        }
    }
}

/// Multi-factor authentication settings (GoTrue's `MFA_*` names in docs/configuration.md).
public struct MFAConfig: Sendable {
    /// `MFA_TOTP_ENROLL_ENABLED`: new TOTP factors may be enrolled.
    public var totpEnrollEnabled = true
    /// `MFA_TOTP_VERIFY_ENABLED`: TOTP factors may be challenged and verified.
    public var totpVerifyEnabled = true
    /// `MFA_MAX_ENROLLED_FACTORS`: factors (verified or not) per user.
    public var maxEnrolledFactors = 10
    /// `MFA_MAX_VERIFIED_FACTORS`: verified factors per user.
    public var maxVerifiedFactors = 10
    /// `MFA_CHALLENGE_EXPIRY_DURATION`: seconds a challenge may be verified (GoTrue's floor: 300).
    public var challengeExpiry: Double = 300
    /// `MFA_FACTOR_EXPIRY_DURATION`: seconds after which an unverified factor never challenged
    /// is removed at the user's next enrolment.
    public var factorExpiry: Double = 300
    /// `MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY`: challenge and verify requests per minute per client.
    public var challengeAndVerifyLimit = RateLimit(hits: 15, window: 60)
    /// Wrong codes per factor within the window before verification of that factor is refused
    /// (429) until the window ends: 10 guesses of a 6-digit code, 3 of which are valid at a time.
    public var verifyFailureLimit = RateLimit(hits: 10, window: 300)
    /// The key new TOTP secrets are sealed with at rest (`SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY`,
    /// 32 bytes) and its name (`SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID`); nil: a key derived
    /// from the JWT secret, named `jwt`. Secrets sealed under the derived key stay readable.
    public var encryptionKey: (id: String, key: [UInt8])?

    public init() {}
}
