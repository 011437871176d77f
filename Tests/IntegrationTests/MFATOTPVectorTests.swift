import Auth
import Foundation
import Identity
import Postgres
import TestSupport
import Testing

/// RFC 6238 (and RFC 4226) test vectors for the TOTP function.
@Suite("MFA TOTP vectors")
struct MFATOTPVectorTests {
    /// RFC 6238 appendix B, SHA-1 with the 20-byte ASCII seed "12345678901234567890": the
    /// 8-digit values and their 6-digit truncations (the last six digits).
    static let rfc6238: [(time: Double, step: Int64, eight: String, six: String)] = [
        (59, 0x1, "94287082", "287082"),
        (1_111_111_109, 0x23523EC, "07081804", "081804"),
        (1_111_111_111, 0x23523ED, "14050471", "050471"),
        (1_234_567_890, 0x273EF07, "89005924", "005924"),
        (2_000_000_000, 0x3F940AA, "69279037", "279037"),
        (20_000_000_000, 0x27BC86AA, "65353130", "353130")
    ]
    static let seed = Array("12345678901234567890".utf8)

    @Test(arguments: rfc6238.indices)
    func rfc6238AppendixB(_ index: Int) {
        let vector = Self.rfc6238[index]
        let step = TOTP.step(at: vector.time)
        #expect(step == vector.step)
        #expect(TOTP.code(secret: Self.seed, counter: step, digits: 8) == vector.eight)
        #expect(TOTP.code(secret: Self.seed, counter: step, digits: 6) == vector.six)
        #expect(TOTP.matchingStep(vector.six, secret: Self.seed, at: vector.time) == vector.step)
    }

    /// RFC 4226 appendix D: HOTP of counters 0…9, 6 digits.
    @Test func rfc4226AppendixD() {
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        #expect((0..<10).map { TOTP.code(secret: Self.seed, counter: Int64($0)) } == expected)
    }

    @Test func skewIsOneStepEitherWay() {
        let now = 1_111_111_111.0
        let step = TOTP.step(at: now)
        for offset: Int64 in -1...1 {
            #expect(TOTP.matchingStep(TOTP.code(secret: Self.seed, counter: step + offset), secret: Self.seed, at: now) == step + offset)
        }
        for offset: Int64 in [-3, -2, 2, 3] {
            #expect(TOTP.matchingStep(TOTP.code(secret: Self.seed, counter: step + offset), secret: Self.seed, at: now) == nil)
        }
        #expect(TOTP.matchingStep("", secret: Self.seed, at: now) == nil)
        #expect(TOTP.matchingStep("0708180", secret: Self.seed, at: now) == nil)
    }

    @Test func base32RoundTripsAndMatchesRFC4648() {
        #expect(Base32.encode(Array("foobar".utf8)) == "MZXW6YTBOI")
        #expect(Base32.encode(Array("fooba".utf8)) == "MZXW6YTB")
        #expect(Base32.decode("MZXW6YTBOI======") == Array("foobar".utf8))
        #expect(Base32.decode("mzxw6ytb") == Array("fooba".utf8))
        #expect(Base32.decode("MZ1W") == nil)
        let random = Crypto.randomBytes(20)
        #expect(Base32.decode(Base32.encode(random)) == random)
    }

    @Test func aesGCMRoundTripsAndRejectsTampering() throws {
        let key = Crypto.hkdfSHA256(key: Crypto.randomBytes(32), info: Array("factor".utf8))
        let nonce = Crypto.randomBytes(12)
        let sealed = try #require(Crypto.aesGCMSeal(key: key, nonce: nonce, plaintext: Array("JBSWY3DPEHPK3PXP".utf8)))
        #expect(sealed.count == 16 + 16)
        #expect(Crypto.aesGCMOpen(key: key, nonce: nonce, sealed: sealed) == Array("JBSWY3DPEHPK3PXP".utf8))
        var tampered = sealed
        tampered[0] ^= 1
        #expect(Crypto.aesGCMOpen(key: key, nonce: nonce, sealed: tampered) == nil)
        #expect(Crypto.aesGCMOpen(key: Crypto.randomBytes(32), nonce: nonce, sealed: sealed) == nil)
    }

    /// RFC 5869 test case 3 (empty salt and info), first 32 bytes of OKM.
    @Test func hkdfMatchesRFC5869() {
        let okm = Crypto.hkdfSHA256(key: [UInt8](repeating: 0x0b, count: 22), info: [])
        #expect(Crypto.hex(okm) == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d")
    }
}
