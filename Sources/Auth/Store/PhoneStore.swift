import Postgres

/// The user row the phone flows read, locked for the transaction.
struct PhoneUserRow {
    var id: String
    /// The confirmed or unconfirmed number (digits, no `+`); empty when none.
    var phone: String
    var phoneConfirmed: Bool
    /// The number a phone change waits to confirm; nil when none.
    var pendingPhone: String?
    /// Seconds since the confirmation code and the phone change code were last sent (nil: never).
    var confirmationAgo: Double?
    var phoneChangeAgo: Double?
}

/// `auth.users` as the phone flows use it: by number, created with a phone identity, the number
/// confirmed or changed.
extension Users {
    /// The user with this number (or this id) that is not deleted, locked for the transaction.
    static func lockForPhone(_ connection: Connection, phone: String? = nil, id: String? = nil) throws -> PhoneUserRow? {
        let found = try connection.query(
            """
            SELECT id::text, coalesce(phone, ''), phone_confirmed_at IS NOT NULL, phone_change,
                   extract(epoch FROM now() - confirmation_sent_at), extract(epoch FROM now() - phone_change_sent_at)
            FROM auth.users WHERE (phone = \(phone) OR id = \(id)::uuid) AND deleted_at IS NULL
            FOR UPDATE
            """)
        guard found.count == 1, let userID = found[0, 0] else { return nil }
        return PhoneUserRow(
            id: userID, phone: found[0, 1] ?? "", phoneConfirmed: found[0].bool(2) == true,
            pendingPhone: found[0, 3].flatMap { $0.isEmpty ? nil : $0 }, confirmationAgo: found[0].double(4), phoneChangeAgo: found[0].double(5))
    }

    /// The user holding this number, from the user's side of a phone change: whether another
    /// (not deleted) user than `id` has it.
    static func phoneTaken(_ connection: Connection, phone: String, byOtherThan id: String) throws -> Bool {
        try !connection.query("SELECT 1 FROM auth.users WHERE phone = \(phone) AND id <> \(id)::uuid AND deleted_at IS NULL").isEmpty
    }

    /// A phone user (a password, or none for `/otp`) and its unverified phone identity, its
    /// number confirmed at once when `confirmed` (pipelined).
    static func createPhoneUser(
        _ connection: Connection, id: String, phone: String, passwordHash: String?, confirmed: Bool, metadataJSON: String
    ) throws {
        _ = try connection.pipeline([
            """
            INSERT INTO auth.users (id, phone, encrypted_password, phone_confirmed_at, raw_app_meta_data, raw_user_meta_data)
            VALUES (\(id)::uuid, \(phone), \(passwordHash), CASE WHEN \(confirmed)::boolean THEN now() END,
                    '{"provider":"phone","providers":["phone"]}'::jsonb, \(metadataJSON)::jsonb)
            """,
            """
            INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
            VALUES (\(id), \(id)::uuid, jsonb_build_object('sub', \(id)::text, 'phone', \(phone)::text,
                    'email_verified', false, 'phone_verified', \(confirmed)::boolean), 'phone')
            """
        ])
    }

    /// What a password sign-in by number checks.
    static func passwordSignIn(_ connection: Connection, phone: String) throws -> PasswordSignIn? {
        let found = try connection.query(
            """
            SELECT id::text, encrypted_password, phone_confirmed_at IS NOT NULL, coalesce(banned_until > now(), false) FROM auth.users
            WHERE phone = \(phone) AND deleted_at IS NULL
            """)
        guard found.count == 1, let id = found[0, 0] else { return nil }
        return PasswordSignIn(id: id, passwordHash: found[0, 1], confirmed: found[0].bool(2) == true, banned: found[0].bool(3) == true)
    }

    /// A confirmation code spent: the number confirmed, the phone identity verified, and every
    /// outstanding token of the user deleted (pipelined).
    static func confirmPhone(_ connection: Connection, id: String) throws {
        _ = try connection.pipeline([
            "UPDATE auth.users SET phone_confirmed_at = coalesce(phone_confirmed_at, now()), updated_at = now() WHERE id = \(id)::uuid",
            """
            UPDATE auth.identities SET identity_data = identity_data || '{"phone_verified":true}'::jsonb, updated_at = now()
            WHERE user_id = \(id)::uuid AND provider = 'phone'
            """,
            OneTimeTokens.deleteAllStatement(userID: id)
        ])
    }

    /// The stamp of the last confirmation code sent.
    static func stampPhoneConfirmationSent(_ connection: Connection, id: String) throws {
        _ = try connection.query("UPDATE auth.users SET confirmation_sent_at = now() WHERE id = \(id)::uuid")
    }

    /// A phone change waiting for the code sent to `newPhone`.
    static func startPhoneChange(_ connection: Connection, id: String, newPhone: String) throws {
        _ = try connection.query(
            "UPDATE auth.users SET phone_change = \(newPhone), phone_change_sent_at = now(), updated_at = now() WHERE id = \(id)::uuid")
    }

    /// A phone change's code spent: the new number confirmed in place of the old one, the phone
    /// identity created or updated, `app_metadata.providers` recomputed, no token left (pipelined).
    static func completePhoneChange(_ connection: Connection, id: String, newPhone: String) throws {
        _ = try connection.pipeline([
            """
            UPDATE auth.users SET phone = \(newPhone), phone_confirmed_at = now(), phone_change = '', phone_change_sent_at = NULL,
                is_anonymous = false, updated_at = now()
            WHERE id = \(id)::uuid
            """,
            """
            INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
            VALUES (\(id), \(id)::uuid, jsonb_build_object('sub', \(id)::text, 'phone', \(newPhone)::text,
                    'email_verified', false, 'phone_verified', true), 'phone')
            ON CONFLICT (provider_id, provider) DO UPDATE
                SET identity_data = auth.identities.identity_data || jsonb_build_object('phone', \(newPhone)::text, 'phone_verified', true),
                    updated_at = now()
            """,
            OneTimeTokens.deleteAllStatement(userID: id)
        ])
        try updateProviders(connection, id: id)
    }
}
