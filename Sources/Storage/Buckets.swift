import Foundation
import HTTP
import Identity
import Postgres

/// A bucket's limits, as uploads check them.
struct BucketLimits: Sendable {
    var isPublic: Bool
    var fileSizeLimit: Int?
    var allowedMimeTypes: [String]?

    /// Whether `mimeType` is allowed (`image/*` allows every `image/…`).
    func allows(mimeType: String) -> Bool {
        guard let allowed = allowedMimeTypes, !allowed.isEmpty else { return true }
        let type = mimeType.split(separator: ";").first.map { $0.trimmedOf(" \t").lowercased() } ?? ""
        return allowed.contains { pattern in
            let pattern = pattern.lowercased()
            if pattern.hasSuffix("/*") { return type.hasPrefix(String(pattern.dropLast())) }
            return pattern == type
        }
    }
}

/// `storage.buckets` as Storage answers it (`owner` as text, '' without one: the clients read a string).
private let bucketColumns: SQL = """
    id, name, coalesce(owner::text, '') AS owner, public, file_size_limit, allowed_mime_types, type, created_at, updated_at
    """

extension StorageService {
    func listBuckets(_ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let text = try asCaller(caller) { connection in
            try connection.query("SELECT coalesce(json_agg(b ORDER BY b.name), '[]')::text FROM (SELECT \(bucketColumns) FROM storage.buckets) b").scalar
        }
        return jsonText(text)
    }

    func getBucket(_ id: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let text = try asCaller(caller) { connection in
            try connection.query("SELECT row_to_json(b)::text FROM (SELECT \(bucketColumns) FROM storage.buckets WHERE id = \(id)) b").scalar
        }
        guard let text else { throw .bucketNotFound }
        return jsonText(text)
    }

    func createBucket(_ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let body = try jsonBody(request)
        guard let id = (body["id"] as? String) ?? (body["name"] as? String), Self.isValidBucketName(id) else {
            throw .invalidRequest("Bucket name invalid")
        }
        let name = (body["name"] as? String) ?? id
        let options = try bucketOptions(body)
        try asCaller(caller) { connection in
            _ = try connection.query(
                """
                INSERT INTO storage.buckets (id, name, owner, owner_id, public, file_size_limit, allowed_mime_types) \
                VALUES (\(id), \(name), \(caller.userID?.uuidString.lowercased())::uuid, \(caller.subject), \
                coalesce(\(options.isPublic)::boolean, false), \(options.fileSizeLimit)::bigint, \(options.mimeTypes)::text[])
                """)
        }
        return json(["name": id])
    }

    func updateBucket(_ id: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let options = try bucketOptions(try jsonBody(request))
        let updated = try asCaller(caller) { connection in
            try connection.query(
                """
                UPDATE storage.buckets SET public = coalesce(\(options.isPublic)::boolean, public), \
                file_size_limit = CASE WHEN \(options.setsSizeLimit) THEN \(options.fileSizeLimit)::bigint ELSE file_size_limit END, \
                allowed_mime_types = CASE WHEN \(options.setsMimeTypes) THEN \(options.mimeTypes)::text[] ELSE allowed_mime_types END, \
                updated_at = now() WHERE id = \(id)
                """
            ).affectedRows ?? 0
        }
        guard updated > 0 else { throw .bucketNotFound }
        return json(["message": "Successfully updated"])
    }

    func emptyBucket(_ id: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let versions = try asCaller(caller) { connection -> [String] in
            guard try connection.query("SELECT 1 FROM storage.buckets WHERE id = \(id)").count > 0 else { throw StorageError.bucketNotFound }
            let rows = try connection.query("DELETE FROM storage.objects WHERE bucket_id = \(id) RETURNING version")
            return rows.indices.compactMap { rows[$0].string(0) }
        }
        versions.forEach(files.remove)
        return json(["message": "Successfully emptied"])
    }

    func deleteBucket(_ id: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        try asCaller(caller) { connection in
            // Storage refuses while objects remain; they are counted past row-level security.
            let remaining = try connection.query("SELECT storage.bucket_has_objects(\(id))").scalar
            if remaining == "t" { throw StorageError.bucketNotEmpty }
            guard try connection.query("DELETE FROM storage.buckets WHERE id = \(id)").affectedRows ?? 0 > 0 else {
                throw StorageError.bucketNotFound
            }
        }
        return json(["message": "Successfully deleted"])
    }

    /// The limits of bucket `id`, read as Storage reads them (past row-level security).
    func bucketLimits(_ id: String) throws(StorageError) -> BucketLimits {
        let rows = try asService { connection in
            try connection.query("SELECT public, file_size_limit, to_json(allowed_mime_types)::text FROM storage.buckets WHERE id = \(id)")
        }
        guard !rows.isEmpty else { throw .bucketNotFound }
        let row = rows[0]
        let types = row.string(2).flatMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String] }
        return BucketLimits(isPublic: row.bool(0) ?? false, fileSizeLimit: row.int(1), allowedMimeTypes: types)
    }

    /// Storage's rule for bucket names: letters, digits and `_ - . ! * ' ( ) space & $ @ = ; : + , ?`, at most 100.
    static func isValidBucketName(_ name: String) -> Bool {
        guard !name.isEmpty, name.count <= 100, name != ".", name != ".." else { return false }
        return name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterClass.alphanumerics(scalar) || "_-.!*'() &$@=;:+,?".unicodeScalars.contains(scalar))
        }
    }

    struct BucketOptions {
        var isPublic: Bool?
        var setsSizeLimit = false
        var fileSizeLimit: String?
        var setsMimeTypes = false
        var mimeTypes: String?
    }

    /// `public`, `file_size_limit` (bytes, or text such as "5MB") and `allowed_mime_types`.
    func bucketOptions(_ body: [String: Any]) throws(StorageError) -> BucketOptions {
        var options = BucketOptions()
        if let value = body["public"] {
            guard let flag = value as? Bool else { throw .invalidRequest("public must be a boolean") }
            options.isPublic = flag
        }
        if let value = body["file_size_limit"] {
            options.setsSizeLimit = true
            if value is NSNull {
                options.fileSizeLimit = nil
            } else if let bytes = Self.byteCount(value) {
                options.fileSizeLimit = String(bytes)
            } else {
                throw .invalidRequest("file_size_limit must be a number of bytes or a size such as 5MB")
            }
        }
        if let value = body["allowed_mime_types"] {
            options.setsMimeTypes = true
            if value is NSNull {
                options.mimeTypes = nil
            } else if let list = value as? [String] {
                options.mimeTypes = SQL.arrayLiteral(list)
            } else {
                throw .invalidRequest("allowed_mime_types must be a list of strings")
            }
        }
        return options
    }

    /// A size as Storage reads it: a number of bytes, or text such as `1024`, `5MB`, `1.5 GB`.
    static func byteCount(_ value: Any) -> Int? {
        if let number = value as? Int { return number >= 0 ? number : nil }
        guard let text = (value as? String)?.trimmedOf(" ").uppercased(), !text.isEmpty else { return nil }
        let units: [(String, Double)] = [("GB", 1_073_741_824), ("MB", 1_048_576), ("KB", 1024), ("B", 1)]
        for (unit, factor) in units where text.hasSuffix(unit) {
            guard let number = Double(text.dropLast(unit.count).trimmedOf(" ")), number >= 0 else { return nil }
            return Int(number * factor)
        }
        return Int(text).flatMap { $0 >= 0 ? $0 : nil }
    }
}

enum CharacterClass {
    static func alphanumerics(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }
}
