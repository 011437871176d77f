/// GoTrue's OAuth 2.1 server settings (`OAUTH_SERVER_*`, GoTrue's names without `GOTRUE_`):
/// this project as the authorization server third-party applications sign users in with.
public struct OAuthServerConfig: Sendable {
    /// `OAUTH_SERVER_ENABLED`: off, every OAuth server endpoint is GoTrue's 404 `feature_disabled`.
    public var enabled = false
    /// `OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION`: `POST /oauth/clients/register` (RFC 7591) for anyone.
    public var allowDynamicRegistration = false
    /// `OAUTH_SERVER_AUTHORIZATION_PATH`: the app's consent page, under `SITE_URL`, that
    /// `/oauth/authorize` sends the browser to with `?authorization_id=…`.
    public var authorizationPath = ""
    /// `OAUTH_SERVER_AUTHORIZATION_TTL`: seconds an authorization request (and its code) lives.
    public var authorizationTTL: Double = 600
    /// `OAUTH_SERVER_DEFAULT_SCOPE`: the scope of an authorization request that names none.
    public var defaultScope = "email"

    public init() {}
}
