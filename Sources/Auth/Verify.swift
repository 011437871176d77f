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
        try checkRate(config.mail.verifyLimit, "verify", keys: ["ip:\(clientAddress(request))"])
        var failureKey: String?
        if case .otp(let email, _) = body.credential {
            guard Self.isValidEmail(email) else { throw AuthError.validationFailed("Invalid email format") }
            // Codes are six digits: wrong ones for an address are counted, and past the limit
            // code entry for it waits for the window to end (links keep working).
            let key = "otp_failures:\(email)"
            failureKey = key
            let reached = try pool.withConnection { connection in
                try connection.query("SELECT auth.rate_limit_reached(\(key), \(config.mail.otpMaxFailures)::integer, \(config.mail.otpExpiry)::double precision)").scalar
            }
            if reached == "t" { throw AuthError.rateLimited }
        }
        do {
            return try pool.withConnection { connection in
                try inTransaction(connection) {
                    switch try consumeToken(connection, type: body.type, credential: body.credential) {
                    case .halfway:
                        return .json(.ok, #"{"msg":\#(jsonString(Self.halfwayMessage)),"code":"200"}"#)
                    case .done(let userID, _):
                        return .json(.ok, try startSession(connection, userID: userID, method: "otp"))
                    }
                }
            }
        } catch let error as AuthError where error == .otpExpired(link: false) {
            if let failureKey {
                _ = try? pool.withConnection { connection in
                    try connection.query("SELECT auth.rate_limit_hit(ARRAY[\(failureKey)], \(config.mail.otpMaxFailures)::integer, \(config.mail.otpExpiry)::double precision)")
                }
            }
            throw error
        }
    }

    /// `GET /verify`: always a 303 once the request parsed; failures go to the app as GoTrue's
    /// `error`, `error_code`, `error_description` (fragment; PKCE also in the query).
    func verifyLink(_ link: AuthRequest.VerifyLink, request: HTTPRequest) throws -> HTTPResponse {
        try checkRate(config.mail.verifyLimit, "verify", keys: ["ip:\(clientAddress(request))"])
        let redirect = allowedRedirect(link.redirectTo)
        let pkce = link.token.hasPrefix("pkce_")
        enum Outcome { case session(String), code(String), halfway }
        let location: String
        do {
            let outcome = try pool.withConnection { connection in
                try inTransaction(connection) { () -> Outcome in
                    switch try consumeToken(connection, type: link.type, credential: .tokenHash(link.token)) {
                    case .halfway:
                        return .halfway
                    case .done(let userID, let flowStateID):
                        guard pkce else { return .session(try startSession(connection, userID: userID, method: "otp")) }
                        let code = UUID().uuidString.lowercased()
                        let issued = try connection.query("""
                            UPDATE auth.flow_state SET auth_code = \(Self.digest(code)), auth_code_issued_at = now(), updated_at = now()
                            WHERE id = \(flowStateID)::uuid AND user_id = \(userID)::uuid RETURNING id
                            """)
                        guard issued.count == 1 else {
                            throw AuthError.flowStateNotFound("No associated flow state found. This link was not requested with a PKCE code challenge", status: .badRequest)
                        }
                        return .code(code)
                    }
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
            if let oauth = [HTTPStatus.badRequest: "invalid_request", .unauthorized: "unauthorized_client", .forbidden: "access_denied", .internalServerError: "server_error", .serviceUnavailable: "temporarily_unavailable"][error.status] {
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
        let types = TokenType.consumable(by: type).map(\.rawValue)
        let rows: QueryResult
        var isLink = false
        switch credential {
        case .tokenHash(let token):
            isLink = true
            rows = try connection.query("""
                SELECT id::text, user_id::text, token_type, otp_hash, relates_to, flow_state_id::text, extract(epoch FROM now() - created_at)
                FROM auth.one_time_tokens WHERE token_hash = \(Self.digest(token)) AND token_type = ANY(\(array: types)::text[]) FOR UPDATE
                """)
        case .otp(let email, _):
            rows = try connection.query("""
                SELECT id::text, user_id::text, token_type, otp_hash, relates_to, flow_state_id::text, extract(epoch FROM now() - created_at)
                FROM auth.one_time_tokens WHERE relates_to = \(email) AND token_type = ANY(\(array: types)::text[])
                ORDER BY array_position(\(array: types)::text[], token_type) FOR UPDATE
                """)
        }
        var match: Int?
        for index in 0..<rows.count {
            guard case .otp(let email, let code) = credential else { match = match ?? index; continue }
            guard let userID = rows[index, 1], let tokenType = rows[index, 2].flatMap(TokenType.init(rawValue:)) else { continue }
            // Every candidate is compared, in constant time each.
            let expected = otpHash(code, type: tokenType, userID: userID, address: email)
            if Crypto.constantTimeEquals(Array(expected.utf8), Array((rows[index, 3] ?? "").utf8)) && match == nil { match = index }
        }
        guard let index = match, let tokenID = rows[index, 0], let userID = rows[index, 1],
              let tokenType = rows[index, 2].flatMap(TokenType.init(rawValue:)) else {
            throw AuthError.otpExpired(link: isLink)
        }
        guard let age = rows[index, 6].flatMap(Double.init), age <= config.mail.otpExpiry else { throw AuthError.otpExpired(link: isLink) }
        let flowStateID = rows[index, 5]
        switch tokenType {
        case .confirmation, .recovery, .reauthentication:
            _ = try connection.pipeline([
                "UPDATE auth.users SET email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now() WHERE id = \(userID)::uuid",
                """
                UPDATE auth.identities SET identity_data = identity_data || '{"email_verified":true}'::jsonb, updated_at = now()
                WHERE user_id = \(userID)::uuid AND provider = 'email'
                """,
                "DELETE FROM auth.one_time_tokens WHERE user_id = \(userID)::uuid",
            ])
        case .emailChangeNew, .emailChangeCurrent:
            let user = try connection.query("SELECT email_change, email_change_confirm_status FROM auth.users WHERE id = \(userID)::uuid FOR UPDATE")
            guard user.count == 1, let newEmail = user[0, 0], !newEmail.isEmpty else { throw AuthError.otpExpired(link: isLink) }
            let other = try connection.query("""
                SELECT 1 FROM auth.one_time_tokens WHERE user_id = \(userID)::uuid
                AND token_type IN ('email_change_token_new', 'email_change_token_current') AND id <> \(tokenID)::uuid
                """)
            if !config.mail.autoconfirm && !other.isEmpty && user[0, 1] == "0" {
                _ = try connection.pipeline([
                    "DELETE FROM auth.one_time_tokens WHERE id = \(tokenID)::uuid",
                    "UPDATE auth.users SET email_change_confirm_status = 1, updated_at = now() WHERE id = \(userID)::uuid",
                ])
                return .halfway
            }
            let taken = try connection.query("SELECT 1 FROM auth.users WHERE lower(email) = \(newEmail) AND id <> \(userID)::uuid")
            guard taken.isEmpty else { throw AuthError.emailExists }
            _ = try connection.pipeline([
                """
                UPDATE auth.users SET email = \(newEmail), email_change = NULL, email_change_confirm_status = 0,
                    email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now(), is_anonymous = false,
                    raw_app_meta_data = CASE WHEN is_anonymous THEN '{"provider":"email","providers":["email"]}'::jsonb ELSE raw_app_meta_data END
                WHERE id = \(userID)::uuid
                """,
                """
                INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
                VALUES (\(userID), \(userID)::uuid, jsonb_build_object('sub', \(userID)::text, 'email', \(newEmail)::text, 'email_verified', true, 'phone_verified', false), 'email')
                ON CONFLICT (provider_id, provider) DO UPDATE SET identity_data = EXCLUDED.identity_data, updated_at = now()
                """,
                "DELETE FROM auth.one_time_tokens WHERE user_id = \(userID)::uuid",
            ])
        }
        return .done(userID: userID, flowStateID: flowStateID)
    }

    /// `<redirect>#access_token=…&expires_at=…&expires_in=…&refresh_token=…&sb=&token_type=bearer&type=…`
    /// (keys sorted, as GoTrue writes them).
    static func implicitRedirect(_ redirect: String, sessionJSON: String, type: String) throws -> String {
        guard let session = (try? JSONSerialization.jsonObject(with: Data(sessionJSON.utf8))) as? [String: Any] else {
            throw AuthError.unexpected("session JSON")
        }
        let fields: [(String, String)] = [
            ("access_token", session["access_token"] as? String ?? ""), ("expires_at", "\(session["expires_at"] ?? "")"),
            ("expires_in", "\(session["expires_in"] ?? "")"), ("refresh_token", session["refresh_token"] as? String ?? ""), ("sb", ""),
            ("token_type", "bearer"), ("type", type),
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
        var query = parts.count > 1 ? parts[1].split(separator: "&").map(String.init).filter { pair in
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
