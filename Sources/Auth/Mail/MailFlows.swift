import Foundation
import HTTP
import Identity
import Postgres

/// The mails of the endpoints that send them: sign-up awaiting confirmation, `/recover`, `/otp`,
/// `/resend`, `/reauthenticate` and the e-mail change of `PUT /user`. Each endpoint writes its
/// tokens (and PKCE flow) in one transaction with the per-address interval and the mail budget
/// checked, the mails into the outbox in that same transaction, and wakes the senders after the
/// commit: the request never waits for a mail server.
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
        // With the send-email hook both tokens go in one call, made once the user shows the new address.
        let mailed = config.hooks.sendEmail == nil
        var mails = [
            try issueMail(
                connection, kind: .emailChange, type: .emailChangeNew, user: row.user, to: newEmail, flowStateID: flow,
                redirectTo: redirectTo, newEmail: newEmail, deliver: mailed)
        ]
        if config.mail.secureEmailChange && !row.user.email.isEmpty {
            mails.append(
                try issueMail(
                    connection, kind: .emailChange, type: .emailChangeCurrent, user: row.user, to: row.user.email, flowStateID: flow,
                    redirectTo: redirectTo, newEmail: newEmail, deliver: mailed))
        } else {
            try OneTimeTokens.delete(connection, userID: row.user.id, type: .emailChangeCurrent)
        }
        try Users.startEmailChange(connection, id: row.user.id, newEmail: newEmail)
        guard mailed else {
            let mail = try emailChangeHookMail(connection, userID: row.user.id, new: mails[0], current: mails.dropFirst().first, redirectTo: redirectTo)
            try mailer.enqueue(connection, mail)
            return [mail]
        }
        return mails
    }

    func userJSON(_ connection: Connection, _ userID: String) throws -> String {
        try Users.json(connection, id: userID) ?? "{}"
    }
}
