import COpenSSL

/// ECDSA public-key recovery on secp256k1 (SEC 1 v2 §4.1.6), the way Ethereum's `ecrecover`
/// learns who signed, with OpenSSL's curve, points and big numbers.
public enum Secp256k1 {
    /// The uncompressed public key (`0x04 ‖ X ‖ Y`, 65 bytes) whose signature over the 32-byte
    /// `hash` is (`r`, `s`) with recovery id `recoveryID` (bit 0: the parity of R's y; bit 1: R's
    /// x is r + n). Nil when r or s is not in [1, n − 1], the id is not 0…3, no point has that x,
    /// or the key would be the point at infinity.
    public static func recoverPublicKey(hash: [UInt8], r rBytes: [UInt8], s sBytes: [UInt8], recoveryID: Int) -> [UInt8]? {
        guard hash.count == 32, rBytes.count == 32, sBytes.count == 32, (0...3).contains(recoveryID) else { return nil }
        guard let group = EC_GROUP_new_by_curve_name(NID_secp256k1), let context = BN_CTX_new() else { return nil }
        defer {
            EC_GROUP_free(group)
            BN_CTX_free(context)
        }
        var numbers: [OpaquePointer] = []
        defer { numbers.forEach { BN_free($0) } }
        func number(_ bytes: [UInt8]? = nil) -> OpaquePointer? {
            let made = bytes.map { BN_bin2bn($0, Int32($0.count), nil) } ?? BN_new()
            if let made { numbers.append(made) }
            return made
        }
        // BN_new's numbers start at zero.
        guard let order = number(), let prime = number(), let r = number(rBytes), let s = number(sBytes), let e = number(hash),
            let x = number(), let rInverse = number(), let product = number(), let u1 = number(), let u2 = number(), let zero = number()
        else { return nil }
        guard EC_GROUP_get_order(group, order, context) == 1, EC_GROUP_get_curve(group, prime, nil, nil, context) == 1 else { return nil }
        guard BN_cmp(r, zero) > 0, BN_cmp(r, order) < 0, BN_cmp(s, zero) > 0, BN_cmp(s, order) < 0 else { return nil }

        // R's x: r, or r + n for the ids 2 and 3 (possible only when r + n < p).
        guard BN_copy(x, r) != nil else { return nil }
        if recoveryID & 2 != 0 { guard BN_add(x, x, order) == 1 else { return nil } }
        guard BN_cmp(x, prime) < 0 else { return nil }
        guard let point = EC_POINT_new(group), let key = EC_POINT_new(group) else { return nil }
        defer {
            EC_POINT_free(point)
            EC_POINT_free(key)
        }
        guard EC_POINT_set_compressed_coordinates(group, point, x, Int32(recoveryID & 1), context) == 1 else { return nil }

        // Q = r⁻¹ (s·R − e·G) = (−e·r⁻¹)·G + (s·r⁻¹)·R; e is the hash as a 256-bit number (the
        // order is 256 bits long, so nothing is cut), reduced by the modular arithmetic below.
        guard BN_mod_inverse(rInverse, r, order, context) != nil,
            BN_mod_mul(u2, s, rInverse, order, context) == 1,
            BN_mod_mul(product, e, rInverse, order, context) == 1,
            BN_mod_sub(u1, zero, product, order, context) == 1,
            EC_POINT_mul(group, key, u1, point, u2, context) == 1,
            EC_POINT_is_at_infinity(group, key) == 0
        else { return nil }
        var encoded = [UInt8](repeating: 0, count: 65)
        let written = EC_POINT_point2oct(group, key, POINT_CONVERSION_UNCOMPRESSED, &encoded, encoded.count, context)
        return written == 65 ? encoded : nil
    }
}

/// Ethereum's accounts: an address is the last 20 bytes of the Keccak-256 of the public key's
/// X ‖ Y; a signed text message is hashed as EIP-191's `personal_sign` wraps it.
public enum Ethereum {
    /// The 20-byte address of an uncompressed public key (`0x04 ‖ X ‖ Y`).
    public static func address(publicKey: [UInt8]) -> [UInt8]? {
        guard publicKey.count == 65, publicKey[0] == 0x04 else { return nil }
        return Array(Keccak256.hash(Array(publicKey[1...])).suffix(20))
    }

    /// EIP-191 version 0x45: Keccak-256 of `"\u{19}Ethereum Signed Message:\n" + length + message`.
    public static func personalMessageHash(_ message: [UInt8]) -> [UInt8] {
        Keccak256.hash(Array("\u{19}Ethereum Signed Message:\n\(message.count)".utf8) + message)
    }

    /// The address (`0x` and 40 lower-case hex digits) that signed `message` with the 65-byte
    /// `signature` (r ‖ s ‖ v). v is 27 or 28 as wallets send it, or 0 or 1; as go-ethereum's
    /// `Ecrecover` (through decred's `RecoverCompact`) reads it, v − 27 (when v ≥ 27) may be 0…7,
    /// its low two bits the recovery id. Nil when nothing can be recovered.
    public static func recoverSigner(message: [UInt8], signature: [UInt8]) -> String? {
        guard signature.count == 65 else { return nil }
        var v = Int(signature[64])
        if v >= 27 { v -= 27 }
        guard v <= 7 else { return nil }
        let hash = personalMessageHash(message)
        guard
            let key = Secp256k1.recoverPublicKey(
                hash: hash, r: Array(signature[0..<32]), s: Array(signature[32..<64]), recoveryID: v & 3),
            let address = address(publicKey: key)
        else { return nil }
        return "0x" + Crypto.hex(address)
    }

    /// The bytes of `0x`-prefixed hex text (either case), as go-ethereum's `hexutil.Decode` reads
    /// a signature; nil without the prefix, with an odd length or with a non-hex character.
    public static func decodeHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count >= 2, digits[0] == UInt8(ascii: "0"), digits[1] == UInt8(ascii: "x") || digits[1] == UInt8(ascii: "X"),
            digits.count % 2 == 0
        else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2 - 1)
        for index in stride(from: 2, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
