import Foundation
import Identity

/// Which tables belong to one user, and through which column: data, not code. The application
/// supplies it (REST and Realtime name no table of their own), so a new owned table is one more
/// entry there.
public struct OwnershipPolicy: Sendable, Equatable {
    /// Table → owner column (a uuid holding `auth.uid()` of the row's owner): private rows.
    public var ownerColumns: [String: String]
    /// Table → owner column, for rows shared with the owner's family (see `membership`): members
    /// read and update them; deleting stays with the owner and the family's owner.
    public var familySharedColumns: [String: String]
    /// Family tables → the column holding the family's id: members read their own family only;
    /// rows are created and deleted through the family RPCs, never directly.
    public var familyColumns: [String: String]
    /// Where family membership is recorded; without it the family entries are not used and
    /// shared rows are private to their owner.
    public var membership: Membership?

    /// A table of (family, user, role) rows: one family per user.
    public struct Membership: Sendable, Equatable {
        public var schema: String
        public var table: String
        public var familyColumn: String
        public var userColumn: String
        public var roleColumn: String
        /// The role value of a family's owner.
        public var ownerRole: String

        public init(schema: String, table: String, familyColumn: String, userColumn: String, roleColumn: String, ownerRole: String) {
            self.schema = schema
            self.table = table
            self.familyColumn = familyColumn
            self.userColumn = userColumn
            self.roleColumn = roleColumn
            self.ownerRole = ownerRole
        }
    }

    public init(
        ownerColumns: [String: String], familySharedColumns: [String: String] = [:], familyColumns: [String: String] = [:],
        membership: Membership? = nil
    ) {
        self.ownerColumns = ownerColumns
        self.familySharedColumns = familySharedColumns
        self.familyColumns = familyColumns
        self.membership = membership
    }

    /// The tables whose rows belong to users (private or family-shared), sorted.
    public var ownedTables: [String] { Set(ownerColumns.keys).union(familySharedColumns.keys).sorted() }
}

/// The rows one caller may reach, written into the statement by the planner (a Swift-side rule:
/// it reads the membership table itself and does not call the RLS helper functions).
public enum OwnershipScope: Sendable, Equatable {
    /// `column = user`, or `column` is a member of the user's family (its owner only, if `ownerOnly`).
    case family(column: String, user: String, ownerOnly: Bool, membership: OwnershipPolicy.Membership)
    /// `column` is the user's family.
    case familyID(column: String, user: String, membership: OwnershipPolicy.Membership)
}

/// What the ownership check decided for one request: it runs in Swift before any SQL, and
/// PostgreSQL's RLS checks the same rules again underneath.
enum OwnershipDecision {
    /// Not an owned table, the middleware is off, or the service role: nothing added.
    case unrestricted
    /// Restrict to the owner's rows: `owner = user` is ANDed to the filters (and to an upsert's
    /// DO UPDATE, so it can't take over another user's row).
    case owner(column: String, user: String)
    /// Restrict to a scope wider than one user's rows (family sharing).
    case scoped(OwnershipScope, upsertOwner: (column: String, user: String)?)
    /// No user: reads see nothing (`200 []`).
    case nothing
}

enum Ownership {
    /// Checks `request` against `policy` for `caller`; throws 42501 for writes that would create
    /// or move a row to another owner, or for writes without a user.
    static func decide(
        _ request: ApiRequest, table: String, policy: OwnershipPolicy, enabled: Bool,
        caller: Caller
    ) throws(RESTError) -> OwnershipDecision {
        guard enabled, !caller.isServiceRole else { return .unrestricted }
        if let membership = policy.membership {
            if let column = policy.familyColumns[table] {
                return try decideFamilyTable(request, table: table, column: column, membership: membership, caller: caller)
            }
            if let column = policy.familySharedColumns[table] {
                return try decideShared(request, table: table, column: column, membership: membership, caller: caller)
            }
        }
        guard let column = policy.ownerColumns[table] ?? policy.familySharedColumns[table] else { return .unrestricted }
        let isWrite: Bool
        switch request.action {
        case .read: isWrite = false
        case .insert, .update, .delete, .singleUpsert: isWrite = true
        case .call, .describe: return .unrestricted
        }
        let authenticated = caller.role != "anon"
        guard caller.role == "authenticated", let userID = caller.userID else {
            if isWrite { throw .ownership(table: table, authenticated: authenticated) }
            return .nothing
        }
        let user = lowercaseUUIDString(userID)
        switch request.action {
        case .insert, .singleUpsert:
            try checkNewRows(request, table: table, column: column, userID: userID)
        case .update:
            try checkNotMoved(request, table: table, column: column, userID: userID)
        case .read, .delete, .call, .describe:
            // Scoped to the owner's rows below; a delete moves nothing.
            break
        }
        return .owner(column: column, user: user)
    }

    /// Family-shared rows (children): created only for oneself; read and updated by the family;
    /// deleted by the owner or the family's owner; never moved to another owner.
    static func decideShared(
        _ request: ApiRequest, table: String, column: String, membership: OwnershipPolicy.Membership,
        caller: Caller
    ) throws(RESTError) -> OwnershipDecision {
        guard caller.role == "authenticated", let userID = caller.userID else {
            switch request.action {
            case .read: return .nothing
            case .call, .describe: return .unrestricted
            case .insert, .update, .delete, .singleUpsert: throw .ownership(table: table, authenticated: caller.role != "anon")
            }
        }
        let user = lowercaseUUIDString(userID)
        switch request.action {
        case .insert, .singleUpsert:
            try checkNewRows(request, table: table, column: column, userID: userID)
            return .scoped(.family(column: column, user: user, ownerOnly: false, membership: membership), upsertOwner: (column, user))
        case .delete:
            return .scoped(.family(column: column, user: user, ownerOnly: true, membership: membership), upsertOwner: nil)
        case .update:
            // As for private rows (a family member updating another's child sends only the
            // columns it changes).
            try checkNotMoved(request, table: table, column: column, userID: userID)
            return .scoped(.family(column: column, user: user, ownerOnly: false, membership: membership), upsertOwner: nil)
        case .read:
            return .scoped(.family(column: column, user: user, ownerOnly: false, membership: membership), upsertOwner: nil)
        case .call, .describe:
            return .unrestricted
        }
    }

    /// Family tables: members read their family; only updates (the owner renaming, which the
    /// grants and RLS narrow further) go through REST; rows come and go by the RPCs.
    static func decideFamilyTable(
        _ request: ApiRequest, table: String, column: String, membership: OwnershipPolicy.Membership,
        caller: Caller
    ) throws(RESTError) -> OwnershipDecision {
        guard caller.role == "authenticated", let userID = caller.userID else {
            if request.isRead { return .nothing }
            throw .ownership(table: table, authenticated: caller.role != "anon")
        }
        switch request.action {
        case .read, .update:
            return .scoped(.familyID(column: column, user: lowercaseUUIDString(userID), membership: membership), upsertOwner: nil)
        case .insert, .singleUpsert, .delete:
            throw .ownership(table: table, authenticated: true)
        case .call, .describe:
            return .unrestricted
        }
    }

    /// Every new row names the caller as its owner, or leaves the owner column to its default
    /// (the body, or `columns=`, does not write it: `children.user_id` defaults to `auth.uid()`).
    /// A default that is not the caller (NULL, another value) is refused by RLS's WITH CHECK.
    /// A row without the key while others write it is NULL, unless `missing=default`.
    static func checkNewRows(_ request: ApiRequest, table: String, column: String, userID: UUID) throws(RESTError) {
        guard let payload = request.payload else { return }
        guard (request.columns ?? payload.keys).contains(column) else { return }
        for row in payload.rows {
            if let value = row[column] {
                guard sameUUID(value, userID) else { throw .ownership(table: table, authenticated: true) }
            } else if request.preferences.missing != .default {
                throw .ownership(table: table, authenticated: true)
            }
        }
    }

    /// An update may not move a row to another owner: a body naming one is refused.
    static func checkNotMoved(_ request: ApiRequest, table: String, column: String, userID: UUID) throws(RESTError) {
        if let payload = request.payload, let value = payload.rows.first?[column], !sameUUID(value, userID) {
            throw .ownership(table: table, authenticated: true)
        }
    }

    /// Compares UUID values, not strings (supabase-swift sends upper-case UUIDs).
    static func sameUUID(_ value: JSONValue, _ user: UUID) -> Bool {
        guard case .string(let text) = value, let uuid = UUID(uuidString: text) else { return false }
        return uuid == user
    }
}

/// The canonical lower-case text of a UUID, as PostgreSQL prints it (Foundation's `uuidString`
/// formats through sprintf and is upper-case).
func lowercaseUUIDString(_ uuid: UUID) -> String {
    let hex: [UInt8] = Array("0123456789abcdef".utf8)
    var out = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
    withUnsafeBytes(of: uuid.uuid) { bytes in
        var position = 0
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { position += 1 }
            out[position] = hex[Int(byte >> 4)]
            out[position + 1] = hex[Int(byte & 0x0F)]
            position += 2
        }
    }
    return String(decoding: out, as: UTF8.self)
}
