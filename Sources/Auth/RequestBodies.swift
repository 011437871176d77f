import Foundation
import Identity

/// The request bodies of the Auth endpoints as they arrive (GoTrue's `*Params` structs), before
/// `AuthRequest.parse` validates them into its values. Each field is a `BodyField`: absent or
/// null is nil, a value of another JSON type is refused when the parse reads the field, so the
/// order of its reads decides which error a body with several wrong fields gets.
enum RequestBody {
    /// `type` from a body: a JSON object (an empty body is `{}`, as supabase-py sends on
    /// logout). No string in it may hold a NUL, in any field, read or not: PostgreSQL refuses NUL
    /// in text and libxcrypt would cut a password at it (`"\u0000…"` would sign in as "").
    static func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8]) throws(AuthError) -> T {
        let object: [String: Any]
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            object = [:]
        } else {
            guard let parsed = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
                throw .validationFailed("Could not read request body: invalid JSON")
            }
            guard !containsNUL(parsed) else {
                throw .validationFailed("Could not read request body: strings must not contain NUL characters")
            }
            object = parsed
        }
        // Every field is a `BodyField` (it never throws), so only a type that is not an object
        // could fail here.
        guard let decoded = try? JSONTree.decode(type, from: object) else { throw .validationFailed("Could not read request body: invalid JSON") }
        return decoded
    }

    static func containsNUL(_ value: Any) -> Bool {
        switch value {
        case let text as String: return text.utf8.contains(0)
        case let object as [String: Any]: return object.contains { $0.key.utf8.contains(0) || containsNUL($0.value) }
        case let array as [Any]: return array.contains(where: containsNUL)
        default: return false
        }
    }

    /// A body whose fields nothing reads (`POST /token` with a grant type this server does not
    /// offer): checked only as a JSON object without NUL.
    struct Unchecked: Decodable {}

    /// `POST /signup`.
    struct SignUp: Decodable, PKCEFields {
        var email, phone, password, channel: BodyField<String>?
        var data: BodyField<JSONObjectText>?
        var codeChallenge, codeChallengeMethod: BodyField<String>?

        enum CodingKeys: String, CodingKey {
            case email, phone, password, channel, data, codeChallenge = "code_challenge", codeChallengeMethod = "code_challenge_method"
        }
    }

    /// `POST /recover`.
    struct Recover: Decodable, PKCEFields {
        var email: BodyField<String>?
        var codeChallenge, codeChallengeMethod: BodyField<String>?

        enum CodingKeys: String, CodingKey {
            case email, codeChallenge = "code_challenge", codeChallengeMethod = "code_challenge_method"
        }
    }

    /// `POST /otp` and `POST /magiclink`.
    struct OTP: Decodable, PKCEFields {
        var email, phone, channel: BodyField<String>?
        var createUser: BodyField<Bool>?
        var data: BodyField<JSONObjectText>?
        var codeChallenge, codeChallengeMethod: BodyField<String>?

        enum CodingKeys: String, CodingKey {
            case email, phone, channel, createUser = "create_user", data
            case codeChallenge = "code_challenge", codeChallengeMethod = "code_challenge_method"
        }
    }

    /// `POST /resend`.
    struct Resend: Decodable, PKCEFields {
        var type, email, phone: BodyField<String>?
        var codeChallenge, codeChallengeMethod: BodyField<String>?

        enum CodingKeys: String, CodingKey {
            case type, email, phone, codeChallenge = "code_challenge", codeChallengeMethod = "code_challenge_method"
        }
    }

    /// `POST /verify`.
    struct Verify: Decodable {
        var type, token, tokenHash, email, phone, redirectTo: BodyField<String>?

        enum CodingKeys: String, CodingKey {
            case type, token, tokenHash = "token_hash", email, phone, redirectTo = "redirect_to"
        }
    }

    /// `POST /token?grant_type=password`.
    struct PasswordGrant: Decodable {
        var email, phone, password: BodyField<String>?
    }

    /// `POST /token?grant_type=refresh_token`.
    struct RefreshTokenGrant: Decodable {
        var refreshToken: BodyField<String>?

        enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
    }

    /// `POST /token?grant_type=id_token`.
    struct IDTokenGrant: Decodable {
        var idToken, provider, nonce: BodyField<String>?
        var linkIdentity: BodyField<Bool>?

        enum CodingKeys: String, CodingKey { case idToken = "id_token", provider, nonce, linkIdentity = "link_identity" }
    }

    /// `POST /token?grant_type=web3`.
    struct Web3Grant: Decodable {
        var chain, message, signature: BodyField<String>?
    }

    /// `POST /token?grant_type=pkce`.
    struct PKCEGrant: Decodable {
        var authCode, codeVerifier: BodyField<String>?

        enum CodingKeys: String, CodingKey { case authCode = "auth_code", codeVerifier = "code_verifier" }
    }

    /// `PUT /user`.
    struct UserUpdate: Decodable, PKCEFields {
        var email, password, phone, channel: BodyField<String>?
        var data: BodyField<JSONObjectText>?
        var nonce: BodyField<String>?
        var codeChallenge, codeChallengeMethod: BodyField<String>?

        enum CodingKeys: String, CodingKey {
            case email, password, phone, channel, data, nonce, codeChallenge = "code_challenge", codeChallengeMethod = "code_challenge_method"
        }
    }

    /// `POST /factors`.
    struct EnrollFactor: Decodable {
        var factorType, friendlyName, issuer, phone: BodyField<String>?

        enum CodingKeys: String, CodingKey { case factorType = "factor_type", friendlyName = "friendly_name", issuer, phone }
    }

    /// `POST /factors/{id}/challenge` (`channel` is for phone factors).
    struct ChallengeFactor: Decodable {
        var channel: BodyField<String>?
    }

    /// `POST /factors/{id}/verify`.
    struct VerifyFactor: Decodable {
        var challengeID, code: BodyField<String>?

        enum CodingKeys: String, CodingKey { case challengeID = "challenge_id", code }
    }

    /// `PUT /admin/users/{id}/factors/{factor_id}`.
    struct AdminUpdateFactor: Decodable {
        var friendlyName, phone: BodyField<String>?

        enum CodingKeys: String, CodingKey { case friendlyName = "friendly_name", phone }
    }

    /// `POST /admin/users`.
    struct AdminCreateUser: Decodable {
        var email, password, banDuration: BodyField<String>?
        var userMetadata, appMetadata: BodyField<JSONObjectText>?
        var emailConfirm: BodyField<Bool>?

        enum CodingKeys: String, CodingKey {
            case email, password, banDuration = "ban_duration", userMetadata = "user_metadata", appMetadata = "app_metadata"
            case emailConfirm = "email_confirm"
        }
    }

    /// `POST /admin/generate_link`.
    struct GenerateLink: Decodable {
        var type, email, newEmail, password, redirectTo: BodyField<String>?
        var data: BodyField<JSONObjectText>?

        enum CodingKeys: String, CodingKey { case type, email, newEmail = "new_email", password, redirectTo = "redirect_to", data }
    }

    /// `POST /invite`.
    struct Invite: Decodable {
        var email: BodyField<String>?
        var data: BodyField<JSONObjectText>?
    }

    /// `PUT /admin/users/{id}`: the metadata as `data` or, when that is absent or null, as
    /// `user_metadata`.
    struct AdminUpdateUser: Decodable {
        var email, password, banDuration: BodyField<String>?
        var data, userMetadata, appMetadata: BodyField<JSONObjectText>?
        var emailConfirm: BodyField<Bool>?

        enum CodingKeys: String, CodingKey {
            case email, password, banDuration = "ban_duration", data, userMetadata = "user_metadata", appMetadata = "app_metadata"
            case emailConfirm = "email_confirm"
        }
    }
}

/// A JSON type a body field may hold, named as the error about another type names it.
protocol BodyFieldValue: Decodable {
    /// "a string", "a boolean", "an object".
    static var jsonTypeName: String { get }
}

extension String: BodyFieldValue {
    static var jsonTypeName: String { "a string" }
}

extension Bool: BodyFieldValue {
    static var jsonTypeName: String { "a boolean" }
}

/// An object field (user metadata, arbitrary JSON by design), as the object text it is stored as:
/// its keys sorted, as `JWT.serialize` writes objects.
struct JSONObjectText: BodyFieldValue {
    static var jsonTypeName: String { "an object" }
    var text: String

    init(from decoder: any Decoder) throws {
        guard let object = try JSONValue(from: decoder).object else {
            throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: decoder.codingPath, debugDescription: "not an object"))
        }
        text = JWT.serialize(object)
    }
}

/// One field of a request body: its value, or the note that it held another JSON type.
struct BodyField<Value: BodyFieldValue>: Decodable {
    private let value: Value?
    private let key: String

    init(from decoder: any Decoder) throws {
        key = decoder.codingPath.last?.stringValue ?? ""
        let container = try decoder.singleValueContainer()
        value = container.decodeNil() ? nil : try? container.decode(Value.self)
        wrongType = !container.decodeNil() && value == nil
    }

    private let wrongType: Bool

    /// The value (nil when null); GoTrue's 400 when it was of another type.
    func read() throws(AuthError) -> Value? {
        guard !wrongType else { throw .validationFailed("Could not read request body: \(key) must be \(Value.jsonTypeName)") }
        return value
    }
}

extension Optional {
    /// The field's value; nil when absent or null.
    func read<Value>() throws(AuthError) -> Value? where Wrapped == BodyField<Value> {
        guard let field = self else { return nil }
        return try field.read()
    }
}

/// `code_challenge` with `code_challenge_method`, in the bodies of the flows that may be PKCE.
protocol PKCEFields {
    var codeChallenge: BodyField<String>? { get }
    var codeChallengeMethod: BodyField<String>? { get }
}

extension PKCEFields {
    /// Both or neither; the challenge 43 to 128 characters of `[A-Za-z0-9._~-]`, the method
    /// `s256` or `plain` in any case.
    func pkce() throws(AuthError) -> AuthRequest.PKCEChallenge? {
        let challenge = try codeChallenge.read() ?? ""
        let method = try codeChallengeMethod.read() ?? ""
        if challenge.isEmpty && method.isEmpty { return nil }
        guard !challenge.isEmpty, !method.isEmpty else { throw .validationFailed("PKCE flow requires code_challenge_method and code_challenge") }
        guard (43...128).contains(challenge.utf8.count),
            challenge.utf8.allSatisfy({ byte in
                (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39)
                    || byte == 0x2d || byte == 0x2e || byte == 0x5f || byte == 0x7e
            })
        else {
            throw .validationFailed("code challenge has to be between 43 and 128 characters and contain only unreserved characters")
        }
        let lowered = method.lowercased()
        guard lowered == "s256" || lowered == "plain" else { throw .validationFailed("code challenge method not supported") }
        return AuthRequest.PKCEChallenge(challenge: challenge, method: lowered)
    }
}

extension BodyField<String> {
    /// An e-mail field, trimmed and lower-cased; empty is nil.
    func email() throws(AuthError) -> String? {
        guard let text = try read()?.trimmingCharacters(in: .whitespaces).lowercased(), !text.isEmpty else { return nil }
        return text
    }
}

extension BodyField<String>? {
    /// An e-mail field, trimmed and lower-cased; absent, null or empty is nil.
    func email() throws(AuthError) -> String? {
        guard let field = self else { return nil }
        return try field.email()
    }

    /// A string field whose empty value counts as absent.
    func nonEmpty() throws(AuthError) -> String? {
        try read().flatMap { $0.isEmpty ? nil : $0 }
    }
}
