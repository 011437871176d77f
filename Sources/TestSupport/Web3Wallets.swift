import COpenSSL
import Foundation
import Identity

/// An Ethereum wallet for tests: a fresh secp256k1 key (OpenSSL's), signing text as
/// `personal_sign` does (EIP-191, r ‖ s ‖ v with v 27 or 28).
public final class EthereumTestWallet: @unchecked Sendable {
    // @unchecked: the key is only read after init, and OpenSSL's EVP_PKEY is safe to share for signing.
    let key: OpaquePointer
    /// The uncompressed public key, 65 bytes.
    public let publicKey: [UInt8]

    public init() {
        let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_keygen_init(context) == 1 && EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_secp256k1) == 1)
        var made: OpaquePointer?
        precondition(EVP_PKEY_keygen(context, &made) == 1 && made != nil, "secp256k1 key generation failed")
        key = made!
        var encoded = [UInt8](repeating: 0, count: 65)
        var length = 0
        precondition(EVP_PKEY_get_octet_string_param(key, "pub", &encoded, encoded.count, &length) == 1 && length == 65)
        publicKey = encoded
    }

    deinit { EVP_PKEY_free(key) }

    /// `0x` and the address in lower case (as supabase-js writes it in its messages).
    public var address: String { "0x" + Crypto.hex(Ethereum.address(publicKey: publicKey)!) }

    /// The `0x`-prefixed hex signature of `message`.
    public func sign(_ message: String) -> String {
        let hash = Ethereum.personalMessageHash(Array(message.utf8))
        let context = EVP_PKEY_CTX_new(key, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_sign_init(context) == 1)
        var der = [UInt8](repeating: 0, count: 80)
        var length = der.count
        precondition(EVP_PKEY_sign(context, &der, &length, hash, hash.count) == 1)
        let (r, s) = Self.integers(Array(der[0..<length]))
        // The recovery id is the one that gives this wallet's key back.
        let id = (0...1).first { Secp256k1.recoverPublicKey(hash: hash, r: r, s: s, recoveryID: $0) == publicKey }!
        return "0x" + Crypto.hex(r + s + [UInt8(27 + id)])
    }

    /// r and s of a DER `SEQUENCE { INTEGER, INTEGER }`, each as 32 bytes.
    static func integers(_ der: [UInt8]) -> ([UInt8], [UInt8]) {
        var index = 2
        func integer() -> [UInt8] {
            let count = Int(der[index + 1])
            var value = Array(der[(index + 2)..<(index + 2 + count)])
            index += 2 + count
            while value.count > 32 && value.first == 0 { value.removeFirst() }
            return [UInt8](repeating: 0, count: 32 - value.count) + value
        }
        let r = integer()
        return (r, integer())
    }
}

/// A Solana wallet for tests: a fresh Ed25519 key (OpenSSL's), its address in Base58.
public final class SolanaTestWallet: @unchecked Sendable {
    // @unchecked: the key is only read after init, and OpenSSL's EVP_PKEY is safe to share for signing.
    let key: OpaquePointer
    public let publicKey: [UInt8]

    public init() {
        let context = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        var made: OpaquePointer?
        precondition(EVP_PKEY_keygen_init(context) == 1 && EVP_PKEY_keygen(context, &made) == 1 && made != nil, "Ed25519 key generation failed")
        key = made!
        var raw = [UInt8](repeating: 0, count: 32)
        var length = raw.count
        precondition(EVP_PKEY_get_raw_public_key(key, &raw, &length) == 1 && length == 32)
        publicKey = raw
    }

    deinit { EVP_PKEY_free(key) }

    public var address: String { Base58.encode(publicKey) }

    /// The 64-byte signature of `bytes`.
    public func signature(_ bytes: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, nil, nil, key) == 1)
        var signature = [UInt8](repeating: 0, count: 64)
        var length = signature.count
        precondition(EVP_DigestSign(context, &signature, &length, bytes, bytes.count) == 1 && length == 64)
        return signature
    }

    /// The standard base64 signature of `message` (supabase-swift's form; supabase-js sends it
    /// URL-safe without padding).
    public func sign(_ message: String) -> String {
        Data(signature(Array(message.utf8))).base64EncodedString()
    }
}
