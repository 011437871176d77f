import Foundation
import HTTP
import Identity
import Logging
import Postgres
import Synchronization

public struct AuthConfig: Sendable {
    public var keys: KeyConfig
    /// Access-token lifetime, seconds.
    public var jwtExpiry = 3600
    /// The app's URL (GoTrue's SITE_URL): where links lead when no redirect is given.
    public var siteURL = "http://127.0.0.1:3000"
    /// The `iss` of access tokens.
    public var issuer = "http://127.0.0.1:54321/auth/v1"
    public var bcryptCost = Password.defaultCost
    public var minimumPasswordLength = 6
    /// Password, id_token sign-ins and sign-ups per window, per client address and per e-mail
    /// (GoTrue's RATE_LIMIT_SIGN_IN_SIGN_UPS: 30 per 5 minutes).
    public var signInLimit = RateLimit(hits: 30, window: 300)
    /// Refresh-token grants per window per client address (GoTrue's RATE_LIMIT_TOKEN_REFRESH).
    public var refreshLimit = RateLimit(hits: 150, window: 300)
    /// The header naming the client behind a trusted proxy (GoTrue's RATE_LIMIT_HEADER, e.g.
    /// `X-Forwarded-For`); nil: the TCP peer. Never read when not configured: a client could
    /// then choose its own budget.
    public var rateLimitHeader: String?
    public var refreshReuseInterval: Double = 10
    /// `JWT_ADMIN_ROLES`: the token roles the admin API accepts (GoTrue's default).
    public var adminRoles: Set<String> = ["service_role", "supabase_admin"]
    public var providers: [String: IDTokenProvider] = [:]
    /// `DISABLE_SIGNUP`: no new users by sign-up, anonymous sign-in, `/otp` or id_token (the
    /// admin API and invitations still create them).
    public var disableSignup = false
    /// `EXTERNAL_ANONYMOUS_USERS_ENABLED` (on here; GoTrue's default is off).
    public var anonymousUsersEnabled = true
    /// `EXTERNAL_EMAIL_ENABLED`: e-mail sign-up, password sign-in, `/otp`, `/recover`, `/resend`.
    public var emailEnabled = true
    /// The e-mail flows (confirmation, recovery, magic link, e-mail change, PKCE).
    public var mail = MailConfig()
    /// The phone provider and its codes sent by SMS.
    public var sms = SMSConfig()
    /// Multi-factor authentication (TOTP).
    public var mfa = MFAConfig()
    /// GoTrue's hooks (PostgreSQL functions or HTTPS endpoints), each off by default.
    public var hooks = AuthHooks()
    /// GoTrue's OAuth 2.1 server (off by default).
    public var oauthServer = OAuthServerConfig()
    /// Sign-in with Ethereum and Solana wallets (`grant_type=web3`, off by default).
    public var web3 = Web3Config()
    /// The providers of the OAuth redirect flow (`EXTERNAL_<NAME>_ENABLED`), by name.
    public var external: [String: ExternalProvider] = [:]
    /// Passkeys (WebAuthn credentials) and their relying party (off by default).
    public var passkey = PasskeyConfig()

    public init(keys: KeyConfig) {
        self.keys = keys
    }

    /// Where the mails go: the send-email hook when on (GoTrue: the hook replaces the mail
    /// server), else `SMTP_HOST`, else the log.
    public var mailTransport: MailTransport {
        if let hook = hooks.sendEmail { return .hook(hook, hooks) }
        return mail.smtp.map { .smtp($0, mail.sender) } ?? .log
    }

    /// The request budgets ten times GoTrue's (sign-in/sign-up, refresh, OTP requests, verify,
    /// MFA challenges and verifications), for a development server. The counters of wrong
    /// guesses (codes, MFA codes) keep their limits.
    public mutating func relaxRequestLimitsForDevelopment() {
        for limit in [
            \AuthConfig.signInLimit, \.refreshLimit, \.mail.otpRequestLimit, \.mail.verifyLimit, \.mfa.challengeAndVerifyLimit, \.web3.limit, \.passkey.limit
        ] {
            self[keyPath: limit].hits *= 10
        }
    }
}

/// GoTrue's dialect under `/auth/v1`. Auth statements run as the login role (no role switch),
/// each operation in one transaction.
public final class AuthService: Sendable {
    let pool: Pool
    let config: AuthConfig
    let logger: Logger
    /// Delivers the flows' mails off the request path.
    public let mailer: Mailer
    /// The hooks' calls, for `/metrics` (the mail senders' send-email hook calls among them).
    public var hookCalls: AuthHookCalls { mailer.hookCalls }
    /// The redirect flow's providers' discovery documents and key sets.
    let external = ExternalDirectory()

    public init(pool: Pool, config: AuthConfig, logger: Logger = Logger(label: "onboard.auth"), mailer: Mailer? = nil) {
        self.pool = pool
        self.config = config
        self.logger = logger
        self.mailer = mailer ?? Mailer(transport: .log, conninfo: pool.conninfo, logger: logger)
    }

    /// What every Auth request passes before `respond`, outermost first: the API-version header.
    public static let stages: [any Middleware] = [APIVersionStage()]

    /// Serves `route` (the path after `/auth/v1`); the answer still passes `stages` on its way out.
    public func respond(to request: HTTPRequest, route: String) -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try dispatch(request, route: route)
        } catch let error as AuthError {
            response = error.response(for: request)
        } catch {
            // The cause goes to the log once, never to the client.
            logger.error("auth request failed", metadata: ["request.id": "\(request.id)", "path": "\(request.path)", "error": "\(logText(error))"])
            response = AuthError.unexpected("\(error)").response(for: request)
        }
        return response
    }

    /// Serves the request by its line of `AuthRoute.table`, in GoTrue's order: the caller, then
    /// the query and body, the provider switch, the budgets, and the handler.
    func dispatch(_ request: HTTPRequest, route: String) throws -> HTTPResponse {
        guard let (line, parameters) = AuthRoute.find(method: request.method, route: route, query: request.query) else { throw AuthError.notFound }
        if let needs = line.needs, needs.isCheckedBeforeAdmission { try check(needs, nil) }
        let caller = try admit(line.caller, request)
        if let needs = line.needs, needs.isCheckedBeforeReading { try check(needs, nil) }
        let parsed = try line.read(
            AuthRoute.Input(method: request.method, parameters: parameters, query: request.query, body: request.body, headers: request.headers))
        if let needs = line.needs, !needs.isCheckedBeforeReading { try check(needs, parsed) }
        for budget in config.budgets(line.budgets, for: parsed, client: clientAddress(request)) { try spend(budget) }
        return try handle(parsed, request, caller: caller)
    }

    /// Runs the handler of a parsed request. `caller` is the signed-in user of a `.session` line.
    func handle(_ parsed: AuthRequest, _ request: HTTPRequest, caller: SignedIn?) throws -> HTTPResponse {
        func signedIn() throws -> SignedIn {
            guard let caller else { throw AuthError.noAuthorization }
            return caller
        }
        switch parsed {
        case .health:
            return .json(.ok, #"{"version":"onboard","name":"GoTrue","description":"GoTrue-compatible auth of onboard"}"#)
        case .settings:
            return .json(.ok, settingsJSON())
        case .jwks:
            var response = HTTPResponse.json(.ok, jwksJSON())
            response.headers.replace("Cache-Control", "public, max-age=600")
            return response
        case .openIDConfiguration:
            // GoTrue serves one document for both discoveries once the OAuth server is on.
            return .json(.ok, config.oauthServer.enabled ? authorizationServerMetadataJSON() : openIDConfigurationJSON())
        case .signUp(let signUp):
            if let phone = signUp.phone, signUp.email == nil { return try signUpWithPhone(signUp, phone: phone) }
            if let email = signUp.email, !config.mail.autoconfirm {
                return try signUpAwaitingConfirmation(signUp, email: email, request: request)
            }
            return try self.signUp(signUp)
        case .token(let grant):
            return try token(grant, request: request)
        case .getUser:
            return .json(.ok, try userJSON(try signedIn().userID, missing: .userFromTokenNotFound))
        case .updateUser(let changes):
            return try updateSignedInUser(request, try signedIn(), changes)
        case .logout(let scope):
            return try logout(try signedIn(), scope: scope)
        case .admin(let operation):
            return try admin(request, operation)
        case .recover(let body):
            return try recover(body, request: request)
        case .otp(let body):
            return try sendOTP(body, request: request)
        case .phoneOTP(let body):
            return try sendPhoneOTP(body)
        case .resend(let body):
            return try resend(body, request: request)
        case .phoneResend(let body):
            return try resendPhone(body)
        case .verify(let body):
            return try verify(body, request: request)
        case .verifyLink(let link):
            return try verifyLink(link, request: request)
        case .reauthenticate:
            return try reauthenticate(try signedIn())
        case .mfa(let operation):
            return try mfa(request, try signedIn(), operation)
        case .deleteIdentity(let identityID):
            return try unlinkIdentity(try signedIn(), identityID: identityID)
        case .oauthServer(let operation):
            return try oauthServer(request, operation, caller: caller)
        case .externalAuthorize(let authorize, let link):
            return try externalAuthorize(authorize, request: request, linkTo: link ? try signedIn().userID : nil)
        case .externalCallback(let fields):
            return externalCallback(fields, request: request)
        case .passkey(let operation):
            return try passkeys(caller, operation)
        }
    }

    /// GoTrue's order: an anonymous sign-up needs the anonymous provider, then sign-ups; an
    /// e-mail or phone sign-up needs sign-ups, then its provider.
    func checkSignUpAllowed(_ signUp: AuthRequest.SignUp) throws {
        guard signUp.email != nil || signUp.phone != nil else {
            guard config.anonymousUsersEnabled else { throw AuthError.anonymousProviderDisabled }
            guard !config.disableSignup else { throw AuthError.signupDisabled }
            return
        }
        guard !config.disableSignup else { throw AuthError.signupDisabled }
        guard signUp.email == nil || signUp.phone == nil else {
            throw AuthError.validationFailed("Only an email address or phone number should be provided on signup.")
        }
        guard signUp.email != nil else {
            guard config.sms.enabled else { throw AuthError.phoneDisabled("Phone signups are disabled", status: .badRequest) }
            return
        }
        guard config.emailEnabled else { throw AuthError.emailProviderDisabled("Email signups are disabled", status: .badRequest) }
    }

    /// `EXTERNAL_EMAIL_ENABLED=false`: GoTrue's `Email logins are disabled`, with the status
    /// each endpoint answers it with.
    func checkEmailProvider(status: HTTPStatus) throws {
        guard config.emailEnabled else { throw AuthError.emailProviderDisabled("Email logins are disabled", status: status) }
    }

    /// `EXTERNAL_PHONE_ENABLED=false`, with the error each endpoint answers it with.
    func checkPhoneProvider(_ refusal: AuthError) throws {
        guard config.sms.enabled else { throw refusal }
    }

    /// GoTrue's `/settings`: every id_token provider this server knows, enabled when configured.
    func settingsJSON() -> String {
        var external = ["anonymous_users": config.anonymousUsersEnabled, "email": config.emailEnabled, "phone": config.sms.enabled]
        for name in IDTokenProvider.builtIn { external[name] = config.providers[name] != nil }
        for kind in ExternalProvider.Kind.allCases {
            external[kind.rawValue] = config.external[kind.rawValue]?.enabled == true || external[kind.rawValue] == true
        }
        let providers = external.keys.sorted().map { "\(jsonString($0)):\(external[$0]!)" }.joined(separator: ",")
        return
            #"{"external":{\#(providers)},"disable_signup":\#(config.disableSignup),"mailer_autoconfirm":\#(config.mail.autoconfirm),"phone_autoconfirm":\#(config.sms.autoconfirm),"sms_provider":\#(jsonString(config.sms.providerName)),"saml_enabled":false}"#
    }
}
