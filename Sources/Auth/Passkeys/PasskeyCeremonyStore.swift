import Identity
import Postgres

/// `auth.webauthn_challenges` and the credential rows the ceremonies read and write.
enum PasskeyChallenges {
    /// A new challenge of `type` (`registration`, `authentication`) answerable for `expiry`
    /// seconds; its id and expiry (seconds since 1970). Up to 100 expired challenges are cleared.
    static func create(
        _ connection: Connection, userID: String?, type: String, sessionDataJSON: String, expiry: Double
    ) throws -> (
        id: String, expiresAt: Int
    ) {
        let results = try connection.pipeline([
            """
            DELETE FROM auth.webauthn_challenges WHERE id IN (
                SELECT id FROM auth.webauthn_challenges WHERE expires_at < now() - interval '1 minute' LIMIT 100 FOR UPDATE SKIP LOCKED)
            """,
            """
            INSERT INTO auth.webauthn_challenges (user_id, challenge_type, session_data, expires_at)
            VALUES (\(userID)::uuid, \(type), \(sessionDataJSON)::jsonb, now() + make_interval(secs => \(expiry)::double precision))
            RETURNING id::text, floor(extract(epoch FROM expires_at))::bigint::text
            """
        ])
        return (results[1][0, 0] ?? "", Int(results[1][0, 1] ?? "") ?? 0)
    }

    /// The challenge removed (a challenge is answered once, whatever the answer): its session
    /// data and whether it had expired; nil when there is none of this type for this user.
    static func consume(_ connection: Connection, id: String, type: String, userID: String?) throws -> (sessionDataJSON: String, expired: Bool)? {
        let found = try connection.query(
            """
            DELETE FROM auth.webauthn_challenges WHERE id = \(id)::uuid AND challenge_type = \(type)
                AND user_id IS NOT DISTINCT FROM \(userID)::uuid
            RETURNING session_data::text, (expires_at <= now())::text
            """)
        guard found.count == 1 else { return nil }
        return (found[0, 0] ?? "{}", found[0, 1] == "true")
    }
}

extension Passkeys {
    /// The user's passkey credential ids, oldest first.
    static func credentialIDs(_ connection: Connection, userID: String) throws -> [[UInt8]] {
        let found = try connection.query(
            "SELECT encode(credential_id, 'hex') FROM auth.webauthn_credentials WHERE user_id = \(userID)::uuid ORDER BY created_at, id")
        return (0..<found.count).map { hexBytes(found[$0, 0] ?? "") }
    }

    /// The user's address, number and metadata `name`, for the credential's user entity; nil
    /// when there is no such user.
    static func userEntity(_ connection: Connection, userID: String) throws -> (email: String, phone: String, name: String)? {
        let found = try connection.query(
            "SELECT coalesce(email, ''), coalesce(phone, ''), coalesce(raw_user_meta_data->>'name', '') FROM auth.users WHERE id = \(userID)::uuid")
        guard found.count == 1 else { return nil }
        return (found[0, 0] ?? "", found[0, 1] ?? "", found[0, 2] ?? "")
    }

    struct NewCredential {
        var userID: String
        var credentialID: [UInt8]
        var publicKeyCOSE: [UInt8]
        var attestationType: String
        var aaguid: String
        var signCount: UInt32
        var transportsJSON: String
        var backupEligible: Bool
        var backedUp: Bool
        var friendlyName: String
    }

    /// The credential stored; its JSON as registration answers it (`id`, `friendly_name`,
    /// `created_at`); nil when the credential id is registered already.
    static func insert(_ connection: Connection, _ credential: NewCredential) throws -> String? {
        try connection.query(
            """
            INSERT INTO auth.webauthn_credentials (user_id, credential_id, public_key, attestation_type, aaguid, sign_count, transports,
                backup_eligible, backed_up, friendly_name)
            VALUES (\(credential.userID)::uuid, decode(\(Crypto.hex(credential.credentialID)), 'hex'), decode(\(Crypto.hex(credential.publicKeyCOSE)), 'hex'),
                \(credential.attestationType), \(credential.aaguid)::uuid, \(Int64(credential.signCount)), \(credential.transportsJSON)::jsonb,
                \(credential.backupEligible), \(credential.backedUp), \(credential.friendlyName))
            ON CONFLICT (credential_id) DO NOTHING
            RETURNING auth.passkey_json(webauthn_credentials)::text
            """
        ).scalar
    }

    struct Stored {
        var id: String
        var publicKeyCOSE: [UInt8]
        var signCount: UInt32
    }

    /// The user's credential with this credential id, locked for the transaction.
    static func lockCredential(_ connection: Connection, credentialID: [UInt8], userID: String) throws -> Stored? {
        let found = try connection.query(
            """
            SELECT id::text, encode(public_key, 'hex'), sign_count::text FROM auth.webauthn_credentials
            WHERE credential_id = decode(\(Crypto.hex(credentialID)), 'hex') AND user_id = \(userID)::uuid FOR UPDATE
            """)
        guard found.count == 1 else { return nil }
        return Stored(id: found[0, 0] ?? "", publicKeyCOSE: hexBytes(found[0, 1] ?? ""), signCount: UInt32(clamping: Int64(found[0, 2] ?? "") ?? 0))
    }

    /// A use recorded: the new counter and `last_used_at`.
    static func recordUse(_ connection: Connection, id: String, signCount: UInt32) throws {
        _ = try connection.query(
            "UPDATE auth.webauthn_credentials SET sign_count = \(Int64(signCount)), last_used_at = now(), updated_at = now() WHERE id = \(id)::uuid")
    }

    static func hexBytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            func value(_ c: UInt8) -> UInt8 { c >= 97 ? c - 87 : c >= 65 ? c - 55 : c - 48 }
            bytes.append(value(high) << 4 | value(low))
        }
        return bytes
    }
}
