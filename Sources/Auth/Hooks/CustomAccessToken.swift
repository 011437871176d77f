import Foundation
import HTTP
import Postgres

/// GoTrue's custom access token hook: every access token's claims (sign-in, sign-up, refresh, MFA
/// verification) go to the hook with the user and the authentication method, and the token
/// carries the claims it answers, checked as GoTrue checks them. Any failure refuses the token:
/// none is issued without the hook's claims.
extension AuthService {
    /// The claims of an access token: as built, or as the hook answers them when it is on.
    func accessTokenClaims(_ connection: Connection, _ claims: [String: Any], userID: String, method: String) throws -> [String: Any] {
        guard let hook = config.hooks.customAccessToken else { return claims }
        guard let built = JSON.parse(Array(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))) else {
            throw AuthError.unexpected("claims JSON")
        }
        let output = try invoke(
            hook, name: "customize-access-token", connection,
            ["user_id": .string(userID), "claims": built, "authentication_method": .string(method)])
        let answered: JSON
        switch output {
        case .null: answered = .null
        case .object(let members):
            guard let value = members["claims"] else { throw AuthError.hook(status: .internalServerError, message: "output claims field is missing") }
            guard value == .null || value.object != nil else { throw AuthError.hook(status: .internalServerError, message: "Error unmarshaling JSON output.") }
            answered = value
        case .bool, .number, .string, .array:
            throw AuthError.hook(status: .internalServerError, message: "Error unmarshaling JSON output.")
        }
        let problems = Self.claimProblems(answered)
        guard problems.isEmpty else {
            throw AuthError.hook(
                status: .internalServerError, message: "output claims do not conform to the expected schema: \n" + problems.map { "- \($0)\n" }.joined())
        }
        guard let customized = try JSONSerialization.jsonObject(with: Data(answered.text.utf8)) as? [String: Any] else {
            throw AuthError.unexpected("hook claims")
        }
        return customized
    }

    /// The claims every access token must carry, and the JSON types of those it may (GoTrue's
    /// minimum viable token schema).
    static let requiredClaims = ["aud", "exp", "iat", "sub", "email", "phone", "role", "aal", "session_id", "is_anonymous"]
    static let claimTypes: [(name: String, types: [String])] = [
        ("aud", ["string", "array"]), ("exp", ["integer"]), ("jti", ["string"]), ("iat", ["integer"]), ("iss", ["string"]), ("nbf", ["integer"]),
        ("sub", ["string"]), ("email", ["string"]), ("phone", ["string"]), ("app_metadata", ["object"]), ("user_metadata", ["object"]),
        ("role", ["string"]), ("aal", ["string"]), ("amr", ["array"]), ("session_id", ["string"]), ("client_id", ["string"])
    ]

    /// What is wrong with a hook's claims, in the words of GoTrue's schema check: the required
    /// claims first, then each claim's type, then `amr`'s entries (a string or an object each).
    static func claimProblems(_ claims: JSON) -> [String] {
        guard case .object(let members) = claims else { return ["(root): Invalid type. Expected: object, given: \(typeName(claims))"] }
        var problems = requiredClaims.filter { members[$0] == nil }.map { "(root): \($0) is required" }
        for (name, types) in claimTypes {
            guard let value = members[name] else { continue }
            if !types.contains(typeName(value)) && !(types.contains("number") && typeName(value) == "integer") {
                problems.append("\(name): Invalid type. Expected: \(types.joined(separator: "/")), given: \(typeName(value))")
            }
        }
        if case .array(let entries)? = members["amr"] {
            for (index, entry) in entries.enumerated() where entry.string == nil && entry.object == nil {
                problems.append("amr.\(index): Must validate at least one schema (anyOf)")
            }
        }
        return problems
    }

    /// A JSON value's type as JSON Schema names it: a number without a fraction is an integer.
    static func typeName(_ value: JSON) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "boolean"
        case .number(let number): return number == number.rounded() && number.isFinite ? "integer" : "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}
