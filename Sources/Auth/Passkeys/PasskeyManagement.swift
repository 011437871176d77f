import Foundation
import HTTP
import Postgres

/// A passkey endpoint's refusal, in GoTrue's status, code and words.
public enum PasskeyFailure: Sendable, Equatable {
    /// `PASSKEY_ENABLED` off: every `/passkeys` endpoint, before the caller is authenticated.
    case disabled
    /// A passkey id that is not a UUID, or names no passkey of the user.
    case notFound
    /// `PASSKEY_MAX_PASSKEYS_PER_USER` reached.
    case tooMany
    /// No challenge of the ceremony with this id (for this user), or it was answered already.
    case challengeNotFound
    case challengeExpired
    /// The credential's JSON could not be read.
    case invalidCredential
    /// The answer does not verify: client data, authenticator data, attestation, signature
    /// or counter.
    case verificationFailed
    case credentialExists

    var status: HTTPStatus {
        switch self {
        case .disabled, .notFound: return .notFound
        case .tooMany, .credentialExists: return .unprocessableContent
        case .challengeNotFound, .challengeExpired, .invalidCredential, .verificationFailed: return .badRequest
        }
    }

    var code: String {
        switch self {
        case .disabled: return "passkey_disabled"
        case .notFound: return "validation_failed"
        case .tooMany: return "too_many_passkeys"
        case .challengeNotFound: return "webauthn_challenge_not_found"
        case .challengeExpired: return "webauthn_challenge_expired"
        case .invalidCredential, .verificationFailed: return "webauthn_verification_failed"
        case .credentialExists: return "webauthn_credential_exists"
        }
    }

    var message: String {
        switch self {
        case .disabled: return "Passkeys are disabled"
        case .notFound: return "Passkey not found"
        case .tooMany: return "Maximum number of passkeys reached"
        case .challengeNotFound: return "Challenge not found or already used"
        case .challengeExpired: return "Challenge has expired"
        case .invalidCredential: return "Invalid credential response"
        case .verificationFailed: return "Credential verification failed"
        case .credentialExists: return "This credential is already registered"
        }
    }
}

extension AuthRoute.Input {
    /// `PATCH /passkeys/{passkey_id}`, checked in GoTrue's order: the id (a malformed one is
    /// not found, whatever the body), the body as JSON, then the name: given, at most 120 bytes.
    func renamePasskey() throws(AuthError) -> AuthRequest {
        guard let id = uuid("passkey_id") else { return .passkey(.rename(id: nil, friendlyName: "")) }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        } catch {
            throw .badJSON("Could not parse request body as JSON: \(body.isEmpty ? "unexpected end of JSON input" : "invalid JSON")")
        }
        var name = ""
        switch parsed {
        case is NSNull: break
        case let object as [String: Any]:
            switch object["friendly_name"] {
            case nil, is NSNull: break
            case let text as String: name = text
            case let other?: throw .badJSON(Self.unmarshalError(other, field: "PasskeyUpdateParams.friendly_name"))
            }
        default:
            throw .badJSON(Self.unmarshalError(parsed, field: nil))
        }
        guard !name.isEmpty else { throw .validationFailed("friendly_name is required") }
        guard name.utf8.count <= 120 else { throw .validationFailed("friendly_name must be 120 characters or less") }
        return .passkey(.rename(id: id, friendlyName: name))
    }

    /// `POST /passkeys/…/verify`: `challenge_id` given, `credential` given, then the id a UUID.
    func passkeyAnswer() throws(AuthError) -> AuthRequest.PasskeyAnswer {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])) as? [String: Any] else {
            throw .badJSON("Could not parse request body as JSON: \(body.isEmpty ? "unexpected end of JSON input" : "invalid JSON")")
        }
        var challengeID = ""
        switch object["challenge_id"] {
        case nil, is NSNull: break
        case let text as String: challengeID = text
        case let other?: throw .badJSON(Self.unmarshalError(other, field: "challenge_id").replacingOccurrences(of: "PasskeyUpdateParams", with: "params"))
        }
        guard !challengeID.isEmpty else { throw .validationFailed("challenge_id is required") }
        guard let credential = object["credential"], !(credential is NSNull),
            let json = try? JSONSerialization.data(withJSONObject: credential, options: [.fragmentsAllowed])
        else { throw .validationFailed("credential is required") }
        guard let id = AuthRequest.uuid(challengeID) else { throw .validationFailed("challenge_id must be a valid UUID") }
        return AuthRequest.PasskeyAnswer(challengeID: id, credentialJSON: String(decoding: json, as: UTF8.self))
    }

    /// Go's `json.Unmarshal` words for a value of the wrong type.
    static func unmarshalError(_ value: Any, field: String?) -> String {
        let kind: String
        switch value {
        case is String: kind = "string"
        case is [Any]: kind = "array"
        case is [String: Any]: kind = "object"
        case let number as NSNumber: kind = String(cString: number.objCType) == "c" ? "bool" : "number"
        default: kind = "value"
        }
        guard let field else { return "Could not parse request body as JSON: json: cannot unmarshal \(kind) into Go value of type api.PasskeyUpdateParams" }
        return "Could not parse request body as JSON: json: cannot unmarshal \(kind) into Go struct field \(field) of type string"
    }
}

/// `/passkeys` (the signed-in user's own) and `/admin/users/{user_id}/passkeys`.
extension AuthService {
    func passkeys(_ signedIn: SignedIn?, _ operation: AuthRequest.Passkey) throws -> HTTPResponse {
        func caller() throws -> SignedIn {
            guard let signedIn else { throw AuthError.noAuthorization }
            return signedIn
        }
        switch operation {
        case .registrationOptions: return try passkeyRegistrationOptions(try caller())
        case .registrationVerify(let answer): return try passkeyRegistrationVerify(try caller(), answer)
        case .authenticationOptions: return try passkeyAuthenticationOptions()
        case .authenticationVerify(let answer): return try passkeyAuthenticationVerify(answer)
        case .list:
            let caller = try caller()
            guard let json = try pool.withConnection({ try Passkeys.listJSON($0, userID: caller.userID) }) else { throw AuthError.userFromTokenNotFound }
            return .json(.ok, json)
        case .rename(let id, let friendlyName):
            let caller = try caller()
            guard let id, let json = try pool.withConnection({ try Passkeys.rename($0, id: id, userID: caller.userID, friendlyName: friendlyName) })
            else { throw AuthError.passkey(.notFound) }
            return .json(.ok, json)
        case .delete(let id):
            let caller = try caller()
            try pool.withTransaction { connection in
                try requirePasskeyManagementAAL(connection, caller)
                guard let id, try Passkeys.delete(connection, id: id, userID: caller.userID) else { throw AuthError.passkey(.notFound) }
            }
            return HTTPResponse(status: .noContent)
        }
    }

    /// `GET /admin/users/{user_id}/passkeys`.
    func adminListPasskeys(userID: String?) throws -> HTTPResponse {
        guard let userID, let json = try pool.withConnection({ try Passkeys.listJSON($0, userID: userID) }) else { throw AuthError.userNotFound }
        return .json(.ok, json)
    }

    /// `DELETE /admin/users/{user_id}/passkeys/{passkey_id}`: the user first (GoTrue's
    /// `loadUser`), then the passkey.
    func adminDeletePasskey(userID: String?, passkeyID: String?) throws -> HTTPResponse {
        guard let userID else { throw AuthError.userNotFound }
        try pool.withTransaction { connection in
            guard try Passkeys.userExists(connection, id: userID) else { throw AuthError.userNotFound }
            guard let passkeyID, try Passkeys.delete(connection, id: passkeyID, userID: userID) else { throw AuthError.passkey(.notFound) }
        }
        return HTTPResponse(status: .noContent)
    }
}
