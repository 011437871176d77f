import Foundation
import HTTP
import Identity
import Postgres

/// The requests for a mail: `POST /recover`, `/otp` (and `/magiclink`), `/resend`.
extension AuthService {
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
                try userCreated(connection, userID: userID)
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
}
