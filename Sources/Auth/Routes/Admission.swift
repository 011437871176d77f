import HTTP
import Identity

/// The signed-in caller of a `.session` line: the bearer's user and session, checked once.
struct SignedIn: Sendable, Equatable {
    var userID: String
    var sessionID: String?
    var isAnonymous: Bool
}

/// What a line of `AuthRoute.table` asks before its handler runs: its caller, its provider
/// switch and its budgets. Each refuses with an `AuthError`, which `respond` renders.
extension AuthService {
    /// GoTrue's `requireAuthentication` and `requireAdmin`: the signed-in user of a `.session`
    /// line; nil for the others. (The gateway's `apikey` is `APIKeyStage`'s, in front of Auth.)
    func admit(_ caller: AuthRoute.Caller, _ request: HTTPRequest) throws -> SignedIn? {
        switch caller {
        case .open, .key:
            return nil
        case .session:
            return try signedIn(request)
        case .admin:
            try requireAdmin(request)
            return nil
        }
    }

    /// A bearer that is the service-role key (or a secret key), or a token whose role is one of
    /// `JWT_ADMIN_ROLES`.
    func requireAdmin(_ request: HTTPRequest) throws {
        guard let token = Credentials.bearerToken(request.headers["Authorization"]) else { throw AuthError.noAuthorization }
        let isAdmin: Bool
        if let keyCaller = config.keys.role(ofKey: token) {
            isAdmin = keyCaller.isServiceRole
        } else if let claims = try? JWT.verify(token, keys: config.keys).claims {
            isAdmin = (claims["role"] as? String).map(config.adminRoles.contains) ?? false
        } else {
            throw AuthError.badJWT("invalid token")
        }
        guard isAdmin else { throw AuthError.notAdmin }
    }

    /// A provider switch, before any budget is spent; `parsed` is nil before the reader runs
    /// (for the switches `isCheckedBeforeReading`).
    func check(_ needs: AuthRoute.Switch, _ parsed: AuthRequest?) throws {
        switch needs {
        case .signUp:
            guard case .signUp(let signUp) = parsed else { return }
            try checkSignUpAllowed(signUp)
        case .emailLogins(let status):
            switch parsed {
            case .phoneOTP: try checkPhoneProvider(.phoneProviderDisabled)
            case .phoneResend: try checkPhoneProvider(.phoneDisabled("Phone logins are disabled", status: .badRequest))
            default: try checkEmailProvider(status: status)
            }
        case .oauthServer:
            guard config.oauthServer.enabled else { throw AuthError.oauthServerDisabled }
        case .web3:
            guard config.web3.ethereumEnabled || config.web3.solanaEnabled else { throw AuthError.web3ProviderDisabled("Web3 provider is disabled") }
        case .passkeys:
            guard config.passkey.enabled else { throw AuthError.passkey(.disabled) }
        }
    }
}

extension AuthConfig {
    /// A line's budgets for this request, one per bucket, so that the keys of one bucket (a
    /// sign-in's address and e-mail) are spent in one statement. The per-e-mail budget is skipped
    /// when the request names no address.
    func budgets(_ kinds: [AuthRoute.Budget], for parsed: AuthRequest, client: String) -> [Budget] {
        var budgets: [Budget] = []
        for kind in kinds {
            let limit: RateLimit
            let bucket: String
            let key: String?
            switch kind {
            case .signInsPerAddress: (limit, bucket, key) = (signInLimit, "signin", "ip:\(client)")
            case .signInsPerEmail: (limit, bucket, key) = (signInLimit, "signin", parsed.budgetEmail.map { "email:\($0)" })
            case .refreshesPerAddress: (limit, bucket, key) = (refreshLimit, "refresh", "ip:\(client)")
            case .verificationsPerAddress: (limit, bucket, key) = (mail.verifyLimit, "verify", "ip:\(client)")
            case .mailRequestsPerAddress: (limit, bucket, key) = (mail.otpRequestLimit, "otp", "ip:\(client)")
            case .web3PerAddress: (limit, bucket, key) = (web3.limit, "web3", "ip:\(client)")
            case .passkeyPerAddress: (limit, bucket, key) = (passkey.limit, "passkey", "ip:\(client)")
            }
            guard let key else { continue }
            if let index = budgets.firstIndex(where: { $0.bucket == bucket }) {
                budgets[index].keys.append(key)
            } else {
                budgets.append(Budget(limit: limit, bucket: bucket, keys: [key]))
            }
        }
        return budgets
    }
}

extension AuthRequest {
    /// The e-mail address a sign-up or a password sign-in spends its per-e-mail budget on.
    var budgetEmail: String? {
        switch self {
        case .signUp(let signUp): return signUp.email
        case .token(.password(let email, _, _)): return email.isEmpty ? nil : email
        case .health, .jwks, .openIDConfiguration, .settings, .token, .getUser, .updateUser, .logout, .admin, .recover, .otp, .phoneOTP, .resend,
            .phoneResend, .verify, .verifyLink, .reauthenticate, .mfa, .deleteIdentity, .oauthServer, .externalAuthorize, .externalCallback, .passkey:
            return nil
        }
    }
}
