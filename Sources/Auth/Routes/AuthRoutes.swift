import HTTP

/// Auth's endpoints, one line each, as GoTrue's router lists them: method, path, caller, the
/// provider switch, the budgets, and the reader. The first line that serves a request is its
/// endpoint; a request no line serves is GoTrue's 404. A new endpoint, caller rule or budget is
/// a line or a word here (and the handler `AuthService.handle` names for what the reader returns).
extension AuthRoute {
    static let table: [AuthRoute] = [
        AuthRoute([.get, .head], "health", .key) { _ in .health },
        AuthRoute([.get], "settings", .key) { _ in .settings },
        AuthRoute([.get], ".well-known/jwks.json", .open) { _ in .jwks },
        AuthRoute([.get], ".well-known/openid-configuration", .open) { _ in .openIDConfiguration },
        AuthRoute([.get], ".well-known/oauth-authorization-server", .open, needs: .oauthServer) { _ in .oauthServer(.metadata) },

        // Sign-up and sign-in.
        AuthRoute([.post], "signup", .key, needs: .signUp, budgets: [.signInsPerAddress, .signInsPerEmail]) { try $0.signUp() },
        AuthRoute([.post], "token", grantType: "password", .key, budgets: [.signInsPerAddress, .signInsPerEmail]) { try $0.passwordGrant() },
        AuthRoute([.post], "token", grantType: "id_token", .key, budgets: [.signInsPerAddress]) { try $0.idTokenGrant() },
        AuthRoute([.post], "token", grantType: "refresh_token", .key, budgets: [.refreshesPerAddress]) { try $0.refreshTokenGrant() },
        AuthRoute([.post], "token", grantType: "pkce", .key, budgets: [.refreshesPerAddress]) { try $0.pkceGrant() },
        AuthRoute([.post], "token", grantType: "web3", .key, needs: .web3, budgets: [.web3PerAddress]) { try $0.web3Grant() },
        AuthRoute([.post], "token", .key) { try $0.unsupportedGrant() },
        AuthRoute([.post], "logout", .session) { try $0.logout() },

        // Mails and the links and codes they carry.
        AuthRoute([.post], "recover", .key, needs: .emailLogins(.badRequest), budgets: [.mailRequestsPerAddress]) { try $0.recover() },
        AuthRoute([.post], "otp", .key, needs: .emailLogins(.unprocessableContent), budgets: [.mailRequestsPerAddress]) { try $0.otp() },
        AuthRoute([.post], "magiclink", .key, needs: .emailLogins(.unprocessableContent), budgets: [.mailRequestsPerAddress]) { try $0.otp() },
        AuthRoute([.post], "resend", .key, needs: .emailLogins(.badRequest), budgets: [.mailRequestsPerAddress]) { try $0.resend() },
        AuthRoute([.post], "verify", .open, budgets: [.verificationsPerAddress]) { try $0.verify() },
        AuthRoute([.get], "verify", .open, budgets: [.verificationsPerAddress]) { try $0.verifyLink() },
        AuthRoute([.get], "reauthenticate", .session) { _ in .reauthenticate },

        // The signed-in user.
        AuthRoute([.get], "user", .session) { _ in .getUser },
        AuthRoute([.put], "user", .session) { try $0.updateUser() },
        AuthRoute([.delete], "user/identities/{identity_id}", .session) { .deleteIdentity($0.uuid("identity_id")) },
        AuthRoute([.get], "user/identities/authorize", .session) { try $0.externalAuthorize(link: true) },
        AuthRoute([.get], "user/oauth/grants", .session, needs: .oauthServer) { _ in .oauthServer(.listGrants) },
        AuthRoute([.delete], "user/oauth/grants", .session, needs: .oauthServer) { try $0.revokeOAuthGrant() },
        AuthRoute([], "user/oauth/*", .session, needs: .oauthServer) { _ in throw AuthError.notFound },
        AuthRoute([.post], "factors", .session) { .mfa(try $0.enrollFactor()) },
        AuthRoute([.post], "factors/{factor_id}/challenge", .session) { .mfa(try $0.challengeFactor()) },
        AuthRoute([.post], "factors/{factor_id}/verify", .session) { .mfa(try $0.verifyFactor()) },
        AuthRoute([.delete], "factors/{factor_id}", .session) { .mfa(.unenroll(factorID: $0.uuid("factor_id"))) },
        AuthRoute([.post], "passkeys/authentication/options", .key, needs: .passkeys, budgets: [.passkeyPerAddress]) { _ in .passkey(.authenticationOptions) },
        AuthRoute([.post], "passkeys/authentication/verify", .key, needs: .passkeys) { .passkey(.authenticationVerify(try $0.passkeyAnswer())) },
        AuthRoute([.post], "passkeys/registration/options", .session, needs: .passkeys) { _ in .passkey(.registrationOptions) },
        AuthRoute([.post], "passkeys/registration/verify", .session, needs: .passkeys) { .passkey(.registrationVerify(try $0.passkeyAnswer())) },
        AuthRoute([.get], "passkeys", .session, needs: .passkeys) { _ in .passkey(.list) },
        AuthRoute([.patch], "passkeys/{passkey_id}", .session, needs: .passkeys) { try $0.renamePasskey() },
        AuthRoute([.delete], "passkeys/{passkey_id}", .session, needs: .passkeys) { .passkey(.delete(id: $0.uuid("passkey_id"))) },

        // The OAuth redirect flow: to the provider and back.
        AuthRoute([.get], "authorize", .open) { try $0.externalAuthorize(link: false) },
        AuthRoute([.get, .post], "callback", .open) { $0.externalCallback() },

        // Features this server does not offer: GoTrue's answers for them switched off.
        AuthRoute([], "sso/*", .key) { _ in throw AuthError.samlProviderDisabled },

        // The OAuth 2.1 server: third-party clients and browsers call it without the `apikey`.
        AuthRoute([.post], "oauth/clients/register", .open, needs: .oauthServer) { try $0.registerOAuthClient(dynamic: true) },
        AuthRoute([.get], "oauth/authorize", .open, needs: .oauthServer) { try $0.oauthAuthorize() },
        AuthRoute([.get], "oauth/authorizations/{authorization_id}", .session, needs: .oauthServer) {
            .oauthServer(.authorization($0.parameter("authorization_id")))
        },
        AuthRoute([.post], "oauth/authorizations/{authorization_id}/consent", .session, needs: .oauthServer) { try $0.oauthConsent() },
        AuthRoute([.post], "oauth/token", .open, needs: .oauthServer) { try $0.oauthToken() },
        AuthRoute([], "oauth/*", .open, needs: .oauthServer) { _ in throw AuthError.notFound },

        // The admin API.
        AuthRoute([.post], "invite", .admin) { .admin(try $0.invite()) },
        AuthRoute([.get], "admin/users", .admin) { .admin(try $0.listUsers()) },
        AuthRoute([.post], "admin/users", .admin) { .admin(try $0.createUser()) },
        AuthRoute([.get], "admin/users/{user_id}", .admin) { .admin(.getUser($0.uuid("user_id"))) },
        AuthRoute([.put], "admin/users/{user_id}", .admin) { .admin(try $0.adminUpdateUser()) },
        AuthRoute([.delete], "admin/users/{user_id}", .admin) { .admin(.deleteUser($0.uuid("user_id"))) },
        AuthRoute([.get], "admin/users/{user_id}/factors", .admin) { .admin(.listFactors($0.uuid("user_id"))) },
        AuthRoute([.put], "admin/users/{user_id}/factors/{factor_id}", .admin) { .admin(try $0.updateFactor()) },
        AuthRoute([.delete], "admin/users/{user_id}/factors/{factor_id}", .admin) {
            .admin(.deleteFactor($0.uuid("user_id"), factorID: $0.uuid("factor_id")))
        },
        AuthRoute([.get], "admin/users/{user_id}/passkeys", .admin) { .admin(.listPasskeys($0.uuid("user_id"))) },
        AuthRoute([.delete], "admin/users/{user_id}/passkeys/{passkey_id}", .admin) {
            .admin(.deletePasskey($0.uuid("user_id"), passkeyID: $0.uuid("passkey_id")))
        },
        AuthRoute([.post], "admin/generate_link", .admin) { .admin(try $0.generateLink()) },
        AuthRoute([], "admin/sso/*", .admin) { _ in throw AuthError.samlProviderDisabled },
        AuthRoute([.post], "admin/oauth/clients", .admin, needs: .oauthServer) { try $0.registerOAuthClient(dynamic: false) },
        AuthRoute([.get], "admin/oauth/clients", .admin, needs: .oauthServer) { _ in .oauthServer(.listClients) },
        AuthRoute([.get], "admin/oauth/clients/{client_id}", .admin, needs: .oauthServer) { .oauthServer(.getClient(try $0.oauthClientID())) },
        AuthRoute([.put], "admin/oauth/clients/{client_id}", .admin, needs: .oauthServer) { try $0.updateOAuthClient() },
        AuthRoute([.delete], "admin/oauth/clients/{client_id}", .admin, needs: .oauthServer) { .oauthServer(.deleteClient(try $0.oauthClientID())) },
        AuthRoute([.post], "admin/oauth/clients/{client_id}/regenerate_secret", .admin, needs: .oauthServer) {
            .oauthServer(.regenerateSecret(try $0.oauthClientID()))
        },
        AuthRoute([], "admin/oauth/*", .admin, needs: .oauthServer) { _ in throw AuthError.notFound }
    ]
}
