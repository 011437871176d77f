import Foundation
import Glibc
import HTTP
import Identity
import Postgres

/// What an upload carries beside its bytes.
struct UploadBody {
    var bytes: [UInt8]
    var contentType: String
    var cacheControl: String
    /// `metadata` (form field) or `x-metadata` (base64 JSON header): the user's own metadata.
    var userMetadata: String?
}

/// An object's row as a download reads it.
struct StoredObject {
    var version: String
    var metadata: [String: Any]
    var updatedAt: Double
}

extension StorageService {
    /// The characters encodeURIComponent leaves as they are.
    static let uriComponent = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()")

    /// Storage's rule for object names: ASCII letters, digits and `_ / ! - . * ' ( ) space & $ @ = ; : + , ?`.
    static func isValidObjectName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 1024 else { return false }
        let allowed = "_/!-.*'() &$@=;:+,?".unicodeScalars
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains(where: { $0 == "." || $0 == ".." }) else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterClass.alphanumerics($0) || allowed.contains($0)) }
    }

    /// The upload's bytes and options: a `multipart/form-data` body (the clients' `file` part,
    /// `cacheControl` and `metadata` fields) or the raw body with its headers.
    func uploadBody(_ request: HTTPRequest) throws(StorageError) -> UploadBody {
        let contentType = request.headers["Content-Type"] ?? "application/octet-stream"
        var cacheControl = request.headers["Cache-Control"] ?? "no-cache"
        var userMetadata = request.headers["x-metadata"].flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }
        guard let boundary = Multipart.boundary(contentType: contentType) else {
            return UploadBody(bytes: request.body, contentType: contentType, cacheControl: cacheControl, userMetadata: userMetadata)
        }
        guard let parts = Multipart.parse(request.body, boundary: boundary) else { throw .invalidRequest("The multipart body is malformed") }
        guard let file = parts.first(where: { $0.filename != nil }) ?? parts.first(where: { $0.name == "file" }) else {
            throw .invalidRequest("The multipart body has no file")
        }
        if let seconds = parts.first(where: { $0.name == "cacheControl" }) {
            let text = String(decoding: seconds.body, as: UTF8.self)
            cacheControl = Int(text) != nil ? "max-age=\(text)" : text
        }
        if let metadata = parts.first(where: { $0.name == "metadata" }) { userMetadata = String(decoding: metadata.body, as: UTF8.self) }
        if let text = userMetadata, (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] == nil {
            throw .invalidRequest("metadata must be a JSON object")
        }
        return UploadBody(
            bytes: file.body, contentType: file.contentType ?? "application/octet-stream", cacheControl: cacheControl, userMetadata: userMetadata)
    }

    /// `POST`/`PUT /object/{bucket}/{name}`.
    func upload(bucket: String, name: String, update: Bool, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let upsert = !update && request.headers["x-upsert"]?.lowercased() == "true"
        return try store(bucket: bucket, name: name, mode: update ? .update : (upsert ? .upsert : .create), as: caller, owner: caller.subject, request)
    }

    enum WriteMode { case create, upsert, update }

    /// Writes the bytes durably, then the row as `caller` (row-level security decides), then
    /// removes the bytes the row named before; the new bytes are removed when the row is refused.
    func store(
        bucket: String, name: String, mode: WriteMode, as caller: Caller, owner: String?, _ request: HTTPRequest
    ) throws(StorageError) -> HTTPResponse {
        guard Self.isValidObjectName(name) else { throw .invalidKey(name) }
        let limits = try bucketLimits(bucket)
        let body = try uploadBody(request)
        let limit = min(config.maxFileSize, limits.fileSizeLimit ?? Int.max)
        guard body.bytes.count <= limit else { throw .payloadTooLarge }
        guard limits.allows(mimeType: body.contentType) else { throw .invalidMimeType(body.contentType) }
        let version = try files.write(body.bytes)
        let metadata = Self.metadata(
            size: body.bytes.count, digest: Crypto.sha256(body.bytes), contentType: body.contentType, cacheControl: body.cacheControl)
        let id = try commit(
            bucket: bucket, name: name, mode: mode, as: caller, owner: owner, version: version, metadata: metadata, userMetadata: body.userMetadata)
        return json(["Id": id, "Key": bucket + "/" + name])
    }

    /// Writes the row naming `version` (bytes already durable under `objects/`) as `caller`
    /// (row-level security decides), then removes the bytes the row named before; `version`'s
    /// bytes are removed when the row is refused. Answers the object's id.
    func commit(
        bucket: String, name: String, mode: WriteMode, as caller: Caller, owner: String?, version: String, metadata: String, userMetadata: String?
    ) throws(StorageError) -> String {
        let ownerID = owner.flatMap { UUID(uuidString: $0) }?.uuidString.lowercased()
        do throws(StorageError) {
            let (id, previous) = try asCaller(caller) { connection -> (String, String?) in
                let previous = try connection.query(
                    "SELECT version FROM storage.objects WHERE bucket_id = \(bucket) AND name = \(name) FOR UPDATE"
                ).scalar
                let values: SQL = """
                    \(metadata)::jsonb, \(userMetadata)::jsonb, \(version)
                    """
                let statement: SQL
                switch mode {
                case .create, .upsert:
                    var insert: SQL = """
                        INSERT INTO storage.objects (bucket_id, name, owner, owner_id, metadata, user_metadata, version) \
                        VALUES (\(bucket), \(name), \(ownerID)::uuid, \(owner), \(values))
                        """
                    if mode == .upsert {
                        insert.append(
                            """
                             ON CONFLICT (bucket_id, name) DO UPDATE SET metadata = excluded.metadata, \
                            user_metadata = excluded.user_metadata, version = excluded.version, owner = excluded.owner, \
                            owner_id = excluded.owner_id, updated_at = now(), last_accessed_at = now()
                            """)
                    }
                    statement = insert + " RETURNING id::text"
                case .update:
                    guard previous != nil else { throw StorageError.objectNotFound }
                    statement = """
                        UPDATE storage.objects SET metadata = \(metadata)::jsonb, user_metadata = \(userMetadata)::jsonb, \
                        version = \(version), updated_at = now(), last_accessed_at = now() \
                        WHERE bucket_id = \(bucket) AND name = \(name) RETURNING id::text
                        """
                }
                guard let id = try connection.query(statement).scalar else { throw StorageError.objectNotFound }
                return (id, previous)
            }
            if let previous { files.remove(previous) }
            return id
        } catch {
            files.remove(version)
            throw error
        }
    }

    /// The object's `metadata` as Storage writes it; the ETag is the first 16 bytes of the
    /// bytes' SHA-256.
    static func metadata(size: Int, digest: [UInt8], contentType: String, cacheControl: String) -> String {
        let object: [String: Any] = [
            "eTag": "\"\(Crypto.hex(Array(digest.prefix(16))))\"", "size": size, "mimetype": contentType, "cacheControl": cacheControl,
            "lastModified": ISO8601DateFormatter().string(from: Date()), "contentLength": size, "httpStatusCode": 200
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The row of an object, read as `caller` (nil when missing or hidden by the policies).
    func storedObject(bucket: String, name: String, as caller: Caller) throws(StorageError) -> StoredObject? {
        let rows = try asCaller(caller) { connection in
            try connection.query(
                """
                SELECT version, coalesce(metadata, '{}')::text, extract(epoch FROM updated_at)::float8 \
                FROM storage.objects WHERE bucket_id = \(bucket) AND name = \(name)
                """)
        }
        guard !rows.isEmpty, let version = rows[0].string(0) else { return nil }
        let metadata = rows[0].string(1).flatMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] } ?? [:]
        return StoredObject(version: version, metadata: metadata, updatedAt: rows[0].double(2) ?? 0)
    }

    /// `GET /object/{bucket}/{name}`, `/object/authenticated/…` and `/object/public/…`.
    func download(bucket: String, name: String, public isPublic: Bool, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let object: StoredObject?
        if isPublic {
            guard try bucketLimits(bucket).isPublic else { throw .objectNotFound }
            object = try storedObject(bucket: bucket, name: name, as: .serviceRole)
        } else {
            object = try storedObject(bucket: bucket, name: name, as: try caller(request))
        }
        guard let object else { throw .objectNotFound }
        return try serve(object, name: name, request)
    }

    /// The bytes of `object` with Storage's headers: `Range`, `If-None-Match`, `download`.
    func serve(_ object: StoredObject, name: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        guard let bytes = files.read(object.version) else {
            logger.error("storage: an object's bytes are missing", metadata: ["version": "\(object.version)"])
            throw .internalError
        }
        var headers = HTTPHeaders()
        let eTag = object.metadata["eTag"] as? String ?? "\"\(object.version)\""
        headers.add("Content-Type", object.metadata["mimetype"] as? String ?? "application/octet-stream")
        headers.add("Cache-Control", object.metadata["cacheControl"] as? String ?? "no-cache")
        headers.add("ETag", eTag)
        headers.add("Last-Modified", Self.httpDate(object.updatedAt))
        headers.add("Accept-Ranges", "bytes")
        // Storage's renderer: `attachment;` alone for an empty `download`, else the name as
        // JavaScript's encodeURIComponent writes it, twice (plain and RFC 5987).
        if let download = request.queryValue("download") {
            let encoded = download.addingPercentEncoding(withAllowedCharacters: Self.uriComponent) ?? ""
            headers.add("Content-Disposition", download.isEmpty ? "attachment;" : "attachment; filename=\(encoded); filename*=UTF-8''\(encoded)")
        }
        if let match = request.headers["If-None-Match"], match.split(separator: ",").contains(where: { $0.trimmedOf(" ") == eTag || $0.trimmedOf(" ") == "*" })
        {
            return HTTPResponse(status: HTTPStatus(code: 304), headers: headers)
        }
        if let range = request.headers["Range"] {
            guard let bounds = Self.byteRange(range, size: bytes.count) else { throw .rangeNotSatisfiable(size: bytes.count) }
            headers.add("Content-Range", "bytes \(bounds.lowerBound)-\(bounds.upperBound - 1)/\(bytes.count)")
            return HTTPResponse(status: HTTPStatus(code: 206), headers: headers, body: Array(bytes[bounds]))
        }
        return HTTPResponse(status: .ok, headers: headers, body: bytes)
    }

    /// One range of `Range: bytes=a-b`, `a-` or `-n` within `size`; nil when unsatisfiable.
    static func byteRange(_ header: String, size: Int) -> Range<Int>? {
        guard header.hasPrefix("bytes="), !header.contains(","), size > 0 else { return nil }
        let spec = header.dropFirst("bytes=".count).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        if spec[0].isEmpty {
            guard let suffix = Int(spec[1]), suffix > 0 else { return nil }
            return max(0, size - suffix)..<size
        }
        guard let start = Int(spec[0]), start >= 0, start < size else { return nil }
        if spec[1].isEmpty { return start..<size }
        guard let end = Int(spec[1]), end >= start else { return nil }
        return start..<(min(end, size - 1) + 1)
    }

    /// An HTTP date (RFC 9110 §5.6.7) of seconds since 1970.
    static func httpDate(_ seconds: Double) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [Int8](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `GET /object/info/{bucket}/{name}`: the object's row as Storage's info answers it.
    func info(bucket: String, name: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let text = try asCaller(caller) { connection in
            try connection.query(
                """
                SELECT json_build_object('id', id, 'name', name, 'version', version, 'bucket_id', bucket_id, \
                'size', (metadata->>'size')::bigint, 'content_type', metadata->>'mimetype', 'cache_control', metadata->>'cacheControl', \
                'etag', metadata->>'eTag', 'metadata', user_metadata, 'last_modified', updated_at, 'created_at', created_at)::text \
                FROM storage.objects WHERE bucket_id = \(bucket) AND name = \(name)
                """
            ).scalar
        }
        guard let text else { throw .objectNotFound }
        return jsonText(text)
    }
}
