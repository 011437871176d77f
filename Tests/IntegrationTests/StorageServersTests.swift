import Foundation
import Glibc
import Identity
import Postgres
import TestSupport
import Testing

/// Storage across processes: two servers on one database and one folder serve each other's
/// objects; a server killed (SIGKILL) in the middle of an upload leaves no object and no bytes.
@Suite("Storage: several servers, and a crash", .serialized)
struct StorageServersTests {
    @Test func twoServersOnOneDatabaseServeEachOthersObjects() throws {
        let first = try TestServer()
        let folder = first.application.config.storage.directory
        let second = try TestServer(databaseURL: first.databaseURL) { $0.storage.directory = folder }
        let service = [("apikey", first.anonKey), ("Authorization", "Bearer \(first.serviceKey)")]
        let json = service + [("Content-Type", "application/json")]
        #expect(try first.client().request("POST", "/storage/v1/bucket", headers: json, body: #"{"id":"shared"}"#).status == 200)
        let put = try first.client().request(
            "POST", "/storage/v1/object/shared/a.txt", headers: service + [("Content-Type", "text/plain")], bodyBytes: Array("one".utf8))
        #expect(put.status == 200)
        #expect(try second.client().request("GET", "/storage/v1/object/shared/a.txt", headers: service).text == "one")
        let signed = try second.client().request("POST", "/storage/v1/object/sign/shared/a.txt", headers: json, body: #"{"expiresIn":60}"#)
        let url = try #require(signed.jsonObject?["signedURL"] as? String)
        #expect(try first.client().request("GET", "/storage/v1" + url).text == "one")
        #expect(try second.client().request("DELETE", "/storage/v1/object/shared/a.txt", headers: service).status == 200)
        #expect(try first.client().request("GET", "/storage/v1/object/shared/a.txt", headers: service).status == 404)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("objects").path).isEmpty)
    }

    @Test func aServerKilledDuringAnUploadLeavesNoObject() throws {
        let url = try TestPostgres.makeDatabase()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("onboard-storage-kill-\(UUID().uuidString)")
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
        let service = [("apikey", anonKey), ("Authorization", "Bearer \(serviceKey)")]
        let first = try ServerProcess(environment: environment)
        let created = try first.client().request(
            "POST", "/storage/v1/bucket", headers: service + [("Content-Type", "application/json")], body: #"{"id":"crash"}"#)
        #expect(created.status == 200)

        // Half of a 4 MB upload, then SIGKILL.
        let size = 4 * 1024 * 1024
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(first.port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        var head = "POST /storage/v1/object/crash/video.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: video/mp4\r\nContent-Length: \(size)\r\n"
        for (name, value) in service { head += "\(name): \(value)\r\n" }
        let partial = Array((head + "\r\n").utf8) + [UInt8](repeating: 9, count: size / 2)
        var sent = 0
        while sent < partial.count {
            let count = partial[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            sent += count
        }
        #expect(sent == partial.count)
        usleep(200_000)
        #expect(first.kill(), "the server was killed by SIGKILL")

        let second = try ServerProcess(environment: environment)
        let listed = try second.client().request(
            "POST", "/storage/v1/object/list/crash", headers: service + [("Content-Type", "application/json")], body: #"{"prefix":""}"#)
        #expect(listed.status == 200 && listed.text == "[]", "\(listed.text)")
        #expect(try second.client().request("GET", "/storage/v1/object/crash/video.bin", headers: service).status == 404)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("objects").path).isEmpty)
        // A whole upload after the restart is stored and served.
        let whole = try second.client().request(
            "POST", "/storage/v1/object/crash/video.bin", headers: service + [("Content-Type", "video/mp4")], bodyBytes: [UInt8](repeating: 9, count: size))
        #expect(whole.status == 200)
        #expect(try second.client().request("GET", "/storage/v1/object/crash/video.bin", headers: service).body.count == size)
    }

    /// A large upload that arrives steadily but takes longer than the request timeout is not cut
    /// off: each byte beyond the ordinary body limit buys time.
    @Test func aSlowLargeUploadOutlivesTheRequestTimeout() throws {
        let server = try TestServer {
            $0.limits.requestTimeout = 2
            $0.limits.largeBodyBytesPerSecond = 1024 * 1024
        }
        let service = [("apikey", server.anonKey), ("Authorization", "Bearer \(server.serviceKey)")]
        #expect(
            try server.client().request("POST", "/storage/v1/bucket", headers: service + [("Content-Type", "application/json")], body: #"{"id":"slow"}"#)
                .status == 200)
        let chunk = 1024 * 1024
        let chunks = 8
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(server.port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        var head = "POST /storage/v1/object/slow/big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
        head += "Content-Length: \(chunk * chunks)\r\nConnection: close\r\n"
        for (name, value) in service { head += "\(name): \(value)\r\n" }
        func sendAll(_ bytes: [UInt8]) {
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard count > 0 else { return }
                sent += count
            }
        }
        sendAll(Array((head + "\r\n").utf8))
        for _ in 0..<chunks {
            sendAll([UInt8](repeating: 5, count: chunk))
            usleep(500_000)
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            answer += buffer[0..<count]
        }
        let text = String(decoding: answer, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200"), "\(text.prefix(200))")
    }
}
