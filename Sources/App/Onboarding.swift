import Foundation
import Postgres
import REST

/// The product's domain: the one place in Swift that names its tables. REST and Realtime take
/// the ownership rule from here; routes and metric labels follow it and the schema cache.
public enum Onboarding {
    /// Profiles are private to their user; children are shared with the user's family; family
    /// rows are read by their members and change only through the family functions. RLS
    /// enforces the same rules underneath (migrations/).
    public static let ownership = OwnershipPolicy(
        ownerColumns: ["user_profiles": "id"],
        familySharedColumns: ["children": "user_id"],
        familyColumns: ["families": "id", "family_members": "family_id"],
        membership: OwnershipPolicy.Membership(
            schema: "public", table: "family_members", familyColumn: "family_id",
            userColumn: "user_id", roleColumn: "role", ownerRole: "owner"))
}

/// The dashboard's user pages: the product's tables beside GoTrue's.
extension Onboarding {
    /// Users whose e-mail contains `text` (case-insensitively) or whose id is `text`; the newest
    /// 50 when `text` is empty.
    static func userSearch(_ text: String) -> SQL {
        let id = UUID(uuidString: text)?.uuidString.lowercased()
        let pattern =
            "%"
            + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
        return """
            SELECT coalesce(json_agg(json_build_object(
                       'id', u.id, 'email', u.email, 'created_at', u.created_at, 'last_sign_in_at', u.last_sign_in_at,
                       'is_anonymous', u.is_anonymous, 'provider', u.raw_app_meta_data ->> 'provider',
                       'onboarding_state', p.onboarding_state) ORDER BY u.created_at DESC), '[]')::text
              FROM (SELECT * FROM auth.users
                     WHERE \(text)::text = '' OR id = \(id)::uuid OR email ILIKE \(pattern)::text
                     ORDER BY created_at DESC LIMIT 50) u
              LEFT JOIN public.user_profiles p ON p.id = u.id
            """
    }

    /// One user: the account, the onboarding profile, children, sign-in providers and sessions;
    /// NULL when there is no such user.
    static func userDetail(_ id: String) -> SQL {
        """
        SELECT json_build_object(
                 'user', json_build_object('id', u.id, 'email', u.email, 'phone', u.phone, 'created_at', u.created_at,
                                           'updated_at', u.updated_at, 'last_sign_in_at', u.last_sign_in_at,
                                           'email_confirmed_at', u.email_confirmed_at, 'is_anonymous', u.is_anonymous,
                                           'banned_until', u.banned_until, 'app_metadata', u.raw_app_meta_data,
                                           'user_metadata', u.raw_user_meta_data),
                 'profile', (SELECT to_json(p) FROM public.user_profiles p WHERE p.id = u.id),
                 'children', (SELECT coalesce(json_agg(c ORDER BY c.created_at), '[]') FROM public.children c WHERE c.user_id = u.id),
                 'providers', (SELECT coalesce(json_agg(json_build_object('provider', i.provider, 'email', i.email,
                                                                          'created_at', i.created_at, 'last_sign_in_at', i.last_sign_in_at)
                                                        ORDER BY i.created_at), '[]')
                                 FROM auth.identities i WHERE i.user_id = u.id),
                 'sessions', (SELECT coalesce(json_agg(json_build_object('id', s.id, 'created_at', s.created_at, 'refreshed_at', s.refreshed_at,
                                                                         'not_after', s.not_after, 'user_agent', s.user_agent, 'ip', s.ip::text)
                                                       ORDER BY s.created_at DESC), '[]')
                                FROM auth.sessions s WHERE s.user_id = u.id))::text
          FROM auth.users u WHERE u.id = \(id)::uuid
        """
    }
}
