import Foundation
import Postgres

/// `auth.oauth_clients`: registered clients; a deleted one keeps its row (`deleted_at`) and is
/// found by nothing.
enum OAuthClients {
    struct Row {
        var id: String
        var type: OAuthClientType
        var authMethod: OAuthTokenEndpointAuthMethod
        var secretHash: String?
        var redirectURIs: [String]
        var grantTypes: [String]
    }

    static func create(_ connection: Connection, id: String, _ client: OAuthClientRegistration, secretHash: String?) throws -> String {
        try connection.query(
            """
            INSERT INTO auth.oauth_clients AS c (id, client_secret_hash, registration_type, client_type, token_endpoint_auth_method,
                redirect_uris, grant_types, client_name, client_uri, logo_uri)
            VALUES (\(id)::uuid, \(secretHash), \(client.dynamic ? "dynamic" : "manual"), \(client.clientType.rawValue), \(client.authMethod.rawValue),
                \(array: client.redirectURIs)::text[], \(array: client.grantTypes)::text[], \(client.clientName), \(client.clientURI), \(client.logoURI))
            RETURNING auth.oauth_client_json(c)::text
            """
        ).scalar ?? "{}"
    }

    static func find(_ connection: Connection, id: String) throws -> Row? {
        let found = try connection.query(
            """
            SELECT id::text, client_type, token_endpoint_auth_method, client_secret_hash, array_to_json(redirect_uris)::text,
                   array_to_json(grant_types)::text
            FROM auth.oauth_clients WHERE id = \(id)::uuid AND deleted_at IS NULL
            """)
        guard found.count == 1, let id = found[0, 0], let type = found[0, 1].flatMap(OAuthClientType.init),
            let method = found[0, 2].flatMap(OAuthTokenEndpointAuthMethod.init)
        else { return nil }
        return Row(
            id: id, type: type, authMethod: method, secretHash: found[0, 3], redirectURIs: stringArray(found[0, 4]), grantTypes: stringArray(found[0, 5]))
    }

    /// The client as the admin API answers it; nil when there is none.
    static func json(_ connection: Connection, id: String) throws -> String? {
        try connection.query("SELECT auth.oauth_client_json(c)::text FROM auth.oauth_clients c WHERE id = \(id)::uuid AND deleted_at IS NULL").scalar
    }

    /// Every client, newest first.
    static func listJSON(_ connection: Connection) throws -> String {
        try connection.query(
            "SELECT coalesce(json_agg(auth.oauth_client_json(c) ORDER BY c.created_at DESC, c.id DESC), '[]')::text FROM auth.oauth_clients c WHERE deleted_at IS NULL"
        ).scalar ?? "[]"
    }

    /// The given fields changed; the client's JSON.
    static func update(_ connection: Connection, id: String, _ changes: OAuthClientChanges) throws -> String? {
        try connection.query(
            """
            UPDATE auth.oauth_clients AS c SET
                redirect_uris = coalesce(\(changes.redirectURIs.map { SQL.arrayLiteral($0) })::text[], redirect_uris),
                grant_types = coalesce(\(changes.grantTypes.map { SQL.arrayLiteral($0) })::text[], grant_types),
                client_name = coalesce(\(changes.clientName), client_name),
                client_uri = coalesce(\(changes.clientURI), client_uri),
                logo_uri = coalesce(\(changes.logoURI), logo_uri),
                token_endpoint_auth_method = coalesce(\(changes.authMethod?.rawValue), token_endpoint_auth_method),
                updated_at = now()
            WHERE id = \(id)::uuid AND deleted_at IS NULL
            RETURNING auth.oauth_client_json(c)::text
            """
        ).scalar
    }

    static func setSecretHash(_ connection: Connection, id: String, hash: String) throws -> String? {
        try connection.query(
            """
            UPDATE auth.oauth_clients AS c SET client_secret_hash = \(hash), updated_at = now()
            WHERE id = \(id)::uuid AND deleted_at IS NULL RETURNING auth.oauth_client_json(c)::text
            """
        ).scalar
    }

    /// Soft-deleted, as GoTrue; its sessions end (their foreign key cascades only on a real
    /// delete, so they are deleted here).
    static func delete(_ connection: Connection, id: String) throws {
        _ = try connection.pipeline([
            "UPDATE auth.oauth_clients SET deleted_at = now(), updated_at = now() WHERE id = \(id)::uuid AND deleted_at IS NULL",
            "DELETE FROM auth.sessions WHERE oauth_client_id = \(id)::uuid"
        ])
    }

    static func stringArray(_ json: String?) -> [String] {
        guard let json, let data = json.data(using: .utf8), let list = try? JSONSerialization.jsonObject(with: data) as? [String] else { return [] }
        return list
    }
}

/// `auth.oauth_authorizations`: one authorization request from `/oauth/authorize` to the
/// exchange of its code (then deleted: a code is used once).
enum OAuthAuthorizations {
    enum Status: String { case pending, approved, denied, expired }

    struct Row {
        var id: String
        var clientID: String
        var userID: String?
        var redirectURI: String
        var scope: String
        var state: String
        var resource: String
        var codeChallenge: String
        var codeChallengeMethod: String
        var status: Status
        var expired: Bool
    }

    static func create(_ connection: Connection, id: String, clientID: String, _ query: OAuthAuthorizeQuery, ttl: Double) throws {
        _ = try connection.query(
            """
            INSERT INTO auth.oauth_authorizations (authorization_id, client_id, redirect_uri, scope, state, resource, nonce, code_challenge,
                code_challenge_method, expires_at)
            VALUES (\(id), \(clientID)::uuid, \(query.redirectURI), \(query.scope), nullif(\(query.state), ''), nullif(\(query.resource), ''),
                nullif(\(query.nonce), ''), \(query.codeChallenge), lower(\(query.codeChallengeMethod)), now() + \(ttl) * interval '1 second')
            """)
    }

    private static let columns: SQL = """
        SELECT authorization_id, client_id::text, user_id::text, redirect_uri, scope, coalesce(state, ''), coalesce(resource, ''),
               code_challenge, code_challenge_method, status, expires_at <= now()
        FROM auth.oauth_authorizations
        """

    static func lock(_ connection: Connection, id: String) throws -> Row? {
        row(try connection.query("\(columns) WHERE authorization_id = \(id) FOR UPDATE"))
    }

    static func lock(_ connection: Connection, codeDigest: String) throws -> Row? {
        row(try connection.query("\(columns) WHERE authorization_code = \(codeDigest) AND status = 'approved' FOR UPDATE"))
    }

    private static func row(_ found: QueryResult) -> Row? {
        guard found.count == 1, let id = found[0, 0], let clientID = found[0, 1], let redirectURI = found[0, 3], let scope = found[0, 4],
            let challenge = found[0, 7], let method = found[0, 8], let status = found[0, 9].flatMap(Status.init)
        else { return nil }
        return Row(
            id: id, clientID: clientID, userID: found[0, 2], redirectURI: redirectURI, scope: scope, state: found[0, 5] ?? "",
            resource: found[0, 6] ?? "", codeChallenge: challenge, codeChallengeMethod: method, status: status, expired: found[0].bool(10) == true)
    }

    /// GoTrue's `AuthorizationDetailsResponse` for the consent page.
    static func detailsJSON(_ connection: Connection, id: String, userID: String) throws -> String? {
        try connection.query(
            """
            SELECT json_build_object('authorization_id', a.authorization_id, 'redirect_uri', a.redirect_uri,
                'client', json_strip_nulls(json_build_object('id', c.id, 'name', nullif(c.client_name, ''), 'uri', nullif(c.client_uri, ''),
                                                             'logo_uri', nullif(c.logo_uri, ''))),
                'user', json_strip_nulls(json_build_object('id', u.id, 'email', nullif(u.email, ''))), 'scope', a.scope)::text
            FROM auth.oauth_authorizations a JOIN auth.oauth_clients c ON c.id = a.client_id JOIN auth.users u ON u.id = \(userID)::uuid
            WHERE a.authorization_id = \(id)
            """
        ).scalar
    }

    static func setUser(_ connection: Connection, id: String, userID: String) throws {
        _ = try connection.query("UPDATE auth.oauth_authorizations SET user_id = \(userID)::uuid WHERE authorization_id = \(id)")
    }

    /// Approved, with the digest of its code.
    static func approve(_ connection: Connection, id: String, codeDigest: String) throws {
        _ = try connection.query(
            "UPDATE auth.oauth_authorizations SET status = 'approved', approved_at = now(), authorization_code = \(codeDigest) WHERE authorization_id = \(id)")
    }

    static func mark(_ connection: Connection, id: String, _ status: Status) throws {
        _ = try connection.query("UPDATE auth.oauth_authorizations SET status = \(status.rawValue) WHERE authorization_id = \(id)")
    }

    /// Its code exchanged (and, once in a hundred, requests expired over a day ago removed).
    static func delete(_ connection: Connection, id: String) throws {
        _ = try connection.query("DELETE FROM auth.oauth_authorizations WHERE authorization_id = \(id)")
        if Int.random(in: 0..<100) == 0 {
            _ = try connection.query("DELETE FROM auth.oauth_authorizations WHERE expires_at < now() - interval '1 day'")
        }
    }
}

/// `auth.oauth_consents`: what each user granted each client, until revoked.
enum OAuthConsents {
    /// The scopes of the user's active consent to the client; nil when there is none.
    static func activeScopes(_ connection: Connection, userID: String, clientID: String) throws -> String? {
        try connection.query(
            "SELECT scopes FROM auth.oauth_consents WHERE user_id = \(userID)::uuid AND client_id = \(clientID)::uuid AND revoked_at IS NULL"
        ).scalar
    }

    static func grant(_ connection: Connection, userID: String, clientID: String, scopes: String) throws {
        _ = try connection.query(
            """
            INSERT INTO auth.oauth_consents (user_id, client_id, scopes) VALUES (\(userID)::uuid, \(clientID)::uuid, \(scopes))
            ON CONFLICT (user_id, client_id) DO UPDATE SET scopes = excluded.scopes, granted_at = now(), revoked_at = NULL
            """)
    }

    /// GoTrue's `GET /user/oauth/grants`: the active consents to clients that still exist.
    static func listJSON(_ connection: Connection, userID: String) throws -> String {
        try connection.query(
            """
            SELECT coalesce(json_agg(json_build_object(
                'client', json_strip_nulls(json_build_object('id', c.id, 'name', nullif(c.client_name, ''), 'uri', nullif(c.client_uri, ''),
                                                             'logo_uri', nullif(c.logo_uri, ''))),
                'scopes', coalesce(array_to_json(regexp_split_to_array(trim(g.scopes), '\\s+')), '[]'),
                'granted_at', auth.gotrue_time(g.granted_at)) ORDER BY g.granted_at DESC), '[]')::text
            FROM auth.oauth_consents g JOIN auth.oauth_clients c ON c.id = g.client_id AND c.deleted_at IS NULL
            WHERE g.user_id = \(userID)::uuid AND g.revoked_at IS NULL
            """
        ).scalar ?? "[]"
    }

    /// The consent revoked and the user's sessions with the client ended; false when there was
    /// no active consent.
    static func revoke(_ connection: Connection, userID: String, clientID: String) throws -> Bool {
        let revoked =
            try connection.query(
                """
                UPDATE auth.oauth_consents SET revoked_at = now()
                WHERE user_id = \(userID)::uuid AND client_id = \(clientID)::uuid AND revoked_at IS NULL RETURNING id
                """
            ).count == 1
        if revoked {
            _ = try connection.query("DELETE FROM auth.sessions WHERE user_id = \(userID)::uuid AND oauth_client_id = \(clientID)::uuid")
        }
        return revoked
    }
}

extension Users {
    /// Whether the user is banned; nil when there is no such user.
    static func banState(_ connection: Connection, id: String) throws -> Bool? {
        try connection.query("SELECT coalesce(banned_until > now(), false) FROM auth.users WHERE id = \(id)::uuid").first?.bool(0)
    }
}
