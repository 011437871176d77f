import Foundation
import HTTP
import Identity
import Postgres

/// `POST /verify` (a code with its address, or a link's token: a session) and `GET /verify`
/// (the link in a mail: a 303 to the app with the session in the fragment, or `?code=` for PKCE).
extension AuthService {
    static let halfwayMessage = "Confirmation link accepted. Please proceed to confirm link sent to the other email"

    /// What a consumed token did.
    enum Consumed {
        /// The user may be signed in. `flowStateID`: the PKCE flow the mail was sent for.
        case done(userID: String, flowStateID: String?)
        /// The first of the two confirmations of a secure e-mail change.
        case halfway
    }

    func verify(_ body: AuthRequest.Verify, request: HTTPRequest) throws -> HTTPResponse {
        var failureKey: String?
        // Codes are six digits: each check of a code for an address or number takes one of its
        // `MAILER_OTP_MAX_FAILURES` attempts first, in one atomic statement, so concurrent
        // guesses never get more checks than the limit; past it, code entry for the address
        // waits for the window to end (links keep working). A check that was not a wrong code
        // gives its attempt back.
        switch body.credential {
        case .otp(let email, _):
            guard Self.isValidEmail(email) else { throw AuthError.validationFailed("Invalid email format") }
            failureKey = "otp_failures:\(email)"
        case .sms(let phone, _):
            failureKey = "otp_failures:\(phone)"
        case .tokenHash:
            failureKey = nil
        }
        if let failureKey {
            try pool.withConnection { try RateLimitCounters.check($0, keys: [failureKey], limit: otpFailureLimit) }
        }
        var wrongCode = false
        defer {
            if let failureKey, !wrongCode { _ = try? pool.withConnection { try RateLimitCounters.giveBack($0, key: failureKey) } }
        }
        do {
            return try pool.withTransaction { connection in
                switch try consumeToken(connection, type: body.type, credential: body.credential) {
                case .halfway:
                    return .json(.ok, #"{"msg":\#(jsonString(Self.halfwayMessage)),"code":"200"}"#)
                case .done(let userID, _):
                    return .json(.ok, try startSession(connection, userID: userID, method: "otp"))
                }
            }
        } catch let error as AuthError where error == .otpExpired(link: false) {
            wrongCode = true
            throw error
        }
    }

    /// `GET /verify`: always a 303 once the request parsed; failures go to the app as GoTrue's
    /// `error`, `error_code`, `error_description` (fragment; PKCE also in the query).
    func verifyLink(_ link: AuthRequest.VerifyLink, request: HTTPRequest) throws -> HTTPResponse {
        let redirect = allowedRedirect(link.redirectTo)
        let pkce = link.token.hasPrefix("pkce_")
        enum Outcome { case session(String), code(String), halfway }
        let location: String
        do {
            let outcome = try pool.withTransaction { connection -> Outcome in
                switch try consumeToken(connection, type: link.type, credential: .tokenHash(link.token)) {
                case .halfway:
                    return .halfway
                case .done(let userID, let flowStateID):
                    guard pkce else { return .session(try startSession(connection, userID: userID, method: "otp")) }
                    let code = UUID().uuidString.lowercased()
                    guard try FlowStates.issueAuthCode(connection, id: flowStateID, userID: userID, codeDigest: Self.digest(code)) else {
                        throw AuthError.flowStateNotFound(
                            "No associated flow state found. This link was not requested with a PKCE code challenge", status: .badRequest)
                    }
                    return .code(code)
                }
            }
            switch outcome {
            case .session(let json):
                location = try Self.implicitRedirect(redirect, sessionJSON: json, type: link.type.rawValue)
            case .code(let code):
                location = Self.addingQuery(redirect, [("code", code)])
            case .halfway:
                let fragment = Self.formEncode([("message", Self.halfwayMessage), ("sb", "")])
                location = (pkce ? Self.addingQuery(redirect, [("message", Self.halfwayMessage)]) : redirect) + "#" + fragment
            }
        } catch let error as AuthError {
            var fields: [(String, String)] = []
            if let oauth = [
                HTTPStatus.badRequest: "invalid_request", .unauthorized: "unauthorized_client", .forbidden: "access_denied",
                .internalServerError: "server_error", .serviceUnavailable: "temporarily_unavailable"
            ][error.status] {
                fields.append(("error", oauth))
            }
            fields += [("error_code", error.code), ("error_description", error.message)]
            location = (pkce ? Self.addingQuery(redirect, fields) : redirect) + "#" + Self.formEncode(fields + [("sb", "")])
        }
        var headers = HTTPHeaders()
        headers.add("Location", location)
        return HTTPResponse(status: .seeOther, headers: headers)
    }

    /// Finds the token a verification names, checks it, applies its effect and deletes it, in
    /// the caller's transaction (a concurrent verification of the same token waits on the row
    /// lock and then finds nothing: single use).
    func consumeToken(_ connection: Connection, type: AuthRequest.VerifyType, credential: AuthRequest.Verify.Credential) throws -> Consumed {
        let types = TokenType.consumable(by: type)
        let rows: [OneTimeTokens.Row]
        var isLink = false
        switch credential {
        case .tokenHash(let token):
            isLink = true
            rows = try OneTimeTokens.lock(connection, linkDigest: Self.digest(token), types: types)
        case .otp(let address, _), .sms(let address, _):
            rows = try OneTimeTokens.lock(connection, address: address, types: types)
        }
        var match: OneTimeTokens.Row?
        for row in rows {
            let address: String
            let code: String
            switch credential {
            case .tokenHash:
                match = match ?? row
                continue
            case .otp(let email, let token): (address, code) = (email, token)
            case .sms(let phone, let token): (address, code) = (phone, token)
            }
            guard let userID = row.userID, let tokenType = row.tokenType.flatMap(TokenType.init(rawValue:)) else { continue }
            // Every candidate is compared, in constant time each.
            let expected = otpHash(code, type: tokenType, userID: userID, address: address)
            if Crypto.constantTimeEquals(Array(expected.utf8), Array((row.otpHash ?? "").utf8)) && match == nil { match = row }
        }
        guard let token = match, let userID = token.userID, let tokenType = token.tokenType.flatMap(TokenType.init(rawValue:)) else {
            throw AuthError.otpExpired(link: isLink)
        }
        if try Users.isBanned(connection, id: userID) { throw AuthError.userBanned("User is banned", status: .forbidden) }
        if case .sms(let phone, _) = credential {
            guard let age = token.age, age <= config.sms.otpExpiry else { throw AuthError.otpExpired(link: false) }
            try applyPhoneToken(connection, userID: userID, type: tokenType, phone: phone)
            return .done(userID: userID, flowStateID: nil)
        }
        guard let age = token.age, age <= config.mail.otpExpiry else { throw AuthError.otpExpired(link: isLink) }
        switch tokenType {
        case .confirmation, .recovery, .reauthentication:
            // A passwordless sign-in's or a recovery's token that first proves the address drops
            // a password set before the proof (by whoever signed the address up, maybe not its
            // holder) and ends every session it opened.
            if try Users.confirmEmail(connection, id: userID, droppingUnprovenPassword: token.passwordless) {
                try Sessions.deleteAll(connection, userID: userID)
            }
        case .emailChangeNew, .emailChangeCurrent:
            guard let change = try Users.lockEmailChange(connection, id: userID), let newEmail = change.newEmail, !newEmail.isEmpty else {
                throw AuthError.otpExpired(link: isLink)
            }
            let other = try OneTimeTokens.otherEmailChangeExists(connection, userID: userID, excluding: token.id)
            if !config.mail.autoconfirm && other && change.confirmStatus == "0" {
                try Users.confirmEmailChangeHalfway(connection, id: userID, tokenID: token.id)
                return .halfway
            }
            guard try !Users.emailTaken(connection, email: newEmail, byOtherThan: userID) else { throw AuthError.emailExists }
            try Users.completeEmailChange(connection, id: userID, newEmail: newEmail)
        case .phoneChange:
            throw AuthError.otpExpired(link: isLink)
        }
        return .done(userID: userID, flowStateID: token.flowStateID)
    }

    /// The wrong codes counted per address: `OTP_MAX_FAILURES` within the code's lifetime.
    var otpFailureLimit: RateLimit { RateLimit(hits: config.mail.otpMaxFailures, window: config.mail.otpExpiry) }

    /// `<redirect>#access_token=…&expires_at=…&expires_in=…&refresh_token=…&sb=&token_type=bearer&type=…`
    /// (keys sorted, as GoTrue writes them).
    static func implicitRedirect(_ redirect: String, sessionJSON: String, type: String) throws -> String {
        guard let session = (try? JSONSerialization.jsonObject(with: Data(sessionJSON.utf8))) as? [String: Any] else {
            throw AuthError.unexpected("session JSON")
        }
        let fields: [(String, String)] = [
            ("access_token", session["access_token"] as? String ?? ""), ("expires_at", "\(session["expires_at"] ?? "")"),
            ("expires_in", "\(session["expires_in"] ?? "")"), ("refresh_token", session["refresh_token"] as? String ?? ""), ("sb", ""),
            ("token_type", "bearer"), ("type", type)
        ]
        return redirect + "#" + formEncode(fields)
    }

    /// `url` with `fields` set in its query (existing parameters kept, same names replaced).
    static func addingQuery(_ url: String, _ fields: [(String, String)]) -> String {
        let hashless = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let base = String(hashless[0])
        let fragment = hashless.count > 1 ? "#" + hashless[1] : ""
        let parts = base.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let names = Set(fields.map(\.0))
        var query =
            parts.count > 1
            ? parts[1].split(separator: "&").map(String.init).filter { pair in
                !names.contains(String(pair.split(separator: "=", maxSplits: 1).first ?? "").removingPercentEncoding ?? "")
            } : []
        query.append(formEncode(fields))
        return String(parts[0]) + "?" + query.filter { !$0.isEmpty }.joined(separator: "&") + fragment
    }

    /// `application/x-www-form-urlencoded`, as Go's `url.Values.Encode` writes values.
    static func formEncode(_ fields: [(String, String)]) -> String {
        fields.map { "\(queryEscape($0.0))=\(queryEscape($0.1).replacingOccurrences(of: "%20", with: "+"))" }.joined(separator: "&")
    }
}
