import Foundation
import HTTP
import Identity
import Logging
import Postgres

/// Where Storage keeps bytes and how large an upload may be.
public struct StorageConfig: Sendable {
    /// `STORAGE_DIR`: the folder of the objects' bytes.
    public var directory: URL
    /// `STORAGE_MAX_FILE_SIZE`: the largest object in bytes, whatever the bucket allows.
    public var maxFileSize: Int

    /// `TUS_URL_EXPIRY_MS` (in seconds here): how long a resumable upload stays open after its
    /// creation; older ones answer 410 and are removed. 0 keeps them open.
    public var resumableExpirySeconds: Double

    public static let defaultMaxFileSize = 50 * 1024 * 1024

    public init(directory: URL, maxFileSize: Int = StorageConfig.defaultMaxFileSize, resumableExpirySeconds: Double = 3600) {
        self.directory = directory
        self.maxFileSize = maxFileSize
        self.resumableExpirySeconds = resumableExpirySeconds
    }

    /// The body limit the HTTP layer applies to `/storage/v1`: the largest object and room for a
    /// multipart envelope around it.
    public var maxRequestBytes: Int { maxFileSize + 64 * 1024 }
}

/// Supabase Storage's API under `/storage/v1`: buckets and objects in `storage.buckets` and
/// `storage.objects`, read and written as the caller (row-level security decides), bytes on disk.
public final class StorageService: Sendable {
    let pool: Pool
    let keys: KeyConfig
    let config: StorageConfig
    let files: FileStore
    let resumableUploads: ResumableStore
    let logger: Logger

    public init(pool: Pool, keys: KeyConfig, config: StorageConfig, logger: Logger) throws {
        self.pool = pool
        self.keys = keys
        self.config = config
        self.files = try FileStore(root: config.directory)
        self.resumableUploads = try ResumableStore(files: files)
        self.logger = logger
        if config.resumableExpirySeconds > 0 { resumableUploads.removeExpired(olderThan: config.resumableExpirySeconds) }
    }

    public static let prefix = "/storage/v1"

    /// Registers `/storage/v1/*` for every method Storage answers.
    public func register(_ router: inout Router) {
        for method in [HTTPMethod.get, .post, .put, .patch, .delete, .options] {
            router.add(method, Self.prefix + "/*") { [self] request in respond(to: request) }
        }
    }

    /// Answers one request; every refusal in Storage's error shape.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let path = String(request.path.dropFirst(Self.prefix.count))
        do {
            guard let route = StorageRoute.parse(method: request.method, path: path) else {
                return StorageError.invalidRequest("Route \(request.method) \(path) not found").response(for: request)
            }
            return try handle(route, request)
        } catch {
            if error == .internalError { logger.error("storage: internal error", metadata: ["path": "\(request.path)"]) }
            return error.response(for: request)
        }
    }

    private func handle(_ route: StorageRoute, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        switch route {
        case .listBuckets: return try listBuckets(request)
        case .getBucket(let id): return try getBucket(id, request)
        case .createBucket: return try createBucket(request)
        case .updateBucket(let id): return try updateBucket(id, request)
        case .emptyBucket(let id): return try emptyBucket(id, request)
        case .deleteBucket(let id): return try deleteBucket(id, request)
        case .upload(let bucket, let name, let update): return try upload(bucket: bucket, name: name, update: update, request)
        case .download(let bucket, let name, let isPublic): return try download(bucket: bucket, name: name, public: isPublic, request)
        case .info(let bucket, let name): return try info(bucket: bucket, name: name, request)
        case .list(let bucket): return try list(bucket: bucket, request)
        case .listV2(let bucket): return try listV2(bucket: bucket, request)
        case .move: return try move(request)
        case .copy: return try copy(request)
        case .deleteMany(let bucket): return try deleteMany(bucket: bucket, request)
        case .deleteOne(let bucket, let name): return try deleteOne(bucket: bucket, name: name, request)
        case .sign(let bucket, let name): return try sign(bucket: bucket, name: name, request)
        case .signMany(let bucket): return try signMany(bucket: bucket, request)
        case .signedDownload(let bucket, let name): return try signedDownload(bucket: bucket, name: name, request)
        case .signUpload(let bucket, let name): return try signUpload(bucket: bucket, name: name, request)
        case .signedUpload(let bucket, let name): return try signedUpload(bucket: bucket, name: name, request)
        case .resumable(let id, let signed): return resumable(id: id, signed: signed, request)
        }
    }

    // MARK: callers and the database

    /// The caller: the `apikey` (header or query) and the bearer token, as the gateway and
    /// Storage read them; a bearer alone is enough (Storage checks the token itself).
    func caller(_ request: HTTPRequest) throws(StorageError) -> Caller {
        let apikey = request.headers["apikey"] ?? request.queryValue("apikey")
        let bearer = Credentials.bearerToken(request.headers["Authorization"])
        do {
            if let apikey, !apikey.isEmpty { return try Credentials.resolve(apikey: apikey, bearer: bearer, keys: keys) }
            guard let bearer, !bearer.isEmpty else { throw StorageError.missingAuthorization }
            if let key = keys.role(ofKey: bearer) { return key }
            return try Credentials.verifiedCaller(bearer, keys: keys)
        } catch let error as CredentialError {
            throw .credentials(error)
        } catch let error as StorageError {
            throw error
        } catch {
            throw .internalError
        }
    }

    /// Runs `body` in one transaction as `caller`: their role and claims set first, so that
    /// row-level security decides; COMMIT when it returns, ROLLBACK when it throws.
    func asCaller<T>(_ caller: Caller, _ body: (Connection) throws -> T) throws(StorageError) -> T {
        let setup: SQL = """
            SELECT set_config('request.jwt.claims', \(caller.claimsJSON), true) IS NULL, \
            set_config('request.jwt.claim.sub', \(caller.subject ?? ""), true) IS NULL, \
            set_config('request.jwt.claim.role', \(caller.role), true) IS NULL, set_config('role', \(caller.role), true) IS NULL
            """
        do {
            return try pool.withTransaction { connection in
                _ = try connection.query(setup)
                return try body(connection)
            }
        } catch let error as StorageError {
            throw error
        } catch let error as PostgresError {
            let mapped = StorageError.database(error)
            if mapped == .internalError { logger.error("storage: database error", metadata: ["error": "\(logText(error))"]) }
            throw mapped
        } catch {
            logger.error("storage: unexpected error", metadata: ["error": "\(error)"])
            throw .internalError
        }
    }

    /// What Storage reads as its own superuser (a bucket's limits and public flag, the public
    /// route's reads): here as `service_role`, which bypasses row-level security.
    func asService<T>(_ body: (Connection) throws -> T) throws(StorageError) -> T {
        try asCaller(.serviceRole, body)
    }

    // MARK: request bodies

    /// The body as a JSON object (an empty body is an empty object).
    func jsonBody(_ request: HTTPRequest) throws(StorageError) -> [String: Any] {
        if request.body.isEmpty { return [:] }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] else {
            throw .invalidRequest("The body must be a JSON object")
        }
        return object
    }

    /// A JSON response from a value `JSONSerialization` writes.
    func json(_ value: Any, status: HTTPStatus = .ok) -> HTTPResponse {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])) ?? Data("null".utf8)
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json; charset=utf-8")
        return HTTPResponse(status: status, headers: headers, body: [UInt8](data))
    }

    /// A JSON response whose text PostgreSQL wrote.
    func jsonText(_ text: String?, status: HTTPStatus = .ok) -> HTTPResponse {
        .json(status, text ?? "null")
    }
}
