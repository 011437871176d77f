import Foundation
import JWT

/// Which tables belong to one user, and through which column: data, not code, so a new owned
/// table (e.g. `families`) is one more entry.
public struct OwnershipPolicy: Sendable, Equatable {
    /// Table → owner column (a uuid holding `auth.uid()` of the row's owner).
    public var ownerColumns: [String: String]

    public init(ownerColumns: [String: String]) {
        self.ownerColumns = ownerColumns
    }

    public static let onboarding = OwnershipPolicy(ownerColumns: ["user_profiles": "id", "children": "user_id"])
}

/// What the ownership check decided for one request (issue 6 §6): it runs in Swift before any
/// SQL, and PostgreSQL's RLS checks the same rules again underneath.
enum OwnershipDecision: Equatable {
    /// Not an owned table, the middleware is off, or the service role: nothing added.
    case unrestricted
    /// Restrict to the owner's rows: `owner = user` is ANDed to the filters (and to an upsert's
    /// DO UPDATE, so it can't take over another user's row).
    case owner(column: String, user: String)
    /// No user: reads see nothing (`200 []`).
    case nothing
}

enum Ownership {
    /// Checks `request` against `policy` for `caller`; throws 42501 for writes that would create
    /// or move a row to another owner, or for writes without a user.
    static func decide(_ request: ApiRequest, table: String, policy: OwnershipPolicy, enabled: Bool,
                       caller: Caller) throws(RESTError) -> OwnershipDecision {
        guard enabled, let column = policy.ownerColumns[table], !caller.isServiceRole else { return .unrestricted }
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
            // Every new row must name the caller as its owner (a missing owner would be NULL or
            // another row's default: RLS refuses both).
            guard let payload = request.payload else { break }
            if let columns = request.columns, !columns.contains(column), request.preferences.missing != .default {
                throw .ownership(table: table, authenticated: true)
            }
            for row in payload.rows {
                guard let value = row[column], sameUUID(value, userID) else {
                    throw .ownership(table: table, authenticated: true)
                }
            }
        case .update:
            // An update may not move a row to another owner.
            if let payload = request.payload, let value = payload.rows.first?[column], !sameUUID(value, userID) {
                throw .ownership(table: table, authenticated: true)
            }
        default:
            break
        }
        return .owner(column: column, user: user)
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
