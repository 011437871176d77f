import Foundation
import HTTP
import Identity
import Postgres

/// The endpoints that send mail: sign-up awaiting confirmation, `/recover`, `/otp`, `/resend`,
/// `/reauthenticate` and the e-mail change of `PUT /user`. Each writes its tokens (and PKCE flow)
/// in one transaction with the per-address interval and the mail budget checked, the mails into
/// the outbox in that same transaction, and wakes the senders after the commit: the request
/// never waits for a mail server.
extension AuthService {
    /// The confirmation mail of a sign-up (also `/otp` for a new or unconfirmed address, then
    /// `passwordless`; `/resend` type signup).
    func confirmationMail(
        _ connection: Connection, _ row: MailUserRow, pkce: AuthRequest.PKCEChallenge?, redirectTo: String, passwordless: Bool = false
    ) throws -> OutgoingMail {
        try checkFrequency(secondsAgo: row.confirmationAgo)
        try countMailBudget(connection)
        let flow = try pkce.map { try createFlowState(connection, userID: row.user.id, pkce: $0, providerType: "email", method: "email/signup") }
        let mail = try issueMail(
            connection, kind: .confirmation, type: .confirmation, user: row.user, to: row.user.email, flowStateID: flow, redirectTo: redirectTo,
            passwordless: passwordless)
        try Users.stampSent(connection, id: row.user.id, .confirmation)
        return mail
    }

    /// A recovery or magic-link mail: both use the recovery slot and its interval.
    func recoveryMail(_ connection: Connection, _ row: MailUserRow, kind: MailKind, pkce: AuthRequest.PKCEChallenge?, redirectTo: String) throws -> OutgoingMail
    {
        try checkFrequency(secondsAgo: row.recoveryAgo)
        try countMailBudget(connection)
        let method = kind == .magicLink ? "magiclink" : "recovery"
        let flow = try pkce.map { try createFlowState(connection, userID: row.user.id, pkce: $0, providerType: method, method: method) }
        let mail = try issueMail(
            connection, kind: kind, type: .recovery, user: row.user, to: row.user.email, flowStateID: flow, redirectTo: redirectTo, passwordless: true)
        try Users.stampSent(connection, id: row.user.id, .recovery)
        return mail
    }

    /// The mails of an e-mail change: to the new address, and with secure change to the current
    /// one too, each with its own token.
    func emailChangeMails(
        _ connection: Connection, _ row: MailUserRow, newEmail: String, pkce: AuthRequest.PKCEChallenge?, redirectTo: String
    ) throws -> [OutgoingMail] {
        try checkFrequency(secondsAgo: row.emailChangeAgo)
        try countMailBudget(connection)
        let flow = try pkce.map { try createFlowState(connection, userID: row.user.id, pkce: $0, providerType: "email_change", method: "email_change") }
        var mails = [
            try issueMail(
                connection, kind: .emailChange, type: .emailChangeNew, user: row.user, to: newEmail, flowStateID: flow,
                redirectTo: redirectTo, newEmail: newEmail)
        ]
        if config.mail.secureEmailChange && !row.user.email.isEmpty {
            mails.append(
                try issueMail(
                    connection, kind: .emailChange, type: .emailChangeCurrent, user: row.user, to: row.user.email, flowStateID: flow,
                    redirectTo: redirectTo, newEmail: newEmail))
        } else {
            try OneTimeTokens.delete(connection, userID: row.user.id, type: .emailChangeCurrent)
        }
        try Users.startEmailChange(connection, id: row.user.id, newEmail: newEmail)
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
        let (json, mail) = try pool.withTransaction { connection -> (String, OutgoingMail?) in
            if let existing = try Users.lockForMail(connection, email: email) {
                if existing.confirmed { return (Self.obfuscatedUserJSON(email: email, metadataJSON: body.metadataJSON), nil) }
                let mail = try confirmationMail(connection, existing, pkce: body.pkce, redirectTo: redirectTo)
                return (try userJSON(connection, existing.user.id), mail)
            }
            let userID = UUID().uuidString.lowercased()
            try Users.createUnconfirmed(connection, id: userID, email: email, passwordHash: hash, metadataJSON: body.metadataJSON)
            let row = try Users.lockForMail(connection, id: userID)!
            let mail = try confirmationMail(connection, row, pkce: body.pkce, redirectTo: redirectTo)
            return (try userJSON(connection, userID), mail)
        }
        send(mail.map { [$0] } ?? [])
        return .json(.ok, json)
    }

    /// `POST /recover`: a recovery mail to a known address; `{}` either way.
    func recover(_ body: AuthRequest.Recover, request: HTTPRequest) throws -> HTTPResponse {
        guard Self.isValidEmail(body.email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let redirectTo = redirectTarget(request, given: body.redirectTo)
        let mail = try pool.withTransaction { connection -> OutgoingMail? in
            guard let row = try Users.lockForMail(connection, email: body.email) else { return nil }
            return try recoveryMail(connection, row, kind: .recovery, pkce: body.pkce, redirectTo: redirectTo)
        }
        send(mail.map { [$0] } ?? [])
        return .json(.ok, "{}")
    }

    /// `POST /otp`: a magic link (with its code) to a confirmed user; a new or unconfirmed
    /// address is signed up and gets the confirmation mail instead (with autoconfirm on, the new
    /// user is confirmed and gets the magic link).
    func sendOTP(_ body: AuthRequest.OTP, request: HTTPRequest) throws -> HTTPResponse {
        guard Self.isValidEmail(body.email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let redirectTo = redirectTarget(request, given: body.redirectTo)
        let mail = try pool.withTransaction { connection -> OutgoingMail in
            var row = try Users.lockForMail(connection, email: body.email)
            if row == nil {
                guard body.createUser, !config.disableSignup else { throw AuthError.otpDisabled }
                let userID = UUID().uuidString.lowercased()
                try Users.createPasswordless(
                    connection, id: userID, email: body.email, confirmed: config.mail.autoconfirm,
                    metadataJSON: body.metadataJSON)
                row = try Users.lockForMail(connection, id: userID)
            }
            guard let row else { throw AuthError.unexpected("user vanished") }
            if !row.confirmed {
                return try confirmationMail(connection, row, pkce: body.pkce, redirectTo: redirectTo, passwordless: true)
            }
            return try recoveryMail(connection, row, kind: .magicLink, pkce: body.pkce, redirectTo: redirectTo)
        }
        send([mail])
        return .json(.ok, "{}")
    }

    /// `POST /resend`: the confirmation mail again (unconfirmed users only), or the e-mail change
    /// mails again (a change pending; `email` is the current address). `{}` either way.
    func resend(_ body: AuthRequest.Resend, request: HTTPRequest) throws -> HTTPResponse {
        guard Self.isValidEmail(body.email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let redirectTo = redirectTarget(request, given: body.redirectTo)
        let mails = try pool.withTransaction { connection -> [OutgoingMail] in
            guard let row = try Users.lockForMail(connection, email: body.email) else { return [] }
            switch body.kind {
            case .signup:
                guard !row.confirmed else { return [] }
                return [try confirmationMail(connection, row, pkce: body.pkce, redirectTo: redirectTo)]
            case .emailChange:
                guard let pending = row.pendingEmail else { return [] }
                return try emailChangeMails(connection, row, newEmail: pending, pkce: body.pkce, redirectTo: redirectTo)
            }
        }
        send(mails)
        return .json(.ok, "{}")
    }

    /// `GET /reauthenticate`: a code (no link) to the signed-in user's confirmed address, spent
    /// as `nonce` with a password change.
    func reauthenticate(_ request: HTTPRequest) throws -> HTTPResponse {
        let (userID, _) = try authenticatedUser(request)
        let mail = try pool.withTransaction { connection -> OutgoingMail in
            guard let row = try Users.lockForMail(connection, id: userID) else { throw AuthError.userFromTokenNotFound }
            guard !row.user.email.isEmpty else {
                throw AuthError.validationFailed("Reauthentication requires the user to have an email or a phone number")
            }
            guard row.confirmed else { throw AuthError.reauthenticationEmailNotConfirmed }
            try checkFrequency(secondsAgo: row.reauthenticationAgo)
            try countMailBudget(connection)
            let mail = try issueMail(
                connection, kind: .reauthentication, type: .reauthentication, user: row.user, to: row.user.email,
                flowStateID: nil, redirectTo: config.siteURL)
            try Users.stampSent(connection, id: userID, .reauthentication)
            return mail
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
        // A credential (the password, the address) changes only at the level the user enrolled
        // for: a phished password alone must not lock the owner out. Metadata stays open at aal1.
        if changes.password != nil || changes.email != nil {
            let current = try pool.withConnection { try Assurance.credentialGuard($0, userID: userID, sessionID: sessionID) }
            if current.belowLevel && (changes.password != nil || changes.email.map { $0.lowercased() } != current.email) {
                throw AuthError.insufficientAAL("AAL2 session is required to update email or password when MFA is enabled.", status: .unauthorized)
            }
        }
        if let password = changes.password {
            _ = try checkedPassword(password)
            if config.mail.requireReauthentication { try checkReauthentication(userID: userID, sessionID: sessionID, nonce: changes.nonce) }
        }
        if let email = changes.email {
            guard Self.isValidEmail(email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
            let redirectTo = redirectTarget(request, given: changes.redirectTo)
            try spend(emailChangeBudget(request))
            let mails = try pool.withTransaction { connection -> [OutgoingMail]? in
                guard let row = try Users.lockForMail(connection, id: userID) else { throw AuthError.userFromTokenNotFound }
                if email == row.user.email.lowercased() { return [] }
                if row.isAnonymous && config.mail.autoconfirm { return nil }
                guard try !Users.emailTaken(connection, email: email, byOtherThan: userID) else { throw AuthError.emailExists }
                return try emailChangeMails(connection, row, newEmail: email, pkce: changes.pkce, redirectTo: redirectTo)
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
        try pool.withTransaction { connection in
            if let age = try Sessions.age(connection, id: sessionID), age <= 24 * 3600 { return }
            guard let nonce else { throw AuthError.reauthenticationNeeded }
            guard let token = try OneTimeTokens.lock(connection, userID: userID, type: .reauthentication), let stored = token.otpHash,
                let address = token.relatesTo,
                Crypto.constantTimeEquals(Array(otpHash(nonce, type: .reauthentication, userID: userID, address: address).utf8), Array(stored.utf8)),
                token.age ?? .infinity <= config.mail.otpExpiry
            else {
                throw AuthError.reauthenticationNotValid
            }
            try OneTimeTokens.delete(connection, id: token.id)
        }
    }

    func userJSON(_ connection: Connection, _ userID: String) throws -> String {
        try Users.json(connection, id: userID) ?? "{}"
    }

    /// GoTrue's answer to a sign-up for an address that is already confirmed (autoconfirm off):
    /// a user that does not exist, shaped like a new one.
    static func obfuscatedUserJSON(email: String, metadataJSON: String) -> String {
        let now = ISO8601DateFormatter.string(
            from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime, .withFractionalSeconds])
        return
            #"{"id":"\#(UUID().uuidString.lowercased())","aud":"authenticated","role":"","email":\#(jsonString(email)),"phone":"","confirmation_sent_at":"\#(now)","app_metadata":{"provider":"email","providers":["email"]},"user_metadata":\#(metadataJSON),"identities":[],"created_at":"\#(now)","updated_at":"\#(now)","is_anonymous":false}"#
    }
}
