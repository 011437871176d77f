import Foundation
import HTTP
import Identity
import Postgres

/// Sessions as GoTrue answers them: the access token's claims and the refresh tokens (random,
/// stored only as their SHA-256).
extension AuthService {
    /// The session object GoTrue answers sign-ins with, around a new access token whose `aal`
    /// and `amr` are the session's (`Assurance`), and whose claims pass the custom access token
    /// hook when it is on. `connection` is in the transaction that made or refreshed the
    /// session, so that a refused token leaves no session behind; `method` is GoTrue's
    /// authentication method (`password`, `token_refresh`, `totp`, …); `oauth` the OAuth
    /// client the session is for.
    func sessionJSON(
        _ connection: Connection, userJSON: String, sessionID: String, refreshToken: String, assurance: (aal: String, amrJSON: String), method: String,
        oauth: OAuthSessionGrant? = nil
    ) throws -> String {
        guard let user = (try? JSONSerialization.jsonObject(with: Data(userJSON.utf8))) as? [String: Any] else {
            throw AuthError.unexpected("user JSON")
        }
        guard let amr = try? JSONSerialization.jsonObject(with: Data(assurance.amrJSON.utf8)) else { throw AuthError.unexpected("amr JSON") }
        let now = Int(Date().timeIntervalSince1970)
        let expiresAt = now + config.jwtExpiry
        var built: [String: Any] = [
            "aud": "authenticated", "exp": expiresAt, "iat": now, "iss": config.issuer,
            "sub": user["id"] ?? "", "email": user["email"] ?? "", "phone": user["phone"] ?? "",
            "app_metadata": user["app_metadata"] ?? [:], "user_metadata": user["user_metadata"] ?? [:],
            "role": "authenticated", "aal": assurance.aal, "amr": amr,
            "session_id": sessionID, "is_anonymous": user["is_anonymous"] ?? false
        ]
        // GoTrue's `client_id` and `scope` claims of an OAuth client's session.
        if let oauth {
            built["client_id"] = oauth.clientID
            if !oauth.scope.isEmpty { built["scope"] = oauth.scope }
        }
        let claims = try accessTokenClaims(connection, built, userID: user["id"] as? String ?? "", method: method)
        let accessToken = JWT.sign(claims: claims, keys: config.keys)
        return
            #"{"access_token":\#(jsonString(accessToken)),"token_type":"bearer","expires_in":\#(config.jwtExpiry),"expires_at":\#(expiresAt),"refresh_token":\#(jsonString(refreshToken)),"user":\#(userJSON)}"#
    }

    /// The assurance of a session just begun with `method`.
    static func firstFactor(_ method: String) -> (aal: String, amrJSON: String) {
        ("aal1", #"[{"method":\#(jsonString(method)),"timestamp":\#(Int(Date().timeIntervalSince1970))}]"#)
    }

    /// 128 random bits, URL-safe; only its SHA-256 is stored.
    static func newRefreshToken() -> String { Base64URL.encode(Crypto.randomBytes(16)) }

    static func digest(_ token: String) -> String { Crypto.hex(Crypto.sha256(Array(token.utf8))) }

    /// The time now as GoTrue writes it in JSON: RFC 3339 in UTC with fractional seconds.
    static func timestamp() -> String {
        ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime, .withFractionalSeconds])
    }
}
