import Foundation
import HTTP
import Identity
import Postgres

/// The kinds of code sent by SMS: a number's confirmation (sign-up, `/otp`, `/resend` type
/// `sms`) and a phone change's code to the new number.
enum PhoneTokenKind {
    case confirmation
    case phoneChange

    var tokenType: TokenType {
        switch self {
        case .confirmation: return .confirmation
        case .phoneChange: return .phoneChange
        }
    }

    /// GoTrue's name of the code in its errors and in the send-SMS hook's `sms_type`.
    var otpType: String {
        switch self {
        case .confirmation: return "confirmation"
        case .phoneChange: return "phone_change"
        }
    }

    var hookType: String { otpType }
}

/// The codes of the phone endpoints (GoTrue's `sendPhoneConfirmation`): each is sent and stored
/// in one transaction, with the per-number interval and the SMS budget checked first.
extension AuthService {
    /// Sends a new code of `kind` to `phone` for the user of `row` (replacing the previous one)
    /// and stores its keyed hash; returns the provider's message id. A test number
    /// (`SMS_TEST_OTP`) gets its fixed code, no message and no budget spent.
    func issuePhoneCode(_ connection: Connection, _ row: PhoneUserRow, to phone: String, kind: PhoneTokenKind, channel: String) throws -> String {
        try PhoneNumber.checkChannel(channel, twilio: config.sms.twilio != nil)
        try checkSMSFrequency(secondsAgo: kind == .confirmation ? row.confirmationAgo : row.phoneChangeAgo)
        let code: String
        let messageID: String
        if let testCode = config.sms.testOTP(for: phone) {
            (code, messageID) = (testCode, "test-otp")
        } else {
            try countSMSBudget(connection)
            code = Self.newOTP(length: config.sms.otpLength)
            messageID = try deliverSMS(connection, userID: row.id, phone: phone, code: code, kind: kind, channel: channel)
        }
        try OneTimeTokens.issue(
            connection, userID: row.id, type: kind.tokenType, tokenDigest: nil,
            otpHash: otpHash(code, type: kind.tokenType, userID: row.id, address: phone), relatesTo: phone, flowStateID: nil, passwordless: false)
        switch kind {
        case .confirmation: try Users.stampPhoneConfirmationSent(connection, id: row.id)
        case .phoneChange: try Users.startPhoneChange(connection, id: row.id, newPhone: phone)
        }
        return messageID
    }

    /// 429 `over_sms_send_rate_limit` while the last code of this kind is younger than
    /// `SMS_MAX_FREQUENCY` (`secondsAgo` nil: none was sent).
    func checkSMSFrequency(secondsAgo: Double?) throws {
        guard let left = Self.secondsToWait(secondsAgo: secondsAgo, interval: config.sms.maxFrequency) else { return }
        throw AuthError.overSMSSendRateLimit("For security purposes, you can only request this after \(left) seconds.", retryAfter: left)
    }

    /// One hit on the SMS budget (`RATE_LIMIT_SMS_SENT`), inside the caller's transaction.
    func countSMSBudget(_ connection: Connection) throws {
        guard let left = try Self.spendSendingBudget(connection, key: "sms_sent:all", limit: config.sms.sentLimit) else { return }
        throw AuthError.overSMSSendRateLimit("SMS rate limit exceeded", retryAfter: left)
    }

    /// `POST /signup` with a number: a phone user with a session (`SMS_AUTOCONFIRM`), or the
    /// user awaiting the code sent to the number. A number not yet confirmed signs up again
    /// (its code sent again); a confirmed one is `user_already_exists`.
    func signUpWithPhone(_ body: AuthRequest.SignUp, phone text: String) throws -> HTTPResponse {
        let phone = try PhoneNumber.normalize(text)
        let hash = try Password.hash(try checkedPassword(body.password), cost: config.bcryptCost)
        return try pool.withTransaction { connection in
            var row = try Users.lockForPhone(connection, phone: phone)
            if let existing = row {
                guard !existing.phoneConfirmed else { throw AuthError.userAlreadyExists }
                try Users.setPassword(connection, id: existing.id, hash: hash)
            } else {
                let userID = UUID().uuidString.lowercased()
                try Users.createPhoneUser(
                    connection, id: userID, phone: phone, passwordHash: hash, confirmed: config.sms.autoconfirm, metadataJSON: body.metadataJSON)
                try userCreated(connection, userID: userID)
                row = try Users.lockForPhone(connection, id: userID)
            }
            guard let row else { throw AuthError.unexpected("user vanished") }
            if row.phoneConfirmed { return .json(.ok, try startSession(connection, userID: row.id, method: "password")) }
            _ = try issuePhoneCode(connection, row, to: phone, kind: .confirmation, channel: body.channel)
            return .json(.ok, try userJSON(connection, row.id))
        }
    }

    /// `POST /otp` with a number: a code to it. A number nobody has signs up (without a
    /// password) unless `create_user` is false; an unconfirmed one gets its confirmation code.
    func sendPhoneOTP(_ body: AuthRequest.PhoneOTP) throws -> HTTPResponse {
        let phone = try PhoneNumber.normalize(body.phone)
        let messageID = try pool.withTransaction { connection -> String in
            var row = try Users.lockForPhone(connection, phone: phone)
            if row == nil {
                guard body.createUser, !config.disableSignup else { throw AuthError.otpDisabled }
                let userID = UUID().uuidString.lowercased()
                try Users.createPhoneUser(
                    connection, id: userID, phone: phone, passwordHash: nil, confirmed: config.sms.autoconfirm, metadataJSON: body.metadataJSON)
                try userCreated(connection, userID: userID)
                row = try Users.lockForPhone(connection, id: userID)
            }
            guard let row else { throw AuthError.unexpected("user vanished") }
            return try issuePhoneCode(connection, row, to: phone, kind: .confirmation, channel: body.channel)
        }
        return .json(.ok, Self.messageIDJSON(messageID))
    }

    /// `POST /resend` type `sms` (a confirmation code again, to an unconfirmed number) or
    /// `phone_change` (the change's code again, to the new number; `phone` is the current one).
    /// `{}` when there is nothing to send, as for an unknown number.
    func resendPhone(_ body: AuthRequest.PhoneResend) throws -> HTTPResponse {
        let messageID = try pool.withTransaction { connection -> String in
            guard let row = try Users.lockForPhone(connection, phone: body.phone) else { return "" }
            switch body.kind {
            case .sms:
                guard !row.phoneConfirmed else { return "" }
                return try issuePhoneCode(connection, row, to: row.phone, kind: .confirmation, channel: "sms")
            case .phoneChange:
                guard let pending = row.pendingPhone else { return "" }
                return try issuePhoneCode(connection, row, to: pending, kind: .phoneChange, channel: "sms")
            }
        }
        return .json(.ok, Self.messageIDJSON(messageID))
    }

    /// `PUT /user` with a new number: its code sent to it (with `SMS_AUTOCONFIRM`, the number
    /// changes at once). Nothing when it is the user's number already.
    func changePhone(userID: String, newPhone text: String, channel: String) throws {
        guard config.sms.enabled else { throw AuthError.phoneProviderDisabled }
        let phone = try PhoneNumber.normalize(text)
        try pool.withTransaction { connection in
            guard let row = try Users.lockForPhone(connection, id: userID) else { throw AuthError.userFromTokenNotFound }
            guard phone != row.phone else { return }
            guard try !Users.phoneTaken(connection, phone: phone, byOtherThan: userID) else { throw AuthError.phoneExists }
            if config.sms.autoconfirm {
                try Users.completePhoneChange(connection, id: userID, newPhone: phone)
            } else {
                _ = try issuePhoneCode(connection, row, to: phone, kind: .phoneChange, channel: channel)
            }
        }
    }

    /// A phone code spent (in `consumeToken`'s transaction): the number it was sent to confirmed,
    /// or the phone change to it completed. A code for a number the user no longer has (or no
    /// longer changes to) is refused as expired.
    func applyPhoneToken(_ connection: Connection, userID: String, type: TokenType, phone: String) throws {
        guard let row = try Users.lockForPhone(connection, id: userID) else { throw AuthError.otpExpired(link: false) }
        switch type {
        case .phoneChange:
            guard row.pendingPhone == phone else { throw AuthError.otpExpired(link: false) }
            guard try !Users.phoneTaken(connection, phone: phone, byOtherThan: userID) else { throw AuthError.phoneExists }
            try Users.completePhoneChange(connection, id: userID, newPhone: phone)
        case .confirmation, .recovery, .emailChangeNew, .emailChangeCurrent, .reauthentication:
            guard type == .confirmation, row.phone == phone else { throw AuthError.otpExpired(link: false) }
            try Users.confirmPhone(connection, id: userID)
        }
    }

    /// GoTrue's answer to a code sent: `{"message_id": …}`, `{}` when there is no id.
    static func messageIDJSON(_ messageID: String) -> String {
        messageID.isEmpty ? "{}" : #"{"message_id":\#(jsonString(messageID))}"#
    }
}
