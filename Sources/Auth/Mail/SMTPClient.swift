import COpenSSL
import Foundation
import Glibc

/// How the SMTP connection is protected (`SMTP_TLS`).
public enum SMTPSecurity: String, Sendable, CaseIterable {
    /// Implicit TLS on port 465; elsewhere STARTTLS when the server offers it, plain text when it
    /// does not (what GoTrue's mail library does).
    case auto
    /// STARTTLS, refusing a server that does not offer it.
    case starttls
    /// Implicit TLS from the first byte (SMTPS).
    case tls
    /// Never TLS (a relay on the same host).
    case off
}

/// The mail server to deliver to (GoTrue's `SMTP_*` settings).
public struct SMTPConfig: Sendable, Equatable {
    public var host: String
    public var port = 587
    public var user: String?
    public var password: String?
    public var security = SMTPSecurity.auto
    /// Extra trusted certificates (PEM), beside the system's (`SMTP_CA_FILE`).
    public var caFile: String?
    /// Seconds for the connection and for each reply.
    public var timeout: Double = 30
    /// The name sent with EHLO.
    public var heloName = "localhost"

    public init(host: String) {
        self.host = host
    }
}

/// Why a delivery failed, and whether trying again later may help (a 4xx reply, a refused or
/// broken connection) or not (a 5xx reply, a certificate that does not verify).
public struct MailDeliveryError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public var transient: Bool

    public init(_ description: String, transient: Bool) {
        self.description = description
        self.transient = transient
    }
}

/// A small SMTP client (RFC 5321) on a blocking socket: EHLO, STARTTLS or implicit TLS with the
/// certificate and host name verified (libssl), AUTH PLAIN or LOGIN, one message per connection.
public struct SMTPClient: Sendable {
    public let config: SMTPConfig

    public init(_ config: SMTPConfig) {
        self.config = config
    }

    /// Delivers `message` (CRLF lines, headers included) from `sender` to `recipients`.
    public func send(from sender: String, to recipients: [String], message: [UInt8]) throws(MailDeliveryError) {
        let connection = try SMTPConnection.open(host: config.host, port: config.port, timeout: config.timeout)
        defer { connection.close() }
        if config.security == .tls || (config.security == .auto && config.port == 465) {
            try connection.startTLS(host: config.host, caFile: config.caFile)
        }
        _ = try connection.expect(220, after: nil)
        var capabilities = try connection.expect(250, after: "EHLO \(config.heloName)")
        if !connection.isTLS && config.security != .off {
            let offered = capabilities.contains { $0.uppercased().hasPrefix("STARTTLS") }
            if config.security == .starttls && !offered {
                throw MailDeliveryError("\(config.host):\(config.port) does not offer STARTTLS (SMTP_TLS=starttls)", transient: false)
            }
            if offered {
                _ = try connection.expect(220, after: "STARTTLS")
                try connection.startTLS(host: config.host, caFile: config.caFile)
                capabilities = try connection.expect(250, after: "EHLO \(config.heloName)")
            }
        }
        if let user = config.user, !user.isEmpty {
            // As Go's net/smtp: credentials never cross the network in clear text.
            guard connection.isTLS || Self.isLoopback(config.host) else {
                throw MailDeliveryError("refusing to send SMTP credentials without TLS to \(config.host)", transient: false)
            }
            let mechanisms =
                capabilities.first { $0.uppercased().hasPrefix("AUTH") }.map {
                    $0.uppercased().split(whereSeparator: { $0 == " " || $0 == "=" }).dropFirst().map(String.init)
                } ?? []
            let password = config.password ?? ""
            if mechanisms.contains("PLAIN") {
                let credentials = Data([0] + Array(user.utf8) + [0] + Array(password.utf8)).base64EncodedString()
                _ = try connection.expect(235, after: "AUTH PLAIN \(credentials)", redacted: "AUTH PLAIN ****")
            } else if mechanisms.contains("LOGIN") {
                _ = try connection.expect(334, after: "AUTH LOGIN")
                _ = try connection.expect(334, after: Data(user.utf8).base64EncodedString(), redacted: "(user name)")
                _ = try connection.expect(235, after: Data(password.utf8).base64EncodedString(), redacted: "(password)")
            } else {
                throw MailDeliveryError("\(config.host) offers no AUTH mechanism this client speaks (PLAIN, LOGIN)", transient: false)
            }
        }
        _ = try connection.expect(250, after: "MAIL FROM:<\(sender)>")
        for recipient in recipients {
            _ = try connection.expect([250, 251], after: "RCPT TO:<\(recipient)>")
        }
        _ = try connection.expect(354, after: "DATA")
        try connection.write(Self.dotStuffed(message))
        _ = try connection.expect(250, after: nil)
        _ = try? connection.expect(221, after: "QUIT")
    }

    /// The DATA payload: lines starting with "." doubled (RFC 5321 §4.5.2), ended by CRLF.CRLF.
    static func dotStuffed(_ message: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(message.count + 8)
        var lineStart = true
        for byte in message {
            if lineStart && byte == 0x2e { out.append(0x2e) }
            out.append(byte)
            lineStart = byte == 0x0a
        }
        if !lineStart { out += [0x0d, 0x0a] }
        out += [0x2e, 0x0d, 0x0a]
        return out
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}

/// One SMTP connection: a blocking socket with send and receive timeouts, TLS once started.
final class SMTPConnection {
    private let fd: Int32
    private let host: String
    private var tls: TLSSession?
    private var buffer: [UInt8] = []

    private init(fd: Int32, host: String) {
        self.fd = fd
        self.host = host
    }

    var isTLS: Bool { tls != nil }

    /// Connects to the first address of `host` that answers within `timeout` seconds.
    static func open(host: String, port: Int, timeout: Double) throws(MailDeliveryError) -> SMTPConnection {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw MailDeliveryError("cannot resolve \(host): \(String(cString: gai_strerror(resolved)))", transient: true)
        }
        defer { freeaddrinfo(first) }
        var failure = "no address"
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let info = node {
            node = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                failure = String(cString: strerror(errno))
                continue
            }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 && errno != EINPROGRESS {
                failure = String(cString: strerror(errno))
                Glibc.close(fd)
                continue
            }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, timeout * 1000)))
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
            guard ready == 1, code == 0 else {
                failure = ready == 0 ? "connection timed out" : String(cString: strerror(code))
                Glibc.close(fd)
                continue
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            var interval = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
            return SMTPConnection(fd: fd, host: host)
        }
        throw MailDeliveryError("cannot connect to \(host):\(port): \(failure)", transient: true)
    }

    func startTLS(host: String, caFile: String?) throws(MailDeliveryError) {
        tls = try TLSSession(fd: fd, host: host, caFile: caFile)
        buffer = []
    }

    func close() {
        tls = nil
        Glibc.close(fd)
    }

    func write(_ bytes: [UInt8]) throws(MailDeliveryError) {
        var offset = 0
        while offset < bytes.count {
            let count: Int
            if let tls {
                count = try tls.write(Array(bytes[offset...]))
            } else {
                count = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if count < 0 { throw MailDeliveryError("send to \(host) failed: \(String(cString: strerror(errno)))", transient: true) }
            }
            offset += count
        }
    }

    /// Sends `command` (if any), reads the reply and returns its text lines; a reply other than
    /// `codes` fails (4xx transient, anything else not).
    func expect(_ codes: [Int], after command: String?, redacted: String? = nil) throws(MailDeliveryError) -> [String] {
        if let command { try write(Array((command + "\r\n").utf8)) }
        let (code, lines) = try readReply()
        guard codes.contains(code) else {
            let said = redacted ?? command.map { String($0.prefix(60)) } ?? "(connect)"
            throw MailDeliveryError(
                "\(host) answered \(said) with \(code) \(lines.joined(separator: " | ").prefix(300))",
                transient: (400..<500).contains(code))
        }
        return lines
    }

    func expect(_ code: Int, after command: String?, redacted: String? = nil) throws(MailDeliveryError) -> [String] {
        try expect([code], after: command, redacted: redacted)
    }

    /// One reply: `ddd-text` lines up to the `ddd text` one.
    private func readReply() throws(MailDeliveryError) -> (Int, [String]) {
        var lines: [String] = []
        while lines.count < 256 {
            let line = try readLine()
            let bytes = Array(line.utf8)
            guard bytes.count >= 3, let code = Int(String(line.prefix(3))) else {
                throw MailDeliveryError("\(host) sent a malformed reply: \(line.prefix(100))", transient: true)
            }
            lines.append(bytes.count > 4 ? String(line.dropFirst(4)) : "")
            if bytes.count == 3 || bytes[3] == 0x20 { return (code, lines) }
        }
        throw MailDeliveryError("\(host) sent an endless reply", transient: true)
    }

    private func readLine() throws(MailDeliveryError) -> String {
        while true {
            if let newline = buffer.firstIndex(of: 0x0a) {
                var line = Array(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                if line.last == 0x0d { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            guard buffer.count < 65536 else { throw MailDeliveryError("\(host) sent a line over 64 KiB", transient: true) }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count: Int
            if let tls {
                count = try tls.read(&chunk)
            } else {
                count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count < 0 {
                    let code = errno
                    throw MailDeliveryError(
                        code == EAGAIN || code == EWOULDBLOCK
                            ? "\(host) did not answer in time"
                            : "receive from \(host) failed: \(String(cString: strerror(code)))", transient: true)
                }
            }
            if count == 0 { throw MailDeliveryError("\(host) closed the connection", transient: true) }
            buffer += chunk[..<count]
        }
    }
}

/// A TLS client session over a connected socket (libssl): TLS 1.2 or newer, the peer's chain
/// verified against the system's trust store plus `caFile`, and its name against `host` (or its
/// address, for an IP literal).
final class TLSSession {
    private let context: OpaquePointer
    private let ssl: OpaquePointer

    init(fd: Int32, host: String, caFile: String?) throws(MailDeliveryError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw MailDeliveryError("SSL_CTX_new failed", transient: true) }
        _ = onboard_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        SSL_CTX_set_default_verify_paths(context)
        if let caFile, !caFile.isEmpty, SSL_CTX_load_verify_locations(context, caFile, nil) != 1 {
            SSL_CTX_free(context)
            throw MailDeliveryError("cannot read the certificates in SMTP_CA_FILE \(caFile): \(Self.lastError())", transient: false)
        }
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw MailDeliveryError("SSL_new failed", transient: true)
        }
        self.context = context
        self.ssl = ssl
        SSL_set_fd(ssl, fd)
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            _ = onboard_SSL_set_tlsext_host_name(ssl, host)
            SSL_set1_host(ssl, host)
        }
        ERR_clear_error()
        guard SSL_connect(ssl) == 1 else {
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                throw MailDeliveryError(
                    "the certificate of \(host) does not verify: \(String(cString: X509_verify_cert_error_string(verify)))",
                    transient: false)
            }
            throw MailDeliveryError("TLS handshake with \(host) failed: \(Self.lastError())", transient: true)
        }
    }

    deinit {
        SSL_shutdown(ssl)
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    func write(_ bytes: [UInt8]) throws(MailDeliveryError) -> Int {
        let count = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32(min($0.count, Int(Int32.max)))) }
        guard count > 0 else { throw MailDeliveryError("TLS write failed: \(Self.lastError())", transient: true) }
        return Int(count)
    }

    func read(_ buffer: inout [UInt8]) throws(MailDeliveryError) -> Int {
        let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
        if count > 0 { return Int(count) }
        if SSL_get_error(ssl, count) == SSL_ERROR_ZERO_RETURN { return 0 }
        throw MailDeliveryError("TLS read failed (timeout or reset): \(Self.lastError())", transient: true)
    }

    static func lastError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "no detail" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
