import Foundation
import HTTP
import Identity

/// Who a resumable request acts for: a caller with a session (the policies decide, tried as
/// them), or a signed upload URL's token (`x-signature`), whose owner and upsert it names.
enum TusAccess {
    case caller(Caller)
    case signed(owner: String?, upsert: Bool)
}

extension StorageService {
    /// `/upload/resumable[/sign][/{id}]`: TUS 1.0.0 as Supabase Storage serves it. Every answer
    /// carries `Tus-Resumable`; refusals are TUS's plain text.
    func resumable(id: String?, signed: Bool, _ request: HTTPRequest) -> HTTPResponse {
        if request.method == .options { return tusOptions() }
        do throws(TusRefusal) {
            var access: TusAccess? = nil
            if !signed {
                do throws(StorageError) {
                    access = .caller(try caller(request))
                } catch {
                    throw .credentials(error)
                }
            }
            guard request.headers["Tus-Resumable"] != nil else { throw .resumableRequired }
            let invalid = Tus.invalidHeaders(request)
            guard invalid.isEmpty else { throw .tus(status: 400, body: "Invalid \(invalid.joined(separator: " "))\n") }
            var response: HTTPResponse
            switch request.method {
            case .post: response = try createUpload(access, request)
            case .head: response = try uploadState(id, access, request)
            case .patch: response = try appendChunk(id, access, request)
            case .delete: response = try terminate(id, access, request)
            default: response = Tus.text(404, "Not found\n")
            }
            response.headers.replace("Tus-Resumable", Tus.version)
            return response
        } catch {
            if error == .storage(.internalError) { logger.error("storage: resumable upload failed", metadata: ["path": "\(request.path)"]) }
            return error.response(for: request)
        }
    }

    /// OPTIONS: the server's TUS capabilities (no credentials needed).
    func tusOptions() -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Tus-Resumable", Tus.version)
        headers.add("Tus-Version", Tus.version)
        headers.add("Tus-Extension", Tus.extensions)
        headers.add("Tus-Max-Size", String(config.maxFileSize))
        headers.add("Access-Control-Allow-Methods", Tus.methods)
        headers.add("Access-Control-Allow-Headers", Tus.headers.joined(separator: ", "))
        headers.add("Access-Control-Max-Age", "86400")
        return HTTPResponse(status: .noContent, headers: headers)
    }

    /// Storage's errors as TUS refusals.
    func tus<T>(_ body: () throws(StorageError) -> T) throws(TusRefusal) -> T {
        do throws(StorageError) {
            return try body()
        } catch {
            throw .storage(error)
        }
    }

    /// The signed URL's claims for `bucket/name`, or the caller's permission to write it.
    func authorize(_ access: TusAccess?, bucket: String, name: String, upsert: Bool, _ request: HTTPRequest) throws(TusRefusal) -> TusAccess {
        guard let access else {
            guard let signature = request.headers["x-signature"], !signature.isEmpty else {
                throw .storage(.invalidSignature("Missing x-signature header"))
            }
            let claims = try tus { () throws(StorageError) in try verifiedToken(signature, bucket: bucket, name: name, purpose: .upload) }
            return .signed(owner: claims["owner"] as? String, upsert: claims["upsert"] as? Bool ?? false)
        }
        if case .caller(let caller) = access, request.method != .head {
            try tus { () throws(StorageError) in try probeWrite(bucket: bucket, name: name, upsert: upsert, as: caller) }
        }
        return access
    }

    /// The upload an id names, with its bucket and name as the id says.
    func namedUpload(_ id: String?) throws(TusRefusal) -> (version: String, upload: ResumableUpload) {
        guard let id else { throw .fileNotFound }
        guard let named = Tus.parseUploadID(id) else { throw .invalidUploadID }
        guard let upload = resumableUploads.upload(named.version), upload.bucket == named.bucket, upload.name == named.name else {
            throw .fileNotFound
        }
        return (named.version, upload)
    }

    /// The origin a client reached this server at, for the upload's `Location`: the proxy's
    /// `X-Forwarded-Proto`, `X-Forwarded-Host` and `X-Forwarded-Port` where it sends them, else
    /// `Host` (which carries the port the client used).
    static func publicOrigin(_ request: HTTPRequest) -> String {
        func first(_ name: String) -> String? {
            request.headers[name].flatMap { $0.split(separator: ",").first }.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        let scheme = first("X-Forwarded-Proto") == "https" ? "https" : "http"
        var host = first("X-Forwarded-Host") ?? request.headers["Host"] ?? "localhost"
        let hasPort = host.hasPrefix("[") ? host.contains("]:") : host.contains(":")
        if !hasPort, let port = first("X-Forwarded-Port"), port != (scheme == "https" ? "443" : "80") { host += ":" + port }
        return scheme + "://" + host
    }

    func isExpired(_ upload: ResumableUpload) -> Bool {
        config.resumableExpirySeconds > 0 && Date().timeIntervalSince1970 > upload.created + config.resumableExpirySeconds
    }

    /// `Upload-Expires` for an upload still open.
    func addExpiry(_ upload: ResumableUpload, to headers: inout HTTPHeaders) {
        guard config.resumableExpirySeconds > 0 else { return }
        headers.replace("Upload-Expires", Tus.date(upload.created + config.resumableExpirySeconds))
    }

    /// POST: a new upload of `Upload-Length` bytes into `bucketName/objectName`, refused unless
    /// the caller may write there (or the signature allows it), the bucket's limits allow its
    /// size and type; with a body (`creation-with-upload`), its first bytes.
    func createUpload(_ access: TusAccess?, _ request: HTTPRequest) throws(TusRefusal) -> HTTPResponse {
        guard request.headers["Upload-Concat"] == nil else { throw .concatenation }
        guard request.headers["Upload-Defer-Length"] == nil else { throw .deferredLength }
        guard let size = request.headers["Upload-Length"].flatMap(Tus.count) else { throw .invalidLength }
        guard let header = request.headers["Upload-Metadata"], var metadata = Tus.metadata(header) else { throw .metadataRequired }
        let bucket = (metadata["bucketName"] ?? nil) ?? ""
        let name = (metadata["objectName"] ?? nil) ?? ""
        guard Self.isValidBucketName(bucket) else { throw .invalidBucketName }
        guard Self.isValidObjectName(name) else { throw .storage(.invalidKey(name)) }
        let limits = try tus { () throws(StorageError) in try bucketLimits(bucket) }
        guard size <= min(config.maxFileSize, limits.fileSizeLimit ?? Int.max) else { throw .maxSizeExceeded }
        let granted = try authorize(access, bucket: bucket, name: name, upsert: request.headers["x-upsert"] == "true", request)

        let seconds = (metadata["cacheControl"] ?? nil) ?? ""
        let cacheControl = !seconds.isEmpty && Int(seconds) != nil ? "max-age=\(seconds)" : "no-cache"
        metadata["cacheControl"] = .some(cacheControl)
        let contentType = (metadata["contentType"] ?? nil) ?? "application/octet-stream"
        guard limits.allows(mimeType: contentType) else { throw .storage(.invalidMimeType(contentType)) }
        var userMetadata = (metadata["metadata"] ?? nil)
        if let text = userMetadata, (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] == nil { userMetadata = nil }
        let upload: ResumableUpload
        switch granted {
        case .caller:
            upload = ResumableUpload(
                bucket: bucket, name: name, size: size, contentType: contentType, cacheControl: cacheControl, userMetadata: userMetadata,
                tusMetadata: metadata, upsert: request.headers["x-upsert"] == "true", owner: nil, signed: false,
                created: Date().timeIntervalSince1970)
        case .signed(let owner, let upsert):
            upload = ResumableUpload(
                bucket: bucket, name: name, size: size, contentType: contentType, cacheControl: cacheControl, userMetadata: userMetadata,
                tusMetadata: metadata, upsert: upsert, owner: owner, signed: true, created: Date().timeIntervalSince1970)
        }

        if config.resumableExpirySeconds > 0 { resumableUploads.removeExpired(olderThan: config.resumableExpirySeconds) }
        let version = FileStore.newVersion()
        do throws(ResumableStore.Failure) {
            try resumableUploads.create(upload, version: version)
        } catch {
            throw .disk(error)
        }
        var headers = HTTPHeaders()
        var complete = size == 0
        if request.headers["Content-Type"] == Tus.chunkType {
            let offset = try receive(request.body, at: 0, version: version, upload, granted)
            headers.add("Upload-Offset", String(offset))
            complete = offset == size
        } else if complete {
            try resumableUploads.lockedTus(version) { () throws(TusRefusal) in try finish(version, upload, granted) }
        }
        if complete { headers.add("Tus-Complete", "1") } else { addExpiry(upload, to: &headers) }
        let base = Self.publicOrigin(request)
        let path = Self.prefix + "/upload/resumable" + (upload.signed ? "/sign" : "")
        headers.add("Location", base + path + "/" + Tus.uploadID(bucket: bucket, name: name, version: version))
        return HTTPResponse(status: .created, headers: headers)
    }

    /// HEAD: how many bytes the upload has (and its length and metadata).
    func uploadState(_ id: String?, _ access: TusAccess?, _ request: HTTPRequest) throws(TusRefusal) -> HTTPResponse {
        let (version, upload) = try namedUpload(id)
        _ = try authorize(access, bucket: upload.bucket, name: upload.name, upsert: upload.upsert, request)
        guard !isExpired(upload) || resumableUploads.isDone(version) else { throw .expired }
        guard let offset = resumableUploads.offset(version, upload) else { throw .fileNotFound }
        var headers = HTTPHeaders()
        headers.add("Cache-Control", "no-store")
        headers.add("Upload-Offset", String(offset))
        headers.add("Upload-Length", String(upload.size))
        headers.add("Upload-Metadata", Tus.metadataHeader(upload.tusMetadata))
        return HTTPResponse(status: .ok, headers: headers)
    }

    /// PATCH: the next chunk, at the upload's current offset; the last one commits the object.
    func appendChunk(_ id: String?, _ access: TusAccess?, _ request: HTTPRequest) throws(TusRefusal) -> HTTPResponse {
        guard let offsetText = request.headers["Upload-Offset"], let offset = Tus.count(offsetText) else { throw .missingOffset }
        guard request.headers["Content-Type"] != nil else { throw .missingContentType }
        let (version, upload) = try namedUpload(id)
        let granted = try authorize(access, bucket: upload.bucket, name: upload.name, upsert: upload.upsert, request)
        guard request.headers["Upload-Length"] == nil else { throw .invalidLength }
        let newOffset = try receive(request.body, at: offset, version: version, upload, granted)
        var headers = HTTPHeaders()
        headers.add("Upload-Offset", String(newOffset))
        if newOffset == upload.size { headers.add("Tus-Complete", "1") } else { addExpiry(upload, to: &headers) }
        return HTTPResponse(status: .noContent, headers: headers)
    }

    /// Appends `bytes` at `offset` holding the upload's lock, and commits the object when they
    /// were the last; answers the new offset.
    func receive(_ bytes: [UInt8], at offset: Int, version: String, _ upload: ResumableUpload, _ access: TusAccess) throws(TusRefusal) -> Int {
        try resumableUploads.lockedTus(version) { () throws(TusRefusal) -> Int in
            guard !isExpired(upload) else { throw .expired }
            if resumableUploads.isDone(version) {
                guard offset == upload.size else { throw .offsetConflict }
                guard bytes.isEmpty else { throw .sizeExceeded }
                return offset
            }
            let newOffset: Int
            do throws(ResumableStore.Failure) {
                newOffset = try resumableUploads.append(version, upload, at: offset, bytes)
            } catch {
                throw .disk(error)
            }
            if newOffset == upload.size { try finish(version, upload, access) }
            return newOffset
        }
    }

    /// The complete upload becomes the object, exactly as an upload does: its bytes move into
    /// `objects/`, then the row is written as the caller (or, for a signed URL, as Storage's
    /// superuser with the token's owner). A refused row ends the upload.
    func finish(_ version: String, _ upload: ResumableUpload, _ access: TusAccess) throws(TusRefusal) {
        let digest: [UInt8]
        do throws(ResumableStore.Failure) {
            digest = try resumableUploads.digest(version)
            try resumableUploads.promote(version)
        } catch {
            throw .disk(error)
        }
        let metadata = Self.metadata(size: upload.size, digest: digest, contentType: upload.contentType, cacheControl: upload.cacheControl)
        let mode: WriteMode = upload.upsert ? .upsert : .create
        do throws(StorageError) {
            switch access {
            case .caller(let caller):
                _ = try commit(
                    bucket: upload.bucket, name: upload.name, mode: mode, as: caller, owner: caller.subject, version: version, metadata: metadata,
                    userMetadata: upload.userMetadata)
            case .signed(let owner, _):
                _ = try commit(
                    bucket: upload.bucket, name: upload.name, mode: mode, as: .serviceRole, owner: owner, version: version, metadata: metadata,
                    userMetadata: upload.userMetadata)
            }
        } catch {
            resumableUploads.remove(version)
            throw .storage(error)
        }
        resumableUploads.markDone(version)
    }

    /// DELETE: ends an upload not yet complete and removes its bytes.
    func terminate(_ id: String?, _ access: TusAccess?, _ request: HTTPRequest) throws(TusRefusal) -> HTTPResponse {
        let (version, upload) = try namedUpload(id)
        _ = try authorize(access, bucket: upload.bucket, name: upload.name, upsert: upload.upsert, request)
        try resumableUploads.lockedTus(version) { () throws(TusRefusal) in
            guard !resumableUploads.isDone(version) else { throw .completedTermination }
            resumableUploads.remove(version)
        }
        return HTTPResponse(status: .noContent)
    }
}

extension ResumableStore {
    /// `locked` with TUS's refusals.
    func lockedTus<T>(_ version: String, _ body: () throws(TusRefusal) -> T) throws(TusRefusal) -> T {
        do {
            return try locked(version) { try body() }
        } catch let refusal as TusRefusal {
            throw refusal
        } catch let failure as Failure {
            throw .disk(failure)
        } catch {
            throw .writeFailed
        }
    }
}
