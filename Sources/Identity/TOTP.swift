import COpenSSL
import Foundation

/// RFC 6238 time-based one-time passwords with HMAC-SHA-1 (RFC 4226's HOTP over the number of
/// `period`-second steps since the Unix epoch), as authenticator apps compute them.
public enum TOTP {
    /// The step `time` falls in.
    public static func step(at time: Double, period: Int = 30) -> Int64 {
        Int64((time / Double(period)).rounded(.down))
    }

    /// RFC 4226's HOTP value of `counter`: dynamic truncation of HMAC-SHA-1, the last `digits`
    /// decimal digits, zero-padded.
    public static func code(secret: [UInt8], counter: Int64, digits: Int = 6) -> String {
        var message = [UInt8](repeating: 0, count: 8)
        for index in 0..<8 { message[index] = UInt8(truncatingIfNeeded: UInt64(bitPattern: counter) >> UInt64(56 - 8 * index)) }
        let mac = Crypto.hmacSHA1(key: secret, data: message)
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: max(0, digits - value.count)) + value
    }

    /// The step within `skew` steps of `time` whose code is `code`, compared in constant time
    /// (every candidate is computed and compared); nil when none matches.
    public static func matchingStep(_ code: String, secret: [UInt8], at time: Double, period: Int = 30, digits: Int = 6, skew: Int64 = 1) -> Int64? {
        let given = Array(code.utf8)
        let now = step(at: time, period: period)
        var found: Int64?
        for candidate in (now - skew)...(now + skew) {
            let expected = Array(Self.code(secret: secret, counter: candidate, digits: digits).utf8)
            if Crypto.constantTimeEquals(expected, given) && found == nil { found = candidate }
        }
        return found
    }
}

/// RFC 4648 base32 (upper-case alphabet, no padding), the encoding of TOTP secrets.
public enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt32(bits)) & 0x1f)])
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 0x1f)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Case-insensitive; `=` padding ignored; nil for other characters.
    public static func decode(_ text: String) -> [UInt8]? {
        var out = [UInt8]()
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text.utf8 where byte != UInt8(ascii: "=") {
            let upper = byte >= 0x61 && byte <= 0x7a ? byte - 0x20 : byte
            guard let value = alphabet.firstIndex(of: upper) else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return out
    }
}

extension Crypto {
    public static func hmacSHA1(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = key.withUnsafeBytes { keyBytes in
            HMAC(EVP_sha1(), keyBytes.baseAddress, Int32(key.count), data, data.count, &digest, &length)
        }
        return Array(digest[0..<Int(length)])
    }

    /// RFC 5869 HKDF-SHA-256 with an empty salt: 32 bytes of key derived from `key` for `info`.
    public static func hkdfSHA256(key: [UInt8], info: [UInt8]) -> [UInt8] {
        let pseudoRandomKey = hmacSHA256(key: [UInt8](repeating: 0, count: 32), data: key)
        return hmacSHA256(key: pseudoRandomKey, data: info + [1])
    }

    /// AES-256-GCM: the ciphertext with its 16-byte tag appended. `key` is 32 bytes, `nonce` 12.
    public static func aesGCMSeal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8]) -> [UInt8]? {
        guard key.count == 32, nonce.count == 12, let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var length: Int32 = 0
        var final: Int32 = 0
        guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1,
            EVP_EncryptUpdate(context, &out, &length, plaintext, Int32(plaintext.count)) == 1
        else { return nil }
        let written = Int(length)
        let ok = out.withUnsafeMutableBufferPointer { buffer in
            EVP_EncryptFinal_ex(context, buffer.baseAddress! + written, &final) == 1
                && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, buffer.baseAddress! + plaintext.count) == 1
        }
        return ok ? out : nil
    }

    /// The plaintext of `aesGCMSeal`'s output; nil when the tag does not authenticate it.
    public static func aesGCMOpen(key: [UInt8], nonce: [UInt8], sealed: [UInt8]) -> [UInt8]? {
        guard key.count == 32, nonce.count == 12, sealed.count >= 16, let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        let cipherLength = sealed.count - 16
        var tag = Array(sealed[cipherLength...])
        var out = [UInt8](repeating: 0, count: cipherLength + 16)
        var length: Int32 = 0
        var final: Int32 = 0
        guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1,
            EVP_DecryptUpdate(context, &out, &length, sealed, Int32(cipherLength)) == 1,
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, &tag) == 1
        else { return nil }
        let written = Int(length)
        let ok = out.withUnsafeMutableBufferPointer { buffer in EVP_DecryptFinal_ex(context, buffer.baseAddress! + written, &final) == 1 }
        return ok ? Array(out[0..<(written + Int(final))]) : nil
    }
}
