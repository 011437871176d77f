import Auth
import Foundation
import Identity

/// The MFA settings from the environment, with GoTrue's names (without its `GOTRUE_` prefix);
/// the configuration table of docs/configuration.md lists them.
extension MFAConfig {
    mutating func apply(environment: [String: String]) throws {
        let env = EnvironmentReader(environment)
        if let on = try env.boolean("MFA_TOTP_ENROLL_ENABLED") { totpEnrollEnabled = on }
        if let on = try env.boolean("MFA_TOTP_VERIFY_ENABLED") { totpVerifyEnabled = on }
        if let value = try env.integer("MFA_MAX_ENROLLED_FACTORS", minimum: 1) { maxEnrolledFactors = value }
        if let value = try env.integer("MFA_MAX_VERIFIED_FACTORS", minimum: 1) { maxVerifiedFactors = value }
        // GoTrue's floors: 300 s for both.
        if let value = try env.seconds("MFA_CHALLENGE_EXPIRY_DURATION") { challengeExpiry = max(300, value) }
        if let value = try env.seconds("MFA_FACTOR_EXPIRY_DURATION") { factorExpiry = max(300, value) }
        if let value = try env.integer("MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY", minimum: 1) { challengeAndVerifyLimit = RateLimit(hits: value, window: 60) }
        if let text = env.value("SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY") {
            guard let key = Base64URL.decode(Substring(text.trimmingCharacters(in: CharacterSet(charactersIn: "=")))), key.count == 32 else {
                throw ConfigurationError("SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY must be 32 bytes in base64url")
            }
            let id = env.value("SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID") ?? "onboard"
            guard id != "jwt" else { throw ConfigurationError("SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID must not be \"jwt\" (the derived key's name)") }
            encryptionKey = (id, key)
        }
    }

    /// The settings as `--print-config` shows them.
    func summaryRows() -> [(String, String)] {
        [
            ("MFA_TOTP_ENROLL_ENABLED", "\(totpEnrollEnabled)"), ("MFA_TOTP_VERIFY_ENABLED", "\(totpVerifyEnabled)"),
            ("MFA_MAX_ENROLLED_FACTORS", "\(maxEnrolledFactors)"), ("MFA_MAX_VERIFIED_FACTORS", "\(maxVerifiedFactors)"),
            ("MFA_CHALLENGE_EXPIRY_DURATION", "\(Int(challengeExpiry)) s"), ("MFA_FACTOR_EXPIRY_DURATION", "\(Int(factorExpiry)) s"),
            ("MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY", "\(challengeAndVerifyLimit.hits) per minute"),
            ("SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY", encryptionKey.map { "(set, id \($0.id))" } ?? "(unset: derived from JWT_SECRET)")
        ]
    }
}
