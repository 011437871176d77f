import Foundation
import HTTP
import Identity

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
    case recover(Recover)
    case otp(OTP)
    case resend(Resend)
    /// `POST /verify`.
    case verify(Verify)
    /// `GET /verify`: the link in a mail.
    case verifyLink(VerifyLink)
    case reauthenticate

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
    public static func parse(method: HTTPMethod, route: String, query: [(name: String, value: String)], body: [UInt8]) throws(AuthError) -> AuthRequest {
        func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }
        let segments = route.split(separator: "/").map(String.init)
        switch (method, segments) {
        case (.get, ["health"]), (.head, ["health"]):
            return .health
        case (.get, ["settings"]):
            return .settings
        case (.post, ["signup"]):
            let object = try JSONBody(body)
            return .signUp(SignUp(email: try object.email("email"), phone: try object.string("phone").flatMap { $0.isEmpty ? nil : $0 },
                                  password: try object.string("password"), metadataJSON: try object.objectText("data") ?? "{}",
                                  pkce: try object.pkce(), redirectTo: queryValue("redirect_to")))
        case (.post, ["recover"]):
            let object = try JSONBody(body)
            guard let email = try object.email("email") else { throw .validationFailed("Password recovery requires an email") }
            return .recover(Recover(email: email, pkce: try object.pkce(), redirectTo: queryValue("redirect_to")))
        case (.post, ["otp"]), (.post, ["magiclink"]):
            let object = try JSONBody(body)
            let email = try object.email("email")
            let phone = try object.string("phone").flatMap { $0.isEmpty ? nil : $0 }
            if email != nil && phone != nil { throw .validationFailed("Only an email address or phone number should be provided") }
            if phone != nil { throw .phoneProviderDisabled }
            guard let email else { throw .validationFailed("An email address or phone number is required") }
            if try object.string("channel").map({ !$0.isEmpty }) ?? false {
                throw .validationFailed("Channel should only be specified with Phone OTP")
            }
            return .otp(OTP(email: email, createUser: try object.bool("create_user") ?? true, metadataJSON: try object.objectText("data") ?? "{}",
                            pkce: try object.pkce(), redirectTo: queryValue("redirect_to")))
        case (.post, ["resend"]):
            let object = try JSONBody(body)
            let type = try object.string("type") ?? ""
            if type == "sms" || type == "phone_change" { throw .phoneProviderDisabled }
            guard let kind = Resend.Kind(rawValue: type) else {
                throw .validationFailed("Missing one of these types: signup, email_change, sms, phone_change")
            }
            guard let email = try object.email("email") else { throw .validationFailed("Missing email address") }
            return .resend(Resend(kind: kind, email: email, pkce: try object.pkce(), redirectTo: queryValue("redirect_to")))
        case (.post, ["verify"]):
            let object = try JSONBody(body)
            let type = try verifyType(try object.string("type"))
            let token = try object.string("token") ?? ""
            let tokenHash = try object.string("token_hash") ?? ""
            let email = try object.email("email")
            let phone = try object.string("phone").flatMap { $0.isEmpty ? nil : $0 }
            let redirectTo = try object.string("redirect_to").flatMap { $0.isEmpty ? nil : $0 } ?? queryValue("redirect_to")
            guard token.isEmpty != tokenHash.isEmpty else { throw .validationFailed("Verify requires either a token or a token hash") }
            if !tokenHash.isEmpty {
                guard email == nil, phone == nil, (try object.string("redirect_to") ?? "").isEmpty else {
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
                let code = try object.string("auth_code") ?? "", verifier = try object.string("code_verifier") ?? ""
                guard !code.isEmpty, !verifier.isEmpty else {
                    throw .validationFailed("invalid request: both auth code and code verifier should be non-empty")
                }
                return .token(.pkce(authCode: code, codeVerifier: verifier))
            case let grant:
                return .token(.unsupported(grant))
            }
        case (.get, ["user"]):
            return .getUser
        case (.put, ["user"]):
            let object = try JSONBody(body)
            var changes = try userChanges(object, metadataKeys: ["data"])
            changes.nonce = try object.string("nonce").flatMap { $0.isEmpty ? nil : $0 }
            changes.pkce = try object.pkce()
            changes.redirectTo = queryValue("redirect_to")
            return .updateUser(changes)
        case (.post, ["logout"]):
            let scope = queryValue("scope") ?? "global"
            guard let value = LogoutScope(rawValue: scope) else { throw .validationFailed("Unsupported logout scope \"\(scope)\"") }
            return .logout(value)
        case (_, let path) where path.first == "admin":
            return .admin(try admin(method: method, path: Array(path.dropFirst()), queryValue: queryValue, body: body))
        default:
            throw .notFound
        }
    }

    private static func admin(method: HTTPMethod, path: [String], queryValue: (String) -> String?, body: [UInt8]) throws(AuthError) -> Admin {
        func userID(_ text: String) -> String? { UUID(uuidString: text)?.uuidString.lowercased() }
        switch (method, path) {
        case (.get, ["users"]):
            // Client numbers: clamped, so the offset `(page - 1) * perPage` cannot overflow.
            let page = min(max(1, queryValue("page").flatMap { Int($0) } ?? 1), 1_000_000_000)
            let perPage = min(1000, max(1, queryValue("per_page").flatMap { Int($0) } ?? 50))
            return .listUsers(page: page, perPage: perPage)
        case (.post, ["users"]):
            let object = try JSONBody(body)
            return .createUser(email: try object.email("email"), password: try object.string("password"),
                               metadataJSON: try object.objectText("user_metadata") ?? "{}", emailConfirmed: try object.bool("email_confirm") ?? false)
        case (.get, let parts) where parts.count == 2 && parts[0] == "users":
            return .getUser(userID(parts[1]))
        case (.put, let parts) where parts.count == 2 && parts[0] == "users":
            return .updateUser(userID(parts[1]), try userChanges(JSONBody(body), metadataKeys: ["data", "user_metadata"]))
        case (.delete, let parts) where parts.count == 2 && parts[0] == "users":
            return .deleteUser(userID(parts[1]))
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

    /// `code_challenge` with `code_challenge_method`: both or neither; the challenge 43 to 128
    /// characters of `[A-Za-z0-9._~-]`, the method `s256` or `plain` in any case.
    func pkce() throws(AuthError) -> AuthRequest.PKCEChallenge? {
        let challenge = try string("code_challenge") ?? "", method = try string("code_challenge_method") ?? ""
        if challenge.isEmpty && method.isEmpty { return nil }
        guard !challenge.isEmpty, !method.isEmpty else { throw .validationFailed("PKCE flow requires code_challenge_method and code_challenge") }
        guard (43...128).contains(challenge.utf8.count), challenge.utf8.allSatisfy({ byte in
            (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2d || byte == 0x2e || byte == 0x5f || byte == 0x7e
        }) else {
            throw .validationFailed("code challenge has to be between 43 and 128 characters and contain only unreserved characters")
        }
        let lowered = method.lowercased()
        guard lowered == "s256" || lowered == "plain" else { throw .validationFailed("code challenge method not supported") }
        return AuthRequest.PKCEChallenge(challenge: challenge, method: lowered)
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
