import Foundation
import HTTP
import Identity
import Postgres

/// `POST /logout?scope=global|local|others`.
extension AuthService {
    func logout(_ request: HTTPRequest, scope: AuthRequest.LogoutScope) throws -> HTTPResponse {
        let (userID, sessionID) = try authenticatedUser(request)
        _ = try pool.withConnection { connection -> QueryResult in
            switch scope {
            case .local:
                return try connection.query("DELETE FROM auth.sessions WHERE id = \(sessionID)::uuid")
            case .others:
                return try connection.query("DELETE FROM auth.sessions WHERE user_id = \(userID)::uuid AND id IS DISTINCT FROM \(sessionID)::uuid")
            case .global:
                return try connection.query("DELETE FROM auth.sessions WHERE user_id = \(userID)::uuid")
            }
        }
        return HTTPResponse(status: .noContent)
    }
}
