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
        membership: OwnershipPolicy.Membership(schema: "public", table: "family_members", familyColumn: "family_id",
                                               userColumn: "user_id", roleColumn: "role", ownerRole: "owner"))
}
