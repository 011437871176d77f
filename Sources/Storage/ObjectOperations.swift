import Foundation
import HTTP
import Identity
import Postgres

/// The columns `list` may sort by (Storage's `sortBy.column`).
enum ListSortColumn: String {
    case name, created_at, updated_at, last_accessed_at
}

extension StorageService {
    /// `POST /object/list/{bucket}`: one level under `prefix` (folders as entries without an id),
    /// `search` matching the start of names, `sortBy`, `limit`, `offset`; as the caller.
    func list(bucket: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let body = try jsonBody(request)
        var prefix = body["prefix"] as? String ?? ""
        if !prefix.isEmpty && !prefix.hasSuffix("/") { prefix += "/" }
        let limit = (body["limit"] as? Int).map { min(max($0, 0), 1000) } ?? 100
        let offset = max(body["offset"] as? Int ?? 0, 0)
        let search = body["search"] as? String ?? ""
        let sortBy = body["sortBy"] as? [String: Any] ?? [:]
        guard let column = ListSortColumn(rawValue: sortBy["column"] as? String ?? "name") else {
            throw .invalidRequest("sortBy.column must be name, created_at, updated_at or last_accessed_at")
        }
        let descending = (sortBy["order"] as? String)?.lowercased() == "desc"
        let order: SQL = "\(ident: column.rawValue) \(unsafeRaw: descending ? "DESC" : "ASC") NULLS LAST, name \(unsafeRaw: descending ? "DESC" : "ASC")"
        let pattern = Self.likePrefix(search)
        _ = try bucketLimits(bucket)
        let text = try asCaller(caller) { connection -> String? in
            try connection.query(
                """
                WITH matched AS ( \
                SELECT substr(name, char_length(\(prefix)) + 1) AS rest, id, updated_at, created_at, last_accessed_at, metadata \
                FROM storage.objects WHERE bucket_id = \(bucket) AND starts_with(name, \(prefix)) \
                AND substr(name, char_length(\(prefix)) + 1) ILIKE \(pattern) ), \
                entries AS ( \
                SELECT split_part(rest, '/', 1) AS name, NULL::uuid AS id, NULL::timestamptz AS updated_at, \
                NULL::timestamptz AS created_at, NULL::timestamptz AS last_accessed_at, NULL::jsonb AS metadata \
                FROM matched WHERE position('/' IN rest) > 0 GROUP BY 1 \
                UNION ALL SELECT rest, id, updated_at, created_at, last_accessed_at, metadata FROM matched WHERE position('/' IN rest) = 0 ) \
                SELECT coalesce(json_agg(e), '[]')::text FROM (SELECT * FROM entries ORDER BY \(order) LIMIT \(limit) OFFSET \(offset)) e
                """
            ).scalar
        }
        return jsonText(text ?? "[]")
    }

    /// A LIKE pattern matching text that starts with `text` (its `%`, `_` and `\` escaped).
    static func likePrefix(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out + "%"
    }

    /// The `bucketId`, `sourceKey`, `destinationKey` (and `destinationBucket`) of a move or copy.
    private func transfer(_ request: HTTPRequest) throws(StorageError) -> (bucket: String, source: String, destinationBucket: String, destination: String) {
        let body = try jsonBody(request)
        guard let bucket = body["bucketId"] as? String, let source = body["sourceKey"] as? String,
            let destination = body["destinationKey"] as? String
        else { throw .invalidRequest("bucketId, sourceKey and destinationKey are required") }
        guard Self.isValidObjectName(destination) else { throw .invalidKey(destination) }
        return (bucket, source, body["destinationBucket"] as? String ?? bucket, destination)
    }

    /// `POST /object/move`: the row renamed as the caller (its UPDATE policy must allow the
    /// object where it is and where it goes); the bytes stay where they are.
    func move(_ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let move = try transfer(request)
        _ = try bucketLimits(move.destinationBucket)
        let moved = try asCaller(caller) { connection in
            try connection.query(
                """
                UPDATE storage.objects SET bucket_id = \(move.destinationBucket), name = \(move.destination), updated_at = now() \
                WHERE bucket_id = \(move.bucket) AND name = \(move.source)
                """
            ).affectedRows ?? 0
        }
        guard moved > 0 else { throw .objectNotFound }
        return json(["message": "Successfully moved"])
    }

    /// `POST /object/copy`: the source read and the copy inserted as the caller; the copy's
    /// bytes are a second name for the same file.
    func copy(_ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let copy = try transfer(request)
        _ = try bucketLimits(copy.destinationBucket)
        let ownerID = caller.userID?.uuidString.lowercased()
        var linked: String?
        do throws(StorageError) {
            let id = try asCaller(caller) { connection -> String in
                let source = try connection.query(
                    "SELECT version, metadata::text, user_metadata::text FROM storage.objects WHERE bucket_id = \(copy.bucket) AND name = \(copy.source)")
                guard !source.isEmpty, let version = source[0].string(0) else { throw StorageError.objectNotFound }
                let duplicate = try files.duplicate(version)
                linked = duplicate
                let inserted = try connection.query(
                    """
                    INSERT INTO storage.objects (bucket_id, name, owner, owner_id, metadata, user_metadata, version) \
                    VALUES (\(copy.destinationBucket), \(copy.destination), \(ownerID)::uuid, \(caller.subject), \
                    \(source[0].string(1))::jsonb, \(source[0].string(2))::jsonb, \(duplicate)) RETURNING id::text
                    """)
                return inserted.scalar ?? ""
            }
            return json(["Id": id, "Key": copy.destinationBucket + "/" + copy.destination])
        } catch {
            if let linked { files.remove(linked) }
            throw error
        }
    }

    /// `DELETE /object/{bucket}` with `{"prefixes": [names]}`: the rows the caller may delete,
    /// then their bytes; answers the deleted objects.
    func deleteMany(bucket: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        guard let names = try jsonBody(request)["prefixes"] as? [String], !names.isEmpty else {
            throw .invalidRequest("prefixes must be a non-empty list of object names")
        }
        let rows = try asCaller(caller) { connection in
            try connection.query(
                """
                DELETE FROM storage.objects WHERE bucket_id = \(bucket) AND name = ANY(\(array: names)::text[]) \
                RETURNING version, json_build_object('name', name, 'id', id, 'bucket_id', bucket_id, 'owner', owner, \
                'updated_at', updated_at, 'created_at', created_at, 'last_accessed_at', last_accessed_at, 'metadata', metadata)::text
                """)
        }
        rows.indices.compactMap { rows[$0].string(0) }.forEach(files.remove)
        return jsonText("[" + rows.indices.compactMap { rows[$0].string(1) }.joined(separator: ",") + "]")
    }

    /// `DELETE /object/{bucket}/{name}`.
    func deleteOne(bucket: String, name: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let version = try asCaller(caller) { connection in
            try connection.query("DELETE FROM storage.objects WHERE bucket_id = \(bucket) AND name = \(name) RETURNING version").scalar
        }
        guard let version else { throw .objectNotFound }
        files.remove(version)
        return json(["message": "Successfully deleted"])
    }
}
