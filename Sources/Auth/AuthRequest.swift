import Foundation
import HTTP
import JWT

/// An Auth request parsed into GoTrue's terms before any I/O: the endpoint and its typed body.
/// Pure (method, route, query, body in; a value or an `AuthError` out), so it is table-tested and
/// fuzzed; the handlers in `AuthService` never look at raw JSON.
public enum AuthRequest: Sendable, Equatable {
    case health
    case settings
    case signUp(SignUp)
    case token(TokenGrant)
    case getUser
    case updateUser(UserChanges)
    case logout(LogoutScope)
    case admin(Admin)

    public struct SignUp: Sendable, Equatable {
        /// Trimmed and lower-cased; nil when absent or empty (then it is an anonymous sign-up).
        public var email: String?
        public var phone: String?
        public var password: String?
        /// `data`, the user metadata, as JSON object text.
        public var metadataJSON: String
    }

    public enum TokenGrant: Sendable, Equatable {
        case password(email: String, phone: String?, password: String?)
        case refreshToken(String?)
        case idToken(IDTokenGrant)
        case pkce
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
    }

    public enum LogoutScope: String, Sendable, Equatable { case global, local, others }

    public enum Admin: Sendable, Equatable {
        case listUsers(page: Int, perPage: Int)
        case createUser(email: String?, password: String?, metadataJSON: String, emailConfirmed: Bool)
        /// The id as given; nil when it is not a UUID (GoTrue answers 404).
        case getUser(String?)
        case updateUser(String?, UserChanges)
        case deleteUser(String?)
    }

    /// Whether the endpoint serves without the gateway's `apikey`: Supabase's gateway lets only
    /// the links opened from e-mails and OAuth redirects through (`verify`, `callback`, `authorize`).
    public static func isOpenRoute(_ route: String) -> Bool {
        let first = route.split(separator: "/").first.map(String.init) ?? ""
        return ["verify", "callback", "authorize"].contains(first)
    }

    /// Parses the path after `/auth/v1`, the query and the body.
    public static func parse(method: String, route: String, query: [(name: String, value: String)], body: [UInt8]) throws(AuthError) -> AuthRequest {
        func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }
        let segments = route.split(separator: "/").map(String.init)
        switch (method, segments) {
        case ("GET", ["health"]), ("HEAD", ["health"]):
            return .health
        case ("GET", ["settings"]):
            return .settings
        case ("POST", ["signup"]):
            let object = try JSONBody(body)
            return .signUp(SignUp(email: try object.email("email"), phone: try object.string("phone").flatMap { $0.isEmpty ? nil : $0 },
                                  password: try object.string("password"), metadataJSON: try object.objectText("data") ?? "{}"))
        case ("POST", ["token"]):
            let object = try JSONBody(body)
            switch queryValue("grant_type") ?? "" {
            case "password":
                return .token(.password(email: try object.email("email") ?? "", phone: try object.string("phone"), password: try object.string("password")))
            case "refresh_token":
                return .token(.refreshToken(try object.string("refresh_token")))
            case "id_token":
                return .token(.idToken(IDTokenGrant(idToken: try object.string("id_token"), provider: try object.string("provider"),
                                                    nonce: try object.string("nonce"))))
            case "pkce":
                return .token(.pkce)
            case let grant:
                return .token(.unsupported(grant))
            }
        case ("GET", ["user"]):
            return .getUser
        case ("PUT", ["user"]):
            return .updateUser(try userChanges(JSONBody(body), metadataKeys: ["data"]))
        case ("POST", ["logout"]):
            let scope = queryValue("scope") ?? "global"
            guard let value = LogoutScope(rawValue: scope) else { throw .validationFailed("Unsupported logout scope \"\(scope)\"") }
            return .logout(value)
        case (_, let path) where path.first == "admin":
            return .admin(try admin(method: method, path: Array(path.dropFirst()), queryValue: queryValue, body: body))
        default:
            throw .notFound
        }
    }

    private static func admin(method: String, path: [String], queryValue: (String) -> String?, body: [UInt8]) throws(AuthError) -> Admin {
        func userID(_ text: String) -> String? { UUID(uuidString: text)?.uuidString.lowercased() }
        switch (method, path) {
        case ("GET", ["users"]):
            // Client numbers: clamped, so the offset `(page - 1) * perPage` cannot overflow.
            let page = min(max(1, queryValue("page").flatMap { Int($0) } ?? 1), 1_000_000_000)
            let perPage = min(1000, max(1, queryValue("per_page").flatMap { Int($0) } ?? 50))
            return .listUsers(page: page, perPage: perPage)
        case ("POST", ["users"]):
            let object = try JSONBody(body)
            return .createUser(email: try object.email("email"), password: try object.string("password"),
                               metadataJSON: try object.objectText("user_metadata") ?? "{}", emailConfirmed: try object.bool("email_confirm") ?? false)
        case ("GET", let parts) where parts.count == 2 && parts[0] == "users":
            return .getUser(userID(parts[1]))
        case ("PUT", let parts) where parts.count == 2 && parts[0] == "users":
            return .updateUser(userID(parts[1]), try userChanges(JSONBody(body), metadataKeys: ["data", "user_metadata"]))
        case ("DELETE", let parts) where parts.count == 2 && parts[0] == "users":
            return .deleteUser(userID(parts[1]))
        default:
            throw .notFound
        }
    }

    private static func userChanges(_ object: JSONBody, metadataKeys: [String]) throws(AuthError) -> UserChanges {
        var metadata: String? = nil
        for key in metadataKeys where metadata == nil { metadata = try object.objectText(key) }
        return UserChanges(email: try object.email("email"), password: try object.string("password"), metadataJSON: metadata)
    }
}

/// A request body as GoTrue reads it: a JSON object (an empty body is `{}`, as supabase-py sends
/// on logout), its fields typed on access. No string in it may hold a NUL: PostgreSQL refuses
/// NUL in text and libxcrypt would cut a password at it (`"\u0000…"` would sign in as "").
struct JSONBody {
    let object: [String: Any]

    init(_ body: [UInt8]) throws(AuthError) {
        guard !body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            object = [:]
            return
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw .validationFailed("Could not read request body: invalid JSON")
        }
        guard !Self.containsNUL(object) else {
            throw .validationFailed("Could not read request body: strings must not contain NUL characters")
        }
        self.object = object
    }

    static func containsNUL(_ value: Any) -> Bool {
        switch value {
        case let text as String: return text.utf8.contains(0)
        case let object as [String: Any]: return object.contains { $0.key.utf8.contains(0) || containsNUL($0.value) }
        case let array as [Any]: return array.contains(where: containsNUL)
        default: return false
        }
    }

    /// A string field; absent or null is nil, another type is refused.
    func string(_ key: String) throws(AuthError) -> String? {
        switch object[key] {
        case nil, is NSNull: return nil
        case let text as String: return text
        default: throw .validationFailed("Could not read request body: \(key) must be a string")
        }
    }

    /// An e-mail field, trimmed and lower-cased; empty is nil.
    func email(_ key: String) throws(AuthError) -> String? {
        guard let text = try string(key)?.trimmingCharacters(in: .whitespaces).lowercased(), !text.isEmpty else { return nil }
        return text
    }

    func bool(_ key: String) throws(AuthError) -> Bool? {
        switch object[key] {
        case nil, is NSNull: return nil
        case let value as Bool: return value
        default: throw .validationFailed("Could not read request body: \(key) must be a boolean")
        }
    }

    /// An object field as JSON text; absent or null is nil.
    func objectText(_ key: String) throws(AuthError) -> String? {
        switch object[key] {
        case nil, is NSNull: return nil
        case let value as [String: Any]: return JWT.serialize(value)
        default: throw .validationFailed("Could not read request body: \(key) must be an object")
        }
    }
}
