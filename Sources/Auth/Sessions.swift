import Foundation
import HTTP
import Identity
import Postgres

/// Sessions as GoTrue answers them: the access token's claims and the refresh tokens (random,
/// stored only as their SHA-256).
extension AuthService {
    /// The session object GoTrue answers sign-ins with, around a new access token.
    func sessionJSON(userJSON: String, sessionID: String, refreshToken: String, method: String) throws -> String {
        guard let user = (try? JSONSerialization.jsonObject(with: Data(userJSON.utf8))) as? [String: Any] else {
            throw AuthError.unexpected("user JSON")
        }
        let now = Int(Date().timeIntervalSince1970)
        let expiresAt = now + config.jwtExpiry
        let claims: [String: Any] = [
            "aud": "authenticated", "exp": expiresAt, "iat": now, "iss": config.issuer,
            "sub": user["id"] ?? "", "email": user["email"] ?? "", "phone": user["phone"] ?? "",
            "app_metadata": user["app_metadata"] ?? [:], "user_metadata": user["user_metadata"] ?? [:],
            "role": "authenticated", "aal": "aal1", "amr": [["method": method, "timestamp": now]],
            "session_id": sessionID, "is_anonymous": user["is_anonymous"] ?? false
        ]
        let accessToken = JWT.sign(claims: claims, keys: config.keys)
        return
            #"{"access_token":\#(jsonString(accessToken)),"token_type":"bearer","expires_in":\#(config.jwtExpiry),"expires_at":\#(expiresAt),"refresh_token":\#(jsonString(refreshToken)),"user":\#(userJSON)}"#
    }

    /// 128 random bits, URL-safe; only its SHA-256 is stored.
    static func newRefreshToken() -> String { Base64URL.encode(Crypto.randomBytes(16)) }

    static func digest(_ token: String) -> String { Crypto.hex(Crypto.sha256(Array(token.utf8))) }
}
