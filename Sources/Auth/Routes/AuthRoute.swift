import HTTP

/// One endpoint of Auth, as one line of GoTrue's router: its method and path, who may call it,
/// the provider switch it needs, the budgets it spends, and the reader of its query and body.
/// `AuthService.dispatch` reads these facts in that order; the handler of the request the reader
/// returns is picked by `AuthService.handle`'s switch.
struct AuthRoute: Sendable {
    /// Who may call (GoTrue's `requireAuthentication` and `requireAdmin`; Supabase's gateway for
    /// the `apikey`).
    enum Caller: Sendable, Equatable {
        /// Served without the gateway's `apikey`: the links opened from mails, the OAuth
        /// redirects and the discovery documents.
        case open
        /// Anyone holding the gateway's `apikey`.
        case key
        /// A signed-in user: the bearer is an access token whose user and session still exist.
        case session
        /// The service role: the bearer is the service-role or a secret key, or a token whose
        /// role is one of `JWT_ADMIN_ROLES`.
        case admin
    }

    /// A provider switch an endpoint needs on, checked before any budget is spent.
    enum Switch: Sendable, Equatable {
        /// Sign-ups, then the provider of what signs up (anonymous, e-mail, phone), in GoTrue's
        /// order (`AuthService.checkSignUpAllowed`).
        case signUp
        /// `EXTERNAL_EMAIL_ENABLED`, refused with this status; for a request naming a number,
        /// `EXTERNAL_PHONE_ENABLED` (refused as GoTrue refuses each endpoint).
        case emailLogins(HTTPStatus)
        /// `OAUTH_SERVER_ENABLED` (GoTrue's `requireOAuthServerEnabled`), checked before the
        /// reader, as GoTrue's middleware runs before any body is decoded.
        case oauthServer
        /// `EXTERNAL_WEB3_ETHEREUM_ENABLED` or `EXTERNAL_WEB3_SOLANA_ENABLED`, checked before the
        /// reader, as GoTrue's `Web3Grant` refuses before it decodes the body.
        case web3
        /// `PASSKEY_ENABLED` (GoTrue's `requirePasskeyEnabled`), checked before the caller is
        /// authenticated, as GoTrue's middleware runs before `requireAuthentication`.
        case passkeys

        /// Whether the switch is checked before the caller is admitted.
        var isCheckedBeforeAdmission: Bool {
            switch self {
            case .passkeys: return true
            case .signUp, .emailLogins, .oauthServer, .web3: return false
            }
        }

        /// Whether the switch is checked before the reader (it needs nothing from the body).
        var isCheckedBeforeReading: Bool {
            switch self {
            case .oauthServer, .web3, .passkeys: return true
            case .signUp, .emailLogins: return false
            }
        }
    }

    /// A budget one request spends before its handler runs; 429 once over.
    enum Budget: Sendable, Equatable, CaseIterable {
        /// Sign-ins and sign-ups per client address (`RATE_LIMIT_SIGN_IN_SIGN_UPS`).
        case signInsPerAddress
        /// Sign-ins and sign-ups per e-mail address, from any client (the same limit).
        case signInsPerEmail
        /// Refresh-token and PKCE grants per client address (`RATE_LIMIT_TOKEN_REFRESH`).
        case refreshesPerAddress
        /// Verifications per client address (`RATE_LIMIT_VERIFY`).
        case verificationsPerAddress
        /// Requests that send a mail or an SMS, per client address (`RATE_LIMIT_OTP`).
        case mailRequestsPerAddress
        /// Web3 sign-ins per client address (`RATE_LIMIT_WEB3`).
        case web3PerAddress
        /// Passkey sign-in options per client address (`RATE_LIMIT_PASSKEY`).
        case passkeyPerAddress
    }

    /// A part of a path pattern.
    enum Segment: Sendable, Equatable {
        case literal(String)
        /// One segment, read by the reader as `input.parameter(name)`.
        case parameter(String)
        /// Any number of segments, none included (only last).
        case rest
    }

    /// The methods served; empty: any.
    var methods: Set<HTTPMethod>
    var pattern: [Segment]
    /// The `grant_type` query parameter `POST /token` is served for; nil: any.
    var grantType: String? = nil
    var caller: Caller
    var needs: Switch? = nil
    var budgets: [Budget] = []
    /// The reader: throws only `AuthError`s (each reader is `throws(AuthError)`; a closure's
    /// typed throws is not inferred, so the table's closures are plain `throws`).
    var read: @Sendable (Input) throws -> AuthRequest

    /// What a reader reads: the method, the path's parameters, the query and the body.
    struct Input {
        var method: HTTPMethod
        var parameters: [String: String]
        var query: [(name: String, value: String)]
        var body: [UInt8]
        /// The request's headers (the token endpoint's `Authorization: Basic` and `Content-Type`).
        var headers = HTTPHeaders()

        func parameter(_ name: String) -> String { parameters[name] ?? "" }
        func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }
    }

    /// `pattern` written as a path: `admin/users/{id}`, `sso/*`.
    init(
        _ methods: Set<HTTPMethod>, _ path: String, grantType: String? = nil, _ caller: Caller, needs: Switch? = nil, budgets: [Budget] = [],
        read: @escaping @Sendable (Input) throws -> AuthRequest
    ) {
        self.methods = methods
        pattern = path.split(separator: "/").map { part in
            if part == "*" { return .rest }
            if part.hasPrefix("{") && part.hasSuffix("}") { return .parameter(String(part.dropFirst().dropLast())) }
            return .literal(String(part))
        }
        self.grantType = grantType
        self.caller = caller
        self.needs = needs
        self.budgets = budgets
        self.read = read
    }

    /// The path's parameters when `segments` match the pattern; nil otherwise.
    func match(_ segments: [String]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (index, part) in pattern.enumerated() {
            switch part {
            case .rest:
                return parameters
            case .literal(let text):
                guard index < segments.count, segments[index] == text else { return nil }
            case .parameter(let name):
                guard index < segments.count else { return nil }
                parameters[name] = segments[index]
            }
        }
        return segments.count == pattern.count ? parameters : nil
    }

    /// Whether this line serves `method`, `segments` and the query's `grant_type`.
    func serves(_ method: HTTPMethod, _ segments: [String], grantType given: String?) -> [String: String]? {
        guard methods.isEmpty || methods.contains(method) else { return nil }
        if let grantType, grantType != given { return nil }
        return match(segments)
    }
}

extension AuthRoute {
    /// The first line of `AuthRoute.table` serving the request, with its path's parameters; nil
    /// when none does (GoTrue's 404).
    static func find(method: HTTPMethod, route: String, query: [(name: String, value: String)]) -> (route: AuthRoute, parameters: [String: String])? {
        let segments = route.split(separator: "/").map(String.init)
        let grantType = query.first { $0.name == "grant_type" }?.value ?? ""
        for line in table {
            if let parameters = line.serves(method, segments, grantType: grantType) { return (line, parameters) }
        }
        return nil
    }

    /// Whether a path is served without the gateway's `apikey`. Supabase's gateway matches path
    /// prefixes, whatever the method: a path is open when an open line starts with its first
    /// segment.
    static func isOpen(_ route: String) -> Bool {
        guard let first = route.split(separator: "/").first.map(String.init) else { return false }
        return table.contains { $0.caller == .open && $0.pattern.first == .literal(first) }
    }
}
