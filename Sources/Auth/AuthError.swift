import HTTP

/// Every way an Auth request fails, rendered as GoTrue renders it: with
/// `X-Supabase-Api-Version: 2024-01-01` on the request, `{"code","message"}` plus the echoed
/// version and `x-sb-error-code`; without it, the legacy `{"code":<status>,"error_code","msg"}`.
public enum AuthError: Error, HTTPResponseError, Equatable {
    case validationFailed(String)
    case weakPassword(String, reasons: [String])
    case userAlreadyExists
    case emailExists
    case invalidCredentials
    case refreshTokenNotFound
    case refreshTokenAlreadyUsed
    case noAuthorization
    case badJWT(String)
    case sessionNotFound
    /// The admin API's unknown user (404).
    case userNotFound
    /// The user named by a still-valid token's `sub` no longer exists (403: clients sign out).
    case userFromTokenNotFound
    case notAdmin
    /// 429: `retryAfter` seconds until the window that refused the request ends (`Retry-After`).
    case rateLimited(retryAfter: Int)
    case providerDisabled(String)
    /// OAuth-style `{"error":"invalid request","error_description":"Bad ID token"}` (no code).
    case badIDToken
    /// Other id_token refusals GoTrue words as OAuth errors: `invalid request` with a description.
    case idToken(String)
    /// `{"error":"invalid nonce","error_description":"Nonces mismatch"}`.
    case idTokenNonce
    /// The redirect flow's state: forged, altered, expired (400 `bad_oauth_state`).
    case badOAuthState(String)
    /// A callback without its state or its code (400 `bad_oauth_callback`).
    case badOAuthCallback(String)
    /// A callback whose state names a provider not enabled (400 `oauth_provider_not_supported`).
    case oauthProviderNotSupported(String)
    /// The provider could not be reached or answered what cannot be used (500, in GoTrue's words).
    case externalProviderFailed(String)
    case notFound
    /// A wrong, used or expired code (`link: false`) or link token (`link: true`).
    case otpExpired(link: Bool)
    /// `/otp` with `create_user: false` for an address nobody has.
    case otpDisabled
    /// Password sign-in before the address is confirmed (400).
    case emailNotConfirmed
    /// `/reauthenticate` before the address is confirmed (422).
    case reauthenticationEmailNotConfirmed
    /// The per-address resend interval or the mail budget (429).
    case overEmailSendRateLimit(String, retryAfter: Int)
    /// A PKCE code nobody issued, or one already exchanged (404); at `GET /verify`, a `pkce_`
    /// token without its flow (400).
    case flowStateNotFound(String, status: HTTPStatus)
    case flowStateExpired
    case badCodeVerifier
    case reauthenticationNeeded
    case reauthenticationNotValid
    case phoneProviderDisabled
    /// A number another user has (422).
    case phoneExists
    /// Password sign-in by number before the number is confirmed (400).
    case phoneNotConfirmed
    /// The SMS provider refused or could not be reached (422), with GoTrue's words.
    case smsSendFailed(String)
    /// The per-number resend interval or the SMS budget (429).
    case overSMSSendRateLimit(String, retryAfter: Int)
    /// A phone sign-up or sign-in: `Phone signups are disabled` (400), `Phone logins are
    /// disabled` (422).
    case phoneDisabled(String, status: HTTPStatus)
    /// `EXTERNAL_EMAIL_ENABLED=false`: `Email signups are disabled`, `Email logins are disabled`
    /// (400 or 422, as GoTrue answers each endpoint).
    case emailProviderDisabled(String, status: HTTPStatus)
    /// `DISABLE_SIGNUP`: a new user by sign-up, anonymous sign-in or id_token (422).
    case signupDisabled
    /// `EXTERNAL_ANONYMOUS_USERS_ENABLED=false` (422).
    case anonymousProviderDisabled
    /// `/sso…`: SAML is not offered (404).
    case samlProviderDisabled
    /// The OAuth 2.1 server's endpoints with `OAUTH_SERVER_ENABLED` off (404).
    case oauthServerDisabled
    /// A body that is not the JSON GoTrue decodes (400), in the words of the endpoint.
    case badJSON(String)
    /// An OAuth client id nobody registered, or one deleted (404).
    case oauthClientNotFound
    /// `/oauth/authorize` naming no registered client (400, code `oauth_client_not_found`).
    case oauthClientRefused(String)
    /// `POST /oauth/clients/register` with `OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION` off (403).
    case oauthDynamicRegistrationDisabled
    /// An authorization request that does not exist, has expired, or is another user's (404).
    case oauthAuthorizationNotFound
    /// Revoking a grant the user has not given (404).
    case oauthConsentNotFound
    /// The token endpoint's client authentication failed (400 `invalid_credentials`).
    case invalidClientCredentials(String)
    /// The token endpoint's RFC 6749 §5.2 errors: `{"error","error_description"}`, 400.
    case oauth(String, description: String)
    /// Linking an identity that is linked already (422): to this user or to another.
    case identityAlreadyExists(String)
    /// Unlinking the last identity (422).
    case singleIdentityNotDeletable
    /// Unlinking an identity the user does not have (422).
    case identityNotFound
    /// Unlinking an identity whose removal would give the user an e-mail another user holds (422).
    case emailConflictIdentityNotDeletable
    /// An `identity_id` in the path that is not a UUID (404).
    case identityIDNotUUID
    /// A linked identity's e-mail that another user holds (400, as GoTrue words linking's conflict).
    case linkedEmailExists
    /// Linking an identity whose e-mail its provider has not verified: the confirmation mail is
    /// sent and this is the answer (422).
    case linkedEmailNotConfirmed(provider: String)
    /// A banned user (`ban_duration`): 400 at the token endpoint, 403 elsewhere.
    case userBanned(String, status: HTTPStatus)
    /// `/admin/generate_link` for a recovery or e-mail change of an address nobody has (404).
    case userWithEmailNotFound
    /// `/factors` with an anonymous user's token (403).
    case anonymousNotAllowed
    /// A `factor_id` in the path that is not a UUID (404).
    case factorIDNotUUID
    /// The caller has no such factor (404), or the factor no such challenge (422).
    case mfaFactorNotFound(String, status: HTTPStatus)
    /// Enrolment of a factor type this server does not offer: `totp`, `phone` or `webauthn`.
    case mfaEnrollDisabled(MFAFactorType)
    case mfaVerifyDisabled(MFAFactorType)
    case mfaFactorNameConflict(String)
    case tooManyEnrolledMFAFactors
    /// A verified factor exists and the session is not `aal2`: 403 to enrol, 422 to unenrol.
    case insufficientAAL(String, status: HTTPStatus)
    /// The challenge was verified already or asked for from another address.
    case mfaIPAddressMismatch
    case mfaChallengeExpired(String)
    case mfaVerificationFailed
    case unexpected(String)
    /// A hook refused (its `error`, with its `http_code`, else 500) or failed (GoTrue's status,
    /// words and code; nil: GoTrue's code for an error without one).
    case hook(status: HTTPStatus, message: String, code: String? = nil)
    /// The password verification attempt hook rejected the sign-in, with its message.
    case passwordAttemptRejected(String)
    /// The MFA verification attempt hook rejected the code, with its message.
    case mfaVerificationRejected(String)
    /// `EXTERNAL_WEB3_SOLANA_ENABLED` / `EXTERNAL_WEB3_ETHEREUM_ENABLED` off (422), in GoTrue's
    /// words for both or for the chain asked for.
    case web3ProviderDisabled(String)
    /// `grant_type=web3` with a `chain` other than `ethereum` and `solana` (400).
    case web3UnsupportedChain
    /// `POST /token` with a `grant_type` GoTrue does not know (400 `invalid_credentials`).
    case unsupportedGrantType
    case passkey(PasskeyFailure)

    var status: HTTPStatus {
        switch self {
        case .validationFailed, .invalidCredentials, .refreshTokenNotFound, .refreshTokenAlreadyUsed, .providerDisabled, .badIDToken, .idToken, .idTokenNonce:
            return .badRequest
        case .badOAuthState, .badOAuthCallback, .oauthProviderNotSupported: return .badRequest
        case .externalProviderFailed: return .internalServerError
        case .weakPassword, .userAlreadyExists, .emailExists, .otpDisabled, .reauthenticationEmailNotConfirmed, .flowStateExpired,
            .reauthenticationNotValid:
            return .unprocessableContent
        case .emailNotConfirmed, .badCodeVerifier, .reauthenticationNeeded, .phoneProviderDisabled, .phoneNotConfirmed: return .badRequest
        case .phoneExists, .smsSendFailed: return .unprocessableContent
        case .overSMSSendRateLimit: return .tooManyRequests
        case .phoneDisabled(_, let status), .emailProviderDisabled(_, let status), .userBanned(_, let status): return status
        case .signupDisabled, .anonymousProviderDisabled, .identityAlreadyExists, .singleIdentityNotDeletable, .identityNotFound,
            .linkedEmailNotConfirmed, .emailConflictIdentityNotDeletable:
            return .unprocessableContent
        case .samlProviderDisabled, .oauthServerDisabled, .identityIDNotUUID, .userWithEmailNotFound: return .notFound
        case .oauthClientNotFound, .oauthAuthorizationNotFound, .oauthConsentNotFound: return .notFound
        case .badJSON, .invalidClientCredentials, .oauth, .oauthClientRefused: return .badRequest
        case .oauthDynamicRegistrationDisabled: return .forbidden
        case .linkedEmailExists: return .badRequest
        case .otpExpired: return .forbidden
        case .overEmailSendRateLimit: return .tooManyRequests
        case .flowStateNotFound(_, let status): return status
        case .noAuthorization: return .unauthorized
        case .badJWT, .sessionNotFound, .userFromTokenNotFound, .notAdmin: return .forbidden
        case .userNotFound, .notFound: return .notFound
        case .anonymousNotAllowed: return .forbidden
        case .factorIDNotUUID: return .notFound
        case .mfaFactorNotFound(_, let status), .insufficientAAL(_, let status): return status
        case .mfaEnrollDisabled, .mfaVerifyDisabled, .mfaFactorNameConflict, .tooManyEnrolledMFAFactors, .mfaIPAddressMismatch,
            .mfaChallengeExpired, .mfaVerificationFailed:
            return .unprocessableContent
        case .rateLimited: return .tooManyRequests
        case .unexpected: return .internalServerError
        case .hook(let status, _, _): return status
        case .passwordAttemptRejected: return .badRequest
        case .mfaVerificationRejected: return .forbidden
        case .web3ProviderDisabled: return .unprocessableContent
        case .web3UnsupportedChain, .unsupportedGrantType: return .badRequest
        case .passkey(let failure): return failure.status
        }
    }

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

    public func response(for request: HTTPRequest) -> HTTPResponse {
        var headers = HTTPHeaders()
        if let oauthError {
            return .json(
                .badRequest, #"{"error":\#(jsonString(oauthError)),"error_description":\#(jsonString(message))}"#, headers: ["x-sb-error-code": code])
        }
        var body: String
        if let version = request.headers["X-Supabase-Api-Version"], version >= "2024-01-01" {
            headers.add("X-Supabase-Api-Version", "2024-01-01")
            body = #"{"code":\#(jsonString(code)),"message":\#(jsonString(message))"#
        } else {
            body = #"{"code":\#(status.code),"error_code":\#(jsonString(code)),"msg":\#(jsonString(message))"#
        }
        if case .weakPassword(_, let reasons) = self {
            body += #","weak_password":{"reasons":[\#(reasons.map(jsonString).joined(separator: ","))]}"#
        }
        body += "}"
        headers.add("x-sb-error-code", code)
        if let retryAfter { headers.add("Retry-After", String(retryAfter)) }
        return .json(status, body, headers: headers)
    }
}
