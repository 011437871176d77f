import Foundation
import HTTP
import Identity

/// An Auth request parsed into GoTrue's terms before any I/O: the endpoint and its typed body,
/// as the reader of its line in `AuthRoute.table` returns it. Pure (method, route, query, body
/// in; a value or an `AuthError` out), so it is table-tested and fuzzed; the handlers in
/// `AuthService` never look at raw JSON.
public enum AuthRequest: Sendable, Equatable {
    case health
    /// `GET /.well-known/jwks.json`: the public keys of access tokens.
    case jwks
    /// `GET /.well-known/openid-configuration`.
    case openIDConfiguration
    case settings
    case signUp(SignUp)
    case token(TokenGrant)
    case getUser
    case updateUser(UserChanges)
    case logout(LogoutScope)
    case admin(Admin)
    case recover(Recover)
    case otp(OTP)
    /// `POST /otp` with a number.
    case phoneOTP(PhoneOTP)
    case resend(Resend)
    /// `POST /resend` with type `sms` or `phone_change`.
    case phoneResend(PhoneResend)
    /// `POST /verify`.
    case verify(Verify)
    /// `GET /verify`: the link in a mail.
    case verifyLink(VerifyLink)
    case reauthenticate
    /// `/factors…`: multi-factor authentication.
    case mfa(MFA)
    /// `DELETE /user/identities/{identity_id}`: nil when the id is not a UUID.
    case deleteIdentity(String?)
    /// GoTrue's OAuth 2.1 server.
    case oauthServer(OAuthServerRequest)
    /// `GET /authorize` and `GET /user/identities/authorize`: the redirect to a provider.
    case externalAuthorize(ExternalAuthorize, link: Bool)
    /// `GET|POST /callback`: the provider's answer (`state`, `code`, `error`, Apple's `user`).
    case externalCallback([String: String])

    /// The query of `/authorize`.
    public struct ExternalAuthorize: Sendable, Equatable {
        public var provider: String
        /// `scopes`: added to the provider's own.
        public var scopes: String
        public var redirectTo: String?
        public var pkce: PKCEChallenge?
        /// `skip_http_redirect=true`: linking answers `{"url"}` instead of a 302.
        public var skipHTTPRedirect = false
        /// The other parameters, passed on to the provider as GoTrue passes them (`prompt`,
        /// `login_hint`, …), without the ones the server sets.
        public var extra: [String: String] = [:]
    }

    /// `/passkeys…`: the signed-in user's passkeys.
    case passkey(Passkey)

    /// The user's own passkey endpoints. A passkey id is nil when the path's is not a UUID
    /// (GoTrue answers `Passkey not found`).
    public enum Passkey: Sendable, Equatable {
        case list
        /// `PATCH /passkeys/{passkey_id}`: the new name, checked (empty when the id is nil).
        case rename(id: String?, friendlyName: String)
        case delete(id: String?)
        case registrationOptions
        case registrationVerify(PasskeyAnswer)
        case authenticationOptions
        case authenticationVerify(PasskeyAnswer)
    }

    /// A ceremony's answer: the challenge's id (a UUID) and the credential's JSON, parsed once
    /// the challenge is consumed.
    public struct PasskeyAnswer: Sendable, Equatable {
        public var challengeID: String
        public var credentialJSON: String
    }

    public struct SignUp: Sendable, Equatable {
        /// Trimmed and lower-cased; nil when absent or empty (then it is an anonymous sign-up).
        public var email: String?
        public var phone: String?
        public var password: String?
        /// `data`, the user metadata, as JSON object text.
        public var metadataJSON: String
        public var pkce: PKCEChallenge? = nil
        /// The `redirect_to` query parameter (validated against SITE_URL later).
        public var redirectTo: String? = nil
        /// How a phone sign-up's code is sent (`sms` or `whatsapp`).
        public var channel = "sms"
    }

    /// `code_challenge` and `code_challenge_method`, both given and well-formed.
    public struct PKCEChallenge: Sendable, Equatable {
        public var challenge: String
        /// `s256` or `plain`.
        public var method: String
    }

    /// `POST /recover`.
    public struct Recover: Sendable, Equatable {
        public var email: String
        public var pkce: PKCEChallenge?
        public var redirectTo: String?
    }

    /// `POST /otp` with an e-mail (magic link and code).
    public struct OTP: Sendable, Equatable {
        public var email: String
        public var createUser: Bool
        public var metadataJSON: String
        public var pkce: PKCEChallenge?
        public var redirectTo: String?
    }

    /// `POST /otp` with a number (as given; normalized by the handler, after the provider switch).
    public struct PhoneOTP: Sendable, Equatable {
        public var phone: String
        public var createUser: Bool
        public var metadataJSON: String
        public var channel: String
    }

    /// `POST /resend` with a number (normalized).
    public struct PhoneResend: Sendable, Equatable {
        public enum Kind: String, Sendable, Equatable { case sms, phoneChange = "phone_change" }
        public var kind: Kind
        public var phone: String
    }

    /// `POST /resend`.
    public struct Resend: Sendable, Equatable {
        public enum Kind: String, Sendable, Equatable { case signup, emailChange = "email_change" }
        public var kind: Kind
        public var email: String
        public var pkce: PKCEChallenge?
        public var redirectTo: String?
    }

    /// The verification types: e-mail tokens, then the codes sent by SMS.
    public enum VerifyType: String, Sendable, Equatable {
        case signup, invite, recovery, magiclink, emailChange = "email_change", email
        case sms, phoneChange = "phone_change"
    }

    /// `POST /verify`: a code with the address it was mailed to, or a link's token (`token_hash`).
    public struct Verify: Sendable, Equatable {
        public enum Credential: Sendable, Equatable {
            case otp(email: String, token: String)
            /// A code sent by SMS, with its number (normalized).
            case sms(phone: String, token: String)
            case tokenHash(String)
        }
        public var type: VerifyType
        public var credential: Credential
        public var redirectTo: String?
    }

    /// `GET /verify?token=…&type=…&redirect_to=…`.
    public struct VerifyLink: Sendable, Equatable {
        public var token: String
        public var type: VerifyType
        public var redirectTo: String?
    }

    public enum TokenGrant: Sendable, Equatable {
        case password(email: String, phone: String?, password: String?)
        case refreshToken(String?)
        case idToken(IDTokenGrant)
        case pkce(authCode: String, codeVerifier: String)
        case web3(Web3Grant)
        case unsupported(String)
    }

    /// `grant_type=web3`: the signed message and its signature as the client sends them.
    public struct Web3Grant: Sendable, Equatable {
        public var chain: String
        public var message: String
        public var signature: String
    }

    public struct IDTokenGrant: Sendable, Equatable {
        public var idToken: String?
        public var provider: String?
        public var nonce: String?
        /// `link_identity`: link the identity to the bearer's user instead of signing in.
        public var linkIdentity = false
    }

    /// `PUT /user` and `PUT /admin/users/{id}`.
    public struct UserChanges: Sendable, Equatable {
        public var email: String?
        public var password: String?
        /// A new number (`PUT /user` only; as given, normalized by the handler).
        public var phone: String? = nil
        /// How the new number's code is sent.
        public var channel = "sms"
        /// Metadata to merge (a null value deletes a key), as JSON object text.
        public var metadataJSON: String?
        /// The reauthentication code (`PUT /user` only).
        public var nonce: String? = nil
        /// With an e-mail change (`PUT /user` only).
        public var pkce: PKCEChallenge? = nil
        public var redirectTo: String? = nil
        /// `app_metadata` to merge (admin API only).
        public var appMetadataJSON: String? = nil
        /// `email_confirm: true` confirms the address (admin API only).
        public var emailConfirm = false
        /// `ban_duration` (admin API only).
        public var ban: BanDuration? = nil
    }

    /// `ban_duration`: a Go duration from now, or `none` (and any zero duration) to lift a ban.
    public enum BanDuration: Sendable, Equatable {
        case lifted
        case seconds(Double)
    }

    /// `POST /admin/users`.
    public struct AdminNewUser: Sendable, Equatable {
        public var email: String?
        public var password: String?
        public var metadataJSON = "{}"
        public var appMetadataJSON: String?
        public var emailConfirmed = false
        public var ban: BanDuration?
    }

    /// `POST /admin/generate_link`.
    public struct GenerateLink: Sendable, Equatable {
        public enum Kind: String, Sendable, Equatable, CaseIterable {
            case signup, invite, magiclink, recovery
            case emailChangeCurrent = "email_change_current"
            case emailChangeNew = "email_change_new"
        }
        public var kind: Kind
        public var email: String
        public var newEmail: String?
        public var password: String?
        public var metadataJSON: String?
        public var redirectTo: String?
    }

    /// The factor endpoints. A factor id is nil when the path's is not a UUID (GoTrue answers 404
    /// once the caller is authenticated).
    public enum MFA: Sendable, Equatable {
        case enroll(Enroll)
        case challenge(factorID: String?)
        /// `challengeID` nil when absent (no challenge has it).
        case verify(factorID: String?, challengeID: String?, code: String)
        case unenroll(factorID: String?)
    }

    /// `POST /factors`.
    public struct Enroll: Sendable, Equatable {
        public var type: MFAFactorType
        public var friendlyName: String
        /// Nil: the host of SITE_URL.
        public var issuer: String?
    }

    public enum LogoutScope: String, Sendable, Equatable { case global, local, others }

    public enum Admin: Sendable, Equatable {
        case listUsers(page: Int, perPage: Int)
        case createUser(AdminNewUser)
        /// `POST /admin/generate_link`.
        case generateLink(GenerateLink)
        /// `POST /invite` (an admin endpoint outside `/admin`): the address and the metadata.
        case invite(email: String, metadataJSON: String, redirectTo: String?)
        /// The id as given; nil when it is not a UUID (GoTrue answers 404).
        case getUser(String?)
        case updateUser(String?, UserChanges)
        case deleteUser(String?)
        /// `GET /admin/users/{id}/factors`.
        case listFactors(String?)
        /// `PUT /admin/users/{id}/factors/{factor_id}`: a new friendly name (empty: unchanged).
        case updateFactor(String?, factorID: String?, friendlyName: String)
        /// `DELETE /admin/users/{id}/factors/{factor_id}`.
        case deleteFactor(String?, factorID: String?)
        /// `GET /admin/users/{id}/passkeys`.
        case listPasskeys(String?)
        /// `DELETE /admin/users/{id}/passkeys/{passkey_id}`.
        case deletePasskey(String?, passkeyID: String?)
    }
}
