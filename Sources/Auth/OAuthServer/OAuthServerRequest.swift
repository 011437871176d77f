import Foundation

/// The OAuth 2.1 server's endpoints, parsed (GoTrue's `internal/api/oauthserver`): the admin
/// API for clients, dynamic registration, the authorization request and its consent, the token
/// endpoint, and the user's grants.
public enum OAuthServerRequest: Sendable, Equatable {
    /// `POST /admin/oauth/clients` (`manual`) or `POST /oauth/clients/register` (`dynamic`).
    case registerClient(OAuthClientRegistration)
    case listClients
    /// The admin API's client routes; the id is a UUID (the reader refuses others).
    case getClient(String)
    /// The body's parse is kept for after the client is found, as GoTrue loads it first.
    case updateClient(String, Result<OAuthClientChanges, AuthError>)
    case deleteClient(String)
    case regenerateSecret(String)
    /// `GET /oauth/authorize`.
    case authorize(OAuthAuthorizeQuery)
    /// `GET /oauth/authorizations/{authorization_id}`, as the signed-in user.
    case authorization(String)
    /// `POST /oauth/authorizations/{authorization_id}/consent`: approve (true) or deny.
    case consent(String, approve: Bool)
    /// `POST /oauth/token`.
    case token(OAuthTokenForm)
    /// `GET /user/oauth/grants`.
    case listGrants
    /// `DELETE /user/oauth/grants?client_id=…`.
    case revokeGrant(clientID: String)
    /// `GET /.well-known/oauth-authorization-server` (and OpenID's with the server on).
    case metadata
}

public enum OAuthClientType: String, Sendable, Equatable {
    case `public`, confidential
}

/// RFC 7591's `token_endpoint_auth_method`.
public enum OAuthTokenEndpointAuthMethod: String, Sendable, Equatable, CaseIterable {
    case none, clientSecretBasic = "client_secret_basic", clientSecretPost = "client_secret_post"

    /// The client type this method implies (GoTrue's `InferClientTypeFromAuthMethod`).
    var clientType: OAuthClientType { self == .none ? .public : .confidential }
}

/// A client registration, validated; its type and method resolved as GoTrue resolves them.
public struct OAuthClientRegistration: Sendable, Equatable {
    public var dynamic: Bool
    public var clientType: OAuthClientType
    public var authMethod: OAuthTokenEndpointAuthMethod
    public var redirectURIs: [String]
    public var grantTypes: [String]
    public var clientName: String?
    public var clientURI: String?
    public var logoURI: String?
}

/// `PUT /admin/oauth/clients/{client_id}`: the fields given, each validated.
public struct OAuthClientChanges: Sendable, Equatable {
    public var redirectURIs: [String]?
    public var grantTypes: [String]?
    public var clientName: String?
    public var clientURI: String?
    public var logoURI: String?
    public var authMethod: OAuthTokenEndpointAuthMethod?
}

/// `GET /oauth/authorize`'s query, as given (checked against the client by the handler).
public struct OAuthAuthorizeQuery: Sendable, Equatable {
    public var clientID: String
    public var redirectURI: String
    public var responseType: String
    public var scope: String
    public var state: String
    public var resource: String
    public var codeChallenge: String
    public var codeChallengeMethod: String
    public var nonce: String
}

/// `POST /oauth/token`'s form (or JSON body) and the client credentials it carries.
public struct OAuthTokenForm: Sendable, Equatable {
    public var grantType = ""
    public var code = ""
    public var refreshToken = ""
    public var redirectURI = ""
    public var codeVerifier = ""
    public var resource = ""
    /// The client as it authenticated: its id, its secret ("" for none) and the method used;
    /// or why the credentials could not be read.
    public var credentials: Result<OAuthClientCredentials, AuthError>
}

public struct OAuthClientCredentials: Sendable, Equatable {
    public var clientID: String
    public var secret: String
    public var method: OAuthTokenEndpointAuthMethod
}
