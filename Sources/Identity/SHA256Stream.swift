import COpenSSL

/// SHA-256 of bytes that arrive in pieces (a file read a piece at a time), through OpenSSL's
/// EVP digest interface; `Crypto.sha256` of the whole is the same digest.
public final class SHA256Stream {
    private let context: OpaquePointer

    public init() {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed: out of memory") }
        self.context = context
        precondition(EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1, "EVP_DigestInit_ex failed")
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        precondition(EVP_DigestUpdate(context, base, bytes.count) == 1, "EVP_DigestUpdate failed")
    }

    /// The digest of everything given so far; the stream is spent afterwards.
    public func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &digest, &length) == 1, "EVP_DigestFinal_ex failed")
        return Array(digest[0..<Int(length)])
    }
}
