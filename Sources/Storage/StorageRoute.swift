import HTTP

/// A `/storage/v1` request, by what it asks (Supabase Storage's routes). Parsing is a pure
/// function of the method and the path after `/storage/v1`.
enum StorageRoute: Equatable, Sendable {
    case listBuckets
    case getBucket(String)
    case createBucket
    case updateBucket(String)
    case emptyBucket(String)
    case deleteBucket(String)
    /// `POST /object/{bucket}/{name}` (`update` false) and `PUT` (true).
    case upload(bucket: String, name: String, update: Bool)
    /// `GET /object/{bucket}/{name}`, `/object/authenticated/…`; `public`: `/object/public/…`.
    case download(bucket: String, name: String, public: Bool)
    case info(bucket: String, name: String)
    case list(bucket: String)
    /// `POST /object/list-v2/{bucket}`: cursor pages, with or without folders.
    case listV2(bucket: String)
    case move
    case copy
    case deleteMany(bucket: String)
    case deleteOne(bucket: String, name: String)
    case sign(bucket: String, name: String)
    case signMany(bucket: String)
    case signedDownload(bucket: String, name: String)
    case signUpload(bucket: String, name: String)
    case signedUpload(bucket: String, name: String)
    /// `/upload/resumable[/{id}]` (TUS: POST, HEAD, PATCH, DELETE, OPTIONS); `signed`:
    /// `/upload/resumable/sign[/{id}]`, allowed by a signed upload URL's token.
    case resumable(id: String?, signed: Bool)

    /// The route of `method` and `path` (without `/storage/v1`), or nil for none of Storage's.
    static func parse(method: HTTPMethod, path: String) -> StorageRoute? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard let head = segments.first else { return nil }
        let rest = Array(segments.dropFirst())
        switch head {
        case "bucket": return bucketRoute(method, rest)
        case "object": return objectRoute(method, rest)
        case "upload": return resumableRoute(method, rest)
        default: return nil
        }
    }

    private static func bucketRoute(_ method: HTTPMethod, _ rest: [String]) -> StorageRoute? {
        switch (method, rest.count) {
        case (.get, 0), (.head, 0): return .listBuckets
        case (.post, 0): return .createBucket
        case (.get, 1), (.head, 1): return .getBucket(rest[0])
        case (.put, 1): return .updateBucket(rest[0])
        case (.delete, 1): return .deleteBucket(rest[0])
        case (.post, 2) where rest[1] == "empty": return .emptyBucket(rest[0])
        default: return nil
        }
    }

    private static func resumableRoute(_ method: HTTPMethod, _ rest: [String]) -> StorageRoute? {
        guard rest.first == "resumable" else { return nil }
        let signed = rest.count > 1 && rest[1] == "sign"
        let tail = Array(rest.dropFirst(signed ? 2 : 1))
        guard tail.count <= 1 else { return nil }
        switch method {
        case .post, .options: return .resumable(id: tail.first, signed: signed)
        case .head, .patch, .delete: return tail.isEmpty ? nil : .resumable(id: tail[0], signed: signed)
        default: return nil
        }
    }

    private static func objectRoute(_ method: HTTPMethod, _ rest: [String]) -> StorageRoute? {
        guard let first = rest.first else { return nil }
        let isRead = method == .get || method == .head
        /// `{bucket}/{name…}` from `rest[from...]`.
        func target(_ from: Int) -> (bucket: String, name: String)? {
            guard rest.count > from + 1 else { return nil }
            return (rest[from], rest[(from + 1)...].joined(separator: "/"))
        }
        switch first {
        case "move" where method == .post && rest.count == 1: return .move
        case "copy" where method == .post && rest.count == 1: return .copy
        case "list" where method == .post && rest.count == 2: return .list(bucket: rest[1])
        case "list-v2" where method == .post && rest.count == 2: return .listV2(bucket: rest[1])
        case "info":
            let skip = rest.count > 1 && (rest[1] == "authenticated" || rest[1] == "public") ? 2 : 1
            guard isRead, let object = target(skip) else { return nil }
            return .info(bucket: object.bucket, name: object.name)
        case "public", "authenticated":
            guard isRead, let object = target(1) else { return nil }
            return .download(bucket: object.bucket, name: object.name, public: first == "public")
        case "sign":
            if method == .post && rest.count == 2 { return .signMany(bucket: rest[1]) }
            guard let object = target(1) else { return nil }
            if method == .post { return .sign(bucket: object.bucket, name: object.name) }
            return isRead ? .signedDownload(bucket: object.bucket, name: object.name) : nil
        case "upload" where rest.count > 1 && rest[1] == "sign":
            guard let object = target(2) else { return nil }
            if method == .post { return .signUpload(bucket: object.bucket, name: object.name) }
            return method == .put ? .signedUpload(bucket: object.bucket, name: object.name) : nil
        default:
            if method == .delete && rest.count == 1 { return .deleteMany(bucket: first) }
            guard let object = target(0) else { return nil }
            if isRead { return .download(bucket: object.bucket, name: object.name, public: false) }
            if method == .post || method == .put { return .upload(bucket: object.bucket, name: object.name, update: method == .put) }
            if method == .delete { return .deleteOne(bucket: object.bucket, name: object.name) }
            return nil
        }
    }
}
