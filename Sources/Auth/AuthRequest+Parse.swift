import Foundation
import HTTP
import Identity

/// The readers of `AuthRoute.table`: one per endpoint, each checking the query and body in
/// GoTrue's order and saying what is wrong in GoTrue's words.
extension AuthRequest {
    /// Parses the path after `/auth/v1`, the query and the body by the line of `AuthRoute.table`
    /// that serves them; who calls is not checked here (`AuthService.dispatch` does that first).
    public static func parse(method: HTTPMethod, route: String, query: [(name: String, value: String)], body: [UInt8]) throws(AuthError) -> AuthRequest {
        guard let (line, parameters) = AuthRoute.find(method: method, route: route, query: query) else { throw .notFound }
        do {
            return try line.read(AuthRoute.Input(method: method, parameters: parameters, query: query, body: body))
        } catch {
            throw error as? AuthError ?? .unexpected("\(error)")
        }
    }

    /// Whether the endpoint serves without the gateway's `apikey` (`AuthRoute.isOpen`).
    public static func isOpenRoute(_ route: String) -> Bool { AuthRoute.isOpen(route) }
}

extension AuthRoute.Input {
    var redirectTo: String? { queryValue("redirect_to") }

    /// The path parameter in lower case when it is a UUID; nil otherwise (GoTrue answers 404
    /// once the caller is known).
    func uuid(_ name: String) -> String? { AuthRequest.uuid(parameter(name)) }

    /// `POST /signup`.
    func signUp() throws(AuthError) -> AuthRequest {
        let body = try RequestBody.decode(RequestBody.SignUp.self, body)
        return .signUp(
            AuthRequest.SignUp(
                email: try body.email.email(), phone: try body.phone.nonEmpty(), password: try body.password.read(),
                metadataJSON: try body.data.read()?.text ?? "{}", pkce: try body.pkce(), redirectTo: redirectTo,
                channel: try body.channel.nonEmpty() ?? "sms"))
    }

    /// `POST /recover`.
    func recover() throws(AuthError) -> AuthRequest {
        let body = try RequestBody.decode(RequestBody.Recover.self, body)
        guard let email = try body.email.email() else { throw .validationFailed("Password recovery requires an email") }
        return .recover(AuthRequest.Recover(email: email, pkce: try body.pkce(), redirectTo: redirectTo))
    }

    /// `POST /resend`.
    func resend() throws(AuthError) -> AuthRequest {
        let body = try RequestBody.decode(RequestBody.Resend.self, body)
        let type = try body.type.read() ?? ""
        let email = try body.email.email()
        let phone = try body.phone.nonEmpty()
        if let kind = AuthRequest.PhoneResend.Kind(rawValue: type) {
            guard let phone else { throw .validationFailed(kind == .sms ? "Type provided requires a phone number" : "Missing email address or phone number") }
            guard email == nil else { throw .validationFailed("Only an email address or phone number should be provided.") }
            return .phoneResend(AuthRequest.PhoneResend(kind: kind, phone: try PhoneNumber.normalize(phone)))
        }
        guard let kind = AuthRequest.Resend.Kind(rawValue: type) else {
            throw .validationFailed("Missing one of these types: signup, email_change, sms, phone_change")
        }
        guard let email else { throw .validationFailed("Missing email address") }
        return .resend(AuthRequest.Resend(kind: kind, email: email, pkce: try body.pkce(), redirectTo: redirectTo))
    }

    /// `POST /otp` (and its old name `/magiclink`).
    func otp() throws(AuthError) -> AuthRequest {
        let body = try RequestBody.decode(RequestBody.OTP.self, body)
        let email = try body.email.email()
        let phone = try body.phone.nonEmpty()
        if email != nil && phone != nil { throw .validationFailed("Only an email address or phone number should be provided") }
        if let phone {
            return .phoneOTP(
                AuthRequest.PhoneOTP(
                    phone: phone, createUser: try body.createUser.read() ?? true, metadataJSON: try body.data.read()?.text ?? "{}",
                    channel: try body.channel.nonEmpty() ?? "sms"))
        }
        guard let email else { throw .validationFailed("An email address or phone number is required") }
        if try body.channel.read().map({ !$0.isEmpty }) ?? false {
            throw .validationFailed("Channel should only be specified with Phone OTP")
        }
        return .otp(
            AuthRequest.OTP(
                email: email, createUser: try body.createUser.read() ?? true, metadataJSON: try body.data.read()?.text ?? "{}",
                pkce: try body.pkce(), redirectTo: redirectTo))
    }

    /// `POST /verify`: a code with its address, or a link's `token_hash`.
    func verify() throws(AuthError) -> AuthRequest {
        let body = try RequestBody.decode(RequestBody.Verify.self, body)
        let typeText = try body.type.read()
        let token = try body.token.read() ?? ""
        let tokenHash = try body.tokenHash.read() ?? ""
        let email = try body.email.email()
        let phone = try body.phone.nonEmpty()
        let redirectTo = try body.redirectTo.nonEmpty() ?? self.redirectTo
        let type = try AuthRequest.verifyType(typeText)
        if type == .sms || type == .phoneChange {
            return .verify(
                try AuthRequest.phoneVerification(
                    type: type, token: token, tokenHash: tokenHash, email: email, phone: phone, redirectTo: try body.redirectTo.read()))
        }
        guard token.isEmpty != tokenHash.isEmpty else { throw .validationFailed("Verify requires either a token or a token hash") }
        if !tokenHash.isEmpty {
            guard email == nil, phone == nil, (try body.redirectTo.read() ?? "").isEmpty else {
                throw .validationFailed("Only the token_hash and type should be provided")
            }
            return .verify(AuthRequest.Verify(type: type, credential: .tokenHash(tokenHash), redirectTo: nil))
        }
        guard let email, phone == nil else { throw .validationFailed("Only an email address or phone number should be provided on verify") }
        return .verify(
            AuthRequest.Verify(type: type, credential: .otp(email: email, token: token.trimmingCharacters(in: .whitespaces)), redirectTo: redirectTo))
    }

    /// `GET /verify?token=…&type=…&redirect_to=…`: the link in a mail.
    func verifyLink() throws(AuthError) -> AuthRequest {
        if queryValue("type") == "sms" || queryValue("type") == "phone_change" {
            guard !(queryValue("token") ?? "").isEmpty else { throw .validationFailed("Verify requires a token or a token hash") }
            throw .validationFailed("Invalid email verification type")
        }
        let type = try AuthRequest.verifyType(queryValue("type"))
        guard let token = queryValue("token"), !token.isEmpty else { throw .validationFailed("Verify requires a token or a token hash") }
        guard !token.utf8.contains(0) else { throw .validationFailed("Verify requires a token or a token hash") }
        return .verifyLink(AuthRequest.VerifyLink(token: token, type: type, redirectTo: redirectTo))
    }

    /// `POST /token?grant_type=password`.
    func passwordGrant() throws(AuthError) -> AuthRequest {
        let grant = try RequestBody.decode(RequestBody.PasswordGrant.self, body)
        return .token(.password(email: try grant.email.email() ?? "", phone: try grant.phone.read(), password: try grant.password.read()))
    }

    /// `POST /token?grant_type=refresh_token`.
    func refreshTokenGrant() throws(AuthError) -> AuthRequest {
        let grant = try RequestBody.decode(RequestBody.RefreshTokenGrant.self, body)
        return .token(.refreshToken(try grant.refreshToken.read()))
    }

    /// `POST /token?grant_type=id_token`.
    func idTokenGrant() throws(AuthError) -> AuthRequest {
        let grant = try RequestBody.decode(RequestBody.IDTokenGrant.self, body)
        return .token(
            .idToken(
                AuthRequest.IDTokenGrant(
                    idToken: try grant.idToken.read(), provider: try grant.provider.read(), nonce: try grant.nonce.read(),
                    linkIdentity: try grant.linkIdentity.read() ?? false)))
    }

    /// `POST /token?grant_type=pkce`.
    func pkceGrant() throws(AuthError) -> AuthRequest {
        let grant = try RequestBody.decode(RequestBody.PKCEGrant.self, body)
        let code = try grant.authCode.read() ?? ""
        let verifier = try grant.codeVerifier.read() ?? ""
        guard !code.isEmpty, !verifier.isEmpty else {
            throw .validationFailed("invalid request: both auth code and code verifier should be non-empty")
        }
        return .token(.pkce(authCode: code, codeVerifier: verifier))
    }

    /// `POST /token?grant_type=web3`.
    func web3Grant() throws(AuthError) -> AuthRequest {
        let grant = try RequestBody.decode(RequestBody.Web3Grant.self, body)
        return .token(
            .web3(
                AuthRequest.Web3Grant(chain: try grant.chain.read() ?? "", message: try grant.message.read() ?? "", signature: try grant.signature.read() ?? "")
            ))
    }

    /// `POST /token` with any other `grant_type`: its body must still be JSON.
    func unsupportedGrant() throws(AuthError) -> AuthRequest {
        _ = try RequestBody.decode(RequestBody.Unchecked.self, body)
        return .token(.unsupported(queryValue("grant_type") ?? ""))
    }

    /// `POST /logout?scope=…`.
    func logout() throws(AuthError) -> AuthRequest {
        let scope = queryValue("scope") ?? "global"
        guard let value = AuthRequest.LogoutScope(rawValue: scope) else { throw .validationFailed("Unsupported logout scope \"\(scope)\"") }
        return .logout(value)
    }

    /// `PUT /user`.
    func updateUser() throws(AuthError) -> AuthRequest {
        let body = try RequestBody.decode(RequestBody.UserUpdate.self, body)
        let metadata = try body.data.read()?.text
        var changes = AuthRequest.UserChanges(email: try body.email.email(), password: try body.password.read(), metadataJSON: metadata)
        changes.nonce = try body.nonce.nonEmpty()
        changes.phone = try body.phone.nonEmpty()
        changes.channel = try body.channel.nonEmpty() ?? "sms"
        changes.pkce = try body.pkce()
        changes.redirectTo = redirectTo
        return .updateUser(changes)
    }

    /// `POST /factors`.
    func enrollFactor() throws(AuthError) -> AuthRequest.MFA {
        let body = try RequestBody.decode(RequestBody.EnrollFactor.self, body)
        let type = try body.factorType.read() ?? ""
        guard let factorType = MFAFactorType(rawValue: type) else {
            throw .validationFailed("factor_type needs to be totp, phone, or webauthn")
        }
        _ = try body.phone.read()
        return .enroll(AuthRequest.Enroll(type: factorType, friendlyName: try body.friendlyName.read() ?? "", issuer: try body.issuer.nonEmpty()))
    }

    /// `POST /factors/{factor_id}/challenge`.
    func challengeFactor() throws(AuthError) -> AuthRequest.MFA {
        let body = try RequestBody.decode(RequestBody.ChallengeFactor.self, body)
        _ = try body.channel.read()
        return .challenge(factorID: uuid("factor_id"))
    }

    /// `POST /factors/{factor_id}/verify`.
    func verifyFactor() throws(AuthError) -> AuthRequest.MFA {
        let body = try RequestBody.decode(RequestBody.VerifyFactor.self, body)
        var challengeID: String?
        if let text = try body.challengeID.read() {
            guard let id = AuthRequest.uuid(text) else { throw .validationFailed("Could not read request body: challenge_id must be a UUID") }
            challengeID = id
        }
        let code = try body.code.read() ?? ""
        guard !code.isEmpty else { throw .validationFailed("Code needs to be non-empty") }
        return .verify(factorID: uuid("factor_id"), challengeID: challengeID, code: code)
    }

    /// `GET /authorize?provider=…&scopes=…&redirect_to=…&code_challenge=…&code_challenge_method=…`
    /// (and `GET /user/identities/authorize`, `link`): GoTrue's PKCE parameter checks; the
    /// provider is checked by the handler, against the configuration.
    func externalAuthorize(link: Bool) throws(AuthError) -> AuthRequest {
        let challenge = queryValue("code_challenge") ?? ""
        let method = queryValue("code_challenge_method") ?? ""
        var pkce: AuthRequest.PKCEChallenge?
        if !challenge.isEmpty || !method.isEmpty {
            guard !challenge.isEmpty, !method.isEmpty else { throw .validationFailed("PKCE flow requires code_challenge_method and code_challenge") }
            guard (43...128).contains(challenge.utf8.count),
                challenge.utf8.allSatisfy({ byte in
                    (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39)
                        || byte == 0x2d || byte == 0x2e || byte == 0x5f || byte == 0x7e
                })
            else { throw .validationFailed("code challenge has to be between 43 and 128 characters and contain only unreserved characters") }
            let lowered = method.lowercased()
            guard lowered == "s256" || lowered == "plain" else { throw .validationFailed("Invalid code_challenge_method") }
            pkce = AuthRequest.PKCEChallenge(challenge: challenge, method: lowered)
        }
        // GoTrue passes the rest of the query on to the provider, except what the server sets.
        let reserved: Set = [
            "provider", "scopes", "client_id", "client_secret", "redirect_uri", "response_type", "state", "code_challenge", "code_challenge_method",
            "code_verifier", "scope", "response_mode"
        ]
        var extra: [String: String] = [:]
        for (name, value) in query where !reserved.contains(name.lowercased()) && extra[name] == nil { extra[name] = value }
        let authorize = AuthRequest.ExternalAuthorize(
            provider: queryValue("provider") ?? "", scopes: queryValue("scopes") ?? "", redirectTo: queryValue("redirect_to"), pkce: pkce,
            skipHTTPRedirect: queryValue("skip_http_redirect") == "true", extra: extra)
        return .externalAuthorize(authorize, link: link)
    }

    /// `GET /callback` (the query) or `POST /callback` (Apple's `form_post` body; the query too).
    func externalCallback() -> AuthRequest {
        var fields: [String: String] = [:]
        var pairs = query
        if method == .post { pairs = parseQuery(String(decoding: body, as: UTF8.self)) + pairs }
        for (name, value) in pairs where fields[name] == nil { fields[name] = value }
        return .externalCallback(fields)
    }
}

extension AuthRequest {
    /// The verification `type`: the e-mail tokens' and the SMS codes'.
    static func verifyType(_ text: String?) throws(AuthError) -> VerifyType {
        guard let text, !text.isEmpty else { throw .validationFailed("Verify requires a verification type") }
        guard let type = VerifyType(rawValue: text) else { throw .validationFailed("Unsupported verification type") }
        return type
    }

    /// The UUID in lower case; nil when `text` is not one.
    static func uuid(_ text: String) -> String? { UUID(uuidString: text)?.uuidString.lowercased() }
}
