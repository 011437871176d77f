import Foundation
import TestSupport
import Testing

/// Resumable uploads (TUS 1.0.0) under `/storage/v1/upload/resumable` over real sockets, a real
/// database and real files: creation, chunks, a resume on another server sharing the folder,
/// offsets, the callers' policies, the bucket's limits, upsert, signed URLs, termination, expiry.
@Suite("Storage: resumable uploads (TUS)", .serialized)
struct StorageResumableTests {
    let server: TestServer

    init() throws { server = try TestServer() }

    var service: [(String, String)] { [("apikey", server.anonKey), ("Authorization", "Bearer \(server.serviceKey)")] }

    static func metadata(_ pairs: [(String, String)]) -> String {
        pairs.map { "\($0.0) \(Data($0.1.utf8).base64EncodedString())" }.joined(separator: ",")
    }

    static func bytes(_ count: Int, seed: UInt8 = 7) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) } }

    func bucket(_ json: String) throws {
        let created = try server.client().request(
            "POST", "/storage/v1/bucket", headers: service + [("Content-Type", "application/json")], body: json)
        #expect(created.status == 200, "\(created.text)")
    }

    /// POST: a new upload of `length` bytes into `bucket/name`.
    func create(
        on target: TestServer? = nil, _ bucket: String, _ name: String, length: Int, headers: [(String, String)], extra: [(String, String)] = [],
        type: String = "text/plain", body: [UInt8]? = nil, path: String = "/storage/v1/upload/resumable"
    ) throws -> TestResponse {
        let meta = Self.metadata([("bucketName", bucket), ("objectName", name), ("contentType", type), ("cacheControl", "60")])
        var sent = headers + [("Tus-Resumable", "1.0.0"), ("Upload-Length", String(length)), ("Upload-Metadata", meta)] + extra
        if body != nil { sent.append(("Content-Type", "application/offset+octet-stream")) }
        return try (target ?? server).client().request("POST", path, headers: sent, bodyBytes: body)
    }

    /// The path of an upload's absolute `Location`.
    func path(_ response: TestResponse) throws -> String {
        let location = try #require(response.header("Location"), "\(response.status) \(response.text)")
        let url = try #require(URL(string: location))
        #expect(url.scheme == "http" && url.host == "127.0.0.1")
        return url.path
    }

    func patch(on target: TestServer? = nil, _ path: String, offset: Int, _ bytes: [UInt8], headers: [(String, String)]) throws -> TestResponse {
        try (target ?? server).client().request(
            "PATCH", path,
            headers: headers + [("Tus-Resumable", "1.0.0"), ("Upload-Offset", String(offset)), ("Content-Type", "application/offset+octet-stream")],
            bodyBytes: bytes)
    }

    func head(on target: TestServer? = nil, _ path: String, headers: [(String, String)]) throws -> TestResponse {
        try (target ?? server).client().request("HEAD", path, headers: headers + [("Tus-Resumable", "1.0.0")])
    }

    func uploadFiles(_ root: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("resumable").path)) ?? []).sorted()
    }

    @Test func optionsAnswerTheCapabilitiesAlsoToAPreflight() throws {
        let options = try server.client().request("OPTIONS", "/storage/v1/upload/resumable")
        #expect(options.status == 204 && options.header("Tus-Version") == "1.0.0" && options.header("Tus-Resumable") == "1.0.0")
        #expect(options.header("Tus-Extension")?.contains("creation") == true && options.header("Tus-Extension")?.contains("termination") == true)
        #expect(options.header("Tus-Max-Size") == String(server.application.config.storage.maxFileSize))
        let preflight = try server.client().request(
            "OPTIONS", "/storage/v1/upload/resumable",
            headers: [("Origin", "https://app.example"), ("Access-Control-Request-Method", "POST"), ("Access-Control-Request-Headers", "upload-length")])
        #expect(preflight.status == 204 && preflight.header("Tus-Version") == "1.0.0")
        #expect(preflight.header("Access-Control-Allow-Origin") == "*" && preflight.header("Access-Control-Allow-Headers") == "upload-length")
        #expect(try server.client().request("OPTIONS", "/storage/v1/bucket").header("Tus-Version") == nil, "other preflights are the CORS stage's")
    }

    @Test func chunksResumeOnAnotherServerAndCommitTheObjectAtTheLastByte() throws {
        try bucket(#"{"id":"big"}"#)
        let folder = server.application.config.storage.directory
        let bytes = Self.bytes(300_000)
        let created = try create("big", "dir/film.bin", length: bytes.count, headers: service, type: "video/mp4")
        #expect(created.status == 201 && created.header("Upload-Expires")?.hasSuffix("GMT") == true, "\(created.text)")
        let upload = try path(created)
        #expect(upload.hasPrefix("/storage/v1/upload/resumable/"))
        #expect(try head(upload, headers: service).header("Upload-Offset") == "0")

        let first = try patch(upload, offset: 0, Array(bytes[0..<100_000]), headers: service)
        #expect(first.status == 204 && first.header("Upload-Offset") == "100000" && first.header("Tus-Complete") == nil, "\(first.text)")
        let wrong = try patch(upload, offset: 0, Array(bytes[0..<10]), headers: service)
        #expect(wrong.status == 409 && wrong.text == "Upload-Offset conflict\n")
        #expect(try server.client().request("GET", "/storage/v1/object/big/dir/film.bin", headers: service).status == 404, "not listed before the end")

        // The TUS protocol's own refusals.
        let noVersion = try server.client().request(
            "PATCH", upload, headers: service + [("Upload-Offset", "100000"), ("Content-Type", "application/offset+octet-stream")], bodyBytes: [1])
        #expect(noVersion.status == 412 && noVersion.text == "Tus-Resumable Required\n")
        let badType = try server.client().request(
            "PATCH", upload, headers: service + [("Tus-Resumable", "1.0.0"), ("Upload-Offset", "100000"), ("Content-Type", "text/plain")], bodyBytes: [1])
        #expect(badType.status == 400 && badType.text == "Invalid content-type\n")

        // A second server on the same database and folder (nothing in memory) resumes it.
        let second = try TestServer(databaseURL: server.databaseURL) { $0.storage.directory = folder }
        let state = try head(on: second, upload, headers: service)
        #expect(state.status == 200 && state.header("Upload-Offset") == "100000" && state.header("Upload-Length") == "300000")
        #expect(state.header("Upload-Metadata")?.contains("cacheControl " + Data("max-age=60".utf8).base64EncodedString()) == true)
        let middle = try patch(on: second, upload, offset: 100_000, Array(bytes[100_000..<250_000]), headers: service)
        #expect(middle.status == 204 && middle.header("Upload-Offset") == "250000")
        let last = try patch(upload, offset: 250_000, Array(bytes[250_000...]), headers: service)
        #expect(last.status == 204 && last.header("Upload-Offset") == "300000" && last.header("Tus-Complete") == "1", "\(last.text)")

        let object = try second.client().request("GET", "/storage/v1/object/big/dir/film.bin", headers: service)
        #expect(object.status == 200 && object.body == bytes && object.header("Content-Type") == "video/mp4")
        #expect(object.header("Cache-Control") == "max-age=60")
        let plain = try server.client().request(
            "POST", "/storage/v1/object/big/plain.bin", headers: service + [("Content-Type", "video/mp4")], bodyBytes: bytes)
        #expect(plain.status == 200)
        let plainTag = try server.client().request("GET", "/storage/v1/object/big/plain.bin", headers: service).header("ETag")
        #expect(object.header("ETag") == plainTag, "the same ETag as a normal upload of the same bytes")
        // Done: HEAD reports the whole length (a client resuming it is finished); a PATCH or DELETE
        // is checked as a new write first, as Storage does, and the object exists now.
        #expect(try head(upload, headers: service).header("Upload-Offset") == "300000")
        let again = try patch(upload, offset: 300_000, [], headers: service)
        #expect(again.status == 409 && again.text == "The resource already exists", "\(again.text)")
        let late = try server.client().request("DELETE", upload, headers: service + [("Tus-Resumable", "1.0.0")])
        #expect(late.status == 409)
        #expect(try server.client().request("GET", "/storage/v1/object/big/dir/film.bin", headers: service).body == bytes)
        #expect(uploadFiles(folder).allSatisfy { $0.hasSuffix(".json") || $0.hasSuffix(".done") }, "the bytes moved into objects/")
    }

    @Test func aCallerWithoutTheInsertPolicyNeverUploadsAByte() throws {
        let owner = try server.signUp()
        let stranger = try server.signUp()
        let folder = server.application.config.storage.directory
        let ownerHeaders = [("apikey", server.anonKey), ("Authorization", "Bearer \(owner.token)")]
        let strangerHeaders = [("apikey", server.anonKey), ("Authorization", "Bearer \(stranger.token)")]
        let refused = try create("avatars", "\(owner.id)/me.png", length: 3, headers: strangerHeaders, type: "image/png")
        #expect(refused.status == 403 && refused.text.contains("row-level security"), "\(refused.status) \(refused.text)")
        let anonymous = try create("avatars", "\(owner.id)/me.png", length: 3, headers: [("apikey", server.anonKey)], type: "image/png")
        #expect(anonymous.status == 403)
        let unauthenticated = try create("avatars", "\(owner.id)/me.png", length: 3, headers: [], type: "image/png")
        #expect(unauthenticated.status == 400 && unauthenticated.jsonObject?["statusCode"] as? String == "400", "credentials: Storage's JSON")
        #expect(uploadFiles(folder).isEmpty, "nothing created for a refused caller")

        let created = try create("avatars", "\(owner.id)/me.png", length: 3, headers: ownerHeaders, type: "image/png")
        #expect(created.status == 201, "\(created.text)")
        let upload = try path(created)
        let intruder = try patch(upload, offset: 0, [1, 2, 3], headers: strangerHeaders)
        #expect(intruder.status == 403)
        #expect(try head(upload, headers: ownerHeaders).header("Upload-Offset") == "0")
        #expect(try patch(upload, offset: 0, [1, 2, 3], headers: ownerHeaders).header("Tus-Complete") == "1")
        let info = try server.client().request("GET", "/storage/v1/object/info/avatars/\(owner.id)/me.png", headers: ownerHeaders)
        #expect(info.status == 200 && info.jsonObject?["size"] as? Int == 3, "\(info.text)")
        #expect(try server.client().request("GET", "/storage/v1/object/avatars/\(owner.id)/me.png", headers: ownerHeaders).body == [1, 2, 3])
    }

    @Test func theBucketsLimitsAndStoragesRefusals() throws {
        try bucket(#"{"id":"small","file_size_limit":"1KB","allowed_mime_types":["text/*"]}"#)
        let tooLarge = try create("small", "a.txt", length: 2000, headers: service)
        #expect(tooLarge.status == 413 && tooLarge.text == "Maximum size exceeded\n" && tooLarge.header("Tus-Resumable") == "1.0.0")
        let wrongType = try create("small", "a.png", length: 10, headers: service, type: "image/png")
        #expect(wrongType.status == 415 && wrongType.text == "mime type image/png is not supported")
        let noBucket = try create("nowhere", "a.txt", length: 10, headers: service)
        #expect(noBucket.status == 404 && noBucket.text == "Bucket not found")
        let noMetadata = try server.client().request(
            "POST", "/storage/v1/upload/resumable", headers: service + [("Tus-Resumable", "1.0.0"), ("Upload-Length", "10")])
        #expect(noMetadata.status == 400 && noMetadata.text == "Metadata header is required")
        let noLength = try server.client().request(
            "POST", "/storage/v1/upload/resumable",
            headers: service + [("Tus-Resumable", "1.0.0"), ("Upload-Metadata", Self.metadata([("bucketName", "small"), ("objectName", "a")]))])
        #expect(noLength.status == 400 && noLength.text == "Upload-Length or Upload-Defer-Length header required\n")
        let badMetadata = try server.client().request(
            "POST", "/storage/v1/upload/resumable", headers: service + [("Tus-Resumable", "1.0.0"), ("Upload-Length", "1"), ("Upload-Metadata", "a b c")])
        #expect(badMetadata.status == 400 && badMetadata.text == "Invalid upload-metadata\n")

        let created = try create("small", "b.txt", length: 10, headers: service)
        let upload = try path(created)
        let beyond = try patch(upload, offset: 0, Self.bytes(11), headers: service)
        #expect(beyond.status == 413 && beyond.text == "upload's size exceeded\n")
        #expect(try head(upload, headers: service).header("Upload-Offset") == "0", "a refused chunk writes nothing")
        let unknown = try head(upload.replacingOccurrences(of: "resumable/", with: "resumable/x"), headers: service)
        #expect(unknown.status == 404 || unknown.status == 400)
    }

    @Test func upsertReplacesAnObjectAndCreationWithUploadCarriesTheBytes() throws {
        try bucket(#"{"id":"docs"}"#)
        let folder = server.application.config.storage.directory
        #expect(try create("docs", "a.txt", length: 3, headers: service, body: Array("old".utf8)).header("Tus-Complete") == "1")
        let objectsBefore = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("objects").path)
        let duplicate = try create("docs", "a.txt", length: 3, headers: service)
        #expect(duplicate.status == 409 && duplicate.text == "The resource already exists", "\(duplicate.text)")
        let replaced = try create("docs", "a.txt", length: 3, headers: service, extra: [("x-upsert", "true")], body: Array("new".utf8))
        #expect(replaced.status == 201 && replaced.header("Upload-Offset") == "3" && replaced.header("Tus-Complete") == "1", "\(replaced.text)")
        #expect(try server.client().request("GET", "/storage/v1/object/docs/a.txt", headers: service).text == "new")
        let upload = try path(replaced)
        #expect(try patch(upload, offset: 3, [], headers: service).header("Tus-Complete") == "1", "a repeated last PATCH commits nothing again")
        #expect(try patch(upload, offset: 0, [1], headers: service).status == 409)
        let late = try server.client().request("DELETE", upload, headers: service + [("Tus-Resumable", "1.0.0")])
        #expect(late.status == 400 && late.text == "Cannot terminate an already completed upload")
        let objectsAfter = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("objects").path)
        #expect(objectsAfter.count == objectsBefore.count && Set(objectsAfter) != Set(objectsBefore), "the old bytes are removed")
        let empty = try create("docs", "empty.txt", length: 0, headers: service)
        #expect(empty.status == 201 && empty.header("Tus-Complete") == "1")
        #expect(try server.client().request("GET", "/storage/v1/object/docs/empty.txt", headers: service).status == 200)
    }

    @Test func aSignedUploadURLAllowsAResumableUploadWithoutASession() throws {
        let owner = try server.signUp()
        let ownerHeaders = [("apikey", server.anonKey), ("Authorization", "Bearer \(owner.token)")]
        let signed = try server.client().request("POST", "/storage/v1/object/upload/sign/avatars/\(owner.id)/signed.png", headers: ownerHeaders)
        let token = try #require(signed.jsonObject?["token"] as? String, "\(signed.text)")
        let signature = [("x-signature", token)]
        let missing = try create("avatars", "\(owner.id)/signed.png", length: 4, headers: [], type: "image/png", path: "/storage/v1/upload/resumable/sign")
        #expect(missing.status == 400 && missing.text == "Missing x-signature header")
        let other = try create(
            "avatars", "\(owner.id)/other.png", length: 4, headers: signature, type: "image/png", path: "/storage/v1/upload/resumable/sign")
        #expect(other.status == 400, "a token for another object")
        let created = try create(
            "avatars", "\(owner.id)/signed.png", length: 4, headers: signature, type: "image/png", path: "/storage/v1/upload/resumable/sign")
        #expect(created.status == 201, "\(created.text)")
        let upload = try path(created)
        #expect(upload.hasPrefix("/storage/v1/upload/resumable/sign/"))
        #expect(try patch(upload, offset: 0, [9, 9], headers: []).status == 400)
        #expect(try patch(upload, offset: 0, [9, 9], headers: signature).header("Upload-Offset") == "2")
        #expect(try patch(upload, offset: 2, [8, 8], headers: signature).header("Tus-Complete") == "1")
        let info = try server.client().request("GET", "/storage/v1/object/info/avatars/\(owner.id)/signed.png", headers: ownerHeaders)
        #expect(info.status == 200 && info.jsonObject?["size"] as? Int == 4, "owned by who asked for the URL: \(info.text)")
    }

    @Test func terminationAndExpiryRemoveTheBytes() throws {
        let short = try TestServer { $0.storage.resumableExpirySeconds = 1 }
        let headers = [("apikey", short.anonKey), ("Authorization", "Bearer \(short.serviceKey)")]
        #expect(
            try short.client().request("POST", "/storage/v1/bucket", headers: headers + [("Content-Type", "application/json")], body: #"{"id":"t"}"#).status
                == 200)
        let folder = short.application.config.storage.directory
        let ended = try path(try create(on: short, "t", "a.txt", length: 10, headers: headers))
        #expect(try patch(on: short, ended, offset: 0, [1, 2], headers: headers).status == 204)
        #expect(try short.client().request("DELETE", ended, headers: headers + [("Tus-Resumable", "1.0.0")]).status == 204)
        #expect(try head(on: short, ended, headers: headers).status == 404)
        #expect(uploadFiles(folder).isEmpty)

        let abandoned = try path(try create(on: short, "t", "b.txt", length: 10, headers: headers))
        #expect(uploadFiles(folder).count == 2)
        Thread.sleep(forTimeInterval: 2.2)
        let gone = try patch(on: short, abandoned, offset: 0, [1], headers: headers)
        #expect(gone.status == 410 && gone.text == "The file for this url no longer exists\n")
        let next = try create(on: short, "t", "c.txt", length: 10, headers: headers)
        #expect(next.status == 201)
        #expect(uploadFiles(folder).count == 2, "the abandoned upload was removed: \(uploadFiles(folder))")
        #expect(try head(on: short, abandoned, headers: headers).status == 404)
    }
}
