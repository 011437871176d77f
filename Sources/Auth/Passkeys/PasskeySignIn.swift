import Foundation
import HTTP
import Identity
import Postgres

/// `/passkeys/authentication/…`: sign-in with a discoverable credential. The assertion names
/// its user (`userHandle`, the user's id) and credential (`rawId`); its signature over
/// authData ‖ SHA-256(clientDataJSON) is checked with the stored key, the counter must grow
/// (a counter that does not is a cloned authenticator), and the session's `amr` is `passkey`.
extension AuthService {
    func passkeyAuthenticationOptions() throws -> HTTPResponse {
        let passkey = config.passkey
        let challenge = Base64URL.encode(Crypto.randomBytes(32))
        let session: [String: Any] = ["challenge": challenge, "rpId": passkey.rpID, "userVerification": "preferred"]
        let stored = try pool.withConnection {
            try PasskeyChallenges.create($0, userID: nil, type: "authentication", sessionDataJSON: JWT.serialize(session), expiry: passkey.challengeExpiry)
        }
        let options: [String: Any] = [
            "challenge": challenge, "timeout": Int(passkey.challengeExpiry * 1000), "rpId": passkey.rpID, "userVerification": "preferred"
        ]
        return .json(.ok, JWT.serialize(["challenge_id": stored.id, "options": options, "expires_at": stored.expiresAt]))
    }

    func passkeyAuthenticationVerify(_ answer: AuthRequest.PasskeyAnswer) throws -> HTTPResponse {
        let passkey = config.passkey
        let challenge = try pool.withConnection { try consumePasskeyChallenge($0, answer, type: "authentication", userID: nil) }
        let credential: WebAuthn.Credential
        do { credential = try WebAuthn.Credential(json: answer.credentialJSON, assertion: true) } catch { throw AuthError.passkey(.invalidCredential) }
        func refuse(_ reason: String) -> AuthError {
            logger.info("passkey sign-in refused", metadata: ["reason": "\(reason)"])
            return AuthError.passkey(.verificationFailed)
        }
        guard let handle = String(validating: credential.userHandle, as: UTF8.self), let userID = AuthRequest.uuid(handle) else {
            throw refuse("user handle is not a user id")
        }
        let data: WebAuthn.AuthenticatorData
        do throws(WebAuthn.Refusal) {
            try WebAuthn.checkClientData(credential.clientDataJSON, type: "webauthn.get", challenge: challenge, origins: passkey.rpOrigins)
            data = try WebAuthn.parseAuthenticatorData(credential.authenticatorData)
            try WebAuthn.checkAuthenticatorData(data, rpID: passkey.rpID)
            guard data.credential == nil else { throw WebAuthn.Refusal("attested credential data in an assertion") }
        } catch {
            throw refuse(error.reason)
        }
        let json = try pool.withTransaction { connection -> String in
            guard let stored = try Passkeys.lockCredential(connection, credentialID: credential.rawID, userID: userID) else {
                throw refuse("no such credential for the user")
            }
            let key: WebAuthn.CredentialKey
            do throws(WebAuthn.Refusal) {
                let cose: CBOR
                do throws(CBORError) { cose = try CBORReader.decode(stored.publicKeyCOSE) } catch { throw WebAuthn.Refusal("stored key: \(error.reason)") }
                key = try WebAuthn.CredentialKey(cose: cose)
            } catch {
                throw refuse(error.reason)
            }
            guard key.verify(signature: credential.signature, data: credential.authenticatorData + Crypto.sha256(credential.clientDataJSON)) else {
                throw refuse("signature does not verify")
            }
            // Both zero: the authenticator keeps no counter. Otherwise it must grow.
            guard (data.signCount == 0 && stored.signCount == 0) || data.signCount > stored.signCount else {
                throw refuse("sign count \(data.signCount) not above \(stored.signCount): cloned authenticator")
            }
            guard let state = try Passkeys.signInState(connection, userID: userID) else { throw refuse("no such user") }
            if state.emailUnconfirmed { throw AuthError.emailNotConfirmed }
            if state.phoneUnconfirmed { throw AuthError.phoneNotConfirmed }
            if state.banned { throw AuthError.userBanned("User is banned", status: .forbidden) }
            try Passkeys.recordUse(connection, id: stored.id, signCount: data.signCount)
            return try startSession(connection, userID: userID, method: "passkey")
        }
        return .json(.ok, json)
    }
}

extension Passkeys {
    /// What refuses a sign-in, in GoTrue's order: an unconfirmed address, an unconfirmed
    /// number, a ban. Nil when there is no such user.
    static func signInState(_ connection: Connection, userID: String) throws -> (emailUnconfirmed: Bool, phoneUnconfirmed: Bool, banned: Bool)? {
        let found = try connection.query(
            """
            SELECT (coalesce(email, '') <> '' AND email_confirmed_at IS NULL)::text, (coalesce(phone, '') <> '' AND phone_confirmed_at IS NULL)::text,
                coalesce(banned_until > now(), false)::text
            FROM auth.users WHERE id = \(userID)::uuid
            """)
        guard found.count == 1 else { return nil }
        return (found[0, 0] == "true", found[0, 1] == "true", found[0, 2] == "true")
    }
}
