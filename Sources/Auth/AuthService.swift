import Foundation
import HTTP
import Logging
import JWT
import Postgres
import Synchronization

public struct AuthConfig: Sendable {
    public var keys: KeyConfig
    /// Access-token lifetime, seconds.
    public var jwtExpiry = 3600
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
    public var providers: [String: IDTokenProvider] = [:]
    /// The e-mail flows (confirmation, recovery, magic link, e-mail change, PKCE).
    public var mail = MailConfig()

    public init(keys: KeyConfig) {
        self.keys = keys
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

    public init(pool: Pool, config: AuthConfig, logger: Logger = Logger(label: "onboard.auth"), mailer: Mailer? = nil) {
        self.pool = pool
        self.config = config
        self.logger = logger
        self.mailer = mailer ?? Mailer(transport: .log, logger: logger)
    }

    /// Serves `route` (the path after `/auth/v1`).
    public func respond(to request: HTTPRequest, route: String) -> HTTPResponse {
        var response: HTTPResponse
        do {
            response = try dispatch(request, route: route)
        } catch let error as AuthError {
            response = error.response(for: request)
        } catch {
            // The cause goes to the log once, never to the client.
            logger.error("auth request failed", metadata: ["request.id": "\(request.id)", "path": "\(request.path)", "error": "\(error)"])
            response = AuthError.unexpected("\(error)").response(for: request)
        }
        if request.headers["X-Supabase-Api-Version"] != nil { response.headers.replace("X-Supabase-Api-Version", "2024-01-01") }
        return response
    }

    func dispatch(_ request: HTTPRequest, route: String) throws -> HTTPResponse {
        switch try AuthRequest.parse(method: request.method, route: route, query: request.query, body: request.body) {
        case .health:
            return .json(200, #"{"version":"onboard","name":"GoTrue","description":"GoTrue-compatible auth of onboard"}"#)
        case .settings:
            return .json(200, settingsJSON())
        case .signUp(let signUp) where !config.mail.autoconfirm && signUp.email != nil:
            try checkRate(config.signInLimit, "signin", keys: ["ip:\(clientAddress(request))", "email:\(signUp.email!)"])
            return try signUpAwaitingConfirmation(signUp, email: signUp.email!, request: request)
        case .signUp(let signUp):
            return try self.signUp(signUp, client: clientAddress(request))
        case .token(let grant):
            return try token(grant, client: clientAddress(request))
        case .getUser:
            let (user, _) = try authenticatedUser(request)
            return .json(200, try userJSON(user, missing: .userFromTokenNotFound))
        case .updateUser(let changes):
            return try updateSignedInUser(request, changes)
        case .logout(let scope):
            return try logout(request, scope: scope)
        case .admin(let operation):
            return try admin(request, operation)
        case .recover(let body):
            return try recover(body, request: request)
        case .otp(let body):
            return try sendOTP(body, request: request)
        case .resend(let body):
            return try resend(body, request: request)
        case .verify(let body):
            return try verify(body, request: request)
        case .verifyLink(let link):
            return try verifyLink(link, request: request)
        case .reauthenticate:
            return try reauthenticate(request)
        }
    }

    func settingsJSON() -> String {
        let google = config.providers["google"] != nil
        let apple = config.providers["apple"] != nil
        return #"{"external":{"anonymous_users":true,"apple":\#(apple),"email":true,"google":\#(google),"phone":false},"disable_signup":false,"mailer_autoconfirm":\#(config.mail.autoconfirm),"phone_autoconfirm":false,"sms_provider":"","saml_enabled":false}"#
    }

    // MARK: sign-up and sign-in

    func signUp(_ body: AuthRequest.SignUp, client: String) throws -> HTTPResponse {
        try checkRate(config.signInLimit, "signin", keys: ["ip:\(client)"] + (body.email.map { ["email:\($0)"] } ?? []))
        guard let email = body.email else {
            guard body.phone == nil else { throw AuthError.validationFailed("Phone signups are disabled") }
            return try signInAnonymously(metadataJSON: body.metadataJSON)
        }
        guard Self.isValidEmail(email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let hash = try Password.hash(try checkedPassword(body.password), cost: config.bcryptCost)
        let userID = UUID().uuidString.lowercased()
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Self.newRefreshToken()
        let appMetadata = #"{"provider":"email","providers":["email"]}"#
        return try pool.withConnection { connection in
            let results = try connection.pipeline([
                """
                WITH u AS (
                    INSERT INTO auth.users (id, email, encrypted_password, email_confirmed_at, last_sign_in_at, raw_app_meta_data, raw_user_meta_data)
                    VALUES (\(userID)::uuid, \(email), \(hash), now(), now(), \(appMetadata)::jsonb, \(body.metadataJSON)::jsonb)
                    ON CONFLICT ((lower(email))) WHERE email IS NOT NULL DO NOTHING
                    RETURNING id, email
                ), i AS (
                    INSERT INTO auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at)
                    SELECT id::text, id, jsonb_build_object('sub', id::text, 'email', email, 'email_verified', true, 'phone_verified', false), 'email', now() FROM u
                ), s AS (
                    INSERT INTO auth.sessions (id, user_id) SELECT \(sessionID)::uuid, id FROM u RETURNING id, user_id
                )
                INSERT INTO auth.refresh_tokens (token, user_id, session_id) SELECT \(Self.digest(refreshToken)), user_id, id FROM s
                """,
                "SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid",
            ])
            guard let user = results[1].scalar else { throw AuthError.userAlreadyExists }
            return .json(200, try sessionJSON(userJSON: user, sessionID: sessionID, refreshToken: refreshToken, method: "password"))
        }
    }

    func signInAnonymously(metadataJSON: String) throws -> HTTPResponse {
        let userID = UUID().uuidString.lowercased()
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Self.newRefreshToken()
        return try pool.withConnection { connection in
            let results = try connection.pipeline([
                """
                WITH u AS (
                    INSERT INTO auth.users (id, is_anonymous, last_sign_in_at, raw_app_meta_data, raw_user_meta_data)
                    VALUES (\(userID)::uuid, true, now(), '{"provider":"anonymous","providers":[]}'::jsonb, \(metadataJSON)::jsonb)
                    RETURNING id
                ), s AS (
                    INSERT INTO auth.sessions (id, user_id) SELECT \(sessionID)::uuid, id FROM u RETURNING id, user_id
                )
                INSERT INTO auth.refresh_tokens (token, user_id, session_id) SELECT \(Self.digest(refreshToken)), user_id, id FROM s
                """,
                "SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid",
            ])
            return .json(200, try sessionJSON(userJSON: results[1].scalar ?? "{}", sessionID: sessionID, refreshToken: refreshToken, method: "anonymous"))
        }
    }

    func token(_ grant: AuthRequest.TokenGrant, client: String) throws -> HTTPResponse {
        switch grant {
        case .password(let email, let phone, let password):
            try checkRate(config.signInLimit, "signin", keys: ["ip:\(client)", "email:\(email)"])
            guard let password, !email.isEmpty || phone != nil else {
                throw AuthError.validationFailed("missing email or phone")
            }
            return try signInWithPassword(email: email, password: password)
        case .refreshToken(let token):
            try checkRate(config.refreshLimit, "refresh", keys: ["ip:\(client)"])
            guard let token, !token.isEmpty else { throw AuthError.refreshTokenNotFound }
            return try refresh(token)
        case .idToken(let grant):
            try checkRate(config.signInLimit, "signin", keys: ["ip:\(client)"])
            return try signInWithIDToken(grant)
        case .pkce(let code, let verifier):
            return try exchangePKCE(authCode: code, codeVerifier: verifier, client: client)
        case .unsupported:
            throw AuthError.validationFailed("unsupported_grant_type")
        }
    }

    func signInWithPassword(email: String, password: String) throws -> HTTPResponse {
        try pool.withConnection { connection in
            let found = try connection.query("""
                SELECT id::text, encrypted_password, email_confirmed_at IS NOT NULL FROM auth.users
                WHERE lower(email) = \(email) AND deleted_at IS NULL AND (banned_until IS NULL OR banned_until < now())
                """)
            // Unknown e-mail and wrong password answer alike, in about the same time.
            let hash = found.count == 1 ? (found[0, 1] ?? Password.dummyHash) : Password.dummyHash
            guard Password.verify(password, hash: hash), password.utf8.count <= Password.maxBytes, found.count == 1, let userID = found[0, 0] else {
                throw AuthError.invalidCredentials
            }
            // As GoTrue: only once the password is right, so the answer tells nothing to others.
            guard found[0, 2] == "t" else { throw AuthError.emailNotConfirmed }
            return .json(200, try startSession(connection, userID: userID, method: "password"))
        }
    }

    /// A new session with its first refresh token; updates last_sign_in_at; returns session JSON.
    func startSession(_ connection: Connection, userID: String, method: String) throws -> String {
        let sessionID = UUID().uuidString.lowercased()
        let refreshToken = Self.newRefreshToken()
        let results = try connection.pipeline([
            "UPDATE auth.users SET last_sign_in_at = now() WHERE id = \(userID)::uuid",
            "INSERT INTO auth.sessions (id, user_id) VALUES (\(sessionID)::uuid, \(userID)::uuid)",
            "INSERT INTO auth.refresh_tokens (token, user_id, session_id) VALUES (\(Self.digest(refreshToken)), \(userID)::uuid, \(sessionID)::uuid)",
            "SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid",
        ])
        return try sessionJSON(userJSON: results[3].scalar ?? "{}", sessionID: sessionID, refreshToken: refreshToken, method: method)
    }

    /// Rotation with GoTrue's reuse detection: the presented token is revoked and a child issued
    /// in the same session. A revoked token presented again within the reuse interval gets a
    /// fresh child (concurrent refreshes from one client); later, it is treated as stolen and the
    /// whole session is revoked.
    func refresh(_ token: String) throws -> HTTPResponse {
        try pool.withConnection { connection in
            try connection.execute("BEGIN")
            do {
                let found = try connection.query("""
                    SELECT r.id, r.user_id::text, r.session_id::text, r.revoked,
                           extract(epoch FROM now() - r.updated_at) AS revoked_for
                    FROM auth.refresh_tokens r JOIN auth.sessions s ON s.id = r.session_id
                    WHERE r.token = \(Self.digest(token))
                    FOR UPDATE OF r
                    """)
                guard found.count == 1, let tokenID = found[0, 0], let userID = found[0, 1], let sessionID = found[0, 2] else {
                    throw AuthError.refreshTokenNotFound
                }
                if found[0, 3] == "t" {
                    let revokedFor = Double(found[0, 4] ?? "") ?? .infinity
                    guard revokedFor <= config.refreshReuseInterval else {
                        _ = try connection.query("DELETE FROM auth.sessions WHERE id = \(sessionID)::uuid")
                        try connection.execute("COMMIT")
                        throw AuthError.refreshTokenAlreadyUsed
                    }
                }
                let newToken = Self.newRefreshToken()
                _ = try connection.pipeline([
                    "UPDATE auth.refresh_tokens SET revoked = true, updated_at = CASE WHEN revoked THEN updated_at ELSE now() END WHERE id = \(tokenID)::bigint",
                    "INSERT INTO auth.refresh_tokens (token, user_id, session_id, parent) VALUES (\(Self.digest(newToken)), \(userID)::uuid, \(sessionID)::uuid, \(Self.digest(token)))",
                    "UPDATE auth.sessions SET refreshed_at = now(), updated_at = now() WHERE id = \(sessionID)::uuid",
                ])
                let user = try connection.query("SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid").scalar ?? "{}"
                try connection.execute("COMMIT")
                return .json(200, try sessionJSON(userJSON: user, sessionID: sessionID, refreshToken: newToken, method: "token_refresh"))
            } catch {
                if !connection.isIdle { try? connection.execute("ROLLBACK") }
                throw error
            }
        }
    }

    // MARK: the signed-in user

    /// The bearer's user (and session id), or GoTrue's 401/403.
    func authenticatedUser(_ request: HTTPRequest) throws -> (userID: String, sessionID: String?) {
        guard let token = Credentials.bearerToken(request.headers["Authorization"]) else { throw AuthError.noAuthorization }
        let claims: [String: Any]
        do {
            claims = try JWT.verifyHS256(token, secret: config.keys.jwtSecret).claims
        } catch {
            throw AuthError.badJWT(error.message)
        }
        guard let sub = claims["sub"] as? String, let userID = UUID(uuidString: sub)?.uuidString.lowercased() else {
            throw AuthError.badJWT("missing sub claim")
        }
        let sessionID = (claims["session_id"] as? String).flatMap { UUID(uuidString: $0)?.uuidString.lowercased() }
        let state = try pool.withConnection { connection in
            try connection.query("""
                SELECT EXISTS (SELECT 1 FROM auth.users WHERE id = \(userID)::uuid) AS user_exists,
                       \(sessionID)::uuid IS NULL OR EXISTS (SELECT 1 FROM auth.sessions WHERE id = \(sessionID)::uuid AND user_id = \(userID)::uuid) AS session_exists
                """)
        }
        guard state[0, "user_exists"] == "t" else { throw AuthError.userFromTokenNotFound }
        guard state[0, "session_exists"] == "t" else { throw AuthError.sessionNotFound }
        return (userID, sessionID)
    }

    /// The user's JSON; `missing` when there is no such user (404 for the admin API, GoTrue's 403
    /// when the user came from a token).
    func userJSON(_ userID: String, missing: AuthError = .userNotFound) throws -> String {
        try pool.withConnection { connection in
            guard let json = try connection.query("SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid").scalar else {
                throw missing
            }
            return json
        }
    }

    /// `PUT /user` and `PUT /admin/users/{id}`: metadata merged key by key (null deletes), e-mail
    /// and password changes, and the in-place upgrade of an anonymous user.
    func applyUserChanges(userID: String, _ changes: AuthRequest.UserChanges, missing: AuthError = .userNotFound) throws -> String {
        let email = changes.email
        if let email, !Self.isValidEmail(email) { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let hash = try changes.password.map { try Password.hash(try checkedPassword($0), cost: config.bcryptCost) }
        return try pool.withConnection { connection in
            try connection.execute("BEGIN")
            do {
                let current = try connection.query("SELECT is_anonymous, email FROM auth.users WHERE id = \(userID)::uuid FOR UPDATE")
                guard current.count == 1 else { throw missing }
                let anonymous = current[0, 0] == "t"
                if anonymous && hash != nil && email == nil && current[0, 1] == nil {
                    throw AuthError.validationFailed("Updating password of an anonymous user without an email or phone is not allowed")
                }
                if let metadata = changes.metadataJSON {
                    _ = try connection.query("""
                        UPDATE auth.users SET raw_user_meta_data = coalesce((
                            SELECT jsonb_object_agg(key, value) FROM jsonb_each(raw_user_meta_data || \(metadata)::jsonb)
                            WHERE value <> 'null'::jsonb), '{}'::jsonb), updated_at = now()
                        WHERE id = \(userID)::uuid
                        """)
                }
                if let email, email != current[0, 1] {
                    let taken = try connection.query("SELECT 1 FROM auth.users WHERE lower(email) = \(email) AND id <> \(userID)::uuid")
                    guard taken.isEmpty else { throw AuthError.emailExists }
                    // Auto-confirm mode: the address is confirmed at once, as for sign-ups.
                    _ = try connection.pipeline([
                        """
                        UPDATE auth.users SET email = \(email), email_confirmed_at = now(), updated_at = now(), is_anonymous = false,
                            raw_app_meta_data = CASE WHEN is_anonymous THEN '{"provider":"email","providers":["email"]}'::jsonb ELSE raw_app_meta_data END
                        WHERE id = \(userID)::uuid
                        """,
                        """
                        INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
                        VALUES (\(userID), \(userID)::uuid, jsonb_build_object('sub', \(userID)::text, 'email', \(email)::text, 'email_verified', true, 'phone_verified', false), 'email')
                        ON CONFLICT (provider_id, provider) DO UPDATE SET identity_data = EXCLUDED.identity_data, updated_at = now()
                        """,
                    ])
                }
                if let hash {
                    _ = try connection.query("UPDATE auth.users SET encrypted_password = \(hash), updated_at = now() WHERE id = \(userID)::uuid")
                }
                let json = try connection.query("SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid").scalar ?? "{}"
                try connection.execute("COMMIT")
                return json
            } catch {
                if !connection.isIdle { try? connection.execute("ROLLBACK") }
                if let error = error as? PostgresError, error.sqlState == "23505" { throw AuthError.emailExists }
                throw error
            }
        }
    }

    func logout(_ request: HTTPRequest, scope: AuthRequest.LogoutScope) throws -> HTTPResponse {
        let (userID, sessionID) = try authenticatedUser(request)
        _ = try pool.withConnection { connection -> QueryResult in
            switch scope {
            case .local:
                return try connection.query("DELETE FROM auth.sessions WHERE id = \(sessionID)::uuid")
            case .others:
                return try connection.query("DELETE FROM auth.sessions WHERE user_id = \(userID)::uuid AND id IS DISTINCT FROM \(sessionID)::uuid")
            case .global:
                return try connection.query("DELETE FROM auth.sessions WHERE user_id = \(userID)::uuid")
            }
        }
        return HTTPResponse(status: 204)
    }

    // MARK: admin (service role)

    func admin(_ request: HTTPRequest, _ operation: AuthRequest.Admin) throws -> HTTPResponse {
        guard let token = Credentials.bearerToken(request.headers["Authorization"]) else { throw AuthError.noAuthorization }
        let isService: Bool
        if Crypto.constantTimeEquals(Array(token.utf8), Array(config.keys.serviceRoleKey.utf8)) {
            isService = true
        } else if let claims = try? JWT.verifyHS256(token, secret: config.keys.jwtSecret).claims {
            isService = claims["role"] as? String == "service_role"
        } else {
            throw AuthError.badJWT("invalid token")
        }
        guard isService else { throw AuthError.notAdmin }
        switch operation {
        case .listUsers(let page, let perPage):
            let users = try pool.withConnection { connection in
                try connection.query("""
                    SELECT coalesce(jsonb_agg(auth.user_json(u) ORDER BY u.created_at), '[]'::jsonb)::text
                    FROM (SELECT * FROM auth.users ORDER BY created_at LIMIT \(perPage) OFFSET \((page - 1) * perPage)) u
                    """).scalar ?? "[]"
            }
            return .json(200, #"{"aud":"authenticated","users":\#(users)}"#)
        case .createUser(let email, let password, let metadata, let confirmed):
            guard let email, Self.isValidEmail(email) else {
                throw AuthError.validationFailed("Unable to validate email address: invalid format")
            }
            let hash = try password.map { try Password.hash(try checkedPassword($0), cost: config.bcryptCost) }
            let userID = UUID().uuidString.lowercased()
            let json = try pool.withConnection { connection in
                let results = try connection.pipeline([
                    """
                    WITH u AS (
                        INSERT INTO auth.users (id, email, encrypted_password, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
                        VALUES (\(userID)::uuid, \(email), \(hash), CASE WHEN \(confirmed)::boolean THEN now() END,
                                '{"provider":"email","providers":["email"]}'::jsonb, \(metadata)::jsonb)
                        ON CONFLICT ((lower(email))) WHERE email IS NOT NULL DO NOTHING RETURNING id, email
                    )
                    INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
                    SELECT id::text, id, jsonb_build_object('sub', id::text, 'email', email, 'email_verified', \(confirmed)::boolean), 'email' FROM u
                    """,
                    "SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid",
                ])
                guard let json = results[1].scalar else { throw AuthError.emailExists }
                return json
            }
            return .json(200, json)
        case .getUser(let id):
            guard let id else { throw AuthError.userNotFound }
            return .json(200, try userJSON(id))
        case .updateUser(let id, let changes):
            guard let id else { throw AuthError.userNotFound }
            return .json(200, try applyUserChanges(userID: id, changes))
        case .deleteUser(let id):
            guard let id else { throw AuthError.userNotFound }
            let json = try userJSON(id)
            _ = try pool.withConnection { try $0.query("DELETE FROM auth.users WHERE id = \(id)::uuid") }
            return .json(200, json)
        }
    }

    // MARK: rate limits

    /// The client's address: the configured header's last hop (the one the trusted proxy
    /// appended to `X-Forwarded-For`), else the TCP peer.
    func clientAddress(_ request: HTTPRequest) -> String {
        guard let name = config.rateLimitHeader, let value = request.headers.values(name).last,
              let hop = value.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !hop.isEmpty else {
            return request.remoteAddress
        }
        return hop
    }

    /// One hit on each key of `bucket`, counted in PostgreSQL so that every replica shares the
    /// budget (one small upsert beside a bcrypt check); 429 once a key is over.
    func checkRate(_ limit: RateLimit, _ bucket: String, keys: [String]) throws {
        let within = try pool.withConnection { connection in
            try connection.query("SELECT auth.rate_limit_hit(\(array: keys.map { "\(bucket):\($0)" }), \(limit.hits)::integer, \(limit.window)::double precision)").scalar
        }
        if within != "t" { throw AuthError.rateLimited }
    }

    // MARK: helpers

    /// The session object GoTrue answers sign-ins with, around a new access token.
    func sessionJSON(userJSON: String, sessionID: String, refreshToken: String, method: String) throws -> String {
        guard let user = (try? JSONSerialization.jsonObject(with: Data(userJSON.utf8))) as? [String: Any] else {
            throw AuthError.unexpected("user JSON")
        }
        let now = Int(Date().timeIntervalSince1970)
        let expiresAt = now + config.jwtExpiry
        let claims: [String: Any] = [
            "aud": "authenticated", "exp": expiresAt, "iat": now, "iss": config.issuer,
            "sub": user["id"] ?? "", "email": user["email"] ?? "", "phone": user["phone"] ?? "",
            "app_metadata": user["app_metadata"] ?? [:], "user_metadata": user["user_metadata"] ?? [:],
            "role": "authenticated", "aal": "aal1", "amr": [["method": method, "timestamp": now]],
            "session_id": sessionID, "is_anonymous": user["is_anonymous"] ?? false,
        ]
        let accessToken = JWT.signHS256(claims: claims, secret: config.keys.jwtSecret)
        return #"{"access_token":\#(jsonString(accessToken)),"token_type":"bearer","expires_in":\#(config.jwtExpiry),"expires_at":\#(expiresAt),"refresh_token":\#(jsonString(refreshToken)),"user":\#(userJSON)}"#
    }

    /// The password policy for new passwords: GoTrue's minimum length, and at most bcrypt's 72
    /// bytes (bcrypt ignores the rest, so a longer password would match any with its prefix).
    func checkedPassword(_ password: String?) throws -> String {
        guard let password, password.count >= config.minimumPasswordLength else {
            throw AuthError.weakPassword("Password should be at least \(config.minimumPasswordLength) characters.", reasons: ["length"])
        }
        guard password.utf8.count <= Password.maxBytes else {
            throw AuthError.weakPassword("Password cannot be longer than \(Password.maxBytes) bytes.", reasons: ["length"])
        }
        return password
    }

    static func isValidEmail(_ email: String) -> Bool {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              email.count <= 255, !email.contains(where: { $0.isWhitespace }) else { return false }
        return true
    }

    /// 128 random bits, URL-safe; only its SHA-256 is stored.
    static func newRefreshToken() -> String { Base64URL.encode(Crypto.randomBytes(16)) }

    static func digest(_ token: String) -> String { Crypto.hex(Crypto.sha256(Array(token.utf8))) }
}

/// At most `hits` requests per `window` seconds.
public struct RateLimit: Sendable, Equatable {
    public var hits: Int
    public var window: Double

    public init(hits: Int, window: Double) {
        self.hits = hits
        self.window = window
    }
}
