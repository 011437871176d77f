import Foundation
import HTTP
import Postgres

extension StorageService {
    /// `POST /object/list-v2/{bucket}`: the names under `prefix` (a plain prefix, not a folder) in
    /// name order (`sortBy.order`), `limit` at a time after `cursor` (the last name of the page
    /// before, answered as `nextCursor`); with `with_delimiter`, the names below the next `/` are
    /// one folder each (`name`: the full path up to and with that `/`; `key`: without it). As the caller.
    func listV2(bucket: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let body = try jsonBody(request)
        let prefix = body["prefix"] as? String ?? ""
        let limit = (body["limit"] as? Int).map { min(max($0, 1), 1000) } ?? 1000
        let cursor = body["cursor"] as? String ?? ""
        let folders = body["with_delimiter"] as? Bool ?? false
        let sortBy = body["sortBy"] as? [String: Any] ?? [:]
        guard (sortBy["column"] as? String ?? "name") == "name" else { throw .invalidRequest("list-v2 sorts by name only") }
        let descending = (sortBy["order"] as? String)?.lowercased() == "desc"
        _ = try bucketLimits(bucket)
        let direction = descending ? "DESC" : "ASC"
        let after = descending ? "<" : ">"
        let rows = try asCaller(caller) { connection in
            try connection.query(
                """
                WITH entries AS ( \
                SELECT DISTINCT ON (entry COLLATE "C") entry, folder, id, metadata, updated_at, created_at FROM ( \
                SELECT CASE WHEN slash > 0 THEN substr(name, 1, char_length(\(prefix)) + slash) ELSE name END AS entry, slash > 0 AS folder, \
                CASE WHEN slash > 0 THEN NULL ELSE id END AS id, CASE WHEN slash > 0 THEN NULL ELSE metadata END AS metadata, \
                CASE WHEN slash > 0 THEN NULL ELSE updated_at END AS updated_at, CASE WHEN slash > 0 THEN NULL ELSE created_at END AS created_at \
                FROM (SELECT name, id, metadata, updated_at, created_at, \
                CASE WHEN \(folders) THEN position('/' IN substr(name, char_length(\(prefix)) + 1)) ELSE 0 END AS slash \
                FROM storage.objects WHERE bucket_id = \(bucket) AND starts_with(name, \(prefix))) named) shaped \
                ORDER BY entry COLLATE "C") \
                SELECT entry, folder, id::text, metadata::text, updated_at, created_at FROM entries \
                WHERE \(cursor) = '' OR entry COLLATE "C" \(unsafeRaw: after) \(cursor) \
                ORDER BY entry COLLATE "C" \(unsafeRaw: direction) LIMIT \(limit + 1)
                """)
        }
        let page = min(rows.count, limit)
        var folderList: [[String: Any]] = []
        var objectList: [[String: Any]] = []
        for index in 0..<page {
            let row = rows[index]
            let name = row.string(0) ?? ""
            if row.bool(1) == true {
                // Storage: the folder's name ends with its `/`, its key does not.
                folderList.append(["name": name, "key": String(name.dropLast(name.hasSuffix("/") ? 1 : 0))])
                continue
            }
            let metadata = row.string(3).flatMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            objectList.append([
                "id": row.string(2) ?? "", "name": name, "key": name, "metadata": metadata ?? NSNull(),
                "updated_at": Self.isoTimestamp(row.string(4)), "created_at": Self.isoTimestamp(row.string(5))
            ])
        }
        let hasNext = rows.count > limit
        let next: Any = hasNext && page > 0 ? (rows[page - 1].string(0) ?? "") : NSNull()
        return json(["hasNext": hasNext, "folders": folderList, "objects": objectList, "nextCursor": next])
    }

    /// PostgreSQL's timestamptz text (`2026-11-28 12:00:00.123+00`) in ISO 8601, as JSON carries it.
    static func isoTimestamp(_ text: String?) -> Any {
        guard var value = text else { return NSNull() }
        value = value.replacingOccurrences(of: " ", with: "T")
        if value.hasSuffix("+00") { value = String(value.dropLast(3)) + "Z" }
        return value
    }
}
