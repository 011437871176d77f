import Foundation
import HTTP
import Identity
import Postgres

/// `POST /logout?scope=global|local|others`.
extension AuthService {
    func logout(_ caller: SignedIn, scope: AuthRequest.LogoutScope) throws -> HTTPResponse {
        let (userID, sessionID) = (caller.userID, caller.sessionID)
        try pool.withConnection { connection in
            switch scope {
            case .local: try Sessions.delete(connection, id: sessionID)
            case .others: try Sessions.deleteOthers(connection, userID: userID, keeping: sessionID)
            case .global: try Sessions.deleteAll(connection, userID: userID)
            }
        }
        return HTTPResponse(status: .noContent)
    }
}
