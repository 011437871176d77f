import COpenSSL

/// Ed25519 signatures (RFC 8032), verified with OpenSSL's `EVP_PKEY_ED25519`.
public enum Ed25519 {
    /// Whether `signature` (64 bytes) is `publicKey`'s (32 bytes) over `message`; false for keys
    /// or signatures of any other length.
    public static func verify(publicKey: [UInt8], message: [UInt8], signature: [UInt8]) -> Bool {
        guard publicKey.count == 32, signature.count == 64 else { return false }
        guard let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, publicKey, publicKey.count) else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        // Ed25519 hashes internally: no digest is named, and the whole message is given at once.
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }
}

/// Base58 with Bitcoin's alphabet, as Solana writes its addresses (the 32-byte public key).
public enum Base58 {
    static let alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)

    /// Each ASCII byte's digit value, 0xff outside the alphabet.
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// The bytes of `text`; nil when a character is outside the alphabet. Each leading `1` is a
    /// leading zero byte.
    public static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        let zeros = input.prefix { $0 == alphabet[0] }.count
        // Big-endian base-256 digits, built by multiplying by 58 and adding each digit.
        var bytes: [UInt8] = []
        for character in input[zeros...] {
            let digit = values[Int(character)]
            guard digit != 0xff else { return nil }
            var carry = Int(digit)
            for index in bytes.indices.reversed() {
                carry += Int(bytes[index]) * 58
                bytes[index] = UInt8(carry & 0xff)
                carry >>= 8
            }
            while carry > 0 {
                bytes.insert(UInt8(carry & 0xff), at: 0)
                carry >>= 8
            }
        }
        return [UInt8](repeating: 0, count: zeros) + bytes
    }

    public static func encode(_ bytes: [UInt8]) -> String {
        let zeros = bytes.prefix { $0 == 0 }.count
        // Big-endian base-58 digits, built by multiplying by 256 and adding each byte.
        var digits: [Int] = []
        for byte in bytes[zeros...] {
            var carry = Int(byte)
            for index in digits.indices.reversed() {
                carry += digits[index] * 256
                digits[index] = carry % 58
                carry /= 58
            }
            while carry > 0 {
                digits.insert(carry % 58, at: 0)
                carry /= 58
            }
        }
        return String(decoding: [UInt8](repeating: alphabet[0], count: zeros) + digits.map { alphabet[$0] }, as: UTF8.self)
    }
}
