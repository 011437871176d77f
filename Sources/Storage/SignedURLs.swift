import Foundation
import HTTP
import Identity
import Postgres

/// What a signed URL's token allows: reading (`download`) or writing (`upload`) one object.
enum SignedPurpose: String {
    case download, upload
}

extension StorageService {
    /// Seconds a signed upload URL stays valid (Storage's two hours).
    static let uploadURLSeconds = 7200

    /// `expiresIn` as a positive number of seconds (the clients send it as text or a number).
    private func expiresIn(_ body: [String: Any]) throws(StorageError) -> Int {
        let value = (body["expiresIn"] as? Int) ?? (body["expiresIn"] as? String).flatMap { Int($0) }
        guard let seconds = value, seconds > 0 else { throw .invalidRequest("expiresIn must be a positive number of seconds") }
        return seconds
    }

    /// A token for `bucket/name`, signed with the server's JWT secret.
    func signToken(bucket: String, name: String, purpose: SignedPurpose, seconds: Int, extra: [String: Any] = [:]) -> String {
        let now = Int(Date().timeIntervalSince1970)
        var claims: [String: Any] = ["url": bucket + "/" + name, "purpose": purpose.rawValue, "iat": now, "exp": now + seconds]
        claims.merge(extra) { $1 }
        return JWT.signHS256(claims: claims, secret: keys.jwtSecret)
    }

    /// The claims of the request's `token` when it was signed here for `bucket/name` and `purpose`
    /// and has not expired.
    func verifiedToken(_ request: HTTPRequest, bucket: String, name: String, purpose: SignedPurpose) throws(StorageError) -> [String: Any] {
        guard let token = request.queryValue("token"), !token.isEmpty else { throw .invalidSignature("Missing token") }
        return try verifiedToken(token, bucket: bucket, name: name, purpose: purpose)
    }

    /// The claims of `token` when it was signed here for `bucket/name` and `purpose` and has not
    /// expired.
    func verifiedToken(_ token: String, bucket: String, name: String, purpose: SignedPurpose) throws(StorageError) -> [String: Any] {
        let claims: [String: Any]
        do {
            claims = try JWT.verifyHS256(token, secret: keys.jwtSecret).claims
        } catch {
            throw .invalidSignature(error == .expired ? "jwt expired" : "The signature is invalid")
        }
        guard claims["url"] as? String == bucket + "/" + name, claims["purpose"] as? String == purpose.rawValue else {
            throw .invalidSignature("The signature is not valid for this object")
        }
        return claims
    }

    /// `/object/sign/bucket/name?token=…`, each part of the path percent-encoded.
    func signedPath(_ route: String, bucket: String, name: String, token: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$'()*+,;=:@")
        let parts = ([bucket] + name.split(separator: "/").map(String.init)).map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0 }
        return route + "/" + parts.joined(separator: "/") + "?token=" + token
    }

    /// `POST /object/sign/{bucket}/{name}`: a download URL, for an object the caller may read.
    func sign(bucket: String, name: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let seconds = try expiresIn(try jsonBody(request))
        guard try storedObject(bucket: bucket, name: name, as: caller) != nil else { throw .objectNotFound }
        let token = signToken(bucket: bucket, name: name, purpose: .download, seconds: seconds)
        return json(["signedURL": signedPath("/object/sign", bucket: bucket, name: name, token: token)])
    }

    /// `POST /object/sign/{bucket}` with `paths`: a URL for each object the caller may read, an
    /// error for each other.
    func signMany(bucket: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        let body = try jsonBody(request)
        let seconds = try expiresIn(body)
        guard let paths = body["paths"] as? [String], !paths.isEmpty else { throw .invalidRequest("paths must be a non-empty list") }
        let rows = try asCaller(caller) { connection in
            try connection.query("SELECT name FROM storage.objects WHERE bucket_id = \(bucket) AND name = ANY(\(array: paths)::text[])")
        }
        let readable = Set(rows.indices.compactMap { rows[$0].string(0) })
        let answers: [[String: Any]] = paths.map { path in
            guard readable.contains(path) else {
                return ["error": "Either the object does not exist or you do not have access to it", "path": path, "signedURL": NSNull()]
            }
            let token = signToken(bucket: bucket, name: path, purpose: .download, seconds: seconds)
            return ["error": NSNull(), "path": path, "signedURL": signedPath("/object/sign", bucket: bucket, name: path, token: token)]
        }
        return json(answers)
    }

    /// `GET /object/sign/{bucket}/{name}?token=…`: the object, without a session.
    func signedDownload(bucket: String, name: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        _ = try verifiedToken(request, bucket: bucket, name: name, purpose: .download)
        guard let object = try storedObject(bucket: bucket, name: name, as: .serviceRole) else { throw .objectNotFound }
        return try serve(object, name: name, request)
    }

    /// `POST /object/upload/sign/{bucket}/{name}`: an upload URL, for a caller whose policies
    /// allow the write (tried as them, then rolled back); `x-upsert: true` allows an overwrite.
    func signUpload(bucket: String, name: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let caller = try caller(request)
        guard Self.isValidObjectName(name) else { throw .invalidKey(name) }
        _ = try bucketLimits(bucket)
        let upsert = request.headers["x-upsert"]?.lowercased() == "true"
        try probeWrite(bucket: bucket, name: name, upsert: upsert, as: caller)
        var extra: [String: Any] = ["upsert": upsert]
        if let subject = caller.subject { extra["owner"] = subject }
        let token = signToken(bucket: bucket, name: name, purpose: .upload, seconds: Self.uploadURLSeconds, extra: extra)
        return json(["url": signedPath("/object/upload/sign", bucket: bucket, name: name, token: token), "token": token])
    }

    /// Whether `caller`'s policies allow writing `bucket/name` (Storage's `canUpload`): the row
    /// is inserted as them, with `upsert` over an existing one, and rolled back; a refusal throws
    /// (403 from row-level security, 409 for an existing object without `upsert`).
    func probeWrite(bucket: String, name: String, upsert: Bool, as caller: Caller) throws(StorageError) {
        let ownerID = caller.userID?.uuidString.lowercased()
        try asCaller(caller) { connection in
            try connection.execute("SAVEPOINT probe")
            var probe: SQL = """
                INSERT INTO storage.objects (bucket_id, name, owner, owner_id, version) \
                VALUES (\(bucket), \(name), \(ownerID)::uuid, \(caller.subject), NULL)
                """
            if upsert { probe.append(" ON CONFLICT (bucket_id, name) DO UPDATE SET updated_at = now()") }
            _ = try connection.query(probe)
            try connection.execute("ROLLBACK TO SAVEPOINT probe")
        }
    }

    /// `PUT /object/upload/sign/{bucket}/{name}?token=…`: the upload the token allows, owned by
    /// whoever asked for the URL (written as Storage's superuser: the policies were tried then).
    func signedUpload(bucket: String, name: String, _ request: HTTPRequest) throws(StorageError) -> HTTPResponse {
        let claims = try verifiedToken(request, bucket: bucket, name: name, purpose: .upload)
        let upsert = claims["upsert"] as? Bool ?? false
        let response = try store(bucket: bucket, name: name, mode: upsert ? .upsert : .create, as: .serviceRole, owner: claims["owner"] as? String, request)
        return response
    }
}
