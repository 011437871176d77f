import Foundation
import Postgres

/// `auth.users` (with the e-mail identities created beside a user): the statements the handlers
/// compose, each on the caller's connection (so inside its transaction when it has one).
enum Users {
    /// The app metadata of an e-mail user.
    static let emailAppMetadata = #"{"provider":"email","providers":["email"]}"#

    /// The user as GoTrue answers it (`auth.user_json`); nil when there is no such user.
    static func json(_ connection: Connection, id: String) throws -> String? {
        try connection.query(jsonStatement(id: id)).scalar
    }

    static func jsonStatement(id: String) -> SQL {
        "SELECT auth.user_json(u)::text FROM auth.users u WHERE u.id = \(id)::uuid"
    }

    /// One page of users, newest first (as GoTrue lists them), as a JSON array, and the number
    /// of users (pipelined).
    static func page(_ connection: Connection, page: Int, perPage: Int) throws -> (json: String, total: Int) {
        let results = try connection.pipeline([
            """
            SELECT coalesce(jsonb_agg(auth.user_json(u) ORDER BY u.created_at DESC, u.id DESC), '[]'::jsonb)::text
            FROM (SELECT * FROM auth.users ORDER BY created_at DESC, id DESC LIMIT \(perPage) OFFSET \((page - 1) * perPage)) u
            """,
            "SELECT count(*) FROM auth.users"
        ])
        return (results[0].scalar ?? "[]", results[1].first?.int(0) ?? 0)
    }

    static func delete(_ connection: Connection, id: String) throws {
        _ = try connection.query("DELETE FROM auth.users WHERE id = \(id)::uuid")
    }

    // MARK: reads

    /// What a password sign-in checks.
    struct PasswordSignIn {
        var id: String
        var passwordHash: String?
        var confirmed: Bool
        /// `banned_until` is in the future.
        var banned: Bool
    }

    /// The user with this (lower-cased) address that is not deleted; nil when none.
    static func passwordSignIn(_ connection: Connection, email: String) throws -> PasswordSignIn? {
        let found = try connection.query(
            """
            SELECT id::text, encrypted_password, email_confirmed_at IS NOT NULL, coalesce(banned_until > now(), false) FROM auth.users
            WHERE lower(email) = \(email) AND deleted_at IS NULL
            """)
        guard found.count == 1, let id = found[0, 0] else { return nil }
        return PasswordSignIn(id: id, passwordHash: found[0, 1], confirmed: found[0].bool(2) == true, banned: found[0].bool(3) == true)
    }

    /// Whether the user's `banned_until` is in the future.
    static func isBanned(_ connection: Connection, id: String) throws -> Bool {
        try connection.query("SELECT coalesce(banned_until > now(), false) FROM auth.users WHERE id = \(id)::uuid").first?.bool(0) == true
    }

    /// Whether another user than `id` has this (lower-cased) address.
    static func emailTaken(_ connection: Connection, email: String, byOtherThan id: String) throws -> Bool {
        try !connection.query("SELECT 1 FROM auth.users WHERE lower(email) = \(email) AND id <> \(id)::uuid").isEmpty
    }

    /// The user's anonymity and address, locked for the transaction; nil when there is no such user.
    static func lockForUpdate(_ connection: Connection, id: String) throws -> (isAnonymous: Bool, email: String?)? {
        let current = try connection.query("SELECT is_anonymous, email FROM auth.users WHERE id = \(id)::uuid FOR UPDATE")
        guard current.count == 1 else { return nil }
        return (current[0].bool(0) == true, current[0, 1])
    }

    /// The user row the mail flows read (by address or by id), locked for the transaction.
    static func lockForMail(_ connection: Connection, email: String? = nil, id: String? = nil) throws -> MailUserRow? {
        let found = try connection.query(
            """
            SELECT id::text, coalesce(email, ''), raw_user_meta_data::text, email_confirmed_at IS NOT NULL, is_anonymous, email_change,
                   extract(epoch FROM now() - confirmation_sent_at), extract(epoch FROM now() - recovery_sent_at),
                   extract(epoch FROM now() - email_change_sent_at), extract(epoch FROM now() - reauthentication_sent_at)
            FROM auth.users
            WHERE (lower(email) = \(email) OR id = \(id)::uuid) AND deleted_at IS NULL
            FOR UPDATE
            """)
        guard found.count == 1, let userID = found[0, 0] else { return nil }
        return MailUserRow(
            user: MailUser(id: userID, email: found[0, 1] ?? "", metadataJSON: found[0, 2] ?? "{}"),
            confirmed: found[0].bool(3) == true, isAnonymous: found[0].bool(4) == true, pendingEmail: found[0, 5].flatMap { $0.isEmpty ? nil : $0 },
            confirmationAgo: found[0].double(6), recoveryAgo: found[0].double(7),
            emailChangeAgo: found[0].double(8), reauthenticationAgo: found[0].double(9))
    }

    /// The pending e-mail change and its confirmation status (`0`: none confirmed yet, `1`: one
    /// of two), locked for the transaction; nil when there is no such user.
    static func lockEmailChange(_ connection: Connection, id: String) throws -> (newEmail: String?, confirmStatus: String?)? {
        let user = try connection.query("SELECT email_change, email_change_confirm_status FROM auth.users WHERE id = \(id)::uuid FOR UPDATE")
        guard user.count == 1 else { return nil }
        return (user[0, 0], user[0, 1])
    }

    /// The id of the user (not anonymous) with this verified address, locked; nil when none.
    static func lockLinkable(_ connection: Connection, email: String) throws -> String? {
        try connection.query(
            """
            SELECT id::text FROM auth.users WHERE lower(email) = \(email) AND NOT is_anonymous FOR UPDATE
            """
        ).scalar
    }

    // MARK: updates

    /// The metadata columns: the user's own, and the app's (set by the admin API only).
    enum MetadataColumn: String {
        case user = "raw_user_meta_data"
        case app = "raw_app_meta_data"
    }

    /// The metadata merged key by key with `metadataJSON` (a null value deletes the key).
    static func mergeMetadata(_ connection: Connection, id: String, metadataJSON: String, column: MetadataColumn = .user) throws {
        _ = try connection.query(
            """
            UPDATE auth.users SET \(ident: column.rawValue) = coalesce((
                SELECT jsonb_object_agg(key, value) FROM jsonb_each(\(ident: column.rawValue) || \(metadataJSON)::jsonb)
                WHERE value <> 'null'::jsonb), '{}'::jsonb), updated_at = now()
            WHERE id = \(id)::uuid
            """)
    }

    /// `ban_duration`: `banned_until` that far from now, or cleared.
    static func ban(_ connection: Connection, id: String, _ ban: AuthRequest.BanDuration) throws {
        let seconds: Double? = if case .seconds(let value) = ban { value } else { nil }
        _ = try connection.query(
            """
            UPDATE auth.users SET banned_until = now() + make_interval(secs => \(seconds)::double precision), updated_at = now()
            WHERE id = \(id)::uuid
            """)
    }

    /// The admin API's `email_confirm`: the address confirmed, `user_metadata.email_verified`
    /// and the e-mail identity verified (GoTrue's `Confirm`).
    static func confirmByAdmin(_ connection: Connection, id: String) throws {
        _ = try connection.pipeline([
            """
            UPDATE auth.users SET email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now(),
                raw_user_meta_data = raw_user_meta_data || '{"email_verified":true}'::jsonb
            WHERE id = \(id)::uuid
            """,
            """
            UPDATE auth.identities SET identity_data = identity_data || '{"email_verified":true}'::jsonb, updated_at = now()
            WHERE user_id = \(id)::uuid AND provider = 'email'
            """
        ])
    }

    static func stampInvited(_ connection: Connection, id: String) throws {
        _ = try connection.query("UPDATE auth.users SET invited_at = now() WHERE id = \(id)::uuid")
    }

    /// A new address confirmed at once (an anonymous user becomes an e-mail user) and its
    /// identity (pipelined).
    static func setConfirmedEmail(_ connection: Connection, id: String, email: String) throws {
        _ = try connection.pipeline([
            """
            UPDATE auth.users SET email = \(email), email_confirmed_at = now(), updated_at = now(), is_anonymous = false,
                raw_app_meta_data = CASE WHEN is_anonymous THEN '{"provider":"email","providers":["email"]}'::jsonb ELSE raw_app_meta_data END
            WHERE id = \(id)::uuid
            """,
            upsertEmailIdentity(userID: id, email: email)
        ])
    }

    /// The e-mail identity of `userID`, verified, created or replaced.
    static func upsertEmailIdentity(userID: String, email: String) -> SQL {
        """
        INSERT INTO auth.identities (provider_id, user_id, identity_data, provider)
        VALUES (\(userID), \(userID)::uuid, jsonb_build_object('sub', \(userID)::text, 'email', \(email)::text, 'email_verified', true, 'phone_verified', false), 'email')
        ON CONFLICT (provider_id, provider) DO UPDATE SET identity_data = EXCLUDED.identity_data, updated_at = now()
        """
    }

    static func setPassword(_ connection: Connection, id: String, hash: String) throws {
        _ = try connection.query("UPDATE auth.users SET encrypted_password = \(hash), updated_at = now() WHERE id = \(id)::uuid")
    }

    /// The columns that stamp when each kind of mail was last sent.
    enum SentAt: String {
        case confirmation = "confirmation_sent_at"
        case recovery = "recovery_sent_at"
        case reauthentication = "reauthentication_sent_at"
    }

    static func stampSent(_ connection: Connection, id: String, _ column: SentAt) throws {
        _ = try connection.query("UPDATE auth.users SET \(ident: column.rawValue) = now() WHERE id = \(id)::uuid")
    }

    /// An e-mail change waiting for its confirmations.
    static func startEmailChange(_ connection: Connection, id: String, newEmail: String) throws {
        _ = try connection.query(
            """
            UPDATE auth.users SET email_change = \(newEmail), email_change_sent_at = now(), email_change_confirm_status = 0, updated_at = now()
            WHERE id = \(id)::uuid
            """)
    }

    /// A mailed token spent: the address confirmed, the e-mail identity verified, and every
    /// outstanding token of the user deleted (pipelined). With `droppingUnprovenPassword`, a
    /// password set while the address was unconfirmed is removed; returns whether one was.
    static func confirmEmail(_ connection: Connection, id: String, droppingUnprovenPassword: Bool = false) throws -> Bool {
        let results = try connection.pipeline([
            """
            WITH before AS (
                SELECT id, email_confirmed_at IS NULL AND coalesce(encrypted_password, '') <> '' AS unproven
                FROM auth.users WHERE id = \(id)::uuid FOR UPDATE
            )
            UPDATE auth.users u SET email_confirmed_at = coalesce(u.email_confirmed_at, now()), updated_at = now(),
                encrypted_password = CASE WHEN \(droppingUnprovenPassword)::boolean AND before.unproven THEN '' ELSE u.encrypted_password END
            FROM before WHERE u.id = before.id
            RETURNING \(droppingUnprovenPassword)::boolean AND before.unproven
            """,
            """
            UPDATE auth.identities SET identity_data = identity_data || '{"email_verified":true}'::jsonb, updated_at = now()
            WHERE user_id = \(id)::uuid AND provider = 'email'
            """,
            OneTimeTokens.deleteAllStatement(userID: id)
        ])
        return results[0].first?.bool(0) == true
    }

    static func confirmEmailChangeHalfway(_ connection: Connection, id: String, tokenID: String) throws {
        _ = try connection.pipeline([
            OneTimeTokens.deleteStatement(id: tokenID),
            "UPDATE auth.users SET email_change_confirm_status = 1, updated_at = now() WHERE id = \(id)::uuid"
        ])
    }

    /// The pending address becomes the user's (confirmed), its identity replaced, every
    /// outstanding token deleted (pipelined).
    static func completeEmailChange(_ connection: Connection, id: String, newEmail: String) throws {
        _ = try connection.pipeline([
            """
            UPDATE auth.users SET email = \(newEmail), email_change = NULL, email_change_confirm_status = 0,
                email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now(), is_anonymous = false,
                raw_app_meta_data = CASE WHEN is_anonymous THEN '{"provider":"email","providers":["email"]}'::jsonb ELSE raw_app_meta_data END
            WHERE id = \(id)::uuid
            """,
            upsertEmailIdentity(userID: id, email: newEmail),
            OneTimeTokens.deleteAllStatement(userID: id)
        ])
    }

    /// A linked identity's e-mail becomes the user's: confirmed (and the user no longer
    /// anonymous) when its provider verified it.
    static func takeLinkedEmail(_ connection: Connection, id: String, email: String, verified: Bool) throws {
        _ = try connection.query(
            """
            UPDATE auth.users SET email = \(email), updated_at = now(),
                email_confirmed_at = CASE WHEN \(verified)::boolean THEN coalesce(email_confirmed_at, now()) ELSE email_confirmed_at END,
                is_anonymous = is_anonymous AND NOT \(verified)::boolean
            WHERE id = \(id)::uuid
            """)
    }

    static func endAnonymity(_ connection: Connection, id: String) throws {
        _ = try connection.query("UPDATE auth.users SET is_anonymous = false, updated_at = now() WHERE id = \(id)::uuid")
    }

    /// `app_metadata.providers` recomputed from the user's identities (oldest first, each once)
    /// and `provider` set to the first, other keys kept (GoTrue's `UpdateAppMetaDataProviders`).
    static func updateProviders(_ connection: Connection, id: String) throws {
        _ = try connection.query(
            """
            WITH p AS (
                SELECT coalesce(jsonb_agg(provider ORDER BY first_seen), '[]'::jsonb) AS providers
                FROM (SELECT provider, min(created_at) AS first_seen FROM auth.identities WHERE user_id = \(id)::uuid GROUP BY provider) i
            )
            UPDATE auth.users SET raw_app_meta_data = raw_app_meta_data || jsonb_build_object('providers', p.providers)
                || CASE WHEN jsonb_array_length(p.providers) > 0 THEN jsonb_build_object('provider', p.providers -> 0) ELSE '{}'::jsonb END,
                updated_at = now()
            FROM p WHERE id = \(id)::uuid
            """)
    }

    /// The user's e-mail replaced after an unlink (nil: none), every outstanding mailed token
    /// deleted; unless `confirmed`, the address is unconfirmed and `user_metadata.email_verified`
    /// false (pipelined).
    static func replaceEmail(_ connection: Connection, id: String, email: String?, confirmed: Bool) throws {
        _ = try connection.pipeline([
            """
            UPDATE auth.users SET email = \(email), updated_at = now(),
                email_confirmed_at = CASE WHEN \(confirmed)::boolean THEN email_confirmed_at END,
                raw_user_meta_data = CASE WHEN \(confirmed)::boolean THEN raw_user_meta_data
                                          ELSE raw_user_meta_data || '{"email_verified":false}'::jsonb END
            WHERE id = \(id)::uuid
            """,
            OneTimeTokens.deleteAllStatement(userID: id)
        ])
    }

    /// `provider` added to the user's `app_metadata.providers` and the address confirmed (an
    /// id_token sign-in linked to this account by its verified e-mail).
    static func linkProvider(_ connection: Connection, id: String, provider: String) throws {
        _ = try connection.query(
            """
            UPDATE auth.users SET raw_app_meta_data = jsonb_set(raw_app_meta_data, '{providers}',
                (SELECT coalesce(jsonb_agg(DISTINCT p), '[]'::jsonb) FROM jsonb_array_elements_text(
                    coalesce(raw_app_meta_data -> 'providers', '[]'::jsonb) || to_jsonb(\(provider)::text)) p)),
                email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now()
            WHERE id = \(id)::uuid
            """)
    }
}

/// The user a mail is about.
struct MailUser {
    var id: String
    var email: String
    var metadataJSON: String
}

/// The user row the mail flows read, locked for the transaction.
struct MailUserRow {
    var user: MailUser
    var confirmed: Bool
    var isAnonymous: Bool
    var pendingEmail: String?
    /// Seconds since each kind of mail was last sent (nil: never).
    var confirmationAgo: Double?
    var recoveryAgo: Double?
    var emailChangeAgo: Double?
    var reauthenticationAgo: Double?
}
