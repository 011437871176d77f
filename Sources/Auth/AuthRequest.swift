import Foundation
import HTTP
import Identity

/// An Auth request parsed into GoTrue's terms before any I/O: the endpoint and its typed body.
/// Pure (method, route, query, body in; a value or an `AuthError` out), so it is table-tested and
/// fuzzed; the handlers in `AuthService` never look at raw JSON.
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
    case resend(Resend)
    /// `POST /verify`.
    case verify(Verify)
    /// `GET /verify`: the link in a mail.
    case verifyLink(VerifyLink)
    case reauthenticate
    /// `/factors…`: multi-factor authentication.
    case mfa(MFA)

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

    /// `POST /resend`.
    public struct Resend: Sendable, Equatable {
        public enum Kind: String, Sendable, Equatable { case signup, emailChange = "email_change" }
        public var kind: Kind
        public var email: String
        public var pkce: PKCEChallenge?
        public var redirectTo: String?
    }

    /// The verification types of e-mail tokens.
    public enum VerifyType: String, Sendable, Equatable {
        case signup, recovery, magiclink, emailChange = "email_change", email
    }

    /// `POST /verify`: a code with the address it was mailed to, or a link's token (`token_hash`).
    public struct Verify: Sendable, Equatable {
        public enum Credential: Sendable, Equatable {
            case otp(email: String, token: String)
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
        case unsupported(String)
    }

    public struct IDTokenGrant: Sendable, Equatable {
        public var idToken: String?
        public var provider: String?
        public var nonce: String?
    }

    /// `PUT /user` and `PUT /admin/users/{id}`.
    public struct UserChanges: Sendable, Equatable {
        public var email: String?
        public var password: String?
        /// Metadata to merge (a null value deletes a key), as JSON object text.
        public var metadataJSON: String?
        /// The reauthentication code (`PUT /user` only).
        public var nonce: String? = nil
        /// With an e-mail change (`PUT /user` only).
        public var pkce: PKCEChallenge? = nil
        public var redirectTo: String? = nil
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
        case createUser(email: String?, password: String?, metadataJSON: String, emailConfirmed: Bool)
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
    }

    /// Whether the endpoint serves without the gateway's `apikey`: Supabase's gateway lets only
    /// the links opened from e-mails and OAuth redirects through (`verify`, `callback`,
    /// `authorize`), and the public discovery documents (`.well-known/…`).
    public static func isOpenRoute(_ route: String) -> Bool {
        let first = route.split(separator: "/").first.map(String.init) ?? ""
        return ["verify", "callback", "authorize", ".well-known"].contains(first)
    }

    /// Parses the path after `/auth/v1`, the query and the body.
    public static func parse(method: HTTPMethod, route: String, query: [(name: String, value: String)], body: [UInt8]) throws(AuthError) -> AuthRequest {
        func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }
        let segments = route.split(separator: "/").map(String.init)
        switch (method, segments) {
        case (.get, ["health"]), (.head, ["health"]):
            return .health
        case (.get, ["settings"]):
            return .settings
        case (.get, [".well-known", "jwks.json"]):
            return .jwks
        case (.get, [".well-known", "openid-configuration"]):
            return .openIDConfiguration
        case (.post, ["signup"]):
            let body = try RequestBody.decode(RequestBody.SignUp.self, body)
            return .signUp(
                SignUp(
                    email: try body.email.email(), phone: try body.phone.nonEmpty(), password: try body.password.read(),
                    metadataJSON: try body.data.read()?.text ?? "{}", pkce: try body.pkce(), redirectTo: queryValue("redirect_to")))
        case (.post, ["recover"]):
            let body = try RequestBody.decode(RequestBody.Recover.self, body)
            guard let email = try body.email.email() else { throw .validationFailed("Password recovery requires an email") }
            return .recover(Recover(email: email, pkce: try body.pkce(), redirectTo: queryValue("redirect_to")))
        case (.post, ["otp"]), (.post, ["magiclink"]):
            let body = try RequestBody.decode(RequestBody.OTP.self, body)
            let email = try body.email.email()
            let phone = try body.phone.nonEmpty()
            if email != nil && phone != nil { throw .validationFailed("Only an email address or phone number should be provided") }
            if phone != nil { throw .phoneProviderDisabled }
            guard let email else { throw .validationFailed("An email address or phone number is required") }
            if try body.channel.read().map({ !$0.isEmpty }) ?? false {
                throw .validationFailed("Channel should only be specified with Phone OTP")
            }
            return .otp(
                OTP(
                    email: email, createUser: try body.createUser.read() ?? true, metadataJSON: try body.data.read()?.text ?? "{}",
                    pkce: try body.pkce(), redirectTo: queryValue("redirect_to")))
        case (.post, ["resend"]):
            let body = try RequestBody.decode(RequestBody.Resend.self, body)
            let type = try body.type.read() ?? ""
            if type == "sms" || type == "phone_change" { throw .phoneProviderDisabled }
            guard let kind = Resend.Kind(rawValue: type) else {
                throw .validationFailed("Missing one of these types: signup, email_change, sms, phone_change")
            }
            guard let email = try body.email.email() else { throw .validationFailed("Missing email address") }
            return .resend(Resend(kind: kind, email: email, pkce: try body.pkce(), redirectTo: queryValue("redirect_to")))
        case (.post, ["verify"]):
            let body = try RequestBody.decode(RequestBody.Verify.self, body)
            let type = try verifyType(try body.type.read())
            let token = try body.token.read() ?? ""
            let tokenHash = try body.tokenHash.read() ?? ""
            let email = try body.email.email()
            let phone = try body.phone.nonEmpty()
            let redirectTo = try body.redirectTo.nonEmpty() ?? queryValue("redirect_to")
            guard token.isEmpty != tokenHash.isEmpty else { throw .validationFailed("Verify requires either a token or a token hash") }
            if !tokenHash.isEmpty {
                guard email == nil, phone == nil, (try body.redirectTo.read() ?? "").isEmpty else {
                    throw .validationFailed("Only the token_hash and type should be provided")
                }
                return .verify(Verify(type: type, credential: .tokenHash(tokenHash), redirectTo: nil))
            }
            guard let email, phone == nil else { throw .validationFailed("Only an email address or phone number should be provided on verify") }
            return .verify(Verify(type: type, credential: .otp(email: email, token: token.trimmingCharacters(in: .whitespaces)), redirectTo: redirectTo))
        case (.get, ["verify"]):
            let type = try verifyType(queryValue("type"))
            guard let token = queryValue("token"), !token.isEmpty else { throw .validationFailed("Verify requires a token or a token hash") }
            guard !token.utf8.contains(0) else { throw .validationFailed("Verify requires a token or a token hash") }
            return .verifyLink(VerifyLink(token: token, type: type, redirectTo: queryValue("redirect_to")))
        case (.get, ["reauthenticate"]):
            return .reauthenticate
        case (.post, ["token"]):
            switch queryValue("grant_type") ?? "" {
            case "password":
                let grant = try RequestBody.decode(RequestBody.PasswordGrant.self, body)
                return .token(.password(email: try grant.email.email() ?? "", phone: try grant.phone.read(), password: try grant.password.read()))
            case "refresh_token":
                let grant = try RequestBody.decode(RequestBody.RefreshTokenGrant.self, body)
                return .token(.refreshToken(try grant.refreshToken.read()))
            case "id_token":
                let grant = try RequestBody.decode(RequestBody.IDTokenGrant.self, body)
                return .token(.idToken(IDTokenGrant(idToken: try grant.idToken.read(), provider: try grant.provider.read(), nonce: try grant.nonce.read())))
            case "pkce":
                let grant = try RequestBody.decode(RequestBody.PKCEGrant.self, body)
                let code = try grant.authCode.read() ?? ""
                let verifier = try grant.codeVerifier.read() ?? ""
                guard !code.isEmpty, !verifier.isEmpty else {
                    throw .validationFailed("invalid request: both auth code and code verifier should be non-empty")
                }
                return .token(.pkce(authCode: code, codeVerifier: verifier))
            case let grant:
                _ = try RequestBody.decode(RequestBody.Unchecked.self, body)
                return .token(.unsupported(grant))
            }
        case (.get, ["user"]):
            return .getUser
        case (.put, ["user"]):
            let body = try RequestBody.decode(RequestBody.UserUpdate.self, body)
            let metadata = try body.data.read()?.text
            var changes = UserChanges(email: try body.email.email(), password: try body.password.read(), metadataJSON: metadata)
            changes.nonce = try body.nonce.nonEmpty()
            changes.pkce = try body.pkce()
            changes.redirectTo = queryValue("redirect_to")
            return .updateUser(changes)
        case (.post, ["logout"]):
            let scope = queryValue("scope") ?? "global"
            guard let value = LogoutScope(rawValue: scope) else { throw .validationFailed("Unsupported logout scope \"\(scope)\"") }
            return .logout(value)
        case (.post, ["factors"]):
            let body = try RequestBody.decode(RequestBody.EnrollFactor.self, body)
            let type = try body.factorType.read() ?? ""
            guard let factorType = MFAFactorType(rawValue: type) else {
                throw .validationFailed("factor_type needs to be totp, phone, or webauthn")
            }
            _ = try body.phone.read()
            return .mfa(.enroll(Enroll(type: factorType, friendlyName: try body.friendlyName.read() ?? "", issuer: try body.issuer.nonEmpty())))
        case (.post, let path) where path.count == 3 && path[0] == "factors" && path[2] == "challenge":
            let body = try RequestBody.decode(RequestBody.ChallengeFactor.self, body)
            _ = try body.channel.read()
            return .mfa(.challenge(factorID: uuid(path[1])))
        case (.post, let path) where path.count == 3 && path[0] == "factors" && path[2] == "verify":
            let body = try RequestBody.decode(RequestBody.VerifyFactor.self, body)
            var challengeID: String?
            if let text = try body.challengeID.read() {
                guard let id = uuid(text) else { throw .validationFailed("Could not read request body: challenge_id must be a UUID") }
                challengeID = id
            }
            let code = try body.code.read() ?? ""
            guard !code.isEmpty else { throw .validationFailed("Code needs to be non-empty") }
            return .mfa(.verify(factorID: uuid(path[1]), challengeID: challengeID, code: code))
        case (.delete, let path) where path.count == 2 && path[0] == "factors":
            return .mfa(.unenroll(factorID: uuid(path[1])))
        case (_, let path) where path.first == "admin":
            return .admin(try admin(method: method, path: Array(path.dropFirst()), queryValue: queryValue, body: body))
        default:
            throw .notFound
        }
    }

    /// The UUID in lower case; nil when `text` is not one.
    static func uuid(_ text: String) -> String? { UUID(uuidString: text)?.uuidString.lowercased() }

    private static func admin(method: HTTPMethod, path: [String], queryValue: (String) -> String?, body: [UInt8]) throws(AuthError) -> Admin {
        func userID(_ text: String) -> String? { uuid(text) }
        switch (method, path) {
        case (.get, ["users"]):
            // Client numbers: clamped, so the offset `(page - 1) * perPage` cannot overflow.
            let page = min(max(1, queryValue("page").flatMap { Int($0) } ?? 1), 1_000_000_000)
            let perPage = min(1000, max(1, queryValue("per_page").flatMap { Int($0) } ?? 50))
            return .listUsers(page: page, perPage: perPage)
        case (.post, ["users"]):
            let user = try RequestBody.decode(RequestBody.AdminCreateUser.self, body)
            return .createUser(
                email: try user.email.email(), password: try user.password.read(),
                metadataJSON: try user.userMetadata.read()?.text ?? "{}", emailConfirmed: try user.emailConfirm.read() ?? false)
        case (.get, let parts) where parts.count == 2 && parts[0] == "users":
            return .getUser(userID(parts[1]))
        case (.put, let parts) where parts.count == 2 && parts[0] == "users":
            let user = try RequestBody.decode(RequestBody.AdminUpdateUser.self, body)
            var metadata = try user.data.read()?.text
            if metadata == nil { metadata = try user.userMetadata.read()?.text }
            return .updateUser(userID(parts[1]), UserChanges(email: try user.email.email(), password: try user.password.read(), metadataJSON: metadata))
        case (.delete, let parts) where parts.count == 2 && parts[0] == "users":
            return .deleteUser(userID(parts[1]))
        case (.get, let parts) where parts.count == 3 && parts[0] == "users" && parts[2] == "factors":
            return .listFactors(userID(parts[1]))
        case (.put, let parts) where parts.count == 4 && parts[0] == "users" && parts[2] == "factors":
            let factor = try RequestBody.decode(RequestBody.AdminUpdateFactor.self, body)
            _ = try factor.phone.read()
            return .updateFactor(userID(parts[1]), factorID: uuid(parts[3]), friendlyName: try factor.friendlyName.read() ?? "")
        case (.delete, let parts) where parts.count == 4 && parts[0] == "users" && parts[2] == "factors":
            return .deleteFactor(userID(parts[1]), factorID: uuid(parts[3]))
        default:
            throw .notFound
        }
    }

    /// The verification `type`: e-mail types only (this server sends no SMS and no invites).
    private static func verifyType(_ text: String?) throws(AuthError) -> VerifyType {
        guard let text, !text.isEmpty else { throw .validationFailed("Verify requires a verification type") }
        guard let type = VerifyType(rawValue: text) else { throw .validationFailed("Unsupported verification type") }
        return type
    }
}
