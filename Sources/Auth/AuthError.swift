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
