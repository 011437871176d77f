import Foundation
import HTTP
import Identity
import Postgres

/// `/admin/users…`: the service role's user management (the role is checked by `AdminStage`).
extension AuthService {
    /// Runs once `AdminStage` has admitted the caller.
    func admin(_ request: HTTPRequest, _ operation: AuthRequest.Admin) throws -> HTTPResponse {
        switch operation {
        case .listUsers(let page, let perPage):
            let (users, total) = try pool.withConnection { try Users.page($0, page: page, perPage: perPage) }
            var response = HTTPResponse.json(.ok, #"{"aud":"authenticated","users":\#(users)}"#)
            response.headers.replace("X-Total-Count", "\(total)")
            response.headers.replace("Link", Self.paginationLinks(request, page: page, perPage: perPage, total: total))
            return response
        case .createUser(let user):
            guard let email = user.email, Self.isValidEmail(email) else {
                throw AuthError.validationFailed("Unable to validate email address: invalid format")
            }
            let hash = try user.password.map { try Password.hash(try checkedPassword($0), cost: config.bcryptCost) }
            let userID = UUID().uuidString.lowercased()
            let json = try pool.withTransaction { connection in
                guard
                    try Users.createByAdmin(
                        connection, id: userID, email: email, passwordHash: hash, confirmed: user.emailConfirmed,
                        metadataJSON: user.metadataJSON) != nil
                else { throw AuthError.emailExists }
                if let appMetadata = user.appMetadataJSON { try Users.mergeMetadata(connection, id: userID, metadataJSON: appMetadata, column: .app) }
                if let ban = user.ban { try Users.ban(connection, id: userID, ban) }
                return try userJSON(connection, userID)
            }
            return .json(.ok, json)
        case .generateLink(let link):
            return .json(.ok, try generateLink(link, request: request))
        case .invite(let email, let metadata, let redirectTo):
            return .json(.ok, try invite(email: email, metadataJSON: metadata, redirectTo: redirectTarget(request, given: redirectTo)))
        case .getUser(let id):
            guard let id else { throw AuthError.userNotFound }
            return .json(.ok, try userJSON(id))
        case .updateUser(let id, let changes):
            guard let id else { throw AuthError.userNotFound }
            return .json(.ok, try applyUserChanges(userID: id, changes))
        case .deleteUser(let id):
            guard let id else { throw AuthError.userNotFound }
            let json = try userJSON(id)
            try pool.withConnection { try Users.delete($0, id: id) }
            return .json(.ok, json)
        case .listFactors(let id):
            guard let id, let json = try pool.withConnection({ try Factors.listJSON($0, userID: id) }) else { throw AuthError.userNotFound }
            return .json(.ok, json)
        case .updateFactor(let id, let factorID, let friendlyName):
            guard let id, try pool.withConnection({ try Factors.listJSON($0, userID: id) }) != nil else { throw AuthError.userNotFound }
            guard let factorID else { throw AuthError.factorIDNotUUID }
            guard let json = try pool.withConnection({ try Factors.rename($0, id: factorID, userID: id, friendlyName: friendlyName) }) else {
                throw AuthError.mfaFactorNotFound("Factor not found", status: .notFound)
            }
            return .json(.ok, json)
        case .deleteFactor(let id, let factorID):
            guard let id, try pool.withConnection({ try Factors.listJSON($0, userID: id) }) != nil else { throw AuthError.userNotFound }
            guard let factorID else { throw AuthError.factorIDNotUUID }
            guard let json = try pool.withTransaction({ try Factors.delete($0, id: factorID, userID: id) }) else {
                throw AuthError.mfaFactorNotFound("Factor not found", status: .notFound)
            }
            return .json(.ok, json)
        case .listPasskeys(let id):
            return try adminListPasskeys(userID: id)
        case .deletePasskey(let id, let passkeyID):
            return try adminDeletePasskey(userID: id, passkeyID: passkeyID)
        }
    }

    /// GoTrue's `Link` of a page of users: the next page (when there is one) and the last, on
    /// this request's path with its query (`page` replaced, keys sorted as Go encodes them).
    static func paginationLinks(_ request: HTTPRequest, page: Int, perPage: Int, total: Int) -> String {
        let lastPage = (total + perPage - 1) / perPage
        func link(_ number: Int) -> String {
            var query = request.query.filter { $0.name != "page" }.map { ($0.name, $0.value) }
            query.append(("page", "\(number)"))
            query.sort { $0.0 < $1.0 }
            return "<\(request.path)?\(formEncode(query))>"
        }
        var header = ""
        if lastPage > page { header += link(page + 1) + #"; rel="next", "# }
        return header + link(lastPage) + #"; rel="last""#
    }

    /// `POST /admin/generate_link`: the user's token issued as the mail would carry it, and
    /// answered instead of mailed (GoTrue's answer: the user with `action_link`, `email_otp`,
    /// `hashed_token`, `verification_type` and `redirect_to`). A magic link for an unknown
    /// address signs it up (`verification_type` `signup`).
    func generateLink(_ link: AuthRequest.GenerateLink, request: HTTPRequest) throws -> String {
        guard Self.isValidEmail(link.email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let redirectTo = redirectTarget(request, given: link.redirectTo)
        var kind = link.kind
        if kind == .emailChangeCurrent && !config.mail.secureEmailChange {
            throw AuthError.validationFailed("Enable secure email change to generate link for current email")
        }
        // The password of a new sign-up is hashed before the transaction (bcrypt is slow).
        let hash = try link.password.map { try Password.hash(try checkedPassword($0), cost: config.bcryptCost) }
        let (userID, mail, type) = try pool.withTransaction { connection -> (String, OutgoingMail, AuthRequest.GenerateLink.Kind) in
            var row = try Users.lockForMail(connection, email: link.email)
            if row == nil {
                switch kind {
                case .magiclink: kind = .signup
                case .recovery, .emailChangeCurrent, .emailChangeNew: throw AuthError.userWithEmailNotFound
                case .signup, .invite: break
                }
            }
            let metadata = link.metadataJSON ?? "{}"
            switch kind {
            case .signup, .invite:
                if let existing = row {
                    guard !existing.confirmed else { throw AuthError.emailExists }
                    if kind == .signup, let given = link.metadataJSON { try Users.mergeMetadata(connection, id: existing.user.id, metadataJSON: given) }
                } else {
                    let newID = UUID().uuidString.lowercased()
                    if kind == .signup && link.kind == .signup {
                        guard let hash else { throw AuthError.validationFailed("Signup requires a valid password") }
                        try Users.createUnconfirmed(connection, id: newID, email: link.email, passwordHash: hash, metadataJSON: metadata)
                    } else {
                        try Users.createPasswordless(connection, id: newID, email: link.email, confirmed: false, metadataJSON: metadata)
                    }
                    try userCreated(connection, userID: newID)
                    row = try Users.lockForMail(connection, id: newID)
                }
                guard let row else { throw AuthError.unexpected("user vanished") }
                let mail = try issueMail(
                    connection, kind: kind == .invite ? .invite : .confirmation, type: .confirmation, user: row.user, to: row.user.email,
                    flowStateID: nil, redirectTo: redirectTo, passwordless: link.kind != .signup, deliver: false)
                try Users.stampSent(connection, id: row.user.id, .confirmation)
                if kind == .invite { try Users.stampInvited(connection, id: row.user.id) }
                return (row.user.id, mail, kind)
            case .magiclink, .recovery:
                guard let row else { throw AuthError.userWithEmailNotFound }
                let mail = try issueMail(
                    connection, kind: kind == .magiclink ? .magicLink : .recovery, type: .recovery, user: row.user, to: row.user.email,
                    flowStateID: nil, redirectTo: redirectTo, passwordless: true, deliver: false)
                try Users.stampSent(connection, id: row.user.id, .recovery)
                return (row.user.id, mail, kind)
            case .emailChangeCurrent, .emailChangeNew:
                guard let row else { throw AuthError.userWithEmailNotFound }
                guard let newEmail = link.newEmail else { throw AuthError.validationFailed("An email address is required") }
                guard Self.isValidEmail(newEmail) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
                guard try !Users.emailTaken(connection, email: newEmail, byOtherThan: row.user.id) else { throw AuthError.emailExists }
                try Users.startEmailChange(connection, id: row.user.id, newEmail: newEmail)
                let current = kind == .emailChangeCurrent
                let mail = try issueMail(
                    connection, kind: .emailChange, type: current ? .emailChangeCurrent : .emailChangeNew, user: row.user,
                    to: current ? row.user.email : newEmail, flowStateID: nil, redirectTo: redirectTo, newEmail: newEmail, deliver: false)
                return (row.user.id, mail, kind)
            }
        }
        let user = try self.userJSON(userID)
        let fields = [
            ("action_link", mail.link ?? ""), ("email_otp", mail.code), ("hashed_token", mail.tokenHash), ("verification_type", type.rawValue),
            ("redirect_to", redirectTo)
        ].map { "\(jsonString($0.0)):\(jsonString($0.1))" }.joined(separator: ",")
        return String(user.dropLast()) + "," + fields + "}"
    }

    /// `POST /invite`: a new user (or one that never confirmed) is mailed an invitation, whose
    /// link (`type=invite`) confirms the address and signs in; a confirmed address is 422
    /// `email_exists`. Answers the user, with `invited_at`.
    func invite(email: String, metadataJSON: String, redirectTo: String) throws -> String {
        guard !email.isEmpty else { throw AuthError.validationFailed("An email address is required") }
        guard Self.isValidEmail(email) else { throw AuthError.validationFailed("Unable to validate email address: invalid format") }
        let (userID, mail) = try pool.withTransaction { connection -> (String, OutgoingMail) in
            var row = try Users.lockForMail(connection, email: email)
            if let existing = row {
                guard !existing.confirmed else { throw AuthError.emailExists }
            } else {
                let newID = UUID().uuidString.lowercased()
                try Users.createPasswordless(connection, id: newID, email: email, confirmed: false, metadataJSON: metadataJSON)
                try userCreated(connection, userID: newID)
                row = try Users.lockForMail(connection, id: newID)
            }
            guard let row else { throw AuthError.unexpected("user vanished") }
            try countMailBudget(connection)
            let mail = try issueMail(
                connection, kind: .invite, type: .confirmation, user: row.user, to: row.user.email, flowStateID: nil, redirectTo: redirectTo,
                passwordless: true)
            try Users.stampSent(connection, id: row.user.id, .confirmation)
            try Users.stampInvited(connection, id: row.user.id)
            return (row.user.id, mail)
        }
        send([mail])
        return try userJSON(userID)
    }
}
