import HTTP
import Identity

/// A check a parsed Auth request passes before its handler runs (GoTrue's per-route
/// middleware, `r.With(…)`); it refuses by throwing an `AuthError`.
protocol AuthStage: Sendable {
    func admit(_ parsed: AuthRequest, _ request: HTTPRequest, by service: AuthService) throws
}

/// GoTrue's `requireAdmin` in front of the admin API (`/admin/…`, `/invite`): a bearer that is
/// the service-role key (or a secret key), or a token whose role is one of `JWT_ADMIN_ROLES`.
struct AdminStage: AuthStage {
    func admit(_ parsed: AuthRequest, _ request: HTTPRequest, by service: AuthService) throws {
        guard case .admin = parsed else { return }
        let config = service.config
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
}

/// The providers and sign-ups an endpoint needs switched on, before any budget is spent:
/// `/signup` (`checkSignUpAllowed`), `/recover`, `/otp` and `/resend` (e-mail logins).
struct ProviderStage: AuthStage {
    func admit(_ parsed: AuthRequest, _ request: HTTPRequest, by service: AuthService) throws {
        switch parsed {
        case .signUp(let signUp): try service.checkSignUpAllowed(signUp)
        case .recover, .resend: try service.checkEmailProvider(status: .badRequest)
        case .otp: try service.checkEmailProvider(status: .unprocessableContent)
        case .health, .jwks, .openIDConfiguration, .settings, .token, .getUser, .updateUser, .logout, .admin, .verify, .verifyLink,
            .reauthenticate, .mfa, .deleteIdentity, .notOfferedToUser:
            break
        }
    }
}

/// GoTrue's request budgets per endpoint (`budget(for:client:)`), spent before the handler runs;
/// 429 (`over_request_rate_limit`, with `Retry-After`) once a key is over.
struct RateLimitStage: AuthStage {
    func admit(_ parsed: AuthRequest, _ request: HTTPRequest, by service: AuthService) throws {
        guard let budget = service.budget(for: parsed, client: service.clientAddress(request)) else { return }
        try service.spend(budget)
    }
}

extension AuthService {
    /// The checks every parsed request passes, in order, before its handler: the admin role,
    /// the providers, then the endpoint's budget. Each refuses with an `AuthError`, which
    /// `respond` renders.
    static let admission: [any AuthStage] = [AdminStage(), ProviderStage(), RateLimitStage()]
}
