import Foundation
import HTTP
import Identity
import Postgres

/// `/admin/users…`: the service role's user management.
extension AuthService {
    func admin(_ request: HTTPRequest, _ operation: AuthRequest.Admin) throws -> HTTPResponse {
        guard let token = Credentials.bearerToken(request.headers["Authorization"]) else { throw AuthError.noAuthorization }
        // GoTrue's JWT_ADMIN_ROLES: the service-role key (or a secret key), or a token whose role
        // is one of them.
        let isAdmin: Bool
        if let keyCaller = config.keys.role(ofKey: token) {
            isAdmin = keyCaller.isServiceRole
        } else if let claims = try? JWT.verify(token, secret: config.keys.jwtSecret, publicKeys: config.keys.verificationKeys).claims {
            isAdmin = (claims["role"] as? String).map(config.adminRoles.contains) ?? false
        } else {
            throw AuthError.badJWT("invalid token")
        }
        guard isAdmin else { throw AuthError.notAdmin }
        switch operation {
        case .listUsers(let page, let perPage):
            let users = try pool.withConnection { try Users.page($0, page: page, perPage: perPage) }
            return .json(.ok, #"{"aud":"authenticated","users":\#(users)}"#)
        case .createUser(let email, let password, let metadata, let confirmed):
            guard let email, Self.isValidEmail(email) else {
                throw AuthError.validationFailed("Unable to validate email address: invalid format")
            }
            let hash = try password.map { try Password.hash(try checkedPassword($0), cost: config.bcryptCost) }
            let userID = UUID().uuidString.lowercased()
            let json = try pool.withConnection { connection in
                guard
                    let json = try Users.createByAdmin(
                        connection, id: userID, email: email, passwordHash: hash, confirmed: confirmed,
                        metadataJSON: metadata)
                else { throw AuthError.emailExists }
                return json
            }
            return .json(.ok, json)
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
        }
    }
}
