import Foundation
import HTTP
import Identity

/// The admin API's readers, the values GoTrue reads the Go way (`ban_duration`), and the phone
/// verifications' checks.
extension AuthRoute.Input {
    /// `GET /admin/users?page=…&per_page=…`.
    func listUsers() throws(AuthError) -> AuthRequest.Admin {
        // As GoTrue: unsigned decimal numbers; then clamped, so the offset
        // `(page - 1) * perPage` cannot overflow.
        func number(_ name: String, default value: Int) throws(AuthError) -> Int {
            guard let text = queryValue(name), !text.isEmpty else { return value }
            guard text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw .validationFailed("Bad Pagination Parameters: strconv.ParseUint: parsing \(jsonString(text)): invalid syntax")
            }
            return Int(text.prefix(12)) ?? value
        }
        let page = min(max(1, try number("page", default: 1)), 1_000_000_000)
        let perPage = min(1000, max(1, try number("per_page", default: 50)))
        return .listUsers(page: page, perPage: perPage)
    }

    /// `POST /admin/users`.
    func createUser() throws(AuthError) -> AuthRequest.Admin {
        let user = try RequestBody.decode(RequestBody.AdminCreateUser.self, body)
        return .createUser(
            AuthRequest.AdminNewUser(
                email: try user.email.email(), password: try user.password.read(),
                metadataJSON: try user.userMetadata.read()?.text ?? "{}", appMetadataJSON: try user.appMetadata.read()?.text,
                emailConfirmed: try user.emailConfirm.read() ?? false, ban: try AuthRequest.banDuration(try user.banDuration.read())))
    }

    /// `POST /admin/generate_link`.
    func generateLink() throws(AuthError) -> AuthRequest.Admin {
        let link = try RequestBody.decode(RequestBody.GenerateLink.self, body)
        let type = try link.type.read() ?? ""
        guard let email = try link.email.email() else { throw .validationFailed("An email address is required") }
        guard let kind = AuthRequest.GenerateLink.Kind(rawValue: type) else {
            throw .validationFailed("Invalid email action link type requested: \(type)")
        }
        return .generateLink(
            AuthRequest.GenerateLink(
                kind: kind, email: email, newEmail: try link.newEmail.email(), password: try link.password.nonEmpty(),
                metadataJSON: try link.data.read()?.text, redirectTo: try link.redirectTo.nonEmpty() ?? redirectTo))
    }

    /// `POST /invite` (an admin endpoint outside `/admin`).
    func invite() throws(AuthError) -> AuthRequest.Admin {
        let invite = try RequestBody.decode(RequestBody.Invite.self, body)
        return .invite(email: try invite.email.email() ?? "", metadataJSON: try invite.data.read()?.text ?? "{}", redirectTo: redirectTo)
    }

    /// `PUT /admin/users/{user_id}`.
    func adminUpdateUser() throws(AuthError) -> AuthRequest.Admin {
        let user = try RequestBody.decode(RequestBody.AdminUpdateUser.self, body)
        var metadata = try user.data.read()?.text
        if metadata == nil { metadata = try user.userMetadata.read()?.text }
        var changes = AuthRequest.UserChanges(email: try user.email.email(), password: try user.password.read(), metadataJSON: metadata)
        changes.appMetadataJSON = try user.appMetadata.read()?.text
        changes.emailConfirm = try user.emailConfirm.read() ?? false
        changes.ban = try AuthRequest.banDuration(try user.banDuration.read())
        return .updateUser(uuid("user_id"), changes)
    }

    /// `PUT /admin/users/{user_id}/factors/{factor_id}`.
    func updateFactor() throws(AuthError) -> AuthRequest.Admin {
        let factor = try RequestBody.decode(RequestBody.AdminUpdateFactor.self, body)
        _ = try factor.phone.read()
        return .updateFactor(uuid("user_id"), factorID: uuid("factor_id"), friendlyName: try factor.friendlyName.read() ?? "")
    }
}

extension AuthRequest {
    /// `POST /verify` with `type` `sms` or `phone_change`, checked in GoTrue's order: one of a
    /// code or a token hash (a token hash is not a phone verification), then the number alone.
    static func phoneVerification(
        type: VerifyType, token: String, tokenHash: String, email: String?, phone: String?, redirectTo: String?
    ) throws(AuthError) -> Verify {
        guard token.isEmpty != tokenHash.isEmpty else { throw .validationFailed("Verify requires either a token or a token hash") }
        guard !token.isEmpty else {
            guard email == nil, phone == nil, (redirectTo ?? "").isEmpty else { throw .validationFailed("Only the token_hash and type should be provided") }
            throw .validationFailed("Invalid email verification type")
        }
        guard let phone, email == nil else { throw .validationFailed("Only an email address or phone number should be provided on verify") }
        return Verify(
            type: type, credential: .sms(phone: try PhoneNumber.normalize(phone), token: token.trimmingCharacters(in: .whitespaces)), redirectTo: nil)
    }

    /// `ban_duration` as Go's `time.ParseDuration` reads it (`none`: lift the ban); empty or
    /// absent: no change.
    static func banDuration(_ text: String?) throws(AuthError) -> BanDuration? {
        guard let text, !text.isEmpty else { return nil }
        if text == "none" { return .lifted }
        let seconds: Double
        switch goDuration(text) {
        case .success(let value): seconds = value
        case .failure(let error): throw .validationFailed("invalid format for ban duration: time: \(error.reason) \(jsonString(text))")
        }
        return seconds == 0 ? .lifted : .seconds(seconds)
    }

    /// Why a Go duration does not parse, worded as Go's error.
    struct DurationError: Error { var reason: String }

    /// Go's `time.ParseDuration`: `[-+]` then number-unit pairs (`ns`, `us`, `µs`, `ms`, `s`, `m`,
    /// `h`), or a bare `0`; seconds, or the start of Go's error message.
    static func goDuration(_ text: String) -> Result<Double, DurationError> {
        var rest = Substring(text)
        var sign = 1.0
        if rest.first == "-" || rest.first == "+" {
            sign = rest.first == "-" ? -1 : 1
            rest = rest.dropFirst()
        }
        if rest == "0" { return .success(0) }
        guard !rest.isEmpty else { return .failure(DurationError(reason: "invalid duration")) }
        let units: [(String, Double)] = [("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("μs", 1e-6), ("ms", 1e-3), ("s", 1), ("m", 60), ("h", 3600)]
        var total = 0.0
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, number != ".", let value = Double(number.hasPrefix(".") ? "0" + number : number) else {
                return .failure(DurationError(reason: "invalid duration"))
            }
            rest = rest.dropFirst(number.count)
            let unitText = rest.prefix { !($0.isASCII && ($0.isNumber || $0 == ".")) }
            guard !unitText.isEmpty else { return .failure(DurationError(reason: "missing unit in duration")) }
            guard let unit = units.first(where: { $0.0 == unitText }) else {
                return .failure(DurationError(reason: "unknown unit \(jsonString(String(unitText))) in duration"))
            }
            total += value * unit.1
            rest = rest.dropFirst(unitText.count)
        }
        return .success(sign * total)
    }
}
