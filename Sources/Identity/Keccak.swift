/// Keccak-256 as Ethereum uses it: the Keccak-f[1600] sponge with a 1088-bit rate and the
/// original Keccak padding (`0x01 … 0x80`), not FIPS 202's SHA3-256 (whose padding starts with
/// `0x06`, so the two digests differ for every input). OpenSSL 3.0 offers only SHA3-256; its
/// `KECCAK-256` arrived in 3.2.
public enum Keccak256 {
    /// Bytes absorbed per permutation: (1600 − 2 × 256) / 8.
    static let rate = 136

    public static func hash(_ data: [UInt8]) -> [UInt8] {
        var state = [UInt64](repeating: 0, count: 25)
        var offset = 0
        while data.count - offset >= rate {
            absorb(&state, data, from: offset, count: rate)
            permute(&state)
            offset += rate
        }
        var last = [UInt8](repeating: 0, count: rate)
        for index in 0..<(data.count - offset) { last[index] = data[offset + index] }
        last[data.count - offset] ^= 0x01
        last[rate - 1] ^= 0x80
        absorb(&state, last, from: 0, count: rate)
        permute(&state)
        var digest = [UInt8]()
        digest.reserveCapacity(32)
        for lane in state[0..<4] {
            for byte in 0..<8 { digest.append(UInt8(truncatingIfNeeded: lane >> (8 * UInt64(byte)))) }
        }
        return digest
    }

    /// XORs `count` bytes of `data` into the state's lanes, little-endian.
    static func absorb(_ state: inout [UInt64], _ data: [UInt8], from offset: Int, count: Int) {
        for lane in 0..<(count / 8) {
            var word: UInt64 = 0
            for byte in 0..<8 { word |= UInt64(data[offset + lane * 8 + byte]) << (8 * UInt64(byte)) }
            state[lane] ^= word
        }
    }

    /// The round constants of ι.
    static let roundConstants: [UInt64] = [
        0x0000_0000_0000_0001, 0x0000_0000_0000_8082, 0x8000_0000_0000_808A, 0x8000_0000_8000_8000,
        0x0000_0000_0000_808B, 0x0000_0000_8000_0001, 0x8000_0000_8000_8081, 0x8000_0000_0000_8009,
        0x0000_0000_0000_008A, 0x0000_0000_0000_0088, 0x0000_0000_8000_8009, 0x0000_0000_8000_000A,
        0x0000_0000_8000_808B, 0x8000_0000_0000_008B, 0x8000_0000_0000_8089, 0x8000_0000_0000_8003,
        0x8000_0000_0000_8002, 0x8000_0000_0000_0080, 0x0000_0000_0000_800A, 0x8000_0000_8000_000A,
        0x8000_0000_8000_8081, 0x8000_0000_0000_8080, 0x0000_0000_8000_0001, 0x8000_0000_8000_8008
    ]

    /// The rotation of each lane in ρ, indexed by x + 5y.
    static let rotations: [UInt64] = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14]

    /// Keccak-f[1600]: 24 rounds of θ, ρ, π, χ and ι over lanes indexed by x + 5y.
    static func permute(_ a: inout [UInt64]) {
        var b = [UInt64](repeating: 0, count: 25)
        var c = [UInt64](repeating: 0, count: 5)
        for round in 0..<24 {
            for x in 0..<5 { c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] }
            for x in 0..<5 {
                let d = c[(x + 4) % 5] ^ rotate(c[(x + 1) % 5], 1)
                for y in stride(from: 0, to: 25, by: 5) { a[x + y] ^= d }
            }
            for x in 0..<5 {
                for y in 0..<5 {
                    // π moves lane (x, y) to (y, 2x + 3y).
                    b[y + 5 * ((2 * x + 3 * y) % 5)] = rotate(a[x + 5 * y], rotations[x + 5 * y])
                }
            }
            for y in stride(from: 0, to: 25, by: 5) {
                for x in 0..<5 { a[x + y] = b[x + y] ^ (~b[(x + 1) % 5 + y] & b[(x + 2) % 5 + y]) }
            }
            a[0] ^= roundConstants[round]
        }
    }

    static func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        count == 0 ? value : (value << count) | (value >> (64 - count))
    }
}
