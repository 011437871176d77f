import Foundation
import Glibc
import Identity
import TestSupport
import Testing

/// A resumable upload across a cut connection and a killed server: a chunk whose body never
/// arrived whole writes nothing, and after SIGKILL a new server process resumes the upload at the
/// offset the disk holds and commits the object.
@Suite("Storage: resumable uploads across a cut and a restart", .serialized)
struct StorageResumableRestartTests {
    /// Sends the request head and `body` on a new socket, then closes it (a connection cut mid-chunk).
    static func sendCut(port: Int, head: String, body: [UInt8]) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        let bytes = Array(head.utf8) + body
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return false }
            sent += count
        }
        usleep(200_000)
        return true
    }

    @Test func aCutChunkWritesNothingAndANewProcessResumesAfterSIGKILL() throws {
        let url = try TestPostgres.makeDatabase()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("onboard-tus-restart-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let now = Int(Date().timeIntervalSince1970)
        let secret = Array(TestServer.secret.utf8)
        let anonKey = JWT.signHS256(claims: ["role": "anon", "iss": "supabase", "iat": now, "exp": now + 3600], secret: secret)
        let serviceKey = JWT.signHS256(claims: ["role": "service_role", "iss": "supabase", "iat": now, "exp": now + 3600], secret: secret)
        let environment = [
            "DATABASE_URL": url, "JWT_SECRET": TestServer.secret, "ANON_KEY": anonKey, "SERVICE_ROLE_KEY": serviceKey, "ONBOARD_HOST": "127.0.0.1",
            "ONBOARD_MIGRATIONS_DIR": TestPostgres.migrationsDirectory.path, "DB_POOL_SIZE": "4", "DB_PIPELINE_CONNECTIONS": "1",
            "STORAGE_DIR": folder.path
        ]
        let service = [("apikey", anonKey), ("Authorization", "Bearer \(serviceKey)"), ("Tus-Resumable", "1.0.0")]
        let bytes = (0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let first = try ServerProcess(environment: environment)
        #expect(
            try first.client().request(
                "POST", "/storage/v1/bucket", headers: service + [("Content-Type", "application/json")], body: #"{"id":"r"}"#
            ).status == 200)
        let meta = "bucketName \(Data("r".utf8).base64EncodedString()),objectName \(Data("clip.bin".utf8).base64EncodedString())"
        let created = try first.client().request(
            "POST", "/storage/v1/upload/resumable", headers: service + [("Upload-Length", "400000"), ("Upload-Metadata", meta)])
        let location = try #require(created.header("Location").flatMap { URL(string: $0)?.path }, "\(created.status) \(created.text)")
        let chunk = [("Content-Type", "application/offset+octet-stream")]
        let firstChunk = try first.client().request(
            "PATCH", location, headers: service + chunk + [("Upload-Offset", "0")], bodyBytes: Array(bytes[0..<150_000]))
        #expect(firstChunk.header("Upload-Offset") == "150000")

        // Half of the next chunk, then the connection drops: nothing of it is kept.
        var head = "PATCH \(location) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 150000\r\nUpload-Offset: 150000\r\n"
        for (name, value) in service + chunk { head += "\(name): \(value)\r\n" }
        #expect(Self.sendCut(port: first.port, head: head + "\r\n", body: Array(bytes[150_000..<225_000])))
        let afterCut = try first.client().request("HEAD", location, headers: service)
        #expect(afterCut.header("Upload-Offset") == "150000")

        // SIGKILL; a new process on the same database and folder resumes from the disk.
        #expect(first.kill(), "the server was killed by SIGKILL")
        let second = try ServerProcess(environment: environment)
        #expect(try second.client().request("HEAD", location, headers: service).header("Upload-Offset") == "150000")
        let rest = try second.client().request(
            "PATCH", location, headers: service + chunk + [("Upload-Offset", "150000")], bodyBytes: Array(bytes[150_000...]))
        #expect(rest.status == 204 && rest.header("Tus-Complete") == "1", "\(rest.status) \(rest.text)")
        let object = try second.client().request("GET", "/storage/v1/object/r/clip.bin", headers: service)
        #expect(object.status == 200 && object.body == bytes)
    }
}
