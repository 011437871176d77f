import Foundation
import HTTP
import Identity
import Postgres

/// `/passkeys/registration/…` and `/passkeys/authentication/…`: GoTrue's WebAuthn ceremonies.
/// Options store a challenge (32 random bytes) in `auth.webauthn_challenges`; a verify request
/// consumes it first, whatever follows, so a challenge is answered once.
extension AuthService {
    /// GoTrue's `requirePasskeyManagementAAL`: with a verified factor, only an `aal2` session
    /// registers or removes a passkey.
    func requirePasskeyManagementAAL(_ connection: Connection, _ caller: SignedIn) throws {
        if try Passkeys.hasVerifiedFactor(connection, userID: caller.userID),
            try caller.sessionID.map({ try Assurance.sessionLevel(connection, sessionID: $0) }) != "aal2"
        {
            throw AuthError.insufficientAAL("AAL2 session is required to manage passkeys when MFA is enabled", status: .forbidden)
        }
    }

    /// The algorithms a credential may use (COSE: ES256, RS256).
    static let passkeyAlgorithms = [-7, -257]

    func passkeyRegistrationOptions(_ caller: SignedIn) throws -> HTTPResponse {
        guard !caller.isAnonymous else { throw AuthError.anonymousNotAllowed }
        let passkey = config.passkey
        let challenge = Base64URL.encode(Crypto.randomBytes(32))
        let userHandle = Base64URL.encode(Array(caller.userID.utf8))
        return try pool.withTransaction { connection in
            try requirePasskeyManagementAAL(connection, caller)
            guard let user = try Passkeys.userEntity(connection, userID: caller.userID) else { throw AuthError.userFromTokenNotFound }
            let existing = try Passkeys.credentialIDs(connection, userID: caller.userID)
            guard existing.count < passkey.maxPerUser else { throw AuthError.passkey(.tooMany) }
            let name = user.email.isEmpty ? user.phone : user.email
            let session: [String: Any] = [
                "challenge": challenge, "rpId": passkey.rpID, "user_id": userHandle, "userVerification": "preferred",
                "credParams": Self.passkeyAlgorithms.map { ["type": "public-key", "alg": $0] }
            ]
            let stored = try PasskeyChallenges.create(
                connection, userID: caller.userID, type: "registration", sessionDataJSON: JWT.serialize(session), expiry: passkey.challengeExpiry)
            var options: [String: Any] = [
                "rp": ["name": passkey.rpDisplayName, "id": passkey.rpID],
                "user": ["name": name, "displayName": user.name.isEmpty ? name : user.name, "id": userHandle],
                "challenge": challenge, "pubKeyCredParams": Self.passkeyAlgorithms.map { ["type": "public-key", "alg": $0] },
                "timeout": Int(passkey.challengeExpiry * 1000),
                "authenticatorSelection": ["requireResidentKey": true, "residentKey": "required", "userVerification": "preferred"],
                "attestation": "none"
            ]
            if !existing.isEmpty { options["excludeCredentials"] = existing.map { ["type": "public-key", "id": Base64URL.encode($0)] } }
            return .json(.ok, JWT.serialize(["challenge_id": stored.id, "options": options, "expires_at": stored.expiresAt]))
        }
    }

    /// The challenge of a verify request consumed: its stored challenge (base64url).
    func consumePasskeyChallenge(_ connection: Connection, _ answer: AuthRequest.PasskeyAnswer, type: String, userID: String?) throws -> String {
        guard let found = try PasskeyChallenges.consume(connection, id: answer.challengeID, type: type, userID: userID) else {
            throw AuthError.passkey(.challengeNotFound)
        }
        guard !found.expired else { throw AuthError.passkey(.challengeExpired) }
        let session = (try? JSONSerialization.jsonObject(with: Data(found.sessionDataJSON.utf8))) as? [String: Any]
        guard let challenge = session?["challenge"] as? String else { throw AuthError.passkey(.challengeNotFound) }
        return challenge
    }

    func passkeyRegistrationVerify(_ caller: SignedIn, _ answer: AuthRequest.PasskeyAnswer) throws -> HTTPResponse {
        guard !caller.isAnonymous else { throw AuthError.anonymousNotAllowed }
        let passkey = config.passkey
        // The challenge is consumed in its own transaction: a refused answer still used it up.
        let challenge = try pool.withTransaction { connection -> String in
            try requirePasskeyManagementAAL(connection, caller)
            return try consumePasskeyChallenge(connection, answer, type: "registration", userID: caller.userID)
        }
        let credential: WebAuthn.Credential
        do { credential = try WebAuthn.Credential(json: answer.credentialJSON, assertion: false) } catch { throw AuthError.passkey(.invalidCredential) }
        let registration: WebAuthn.Registration
        do throws(WebAuthn.Refusal) {
            try WebAuthn.checkClientData(credential.clientDataJSON, type: "webauthn.create", challenge: challenge, origins: passkey.rpOrigins)
            registration = try WebAuthn.verifyAttestation(
                credential.attestationObject, clientDataJSON: credential.clientDataJSON, rawID: credential.rawID, rpID: passkey.rpID)
        } catch {
            logger.info("passkey registration refused", metadata: ["reason": "\(error.reason)"])
            throw AuthError.passkey(.verificationFailed)
        }
        let aaguid = registration.credential.aaguid
        let row = Passkeys.NewCredential(
            userID: caller.userID, credentialID: registration.credential.id, publicKeyCOSE: registration.credential.publicKeyCOSE,
            attestationType: registration.format, aaguid: UUID(uuid: Self.uuidBytes(aaguid)).uuidString.lowercased(), signCount: registration.data.signCount,
            transportsJSON: JWT.serialize(credential.transports), backupEligible: registration.data.backupEligible, backedUp: registration.data.backedUp,
            friendlyName: PasskeyNames.name(aaguid: aaguid))
        let json = try pool.withTransaction { connection -> String in
            _ = try connection.query("SELECT 1 FROM auth.users WHERE id = \(caller.userID)::uuid FOR UPDATE")
            guard try Passkeys.credentialIDs(connection, userID: caller.userID).count < passkey.maxPerUser else { throw AuthError.passkey(.tooMany) }
            guard let json = try Passkeys.insert(connection, row) else { throw AuthError.passkey(.credentialExists) }
            return json
        }
        return .json(.ok, json)
    }

    static func uuidBytes(_ bytes: [UInt8]) -> uuid_t {
        let b = bytes.count == 16 ? bytes : [UInt8](repeating: 0, count: 16)
        return (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
    }
}
