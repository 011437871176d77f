import Foundation
import Identity
import TestSupport
import Testing

/// Supabase Storage's API under `/storage/v1` over real sockets, a real database and real files:
/// buckets, uploads (raw and multipart), downloads with ranges and validators, listing, moves,
/// copies, removal, signed URLs, and Storage's error shape.
@Suite("Storage: buckets, objects and signed URLs", .serialized)
struct StorageTests {
    let server: TestServer

    init() throws { server = try TestServer() }

    var service: [(String, String)] { [("apikey", server.anonKey), ("Authorization", "Bearer \(server.serviceKey)")] }

    func send(_ method: String, _ path: String, _ headers: [(String, String)], json: String? = nil) throws -> TestResponse {
        try server.client().request(
            method, "/storage/v1" + path, headers: headers + (json == nil ? [] : [("Content-Type", "application/json")]), body: json)
    }

    func upload(
        _ path: String, _ bytes: [UInt8], _ headers: [(String, String)], type: String = "text/plain", extra: [(String, String)] = []
    )
        throws -> TestResponse
    {
        try server.client().request("POST", "/storage/v1/object/" + path, headers: headers + [("Content-Type", type)] + extra, bodyBytes: bytes)
    }

    func files(_ root: URL) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("objects").path)) ?? []
    }

    @Test func bucketsAreCreatedReadUpdatedEmptiedAndDeleted() throws {
        let created = try send(
            "POST", "/bucket", service, json: #"{"id":"docs","name":"docs","public":false,"file_size_limit":"1KB","allowed_mime_types":["text/*"]}"#)
        #expect(created.status == 200 && created.jsonObject?["name"] as? String == "docs", "\(created.status) \(created.text)")
        let again = try send("POST", "/bucket", service, json: #"{"id":"docs"}"#)
        #expect(again.status == 409 && again.jsonObject?["statusCode"] as? String == "409", "\(again.text)")
        let bucket = try send("GET", "/bucket/docs", service).jsonObject
        #expect(bucket?["file_size_limit"] as? Int == 1024 && bucket?["public"] as? Bool == false && bucket?["owner"] as? String == "")
        #expect(bucket?["allowed_mime_types"] as? [String] == ["text/*"])
        let all = try send("GET", "/bucket", service).jsonArray?.compactMap { $0["id"] as? String } ?? []
        #expect(all.contains("docs") && all.contains("avatars"))
        let missing = try send("GET", "/bucket/nope", service)
        #expect(missing.status == 404 && missing.text == #"{"statusCode":"404","error":"Bucket not found","message":"Bucket not found"}"#)

        // The bucket's limits: size and type.
        #expect(try upload("docs/a.txt", Array(repeating: 65, count: 2000), service).status == 413)
        let wrongType = try upload("docs/a.png", [1, 2, 3], service, type: "image/png")
        #expect(wrongType.status == 415 && wrongType.jsonObject?["error"] as? String == "invalid_mime_type", "\(wrongType.text)")
        #expect(try upload("docs/a.txt", Array("hello".utf8), service).status == 200)
        let updated = try send("PUT", "/bucket/docs", service, json: #"{"public":true,"file_size_limit":null,"allowed_mime_types":null}"#)
        #expect(updated.status == 200 && updated.jsonObject?["message"] as? String == "Successfully updated")
        #expect(try upload("docs/b.png", [1, 2, 3], service, type: "image/png").status == 200)

        let notEmpty = try send("DELETE", "/bucket/docs", service)
        #expect(notEmpty.status == 409 && notEmpty.jsonObject?["message"] as? String == "The bucket you tried to delete is not empty", "\(notEmpty.text)")
        #expect(files(server.application.config.storage.directory).count == 2)
        #expect(try send("POST", "/bucket/docs/empty", service).jsonObject?["message"] as? String == "Successfully emptied")
        #expect(files(server.application.config.storage.directory).isEmpty, "emptying removes the bytes")
        #expect(try send("DELETE", "/bucket/docs", service).jsonObject?["message"] as? String == "Successfully deleted")
        #expect(try send("GET", "/bucket/docs", service).status == 404)
        // Without any credentials: Storage's own refusal.
        #expect(try send("GET", "/bucket", []).jsonObject?["statusCode"] as? String == "400")
    }

    @Test func objectsAreUploadedDownloadedAndServedWithValidatorsAndRanges() throws {
        _ = try send("POST", "/bucket", service, json: #"{"id":"files","public":true}"#)
        let bytes = Array("0123456789".utf8)
        let uploaded = try upload("files/dir/digits.txt", bytes, service, extra: [("Cache-Control", "max-age=60")])
        #expect(uploaded.status == 200 && uploaded.jsonObject?["Key"] as? String == "files/dir/digits.txt", "\(uploaded.text)")
        #expect(try upload("files/dir/digits.txt", bytes, service).status == 409, "no overwrite without x-upsert")

        let got = try send("GET", "/object/files/dir/digits.txt", service)
        #expect(got.status == 200 && got.body == bytes && got.header("Content-Type") == "text/plain" && got.header("Cache-Control") == "max-age=60")
        let eTag = try #require(got.header("ETag"))
        #expect(got.header("Last-Modified")?.hasSuffix("GMT") == true)
        #expect(try send("GET", "/object/files/dir/digits.txt", service + [("If-None-Match", eTag)]).status == 304)
        let range = try send("GET", "/object/authenticated/files/dir/digits.txt", service + [("Range", "bytes=2-4")])
        #expect(range.status == 206 && range.text == "234" && range.header("Content-Range") == "bytes 2-4/10")
        #expect(try send("GET", "/object/files/dir/digits.txt", service + [("Range", "bytes=-3")]).text == "789")
        #expect(try send("GET", "/object/files/dir/digits.txt", service + [("Range", "bytes=20-")]).status == 416)
        // As Storage's renderer writes it (supabase-py's own suite compares it whole).
        let download = try send("GET", "/object/files/dir/digits.txt?download=r%C3%A9sum%C3%A9%20v2.txt", service)
        #expect(download.header("Content-Disposition") == "attachment; filename=r%C3%A9sum%C3%A9%20v2.txt; filename*=UTF-8''r%C3%A9sum%C3%A9%20v2.txt")
        #expect(try send("GET", "/object/files/dir/digits.txt?download", service).header("Content-Disposition") == "attachment;")
        // Public bucket: anyone, without a key.
        #expect(try server.client().request("GET", "/storage/v1/object/public/files/dir/digits.txt").body == bytes)
        let info = try send("GET", "/object/info/files/dir/digits.txt", service).jsonObject
        #expect(info?["size"] as? Int == 10 && info?["content_type"] as? String == "text/plain")

        // Overwrite with x-upsert, update with PUT: the old bytes go.
        #expect(try upload("files/dir/digits.txt", Array("abc".utf8), service, extra: [("x-upsert", "true")]).status == 200)
        #expect(try send("GET", "/object/files/dir/digits.txt", service).text == "abc")
        let put = try server.client().request(
            "PUT", "/storage/v1/object/files/dir/digits.txt", headers: service + [("Content-Type", "text/plain")], bodyBytes: Array("xyz".utf8))
        let afterPut = try send("GET", "/object/files/dir/digits.txt", service)
        #expect(put.status == 200 && afterPut.text == "xyz")
        #expect(files(server.application.config.storage.directory).count == 1)
        let missing = try send("GET", "/object/files/none.txt", service)
        #expect(missing.status == 404 && missing.text == #"{"statusCode":"404","error":"not_found","message":"Object not found"}"#)
        let putMissing = try server.client().request("PUT", "/storage/v1/object/files/none.txt", headers: service, bodyBytes: [1])
        #expect(putMissing.status == 404)
        #expect(try upload("files/../x", [1], service).status == 400)
    }

    @Test func multipartUploadsCarryTypeCacheControlAndMetadata() throws {
        _ = try send("POST", "/bucket", service, json: #"{"id":"forms"}"#)
        let boundary = "b0undary"
        let body =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"cacheControl\"\r\n\r\n3600\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{\"kind\":\"photo\"}\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"p.png\"\r\nContent-Type: image/png\r\n\r\n\u{1}\u{2}\r\n\u{3}\r\n"
            + "--\(boundary)--\r\n"
        let uploaded = try server.client().request(
            "POST", "/storage/v1/object/forms/p.png", headers: service + [("Content-Type", "multipart/form-data; boundary=\(boundary)")], body: body)
        #expect(uploaded.status == 200, "\(uploaded.text)")
        let got = try send("GET", "/object/forms/p.png", service)
        #expect(got.body == [1, 2, 13, 10, 3] && got.header("Content-Type") == "image/png" && got.header("Cache-Control") == "max-age=3600")
        let info = try send("GET", "/object/info/forms/p.png", service).jsonObject
        #expect((info?["metadata"] as? [String: Any])?["kind"] as? String == "photo")
    }

    @Test func listingMovingCopyingAndRemoving() throws {
        _ = try send("POST", "/bucket", service, json: #"{"id":"tree"}"#)
        for name in ["a/one.txt", "a/two.txt", "a/sub/three.txt", "b.txt"] {
            #expect(try upload("tree/" + name, Array(name.utf8), service).status == 200)
        }
        let top = try send("POST", "/object/list/tree", service, json: #"{"prefix":"","limit":100,"offset":0,"sortBy":{"column":"name","order":"asc"}}"#)
        #expect(top.jsonArray?.compactMap { $0["name"] as? String } == ["a", "b.txt"], "\(top.text)")
        #expect(top.jsonArray?.first?["id"] is NSNull)
        let inA = try send("POST", "/object/list/tree", service, json: #"{"prefix":"a","sortBy":{"column":"name","order":"desc"}}"#)
        #expect(inA.jsonArray?.compactMap { $0["name"] as? String } == ["two.txt", "sub", "one.txt"], "\(inA.text)")
        let searched = try send("POST", "/object/list/tree", service, json: #"{"prefix":"a/","search":"tw"}"#)
        #expect(searched.jsonArray?.compactMap { $0["name"] as? String } == ["two.txt"])
        let paged = try send("POST", "/object/list/tree", service, json: #"{"prefix":"a","limit":1,"offset":1}"#)
        #expect(paged.jsonArray?.compactMap { $0["name"] as? String } == ["sub"])
        #expect(try send("POST", "/object/list/tree", service, json: #"{"sortBy":{"column":"name; drop"}}"#).status == 400)

        let v2 = try send("POST", "/object/list-v2/tree", service, json: #"{"prefix":"a/","with_delimiter":true,"limit":2}"#)
        let page = try #require(v2.jsonObject, "\(v2.text)")
        #expect((page["folders"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["a/sub/"], "\(v2.text)")
        #expect((page["folders"] as? [[String: Any]])?.compactMap { $0["key"] as? String } == ["a/sub"], "\(v2.text)")
        #expect((page["objects"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["a/one.txt"], "\(v2.text)")
        #expect(page["hasNext"] as? Bool == true && page["nextCursor"] as? String == "a/sub/")
        let rest = try send("POST", "/object/list-v2/tree", service, json: #"{"prefix":"a/","with_delimiter":true,"limit":2,"cursor":"a/sub/"}"#)
        #expect((rest.jsonObject?["objects"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["a/two.txt"], "\(rest.text)")
        #expect(rest.jsonObject?["hasNext"] as? Bool == false)
        let flat = try send("POST", "/object/list-v2/tree", service, json: #"{"prefix":"a/"}"#)
        #expect((flat.jsonObject?["objects"] as? [[String: Any]])?.count == 3 && (flat.jsonObject?["folders"] as? [Any])?.isEmpty == true)

        let moved = try send("POST", "/object/move", service, json: #"{"bucketId":"tree","sourceKey":"b.txt","destinationKey":"c/b.txt"}"#)
        #expect(moved.status == 200 && moved.jsonObject?["message"] as? String == "Successfully moved", "\(moved.text)")
        #expect(try send("GET", "/object/tree/c/b.txt", service).text == "b.txt")
        #expect(try send("GET", "/object/tree/b.txt", service).status == 404)
        let copied = try send("POST", "/object/copy", service, json: #"{"bucketId":"tree","sourceKey":"c/b.txt","destinationKey":"d.txt"}"#)
        #expect(copied.status == 200 && copied.jsonObject?["Key"] as? String == "tree/d.txt", "\(copied.text)")
        #expect(try send("GET", "/object/tree/d.txt", service).text == "b.txt")
        let taken = try send("POST", "/object/copy", service, json: #"{"bucketId":"tree","sourceKey":"c/b.txt","destinationKey":"d.txt"}"#)
        #expect(taken.status == 409)

        let removed = try send("DELETE", "/object/tree", service, json: #"{"prefixes":["c/b.txt","d.txt","nothing"]}"#)
        #expect(Set(removed.jsonArray?.compactMap { $0["name"] as? String } ?? []) == ["c/b.txt", "d.txt"], "\(removed.text)")
        #expect(try send("GET", "/object/tree/d.txt", service).status == 404)
        #expect(files(server.application.config.storage.directory).count == 3, "the removed objects' bytes are gone")
    }

    @Test func signedURLsReadAndWriteOneObjectUntilTheyExpire() throws {
        _ = try send("POST", "/bucket", service, json: #"{"id":"signed"}"#)
        #expect(try upload("signed/doc.txt", Array("secret".utf8), service).status == 200)
        let signed = try send("POST", "/object/sign/signed/doc.txt", service, json: #"{"expiresIn":"60"}"#)
        let url = try #require(signed.jsonObject?["signedURL"] as? String)
        #expect(url.hasPrefix("/object/sign/signed/doc.txt?token="))
        #expect(try server.client().request("GET", "/storage/v1" + url).text == "secret")
        let token = String(url.split(separator: "=", maxSplits: 1)[1])
        let other = try server.client().request("GET", "/storage/v1/object/sign/signed/other.txt?token=\(token)")
        #expect(other.status == 400 && other.jsonObject?["error"] as? String == "InvalidSignature")
        let now = Int(Date().timeIntervalSince1970)
        let expired = JWT.signHS256(
            claims: ["url": "signed/doc.txt", "purpose": "download", "iat": now - 600, "exp": now - 300], secret: Array(TestServer.secret.utf8))
        let late = try server.client().request("GET", "/storage/v1/object/sign/signed/doc.txt?token=\(expired)")
        #expect(late.status == 400 && late.jsonObject?["message"] as? String == "jwt expired", "\(late.text)")
        let forged = JWT.signHS256(
            claims: ["url": "signed/doc.txt", "purpose": "download", "exp": now + 300], secret: Array("another-secret-of-32-characters!!".utf8))
        #expect(try server.client().request("GET", "/storage/v1/object/sign/signed/doc.txt?token=\(forged)").status == 400)

        let many = try send("POST", "/object/sign/signed", service, json: #"{"expiresIn":60,"paths":["doc.txt","missing.txt"]}"#)
        let answers = try #require(many.jsonArray)
        #expect(answers.count == 2 && answers[0]["signedURL"] is String && answers[1]["signedURL"] is NSNull && answers[1]["error"] is String)

        let uploadURL = try send("POST", "/object/upload/sign/signed/new.txt", service)
        let uploadToken = try #require(uploadURL.jsonObject?["token"] as? String)
        #expect((uploadURL.jsonObject?["url"] as? String)?.hasSuffix("token=" + uploadToken) == true)
        // A download token does not upload, an upload token does not download.
        #expect(try server.client().request("PUT", "/storage/v1/object/upload/sign/signed/new.txt?token=\(token)", bodyBytes: [1]).status == 400)
        let put = try server.client().request(
            "PUT", "/storage/v1/object/upload/sign/signed/new.txt?token=\(uploadToken)", headers: [("Content-Type", "text/plain")],
            bodyBytes: Array("from a link".utf8))
        #expect(put.status == 200 && put.jsonObject?["Key"] as? String == "signed/new.txt", "\(put.text)")
        #expect(try send("GET", "/object/signed/new.txt", service).text == "from a link")
        #expect(try server.client().request("GET", "/storage/v1/object/sign/signed/new.txt?token=\(uploadToken)").status == 400)
        let twice = try server.client().request("PUT", "/storage/v1/object/upload/sign/signed/new.txt?token=\(uploadToken)", bodyBytes: [1])
        #expect(twice.status == 409, "the token's upload does not overwrite")
    }

    @Test func theUploadLimitIsStoragesShape() throws {
        let small = try TestServer { $0.storage.maxFileSize = 2 * 1024 * 1024 }
        let keys = [("apikey", small.anonKey), ("Authorization", "Bearer \(small.serviceKey)")]
        let http = small.client()
        _ = try http.request("POST", "/storage/v1/bucket", headers: keys + [("Content-Type", "application/json")], body: #"{"id":"big"}"#)
        let tooBig = try http.request("POST", "/storage/v1/object/big/x.bin", headers: keys, bodyBytes: [UInt8](repeating: 7, count: 2 * 1024 * 1024 + 1))
        #expect(
            tooBig.status == 413
                && tooBig.text == #"{"statusCode":"413","error":"Payload too large","message":"The object exceeded the maximum allowed size"}"#,
            "\(tooBig.status) \(tooBig.text)")
        let fits = try http.request("POST", "/storage/v1/object/big/y.bin", headers: keys, bodyBytes: [UInt8](repeating: 7, count: 1536 * 1024))
        #expect(fits.status == 200, "bodies over the HTTP default (1 MB) are accepted under /storage/v1: \(fits.text)")
        #expect(try http.request("GET", "/storage/v1/object/big/y.bin", headers: keys).body.count == 1536 * 1024)
        #expect(try http.request("POST", "/rest/v1/children", headers: keys, bodyBytes: [UInt8](repeating: 32, count: 1536 * 1024)).status == 413)
    }
}
