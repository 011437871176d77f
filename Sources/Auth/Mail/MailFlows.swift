import Foundation
import HTTP
import Identity
import Postgres

/// The endpoints that send mail: sign-up awaiting confirmation, `/recover`, `/otp`, `/resend`,
/// `/reauthenticate` and the e-mail change of `PUT /user`. Each writes its tokens (and PKCE flow)
/// in one transaction with the per-address interval and the mail budget checked, and hands the
/// mails to the mailer after the commit: the request never waits for a mail server.
extension AuthService {
    /// The user row the mail flows read, locked for the transaction.
    struct MailUserRow {
        var user: MailUser
        var confirmed: Bool
        var isAnonymous: Bool
        var pendingEmail: String?
        /// Seconds since each kind of mail was last sent (nil: never).
        var confirmationAgo: Double?
        var recoveryAgo: Double?
        var emailChangeAgo: Double?
        var reauthenticationAgo: Double?
    }

    func lockMailUser(_ connection: Connection, email: String? = nil, id: String? = nil) throws -> MailUserRow? {
        let found = try connection.query("""
            SELECT id::text, coalesce(email, ''), raw_user_meta_data::text, email_confirmed_at IS NOT NULL, is_anonymous, email_change,
                   extract(epoch FROM now() - confirmation_sent_at), extract(epoch FROM now() - recovery_sent_at),
                   extract(epoch FROM now() - email_change_sent_at), extract(epoch FROM now() - reauthentication_sent_at)
            FROM auth.users
            WHERE (lower(email) = \(email) OR id = \(id)::uuid) AND deleted_at IS NULL
            FOR UPDATE
            """)
        guard found.count == 1, let userID = found[0, 0] else { return nil }
        return MailUserRow(user: MailUser(id: userID, email: found[0, 1] ?? "", metadataJSON: found[0, 2] ?? "{}"),
                           confirmed: found[0, 3] == "t", isAnonymous: found[0, 4] == "t", pendingEmail: found[0, 5].flatMap { $0.isEmpty ? nil : $0 },
                           confirmationAgo: found[0, 6].flatMap(Double.init), recoveryAgo: found[0, 7].flatMap(Double.init),
                           emailChangeAgo: found[0, 8].flatMap(Double.init), reauthenticationAgo: found[0, 9].flatMap(Double.init))
    }

    /// The confirmation mail of a sign-up (also `/otp` for a new address, `/resend` type signup).
    func confirmationMail(_ connection: Connection, _ row: MailUserRow, pkce: AuthRequest.PKCEChallenge?, redirectTo: String) throws -> OutgoingMail {
        try checkFrequency(secondsAgo: row.confirmationAgo)
        try countMailBudget(connection)
        let flow = try pkce.map { try createFlowState(connection, userID: row.user.id, pkce: $0, providerType: "email", method: "email/signup") }
        let mail = try issueMail(connection, kind: .confirmation, type: .confirmation, user: row.user, to: row.user.email, flowStateID: flow, redirectTo: redirectTo)
        _ = try connection.query("UPDATE auth.users SET confirmation_sent_at = now() WHERE id = \(row.user.id)::uuid")
        return mail
    }

    /// A recovery or magic-link mail: both use the recovery slot and its interval.
    func recoveryMail(_ connection: Connection, _ row: MailUserRow, kind: MailKind, pkce: AuthRequest.PKCEChallenge?, redirectTo: String) throws -> OutgoingMail {
        try checkFrequency(secondsAgo: row.recoveryAgo)
        try countMailBudget(connection)
        let method = kind == .magicLink ? "magiclink" : "recovery"
        let flow = try pkce.map { try createFlowState(connection, userID: row.user.id, pkce: $0, providerType: method, method: method) }
        let mail = try issueMail(connection, kind: kind, type: .recovery, user: row.user, to: row.user.email, flowStateID: flow, redirectTo: redirectTo)
        _ = try connection.query("UPDATE auth.users SET recovery_sent_at = now() WHERE id = \(row.user.id)::uuid")
        return mail
    }

    /// The mails of an e-mail change: to the new address, and with secure change to the current
    /// one too, each with its own token.
    func emailChangeMails(_ connection: Connection, _ row: MailUserRow, newEmail: String, pkce: AuthRequest.PKCEChallenge?, redirectTo: String) throws -> [OutgoingMail] {
        try checkFrequency(secondsAgo: row.emailChangeAgo)
        try countMailBudget(connection)
        let flow = try pkce.map { try createFlowState(connection, userID: row.user.id, pkce: $0, providerType: "email_change", method: "email_change") }
        var mails = [try issueMail(connection, kind: .emailChange, type: .emailChangeNew, user: row.user, to: newEmail, flowStateID: flow,
                                   redirectTo: redirectTo, newEmail: newEmail)]
        if config.mail.secureEmailChange && !row.user.email.isEmpty {
            mails.append(try issueMail(connection, kind: .emailChange, type: .emailChangeCurrent, user: row.user, to: row.user.email, flowStateID: flow,
                                       redirectTo: redirectTo, newEmail: newEmail))
        } else {
            _ = try connection.query("DELETE FROM auth.one_time_tokens WHERE user_id = \(row.user.id)::uuid AND token_type = 'email_change_token_current'")
        }
        _ = try connection.query("""
            UPDATE auth.users SET email_change = \(newEmail), email_change_sent_at = now(), email_change_confirm_status = 0, updated_at = now()
            WHERE id = \(row.user.id)::uuid
            """)
        return mails
    }

    // MARK: endpoints

    /// `POST /signup` with `MAILER_AUTOCONFIRM=false`: the user without a session, and a
    /// confirmation mail. An address already confirmed gets no mail and a made-up user (GoTrue's
    /// answer, which tells nobody the address is registered).
    func signUpAwaitingConfirmation(_ body: AuthRequest.SignUp, email: String, request: HTTPRequest) throws -> HTTPResponse {
        guard Self.isValidEmail(email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let hash = try Password.hash(try checkedPassword(body.password), cost: config.bcryptCost)
        let redirectTo = redirectTarget(request, given: body.redirectTo)
        let (json, mail) = try pool.withConnection { connection in
            try inTransaction(connection) { () -> (String, OutgoingMail?) in
                if let existing = try lockMailUser(connection, email: email) {
                    if existing.confirmed { return (Self.obfuscatedUserJSON(email: email, metadataJSON: body.metadataJSON), nil) }
                    let mail = try confirmationMail(connection, existing, pkce: body.pkce, redirectTo: redirectTo)
                    return (try userJSON(connection, existing.user.id), mail)
                }
                let userID = UUID().uuidString.lowercased()
                _ = try connection.pipeline([
                    """
                    INSERT INTO auth.users (id, email, encrypted_password, raw_app_meta_data, raw_user_meta_data)
                    VALUES (\(userID)::uuid, \(email), \(hash), '{"provider":"email","providers":["email"]}'::jsonb, \(body.metadataJSON)::jsonb)
                    """,
                    """
                    INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
                    VALUES (\(userID), \(userID)::uuid, jsonb_build_object('sub', \(userID)::text, 'email', \(email)::text, 'email_verified', false, 'phone_verified', false), 'email')
                    """,
                ])
                let row = try lockMailUser(connection, id: userID)!
                let mail = try confirmationMail(connection, row, pkce: body.pkce, redirectTo: redirectTo)
                return (try userJSON(connection, userID), mail)
            }
        }
        send(mail.map { [$0] } ?? [])
        return .json(.ok, json)
    }

    /// `POST /recover`: a recovery mail to a known address; `{}` either way.
    func recover(_ body: AuthRequest.Recover, request: HTTPRequest) throws -> HTTPResponse {
        try checkRate(config.mail.otpRequestLimit, "otp", keys: ["ip:\(clientAddress(request))"])
        guard Self.isValidEmail(body.email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let redirectTo = redirectTarget(request, given: body.redirectTo)
        let mail = try pool.withConnection { connection in
            try inTransaction(connection) { () -> OutgoingMail? in
                guard let row = try lockMailUser(connection, email: body.email) else { return nil }
                return try recoveryMail(connection, row, kind: .recovery, pkce: body.pkce, redirectTo: redirectTo)
            }
        }
        send(mail.map { [$0] } ?? [])
        return .json(.ok, "{}")
    }

    /// `POST /otp`: a magic link (with its code) to a confirmed user; a new or unconfirmed
    /// address is signed up and gets the confirmation mail instead (with autoconfirm on, the new
    /// user is confirmed and gets the magic link).
    func sendOTP(_ body: AuthRequest.OTP, request: HTTPRequest) throws -> HTTPResponse {
        try checkRate(config.mail.otpRequestLimit, "otp", keys: ["ip:\(clientAddress(request))"])
        guard Self.isValidEmail(body.email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let redirectTo = redirectTarget(request, given: body.redirectTo)
        let mail = try pool.withConnection { connection in
            try inTransaction(connection) { () -> OutgoingMail in
                var row = try lockMailUser(connection, email: body.email)
                if row == nil {
                    guard body.createUser else { throw AuthError.otpDisabled }
                    let userID = UUID().uuidString.lowercased()
                    let confirmed = config.mail.autoconfirm
                    _ = try connection.pipeline([
                        """
                        INSERT INTO auth.users (id, email, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
                        VALUES (\(userID)::uuid, \(body.email), CASE WHEN \(confirmed)::boolean THEN now() END,
                                '{"provider":"email","providers":["email"]}'::jsonb, \(body.metadataJSON)::jsonb)
                        """,
                        """
                        INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
                        VALUES (\(userID), \(userID)::uuid, jsonb_build_object('sub', \(userID)::text, 'email', \(body.email)::text,
                                'email_verified', \(confirmed)::boolean, 'phone_verified', false), 'email')
                        """,
                    ])
                    row = try lockMailUser(connection, id: userID)
                }
                guard let row else { throw AuthError.unexpected("user vanished") }
                if !row.confirmed {
                    return try confirmationMail(connection, row, pkce: body.pkce, redirectTo: redirectTo)
                }
                return try recoveryMail(connection, row, kind: .magicLink, pkce: body.pkce, redirectTo: redirectTo)
            }
        }
        send([mail])
        return .json(.ok, "{}")
    }

    /// `POST /resend`: the confirmation mail again (unconfirmed users only), or the e-mail change
    /// mails again (a change pending; `email` is the current address). `{}` either way.
    func resend(_ body: AuthRequest.Resend, request: HTTPRequest) throws -> HTTPResponse {
        try checkRate(config.mail.otpRequestLimit, "otp", keys: ["ip:\(clientAddress(request))"])
        guard Self.isValidEmail(body.email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let redirectTo = redirectTarget(request, given: body.redirectTo)
        let mails = try pool.withConnection { connection in
            try inTransaction(connection) { () -> [OutgoingMail] in
                guard let row = try lockMailUser(connection, email: body.email) else { return [] }
                switch body.kind {
                case .signup:
                    guard !row.confirmed else { return [] }
                    return [try confirmationMail(connection, row, pkce: body.pkce, redirectTo: redirectTo)]
                case .emailChange:
                    guard let pending = row.pendingEmail else { return [] }
                    return try emailChangeMails(connection, row, newEmail: pending, pkce: body.pkce, redirectTo: redirectTo)
                }
            }
        }
        send(mails)
        return .json(.ok, "{}")
    }

    /// `GET /reauthenticate`: a code (no link) to the signed-in user's confirmed address, spent
    /// as `nonce` with a password change.
    func reauthenticate(_ request: HTTPRequest) throws -> HTTPResponse {
        let (userID, _) = try authenticatedUser(request)
        let mail = try pool.withConnection { connection in
            try inTransaction(connection) { () -> OutgoingMail in
                guard let row = try lockMailUser(connection, id: userID) else { throw AuthError.userFromTokenNotFound }
                guard !row.user.email.isEmpty else {
                    throw AuthError.validationFailed("Reauthentication requires the user to have an email or a phone number")
                }
                guard row.confirmed else { throw AuthError.reauthenticationEmailNotConfirmed }
                try checkFrequency(secondsAgo: row.reauthenticationAgo)
                try countMailBudget(connection)
                let mail = try issueMail(connection, kind: .reauthentication, type: .reauthentication, user: row.user, to: row.user.email,
                                         flowStateID: nil, redirectTo: config.siteURL)
                _ = try connection.query("UPDATE auth.users SET reauthentication_sent_at = now() WHERE id = \(userID)::uuid")
                return mail
            }
        }
        send([mail])
        return .json(.ok, "{}")
    }

    /// `PUT /user`: a new e-mail waits for its confirmation mails (an anonymous user with
    /// autoconfirm on gets it at once, as GoTrue); a password change may need the
    /// reauthentication code; everything else as the admin API applies it.
    func updateSignedInUser(_ request: HTTPRequest, _ changes: AuthRequest.UserChanges) throws -> HTTPResponse {
        let (userID, sessionID) = try authenticatedUser(request)
        var changes = changes
        if let password = changes.password {
            _ = try checkedPassword(password)
            if config.mail.requireReauthentication { try checkReauthentication(userID: userID, sessionID: sessionID, nonce: changes.nonce) }
        }
        if let email = changes.email {
            guard Self.isValidEmail(email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
            let redirectTo = redirectTarget(request, given: changes.redirectTo)
            try checkRate(config.mail.otpRequestLimit, "otp", keys: ["ip:\(clientAddress(request))"])
            let mails = try pool.withConnection { connection in
                try inTransaction(connection) { () -> [OutgoingMail]? in
                    guard let row = try lockMailUser(connection, id: userID) else { throw AuthError.userFromTokenNotFound }
                    if email == row.user.email.lowercased() { return [] }
                    if row.isAnonymous && config.mail.autoconfirm { return nil }
                    let taken = try connection.query("SELECT 1 FROM auth.users WHERE lower(email) = \(email) AND id <> \(userID)::uuid")
                    guard taken.isEmpty else { throw AuthError.emailExists }
                    return try emailChangeMails(connection, row, newEmail: email, pkce: changes.pkce, redirectTo: redirectTo)
                }
            }
            if let mails {
                send(mails)
                changes.email = nil
            }
        }
        return .json(.ok, try applyUserChanges(userID: userID, changes, missing: .userFromTokenNotFound))
    }

    /// With `SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION`: a session older than 24 hours
    /// changes the password only with the mailed code, which is spent.
    func checkReauthentication(userID: String, sessionID: String?, nonce: String?) throws {
        try pool.withConnection { connection in
            try inTransaction(connection) {
                let age = try connection.query("SELECT extract(epoch FROM now() - created_at) FROM auth.sessions WHERE id = \(sessionID)::uuid").scalar
                if let age = age.flatMap(Double.init), age <= 24 * 3600 { return }
                guard let nonce else { throw AuthError.reauthenticationNeeded }
                let found = try connection.query("""
                    SELECT id::text, otp_hash, relates_to, extract(epoch FROM now() - created_at) FROM auth.one_time_tokens
                    WHERE user_id = \(userID)::uuid AND token_type = 'reauthentication_token' FOR UPDATE
                    """)
                guard found.count == 1, let id = found[0, 0], let stored = found[0, 1], let address = found[0, 2],
                      Crypto.constantTimeEquals(Array(otpHash(nonce, type: .reauthentication, userID: userID, address: address).utf8), Array(stored.utf8)),
                      (Double(found[0, 3] ?? "") ?? .infinity) <= config.mail.otpExpiry else {
                    throw AuthError.reauthenticationNotValid
                }
                _ = try connection.query("DELETE FROM auth.one_time_tokens WHERE id = \(id)::uuid")
            }
        }
    }

    func userJSON(_ connection: Connection, _ userID: String) throws -> String {
        try connection.query("SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(userID)::uuid").scalar ?? "{}"
    }

    /// GoTrue's answer to a sign-up for an address that is already confirmed (autoconfirm off):
    /// a user that does not exist, shaped like a new one.
    static func obfuscatedUserJSON(email: String, metadataJSON: String) -> String {
        let now = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime, .withFractionalSeconds])
        return #"{"id":"\#(UUID().uuidString.lowercased())","aud":"authenticated","role":"","email":\#(jsonString(email)),"phone":"","confirmation_sent_at":"\#(now)","app_metadata":{"provider":"email","providers":["email"]},"user_metadata":\#(metadataJSON),"identities":[],"created_at":"\#(now)","updated_at":"\#(now)","is_anonymous":false}"#
    }
}
