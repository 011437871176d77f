import Foundation
import HTTP
import Identity

/// The parser: the route picks the endpoint, then a small reader per endpoint family checks the
/// query and body in GoTrue's order and says what is wrong in GoTrue's words.
extension AuthRequest {
    /// Parses the path after `/auth/v1`, the query and the body.
    public static func parse(method: HTTPMethod, route: String, query: [(name: String, value: String)], body: [UInt8]) throws(AuthError) -> AuthRequest {
        func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }
        let redirectTo = queryValue("redirect_to")
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
        case (.post, ["signup"]), (.post, ["recover"]), (.post, ["otp"]), (.post, ["magiclink"]), (.post, ["resend"]):
            return try mailFlow(segments[0], body: body, redirectTo: redirectTo)
        case (.post, ["verify"]):
            return try verify(body: body, redirectTo: redirectTo)
        case (.get, ["verify"]):
            return try verifyLink(queryValue)
        case (.get, ["reauthenticate"]):
            return .reauthenticate
        case (.post, ["token"]):
            return .token(try tokenGrant(queryValue("grant_type") ?? "", body: body))
        case (.get, ["user"]):
            return .getUser
        case (.put, ["user"]):
            return .updateUser(try userChanges(body: body, redirectTo: redirectTo))
        case (.post, ["logout"]):
            let scope = queryValue("scope") ?? "global"
            guard let value = LogoutScope(rawValue: scope) else { throw .validationFailed("Unsupported logout scope \"\(scope)\"") }
            return .logout(value)
        case (_, let path) where path.first == "factors":
            return .mfa(try mfa(method: method, path: path, body: body))
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
            return .admin(.invite(email: try invite.email.email() ?? "", metadataJSON: try invite.data.read()?.text ?? "{}", redirectTo: redirectTo))
        case (_, let path) where path.first == "admin":
            return .admin(try admin(method: method, path: Array(path.dropFirst()), queryValue: queryValue, body: body))
        default:
            throw .notFound
        }
    }

    /// `POST /signup`, `/recover`, `/otp` (and its old name `/magiclink`), `/resend`.
    static func mailFlow(_ endpoint: String, body: [UInt8], redirectTo: String?) throws(AuthError) -> AuthRequest {
        switch endpoint {
        case "signup":
            let body = try RequestBody.decode(RequestBody.SignUp.self, body)
            return .signUp(
                SignUp(
                    email: try body.email.email(), phone: try body.phone.nonEmpty(), password: try body.password.read(),
                    metadataJSON: try body.data.read()?.text ?? "{}", pkce: try body.pkce(), redirectTo: redirectTo))
        case "recover":
            let body = try RequestBody.decode(RequestBody.Recover.self, body)
            guard let email = try body.email.email() else { throw .validationFailed("Password recovery requires an email") }
            return .recover(Recover(email: email, pkce: try body.pkce(), redirectTo: redirectTo))
        case "resend":
            let body = try RequestBody.decode(RequestBody.Resend.self, body)
            let type = try body.type.read() ?? ""
            if type == "sms" || type == "phone_change" { throw .phoneProviderDisabled }
            guard let kind = Resend.Kind(rawValue: type) else {
                throw .validationFailed("Missing one of these types: signup, email_change, sms, phone_change")
            }
            guard let email = try body.email.email() else { throw .validationFailed("Missing email address") }
            return .resend(Resend(kind: kind, email: email, pkce: try body.pkce(), redirectTo: redirectTo))
        default:
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
                    pkce: try body.pkce(), redirectTo: redirectTo))
        }
    }

    /// `POST /verify`: a code with its address, or a link's `token_hash`.
    static func verify(body: [UInt8], redirectTo queryRedirect: String?) throws(AuthError) -> AuthRequest {
        let body = try RequestBody.decode(RequestBody.Verify.self, body)
        let typeText = try body.type.read()
        let token = try body.token.read() ?? ""
        let tokenHash = try body.tokenHash.read() ?? ""
        let email = try body.email.email()
        let phone = try body.phone.nonEmpty()
        let redirectTo = try body.redirectTo.nonEmpty() ?? queryRedirect
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
    }

    /// `GET /verify?token=…&type=…&redirect_to=…`: the link in a mail.
    static func verifyLink(_ queryValue: (String) -> String?) throws(AuthError) -> AuthRequest {
        if queryValue("type") == "sms" || queryValue("type") == "phone_change" {
            guard !(queryValue("token") ?? "").isEmpty else { throw .validationFailed("Verify requires a token or a token hash") }
            throw .validationFailed("Invalid email verification type")
        }
        let type = try verifyType(queryValue("type"))
        guard let token = queryValue("token"), !token.isEmpty else { throw .validationFailed("Verify requires a token or a token hash") }
        guard !token.utf8.contains(0) else { throw .validationFailed("Verify requires a token or a token hash") }
        return .verifyLink(VerifyLink(token: token, type: type, redirectTo: queryValue("redirect_to")))
    }

    /// `POST /token?grant_type=…`.
    static func tokenGrant(_ grantType: String, body: [UInt8]) throws(AuthError) -> TokenGrant {
        switch grantType {
        case "password":
            let grant = try RequestBody.decode(RequestBody.PasswordGrant.self, body)
            return .password(email: try grant.email.email() ?? "", phone: try grant.phone.read(), password: try grant.password.read())
        case "refresh_token":
            let grant = try RequestBody.decode(RequestBody.RefreshTokenGrant.self, body)
            return .refreshToken(try grant.refreshToken.read())
        case "id_token":
            let grant = try RequestBody.decode(RequestBody.IDTokenGrant.self, body)
            return .idToken(
                IDTokenGrant(
                    idToken: try grant.idToken.read(), provider: try grant.provider.read(), nonce: try grant.nonce.read(),
                    linkIdentity: try grant.linkIdentity.read() ?? false))
        case "pkce":
            let grant = try RequestBody.decode(RequestBody.PKCEGrant.self, body)
            let code = try grant.authCode.read() ?? ""
            let verifier = try grant.codeVerifier.read() ?? ""
            guard !code.isEmpty, !verifier.isEmpty else {
                throw .validationFailed("invalid request: both auth code and code verifier should be non-empty")
            }
            return .pkce(authCode: code, codeVerifier: verifier)
        case let grant:
            _ = try RequestBody.decode(RequestBody.Unchecked.self, body)
            return .unsupported(grant)
        }
    }

    /// `PUT /user`.
    static func userChanges(body: [UInt8], redirectTo: String?) throws(AuthError) -> UserChanges {
        let body = try RequestBody.decode(RequestBody.UserUpdate.self, body)
        let metadata = try body.data.read()?.text
        var changes = UserChanges(email: try body.email.email(), password: try body.password.read(), metadataJSON: metadata)
        changes.nonce = try body.nonce.nonEmpty()
        changes.pkce = try body.pkce()
        changes.redirectTo = redirectTo
        return changes
    }

    /// `/factors…`.
    static func mfa(method: HTTPMethod, path: [String], body: [UInt8]) throws(AuthError) -> MFA {
        switch (method, path) {
        case (.post, ["factors"]):
            let body = try RequestBody.decode(RequestBody.EnrollFactor.self, body)
            let type = try body.factorType.read() ?? ""
            guard let factorType = MFAFactorType(rawValue: type) else {
                throw .validationFailed("factor_type needs to be totp, phone, or webauthn")
            }
            _ = try body.phone.read()
            return .enroll(Enroll(type: factorType, friendlyName: try body.friendlyName.read() ?? "", issuer: try body.issuer.nonEmpty()))
        case (.post, let path) where path.count == 3 && path[2] == "challenge":
            let body = try RequestBody.decode(RequestBody.ChallengeFactor.self, body)
            _ = try body.channel.read()
            return .challenge(factorID: uuid(path[1]))
        case (.post, let path) where path.count == 3 && path[2] == "verify":
            let body = try RequestBody.decode(RequestBody.VerifyFactor.self, body)
            var challengeID: String?
            if let text = try body.challengeID.read() {
                guard let id = uuid(text) else { throw .validationFailed("Could not read request body: challenge_id must be a UUID") }
                challengeID = id
            }
            let code = try body.code.read() ?? ""
            guard !code.isEmpty else { throw .validationFailed("Code needs to be non-empty") }
            return .verify(factorID: uuid(path[1]), challengeID: challengeID, code: code)
        case (.delete, let path) where path.count == 2:
            return .unenroll(factorID: uuid(path[1]))
        default:
            throw .notFound
        }
    }

    /// The verification `type`: e-mail types only (this server sends no SMS and no invites).
    static func verifyType(_ text: String?) throws(AuthError) -> VerifyType {
        guard let text, !text.isEmpty else { throw .validationFailed("Verify requires a verification type") }
        guard let type = VerifyType(rawValue: text) else { throw .validationFailed("Unsupported verification type") }
        return type
    }
    /// GoTrue's answer to the OAuth redirect flows (`/authorize`), which this server does not
    /// offer: its id_token providers are not OAuth providers.
    static func unsupportedProvider(_ name: String?) -> AuthError {
        guard let name, !name.isEmpty else { return .validationFailed("Unsupported provider: Provider  could not be found") }
        return .validationFailed("Unsupported provider: provider is not enabled")
    }

    /// The UUID in lower case; nil when `text` is not one.
    static func uuid(_ text: String) -> String? { UUID(uuidString: text)?.uuidString.lowercased() }

}
