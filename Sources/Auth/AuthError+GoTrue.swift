import HTTP

/// GoTrue's words for each `AuthError`: its `error_code`, its message, the OAuth-style errors'
/// `error`, and the rate limits' `Retry-After`.
extension AuthError {
    var code: String {
        switch self {
        case .validationFailed: return "validation_failed"
        case .weakPassword: return "weak_password"
        case .userAlreadyExists: return "user_already_exists"
        case .emailExists: return "email_exists"
        case .invalidCredentials, .passwordAttemptRejected: return "invalid_credentials"
        case .refreshTokenNotFound: return "refresh_token_not_found"
        case .refreshTokenAlreadyUsed: return "refresh_token_already_used"
        case .noAuthorization: return "no_authorization"
        case .badJWT: return "bad_jwt"
        case .sessionNotFound: return "session_not_found"
        case .userNotFound, .userFromTokenNotFound: return "user_not_found"
        case .notAdmin: return "not_admin"
        case .rateLimited: return "over_request_rate_limit"
        case .providerDisabled: return "provider_disabled"
        case .badIDToken, .idToken, .idTokenNonce: return "bad_oauth_callback"
        case .badOAuthState: return "bad_oauth_state"
        case .badOAuthCallback: return "bad_oauth_callback"
        case .oauthProviderNotSupported: return "oauth_provider_not_supported"
        case .externalProviderFailed: return "unexpected_failure"
        case .notFound: return "not_found"
        case .otpExpired: return "otp_expired"
        case .otpDisabled: return "otp_disabled"
        case .emailNotConfirmed, .reauthenticationEmailNotConfirmed: return "email_not_confirmed"
        case .overEmailSendRateLimit: return "over_email_send_rate_limit"
        case .flowStateNotFound: return "flow_state_not_found"
        case .flowStateExpired: return "flow_state_expired"
        case .badCodeVerifier: return "bad_code_verifier"
        case .reauthenticationNeeded: return "reauthentication_needed"
        case .reauthenticationNotValid: return "reauthentication_not_valid"
        case .phoneProviderDisabled, .phoneDisabled: return "phone_provider_disabled"
        case .phoneExists: return "phone_exists"
        case .phoneNotConfirmed: return "phone_not_confirmed"
        case .smsSendFailed: return "sms_send_failed"
        case .overSMSSendRateLimit: return "over_sms_send_rate_limit"
        case .emailProviderDisabled: return "email_provider_disabled"
        case .signupDisabled: return "signup_disabled"
        case .anonymousProviderDisabled: return "anonymous_provider_disabled"
        case .samlProviderDisabled: return "saml_provider_disabled"
        case .oauthServerDisabled: return "feature_disabled"
        case .badJSON: return "bad_json"
        case .oauthClientNotFound, .oauthClientRefused: return "oauth_client_not_found"
        case .oauthDynamicRegistrationDisabled: return "oauth_dynamic_client_registration_disabled"
        case .oauthAuthorizationNotFound: return "oauth_authorization_not_found"
        case .oauthConsentNotFound: return "oauth_consent_not_found"
        case .invalidClientCredentials: return "invalid_credentials"
        case .oauth(let error, _): return error
        case .identityAlreadyExists: return "identity_already_exists"
        case .singleIdentityNotDeletable: return "single_identity_not_deletable"
        case .identityNotFound: return "identity_not_found"
        case .emailConflictIdentityNotDeletable: return "email_conflict_identity_not_deletable"
        case .identityIDNotUUID: return "validation_failed"
        case .linkedEmailExists: return "email_exists"
        case .linkedEmailNotConfirmed: return "email_not_confirmed"
        case .userBanned: return "user_banned"
        case .userWithEmailNotFound: return "user_not_found"
        case .anonymousNotAllowed: return "no_authorization"
        case .factorIDNotUUID: return "validation_failed"
        case .mfaFactorNotFound: return "mfa_factor_not_found"
        case .mfaEnrollDisabled(let type): return "mfa_\(type.rawValue)_enroll_not_enabled"
        case .mfaVerifyDisabled(let type): return "mfa_\(type.rawValue)_verify_not_enabled"
        case .mfaFactorNameConflict: return "mfa_factor_name_conflict"
        case .tooManyEnrolledMFAFactors: return "too_many_enrolled_mfa_factors"
        case .insufficientAAL: return "insufficient_aal"
        case .mfaIPAddressMismatch: return "mfa_ip_address_mismatch"
        case .mfaChallengeExpired: return "mfa_challenge_expired"
        case .mfaVerificationFailed: return "mfa_verification_failed"
        case .mfaVerificationRejected: return "mfa_verification_rejected"
        case .web3ProviderDisabled: return "web3_provider_disabled"
        case .web3UnsupportedChain: return "web3_unsupported_chain"
        case .unsupportedGrantType: return "invalid_credentials"
        case .passkey(let failure): return failure.code
        case .unexpected: return "unexpected_failure"
        // GoTrue's codes for an error without one of its own.
        case .hook(let status, _, let code): return code ?? (status == .internalServerError ? "unexpected_failure" : "unknown")
        }
    }

    var message: String {
        switch self {
        case .validationFailed(let message): return message
        case .weakPassword(let message, _): return message
        case .userAlreadyExists: return "User already registered"
        case .emailExists: return "A user with this email address has already been registered"
        case .invalidCredentials: return "Invalid login credentials"
        case .refreshTokenNotFound: return "Invalid Refresh Token: Refresh Token Not Found"
        case .refreshTokenAlreadyUsed: return "Invalid Refresh Token: Already Used"
        case .noAuthorization: return "This endpoint requires a Bearer token"
        case .badJWT(let why): return "invalid JWT: unable to parse or verify signature, \(why)"
        case .sessionNotFound: return "Session from session_id claim in JWT does not exist"
        case .userNotFound: return "User not found"
        case .userFromTokenNotFound: return "User from sub claim in JWT does not exist"
        case .notAdmin: return "User not allowed"
        case .rateLimited: return "Request rate limit reached"
        case .providerDisabled(let provider): return "Provider (issuer \"\(provider)\") is not enabled"
        case .badIDToken: return "Bad ID token"
        case .idToken(let description): return description
        case .idTokenNonce: return "Nonces mismatch"
        case .badOAuthState(let message), .badOAuthCallback(let message), .oauthProviderNotSupported(let message), .externalProviderFailed(let message):
            return message
        case .notFound: return "Not found"
        case .otpExpired(let link): return link ? "Email link is invalid or has expired" : "Token has expired or is invalid"
        case .otpDisabled: return "Signups not allowed for otp"
        case .emailNotConfirmed: return "Email not confirmed"
        case .reauthenticationEmailNotConfirmed: return "Please verify your email first."
        case .overEmailSendRateLimit(let message, _): return message
        case .flowStateNotFound(let message, _): return message
        case .flowStateExpired: return "invalid flow state, flow state has expired"
        case .badCodeVerifier: return "code challenge does not match previously saved code verifier"
        case .reauthenticationNeeded: return "Password update requires reauthentication"
        case .reauthenticationNotValid: return "Nonce has expired or is invalid"
        case .phoneProviderDisabled: return "Unsupported phone provider"
        case .phoneExists: return "A user with this phone number has already been registered"
        case .phoneNotConfirmed: return "Phone not confirmed"
        case .smsSendFailed(let message), .overSMSSendRateLimit(let message, _): return message
        case .phoneDisabled(let message, _), .emailProviderDisabled(let message, _), .userBanned(let message, _): return message
        case .signupDisabled: return "Signups not allowed for this instance"
        case .anonymousProviderDisabled: return "Anonymous sign-ins are disabled"
        case .samlProviderDisabled: return "SAML 2.0 is disabled"
        case .oauthServerDisabled: return "OAuth server is disabled"
        case .badJSON(let message), .invalidClientCredentials(let message), .oauthClientRefused(let message): return message
        case .oauthClientNotFound: return "OAuth client not found"
        case .oauthDynamicRegistrationDisabled: return "Dynamic client registration is not enabled"
        case .oauthAuthorizationNotFound: return "authorization not found"
        case .oauthConsentNotFound: return "No active grant found for this client"
        case .oauth(_, let description): return description
        case .identityAlreadyExists(let message): return message
        case .singleIdentityNotDeletable: return "User must have at least 1 identity after unlinking"
        case .identityNotFound: return "Identity doesn't exist"
        case .emailConflictIdentityNotDeletable: return "Unable to unlink identity due to email conflict"
        case .identityIDNotUUID: return "identity_id must be an UUID"
        case .linkedEmailExists: return "A user with this email address has already been registered"
        case .linkedEmailNotConfirmed(let provider):
            return "Unverified email with \(provider). A confirmation email has been sent to your \(provider) email"
        case .userWithEmailNotFound: return "User with this email not found"
        case .anonymousNotAllowed: return "Anonymous user not allowed to perform these actions"
        case .factorIDNotUUID: return "factor_id must be an UUID"
        case .mfaFactorNotFound(let message, _): return message
        case .mfaEnrollDisabled(let type): return "MFA enroll is disabled for \(type.displayName)"
        case .mfaVerifyDisabled(let type): return "MFA verification is disabled for \(type.displayName)"
        case .mfaFactorNameConflict(let name): return "A factor with the friendly name \(jsonString(name)) for this user already exists"
        case .tooManyEnrolledMFAFactors: return "Maximum number of verified factors reached, unenroll to continue"
        case .insufficientAAL(let message, _): return message
        case .mfaIPAddressMismatch: return "Challenge and verify IP addresses mismatch."
        case .mfaChallengeExpired(let id): return "MFA challenge \(id) has expired, verify against another challenge or create a new challenge."
        case .mfaVerificationFailed: return "Invalid TOTP code entered"
        case .unexpected: return "Unexpected failure, please check server logs for more information"
        case .hook(_, let message, _), .passwordAttemptRejected(let message), .mfaVerificationRejected(let message): return message
        case .web3ProviderDisabled(let message): return message
        case .web3UnsupportedChain: return "Unsupported chain"
        case .unsupportedGrantType: return "unsupported_grant_type"
        case .passkey(let failure): return failure.message
        }
    }

    /// The id_token grant's failures are answered in OAuth's shape (`error`, `error_description`),
    /// as GoTrue answers them; nil for every other error.
    var oauthError: String? {
        switch self {
        case .badIDToken, .idToken: return "invalid request"
        case .idTokenNonce: return "invalid nonce"
        case .oauth(let error, _): return error
        case .validationFailed, .weakPassword, .userAlreadyExists, .emailExists, .invalidCredentials, .refreshTokenNotFound, .refreshTokenAlreadyUsed,
            .noAuthorization, .badJWT, .sessionNotFound, .userNotFound, .userFromTokenNotFound, .notAdmin, .rateLimited, .providerDisabled, .notFound,
            .badOAuthState, .badOAuthCallback, .oauthProviderNotSupported, .externalProviderFailed,
            .otpExpired, .otpDisabled, .emailNotConfirmed, .reauthenticationEmailNotConfirmed, .overEmailSendRateLimit, .overSMSSendRateLimit,
            .flowStateNotFound, .flowStateExpired,
            .badCodeVerifier, .reauthenticationNeeded, .reauthenticationNotValid, .phoneProviderDisabled, .phoneDisabled, .emailProviderDisabled,
            .phoneExists, .phoneNotConfirmed, .smsSendFailed,
            .signupDisabled, .anonymousProviderDisabled, .samlProviderDisabled, .oauthServerDisabled, .badJSON, .oauthClientNotFound, .oauthClientRefused,
            .oauthDynamicRegistrationDisabled, .oauthAuthorizationNotFound, .oauthConsentNotFound, .invalidClientCredentials,
            .identityAlreadyExists, .singleIdentityNotDeletable,
            .identityNotFound, .emailConflictIdentityNotDeletable, .identityIDNotUUID, .linkedEmailExists, .linkedEmailNotConfirmed, .userBanned,
            .userWithEmailNotFound, .anonymousNotAllowed, .factorIDNotUUID, .mfaFactorNotFound, .mfaEnrollDisabled, .mfaVerifyDisabled, .mfaFactorNameConflict,
            .tooManyEnrolledMFAFactors, .insufficientAAL, .mfaIPAddressMismatch, .mfaChallengeExpired, .mfaVerificationFailed, .unexpected, .hook,
            .passwordAttemptRejected,
            .mfaVerificationRejected, .web3ProviderDisabled, .web3UnsupportedChain, .unsupportedGrantType, .passkey:
            return nil
        }
    }

    /// Seconds before the client may try again (`Retry-After`): the rate limits only.
    var retryAfter: Int? {
        switch self {
        case .rateLimited(let seconds), .overEmailSendRateLimit(_, let seconds), .overSMSSendRateLimit(_, let seconds): return seconds
        case .validationFailed, .weakPassword, .userAlreadyExists, .emailExists, .invalidCredentials, .refreshTokenNotFound, .refreshTokenAlreadyUsed,
            .noAuthorization, .badJWT, .sessionNotFound, .userNotFound, .userFromTokenNotFound, .notAdmin, .providerDisabled, .badIDToken, .idToken,
            .idTokenNonce, .badOAuthState, .badOAuthCallback, .oauthProviderNotSupported, .externalProviderFailed, .notFound, .otpExpired, .otpDisabled,
            .emailNotConfirmed, .reauthenticationEmailNotConfirmed, .flowStateNotFound, .flowStateExpired,
            .badCodeVerifier, .reauthenticationNeeded, .reauthenticationNotValid, .phoneProviderDisabled, .phoneDisabled, .emailProviderDisabled,
            .phoneExists, .phoneNotConfirmed, .smsSendFailed,
            .signupDisabled, .anonymousProviderDisabled, .samlProviderDisabled, .oauthServerDisabled, .badJSON, .oauthClientNotFound, .oauthClientRefused,
            .oauthDynamicRegistrationDisabled, .oauthAuthorizationNotFound, .oauthConsentNotFound, .invalidClientCredentials, .oauth,
            .identityAlreadyExists, .singleIdentityNotDeletable,
            .identityNotFound, .emailConflictIdentityNotDeletable, .identityIDNotUUID, .linkedEmailExists, .linkedEmailNotConfirmed, .userBanned,
            .userWithEmailNotFound, .anonymousNotAllowed, .factorIDNotUUID, .mfaFactorNotFound, .mfaEnrollDisabled, .mfaVerifyDisabled, .mfaFactorNameConflict,
            .tooManyEnrolledMFAFactors, .insufficientAAL, .mfaIPAddressMismatch, .mfaChallengeExpired, .mfaVerificationFailed, .unexpected, .hook,
            .passwordAttemptRejected,
            .mfaVerificationRejected, .web3ProviderDisabled, .web3UnsupportedChain, .unsupportedGrantType, .passkey:
            return nil
        }
    }
}
