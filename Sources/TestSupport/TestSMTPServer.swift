import Foundation
import Glibc

/// A real SMTP server for tests: `tests/smtp/sink.py` (aiosmtpd, Debian's python3-aiosmtpd) in a
/// process of its own on a free loopback port, writing each accepted mail to a folder.
public final class TestSMTPServer: @unchecked Sendable {  // its state is set once in init
    public enum Mode: String, Sendable { case plain, starttls, tls }

    public let port: Int
    public let folder: URL
    /// The PEM certificate the server presents (self-signed for localhost and 127.0.0.1), when
    /// it speaks TLS: the client's SMTP_CA_FILE.
    public let certificate: URL?
    private let process: Process

    /// `port`: the port to listen on (0: a free one).
    public init(mode: Mode = .plain, auth: (user: String, password: String)? = nil, port: Int = 0) throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("onboard-smtp-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
        var arguments = [
            TestPostgres.packageRoot.appendingPathComponent("tests/smtp/sink.py").path,
            "--dir", folder.appendingPathComponent("mail").path,
            "--port-file", folder.appendingPathComponent("port").path, "--mode", mode.rawValue, "--port", "\(port)"
        ]
        if mode != .plain {
            let (certificate, key) = try Self.makeCertificate(in: folder)
            self.certificate = certificate
            arguments += ["--cert", certificate.path, "--key", key.path]
        } else {
            certificate = nil
        }
        if let auth { arguments += ["--auth", "\(auth.user):\(auth.password)"] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let log = folder.appendingPathComponent("sink.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        self.process = process
        let portFile = folder.appendingPathComponent("port")
        guard eventually(timeout: 30, { FileManager.default.fileExists(atPath: portFile.path) || !process.isRunning }),
            let text = try? String(contentsOf: portFile, encoding: .utf8), let port = Int(text)
        else {
            let log = (try? String(contentsOf: folder.appendingPathComponent("sink.log"), encoding: .utf8)) ?? ""
            kill(process.processIdentifier, SIGKILL)
            throw TestHTTPError.protocolError("the SMTP sink did not start (is python3-aiosmtpd installed?): \(log)")
        }
        self.port = port
    }

    /// A loopback port nobody listens on at the time of the call (bound and released).
    public static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestHTTPError.protocolError("socket() failed") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw TestHTTPError.protocolError("bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    public func stop() {
        // SIGKILL: the test runner's ignored SIGTERM is inherited by the child.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The mails received so far, oldest first.
    public func messages() -> [ReceivedMail] {
        let directory = folder.appendingPathComponent("mail")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
        return names.compactMap { name in
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path),
                let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            else { return nil }
            return ReceivedMail(object)
        }
    }

    /// Waits for the mails to `address` to number at least `count`, and returns the latest.
    public func waitForMail(to address: String, count: Int = 1, timeout: Double = 30) throws -> ReceivedMail {
        var found: [ReceivedMail] = []
        _ = eventually(timeout: timeout) {
            found = messages().filter { $0.to.contains(address) }
            return found.count >= count
        }
        guard found.count >= count, let last = found.last else {
            throw TestHTTPError.protocolError("no mail #\(count) to \(address) arrived (got \(found.count))")
        }
        return last
    }

    static func makeCertificate(in folder: URL) throws -> (URL, URL) {
        let certificate = folder.appendingPathComponent("cert.pem")
        let key = folder.appendingPathComponent("key.pem")
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key.path, "-out", certificate.path
        ]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else { throw TestHTTPError.protocolError("openssl req failed") }
        return (certificate, key)
    }
}

/// One mail as the sink received it: the envelope, whether it came over TLS, the AUTH user, and
/// the message with its base64 body decoded.
public struct ReceivedMail: Sendable {
    public let from: String
    public let to: [String]
    public let tls: Bool
    public let user: String?
    public let raw: String
    public let headers: [String: String]
    public let body: String

    init?(_ object: [String: Any]) {
        guard let raw = object["data"] as? String else { return nil }
        from = object["from"] as? String ?? ""
        to = object["to"] as? [String] ?? []
        tls = object["tls"] as? Bool ?? false
        user = object["user"] as? String
        self.raw = raw
        let parts = raw.components(separatedBy: "\r\n\r\n")
        var headers: [String: String] = [:]
        for line in parts[0].components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        self.headers = headers
        let encoded = parts.dropFirst().joined(separator: "\r\n\r\n").replacingOccurrences(of: "\r\n", with: "")
        body =
            headers["content-transfer-encoding"]?.lowercased() == "base64"
            ? Data(base64Encoded: encoded).map { String(decoding: $0, as: UTF8.self) } ?? ""
            : parts.dropFirst().joined(separator: "\r\n\r\n")
    }

    /// The link's path and query (`/auth/v1/verify?token=…`), HTML entities undone.
    public var verifyPath: String? {
        guard let start = body.range(of: "/auth/v1/verify?") else { return nil }
        let tail = body[start.lowerBound...]
        let end = tail.firstIndex { $0 == "\"" || $0 == "<" || $0 == " " } ?? tail.endIndex
        return String(tail[..<end]).replacingOccurrences(of: "&amp;", with: "&")
    }

    /// The `token` parameter of the link.
    public var linkToken: String? {
        verifyPath.flatMap { URLComponents(string: "http://x" + $0)?.queryItems?.first { $0.name == "token" }?.value }
    }

    /// The six-digit code in the body.
    public var code: String? {
        guard let range = body.range(of: #"<strong>([0-9]{6,10})</strong>"#, options: .regularExpression) else { return nil }
        return String(body[range].dropFirst(8).dropLast(9))
    }
}
