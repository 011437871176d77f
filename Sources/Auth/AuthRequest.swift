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
    /// `DELETE /user/identities/{identity_id}`: nil when the id is not a UUID.
    case deleteIdentity(String?)
    /// An endpoint for signed-in users that this server does not offer (`GET
    /// /user/identities/authorize`, the OAuth server's grants): the bearer is checked, then the
    /// error is GoTrue's answer for the feature being off.
    case notOfferedToUser(AuthError)

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
        case signup, invite, recovery, magiclink, emailChange = "email_change", email
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
        /// `link_identity`: link the identity to the bearer's user instead of signing in.
        public var linkIdentity = false
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
        /// An admin endpoint of a feature this server does not offer (SAML providers, OAuth
        /// clients): the credentials are checked, then this error answers.
        case notOffered(AuthError)
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
            let typeText = try body.type.read()
            let token = try body.token.read() ?? ""
            let tokenHash = try body.tokenHash.read() ?? ""
            let email = try body.email.email()
            let phone = try body.phone.nonEmpty()
            let redirectTo = try body.redirectTo.nonEmpty() ?? queryValue("redirect_to")
            if typeText == "sms" || typeText == "phone_change" {
                try refusePhoneVerification(token: token, tokenHash: tokenHash, email: email, phone: phone, redirectTo: try body.redirectTo.read())
            }
            let type = try verifyType(typeText)
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
            if queryValue("type") == "sms" || queryValue("type") == "phone_change" {
                guard !(queryValue("token") ?? "").isEmpty else { throw .validationFailed("Verify requires a token or a token hash") }
                throw .validationFailed("Invalid email verification type")
            }
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
                return .token(
                    .idToken(
                        IDTokenGrant(
                            idToken: try grant.idToken.read(), provider: try grant.provider.read(), nonce: try grant.nonce.read(),
                            linkIdentity: try grant.linkIdentity.read() ?? false)))
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
        case (.delete, let path) where path.count == 3 && path[0] == "user" && path[1] == "identities":
            return .deleteIdentity(uuid(path[2]))
        case (.get, ["user", "identities", "authorize"]):
            return .notOfferedToUser(unsupportedProvider(queryValue("provider")))
        case (_, let path) where path.count >= 2 && path[0] == "user" && path[1] == "oauth":
            return .notOfferedToUser(.oauthServerDisabled)
        case (.get, ["authorize"]):
            throw unsupportedProvider(queryValue("provider"))
        case (_, let path) where path.first == "sso":
            throw .samlProviderDisabled
        case (_, let path) where path.first == "oauth":
            throw .oauthServerDisabled
        case (.get, [".well-known", "oauth-authorization-server"]):
            throw .oauthServerDisabled
        case (.post, ["invite"]):
            let invite = try RequestBody.decode(RequestBody.Invite.self, body)
            return .admin(
                .invite(email: try invite.email.email() ?? "", metadataJSON: try invite.data.read()?.text ?? "{}", redirectTo: queryValue("redirect_to")))
        case (_, let path) where path.first == "admin":
            return .admin(try admin(method: method, path: Array(path.dropFirst()), queryValue: queryValue, body: body))
        default:
            throw .notFound
        }
    }

    /// GoTrue's answer to the OAuth redirect flows (`/authorize`), which this server does not
    /// offer: its id_token providers are not OAuth providers.
    static func unsupportedProvider(_ name: String?) -> AuthError {
        guard let name, !name.isEmpty else { return .validationFailed("Unsupported provider: Provider  could not be found") }
        return .validationFailed("Unsupported provider: provider is not enabled")
    }

    /// The UUID in lower case; nil when `text` is not one.
    static func uuid(_ text: String) -> String? { UUID(uuidString: text)?.uuidString.lowercased() }

    private static func admin(method: HTTPMethod, path: [String], queryValue: (String) -> String?, body: [UInt8]) throws(AuthError) -> Admin {
        func userID(_ text: String) -> String? { uuid(text) }
        switch (method, path) {
        case (.get, ["users"]):
            // As GoTrue: unsigned decimal numbers; then clamped, so the offset
            // `(page - 1) * perPage` cannot overflow.
            func number(_ name: String, default value: Int) throws(AuthError) -> Int {
                guard let text = queryValue(name), !text.isEmpty else { return value }
                guard text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    throw .validationFailed("Bad Pagination Parameters: strconv.ParseUint: parsing \(jsonString(text)): invalid syntax")
                }
                return Int(text.prefix(12)) ?? value
            }
            let page = min(max(1, try number("page", default: 1)), 1_000_000_000)
            let perPage = min(1000, max(1, try number("per_page", default: 50)))
            return .listUsers(page: page, perPage: perPage)
        case (.post, ["users"]):
            let user = try RequestBody.decode(RequestBody.AdminCreateUser.self, body)
            return .createUser(
                AdminNewUser(
                    email: try user.email.email(), password: try user.password.read(),
                    metadataJSON: try user.userMetadata.read()?.text ?? "{}", appMetadataJSON: try user.appMetadata.read()?.text,
                    emailConfirmed: try user.emailConfirm.read() ?? false, ban: try banDuration(try user.banDuration.read())))
        case (.post, ["generate_link"]):
            let link = try RequestBody.decode(RequestBody.GenerateLink.self, body)
            let type = try link.type.read() ?? ""
            guard let email = try link.email.email() else { throw .validationFailed("An email address is required") }
            guard let kind = GenerateLink.Kind(rawValue: type) else {
                throw .validationFailed("Invalid email action link type requested: \(type)")
            }
            return .generateLink(
                GenerateLink(
                    kind: kind, email: email, newEmail: try link.newEmail.email(), password: try link.password.nonEmpty(),
                    metadataJSON: try link.data.read()?.text, redirectTo: try link.redirectTo.nonEmpty() ?? queryValue("redirect_to")))
        case (_, let path) where path.first == "sso":
            return .notOffered(.samlProviderDisabled)
        case (_, let path) where path.first == "oauth":
            return .notOffered(.oauthServerDisabled)
        case (.get, let parts) where parts.count == 2 && parts[0] == "users":
            return .getUser(userID(parts[1]))
        case (.put, let parts) where parts.count == 2 && parts[0] == "users":
            let user = try RequestBody.decode(RequestBody.AdminUpdateUser.self, body)
            var metadata = try user.data.read()?.text
            if metadata == nil { metadata = try user.userMetadata.read()?.text }
            var changes = UserChanges(email: try user.email.email(), password: try user.password.read(), metadataJSON: metadata)
            changes.appMetadataJSON = try user.appMetadata.read()?.text
            changes.emailConfirm = try user.emailConfirm.read() ?? false
            changes.ban = try banDuration(try user.banDuration.read())
            return .updateUser(userID(parts[1]), changes)
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

    /// `POST /verify` with `type` `sms` or `phone_change`, answered as GoTrue answers it where
    /// no user has a phone: its checks of the body, then the code is wrong.
    static func refusePhoneVerification(token: String, tokenHash: String, email: String?, phone: String?, redirectTo: String?) throws(AuthError) {
        guard token.isEmpty != tokenHash.isEmpty else { throw .validationFailed("Verify requires either a token or a token hash") }
        guard !token.isEmpty else {
            guard email == nil, phone == nil, (redirectTo ?? "").isEmpty else { throw .validationFailed("Only the token_hash and type should be provided") }
            throw .validationFailed("Invalid email verification type")
        }
        if let phone, email == nil {
            let digits = phone.hasPrefix("+") ? phone.dropFirst().replacingOccurrences(of: " ", with: "") : phone.replacingOccurrences(of: " ", with: "")
            let bytes = Array(digits.utf8)
            guard (2...15).contains(bytes.count), bytes[0] >= 0x31, bytes[0] <= 0x39, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw .validationFailed("Invalid phone number format (E.164 required)")
            }
        } else if email == nil || phone != nil {
            throw .validationFailed("Only an email address or phone number should be provided on verify")
        }
        throw .otpExpired(link: false)
    }

    /// `ban_duration` as Go's `time.ParseDuration` reads it (`none`: lift the ban); empty or
    /// absent: no change.
    static func banDuration(_ text: String?) throws(AuthError) -> BanDuration? {
        guard let text, !text.isEmpty else { return nil }
        if text == "none" { return .lifted }
        let seconds: Double
        switch goDuration(text) {
        case .success(let value): seconds = value
        case .failure(let error): throw .validationFailed("invalid format for ban duration: time: \(error.reason) \(jsonString(text))")
        }
        return seconds == 0 ? .lifted : .seconds(seconds)
    }

    /// Why a Go duration does not parse, worded as Go's error.
    struct DurationError: Error { var reason: String }

    /// Go's `time.ParseDuration`: `[-+]` then number-unit pairs (`ns`, `us`, `µs`, `ms`, `s`, `m`,
    /// `h`), or a bare `0`; seconds, or the start of Go's error message.
    static func goDuration(_ text: String) -> Result<Double, DurationError> {
        var rest = Substring(text)
        var sign = 1.0
        if rest.first == "-" || rest.first == "+" {
            sign = rest.first == "-" ? -1 : 1
            rest = rest.dropFirst()
        }
        if rest == "0" { return .success(0) }
        guard !rest.isEmpty else { return .failure(DurationError(reason: "invalid duration")) }
        let units: [(String, Double)] = [("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("μs", 1e-6), ("ms", 1e-3), ("s", 1), ("m", 60), ("h", 3600)]
        var total = 0.0
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, number != ".", let value = Double(number.hasPrefix(".") ? "0" + number : number) else {
                return .failure(DurationError(reason: "invalid duration"))
            }
            rest = rest.dropFirst(number.count)
            let unitText = rest.prefix { !($0.isASCII && ($0.isNumber || $0 == ".")) }
            guard !unitText.isEmpty else { return .failure(DurationError(reason: "missing unit in duration")) }
            guard let unit = units.first(where: { $0.0 == unitText }) else {
                return .failure(DurationError(reason: "unknown unit \(jsonString(String(unitText))) in duration"))
            }
            total += value * unit.1
            rest = rest.dropFirst(unitText.count)
        }
        return .success(sign * total)
    }

    /// The verification `type`: e-mail types only (this server sends no SMS and no invites).
    private static func verifyType(_ text: String?) throws(AuthError) -> VerifyType {
        guard let text, !text.isEmpty else { throw .validationFailed("Verify requires a verification type") }
        guard let type = VerifyType(rawValue: text) else { throw .validationFailed("Unsupported verification type") }
        return type
    }
}
