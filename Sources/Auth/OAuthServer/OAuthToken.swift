import Foundation
import HTTP
import Identity
import Postgres

/// The scopes and client of a session an OAuth client holds: its tokens' `client_id` and `scope`.
struct OAuthSessionGrant: Sendable, Equatable {
    var clientID: String
    var scope: String
}

/// `POST /oauth/token` (GoTrue's `OAuthToken`): the client authenticates as it registered,
/// then exchanges a code (with its PKCE verifier) or a refresh token. Answers carry no user.
extension AuthService {
    func oauthToken(_ form: OAuthTokenForm) throws -> String {
        let client = try authenticateClient(try form.credentials.get())
        guard !form.grantType.isEmpty else { throw AuthError.oauth("invalid_request", description: "grant_type is required") }
        guard client.grantTypes.contains(form.grantType) else {
            throw AuthError.oauth("unsupported_grant_type", description: "Client is not allowed to use grant type: \(form.grantType)")
        }
        let session: String
        switch form.grantType {
        case "authorization_code":
            session = try exchangeAuthorizationCode(form, client: client)
        case "refresh_token":
            guard !form.refreshToken.isEmpty else {
                throw AuthError.oauth("invalid_request", description: "refresh_token is required for refresh_token grant")
            }
            session = try refreshedSession(form.refreshToken, oauthClientID: client.id)
        default:
            throw AuthError.oauth("unsupported_grant_type", description: "Unsupported grant type: \(form.grantType)")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(session.utf8))) as? [String: Any] else { throw AuthError.unexpected("session JSON") }
        return JWT.serialize(object.filter { ["access_token", "token_type", "expires_in", "refresh_token"].contains($0.key) })
    }

    /// GoTrue's `requireOAuthClientAuth`: the client exists, used the method it registered,
    /// and (confidential) proved its secret.
    func authenticateClient(_ credentials: OAuthClientCredentials) throws -> OAuthClients.Row {
        guard let id = AuthRequest.uuid(credentials.clientID) else { throw AuthError.invalidClientCredentials("Invalid client_id format") }
        guard let client = try pool.withConnection({ try OAuthClients.find($0, id: id) }) else {
            throw AuthError.invalidClientCredentials("Invalid client credentials")
        }
        guard credentials.method == client.authMethod else {
            throw AuthError.invalidClientCredentials(
                "invalid authentication method: client is registered for '\(client.authMethod.rawValue)' but '\(credentials.method.rawValue)' was used")
        }
        switch client.type {
        case .public:
            guard credentials.secret.isEmpty else { throw AuthError.invalidClientCredentials("public clients must not provide client_secret") }
        case .confidential:
            guard !credentials.secret.isEmpty else { throw AuthError.invalidClientCredentials("confidential clients must provide client_secret") }
            guard Self.clientSecretMatches(credentials.secret, hash: client.secretHash) else {
                throw AuthError.invalidClientCredentials("invalid client credentials")
            }
        }
        return client
    }

    /// The code exchanged once, in GoTrue's order of checks: it exists (approved, not yet
    /// used), is alive, is this client's, for this resource and redirect URI, and the verifier
    /// matches its challenge. A session for the user and client follows, and the code is gone.
    func exchangeAuthorizationCode(_ form: OAuthTokenForm, client: OAuthClients.Row) throws -> String {
        guard !form.code.isEmpty else { throw AuthError.oauth("invalid_request", description: "code is required for authorization_code grant") }
        func invalidGrant(_ description: String) -> AuthError { .oauth("invalid_grant", description: description) }
        return try pool.withTransaction { connection in
            guard let request = try OAuthAuthorizations.lock(connection, codeDigest: Self.digest(form.code)) else {
                throw invalidGrant("Invalid authorization code")
            }
            guard !request.expired else { throw invalidGrant("Authorization code has expired") }
            guard request.clientID == client.id else { throw invalidGrant("Authorization code was not issued for this client") }
            guard form.resource.isEmpty || form.resource == request.resource else {
                throw invalidGrant("Authorization code resource does not match the resource parameter")
            }
            guard form.redirectURI.isEmpty || form.redirectURI == request.redirectURI else { throw invalidGrant("Invalid redirect_uri") }
            guard !form.codeVerifier.isEmpty else {
                throw invalidGrant("PKCE verification failed: code_verifier is required when PKCE challenge is present")
            }
            guard Self.pkceMatches(verifier: form.codeVerifier, challenge: request.codeChallenge, method: request.codeChallengeMethod) else {
                throw invalidGrant("PKCE verification failed: code challenge does not match previously saved code verifier")
            }
            guard let userID = request.userID else { throw invalidGrant("Authorization code has no associated user") }
            guard let holder = try Users.banState(connection, id: userID) else { throw invalidGrant("User not found for authorization code") }
            guard !holder else { throw AuthError.oauth("access_denied", description: "User is banned") }
            try OAuthAuthorizations.delete(connection, id: request.id)
            return try startSession(
                connection, userID: userID, method: "oauth_provider/authorization_code",
                oauth: OAuthSessionGrant(clientID: client.id, scope: OAuthScopes.parse(request.scope).joined(separator: " ")))
        }
    }
}
