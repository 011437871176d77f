import Foundation
import HTTP
import Testing

@testable import Storage

/// Storage's routes parsed from a method and a path (no server): what each of the clients'
/// requests is taken for, and what is none of Storage's.
@Suite("Storage: routes")
struct StorageRouteTests {
    @Test func theClientsRequestsAreParsed() {
        let cases: [(HTTPMethod, String, StorageRoute?)] = [
            (.get, "/bucket", .listBuckets),
            (.post, "/bucket", .createBucket),
            (.get, "/bucket/b", .getBucket("b")),
            (.put, "/bucket/b", .updateBucket("b")),
            (.post, "/bucket/b/empty", .emptyBucket("b")),
            (.delete, "/bucket/b", .deleteBucket("b")),
            (.post, "/object/b/a/c.png", .upload(bucket: "b", name: "a/c.png", update: false)),
            (.put, "/object/b/c.png", .upload(bucket: "b", name: "c.png", update: true)),
            (.get, "/object/b/a/c.png", .download(bucket: "b", name: "a/c.png", public: false)),
            (.head, "/object/b/c.png", .download(bucket: "b", name: "c.png", public: false)),
            (.get, "/object/authenticated/b/c.png", .download(bucket: "b", name: "c.png", public: false)),
            (.get, "/object/public/b/c.png", .download(bucket: "b", name: "c.png", public: true)),
            (.get, "/object/info/b/a/c.png", .info(bucket: "b", name: "a/c.png")),
            (.get, "/object/info/public/b/c.png", .info(bucket: "b", name: "c.png")),
            (.post, "/object/list/b", .list(bucket: "b")),
            (.post, "/object/move", .move),
            (.post, "/object/copy", .copy),
            (.delete, "/object/b", .deleteMany(bucket: "b")),
            (.delete, "/object/b/c.png", .deleteOne(bucket: "b", name: "c.png")),
            (.post, "/object/sign/b/a/c.png", .sign(bucket: "b", name: "a/c.png")),
            (.post, "/object/sign/b", .signMany(bucket: "b")),
            (.get, "/object/sign/b/c.png", .signedDownload(bucket: "b", name: "c.png")),
            (.post, "/object/upload/sign/b/c.png", .signUpload(bucket: "b", name: "c.png")),
            (.put, "/object/upload/sign/b/c.png", .signedUpload(bucket: "b", name: "c.png")),
            (.get, "/object/b", nil),
            (.patch, "/object/b/c.png", nil),
            (.get, "/render/image/public/b/c.png", nil),
            (.get, "/", nil)
        ]
        for (method, path, expected) in cases {
            #expect(StorageRoute.parse(method: method, path: path) == expected, "\(method) \(path)")
        }
    }

    /// A resumable upload's `Location` names the origin the client used, behind a proxy too.
    @Test func theUploadsOriginIsTheOneTheClientReached() {
        func origin(_ headers: HTTPHeaders) -> String {
            StorageService.publicOrigin(HTTPRequest(method: .post, target: "/storage/v1/upload/resumable", headers: headers))
        }
        #expect(origin(["Host": "127.0.0.1:54321"]) == "http://127.0.0.1:54321")
        #expect(origin(["Host": "127.0.0.1", "X-Forwarded-Port": "8080"]) == "http://127.0.0.1:8080")
        #expect(origin(["Host": "api.example.org", "X-Forwarded-Proto": "https", "X-Forwarded-Port": "443"]) == "https://api.example.org")
        #expect(origin(["Host": "10.0.0.5:9000", "X-Forwarded-Host": "files.example.org, inner", "X-Forwarded-Proto": "https"]) == "https://files.example.org")
        #expect(origin(["Host": "[::1]", "X-Forwarded-Port": "8443"]) == "http://[::1]:8443")
        #expect(origin([:]) == "http://localhost")
    }

    @Test func namesAndRangesAreCheckedAsStorageDoes() {
        #expect(StorageService.isValidObjectName("a/b c/d(1).png"))
        #expect(!StorageService.isValidObjectName("a/../b"))
        #expect(!StorageService.isValidObjectName("a/\u{0}b"))
        #expect(!StorageService.isValidObjectName(""))
        #expect(StorageService.byteRange("bytes=0-0", size: 10) == 0..<1)
        #expect(StorageService.byteRange("bytes=5-", size: 10) == 5..<10)
        #expect(StorageService.byteRange("bytes=-4", size: 10) == 6..<10)
        #expect(StorageService.byteRange("bytes=3-99", size: 10) == 3..<10)
        #expect(StorageService.byteRange("bytes=10-", size: 10) == nil)
        #expect(StorageService.byteRange("bytes=0-1,3-4", size: 10) == nil)
        #expect(StorageService.byteCount("5MB") == 5 * 1_048_576)
        #expect(StorageService.byteCount(1024) == 1024)
        #expect(StorageService.byteCount("a lot") == nil)
        #expect(BucketLimits(isPublic: false, fileSizeLimit: nil, allowedMimeTypes: ["image/*"]).allows(mimeType: "image/png; q=1"))
        #expect(!BucketLimits(isPublic: false, fileSizeLimit: nil, allowedMimeTypes: ["image/*"]).allows(mimeType: "text/plain"))
    }

    @Test func multipartBodiesAreSplitIntoParts() throws {
        let body = Array(
            "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.txt\"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--x--\r\n"
                .utf8)
        let parts = try #require(Multipart.parse(body, boundary: "x"))
        #expect(parts.count == 2 && parts[0].name == "a" && parts[0].body == Array("1".utf8))
        #expect(parts[1].filename == "f.txt" && parts[1].contentType == "text/plain" && parts[1].body == Array("hi".utf8))
        #expect(Multipart.parse(Array("--x\r\nbroken".utf8), boundary: "x") == nil)
        #expect(Multipart.boundary(contentType: "multipart/form-data; boundary=\"abc\"") == "abc")
        #expect(Multipart.boundary(contentType: "text/plain") == nil)
    }

    @Test func uploadsCutShortByACrashAreRemovedAtStart() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("onboard-storage-tmp-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        _ = try FileStore(root: root)
        let stale = root.appendingPathComponent("tmp/stale")
        let fresh = root.appendingPathComponent("tmp/fresh")
        #expect(FileManager.default.createFile(atPath: stale.path, contents: Data([1])))
        #expect(FileManager.default.createFile(atPath: fresh.path, contents: Data([2])))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7200)], ofItemAtPath: stale.path)
        let store = try FileStore(root: root)
        #expect(!FileManager.default.fileExists(atPath: stale.path), "an old temporary file is a crash's leftover")
        #expect(FileManager.default.fileExists(atPath: fresh.path), "a young one may be an upload in progress")
        let version = try store.write([7, 8, 9])
        #expect(store.read(version) == [7, 8, 9])
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("tmp").path) == ["fresh"])
        store.remove(version)
        #expect(store.read(version) == nil)
        #expect(store.read("../../etc/passwd") == nil)
    }
}
