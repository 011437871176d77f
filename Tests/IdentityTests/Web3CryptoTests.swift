import Foundation
import Testing

@testable import Identity

/// Keccak-256, secp256k1 recovery, Ed25519 and Base58 against other implementations' answers:
/// the digests and signatures below were made with PyPI's `eth-account` 0.14 (`eth_utils.keccak`,
/// `Account.sign_message(encode_defunct(text=…))`) and `base58`, and RFC 8032's test vector.
@Suite("Identity: Web3 cryptography against independent vectors")
struct Web3CryptoTests {
    static func bytes(_ hex: String) -> [UInt8] {
        Ethereum.decodeHex("0x" + hex)!
    }

    /// Byte i of a length-n input is (7i + 3) mod 256; the lengths straddle the 136-byte rate.
    static let keccakVectors: [(Int, String)] = [
        (0, "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"),
        (3, "7d228cdb40e661b0731cd20c876de675137701233a19b450a36e53a053407a22"),
        (135, "00ef96af9cf4b24c7f269d922294444a197d0a33638c2e56634c57e892103a8f"),
        (136, "742061bcad767ed4c4f5883b1dcb1aad11afdcc140dc469d953759b127b9f9ed"),
        (137, "e3371f61e770abf254c34239c3b0099ad90594507415bc81dd0a10b9692bbf2a"),
        (272, "ac141fd7b0a0ffcd2e967254d508da3ec616596493c36fa304425647d90e6de5"),
        (1000, "80cdc8dd52cbb3dbaea8f383209893fa2bb52efbd5aedbb4b26dcfe307fcdc9b")
    ]

    @Test(arguments: keccakVectors) func keccak256(length: Int, digest: String) {
        let input = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
        #expect(Crypto.hex(Keccak256.hash(input)) == digest)
    }

    @Test func keccakIsNotSHA3() {
        #expect(Crypto.hex(Keccak256.hash(Array("abc".utf8))) == "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45")
        // SHA3-256("abc") for contrast: the padding differs.
        #expect(Crypto.hex(Keccak256.hash(Array("abc".utf8))) != "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532")
    }

    struct Signed: Sendable, CustomTestStringConvertible {
        let message: String
        let address: String
        let signature: String
        var testDescription: String { "\(address) \(message.prefix(12).debugDescription)" }
    }

    static let siwe = "localhost wants you to sign in with your Ethereum account:\n0x0\n\nURI: http://localhost/\nVersion: 1\nIssued At: 2025-01-01T00:00:00Z"

    /// eth-account's signatures with three keys (0x4c08…2318, 0x11…11, 0xab…ab); v is 27 or 28.
    static let ethAccount: [Signed] = [
        Signed(
            message: "hello", address: "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23",
            signature:
                "a5d58782075bdf09490159d634d1aae66a8f6777c7247d2f233e9511cfd7c64c34f288cdbcea5370e4863fdbe9f4d86654c2ba1d86589e9ebb64494c649008591b"),
        Signed(
            message: siwe, address: "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23",
            signature:
                "15f311d9b9a9ef9ff45168b4ce915a987f75879adab67def2940a3a58279f0f2411007f6ded47bf7c559eea12b2c554f54799ed6eb43074559139beffd934fb51c"),
        Signed(
            message: "é ünïcode ✓", address: "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23",
            signature:
                "3a40c4e2da94fdeb9b0d833849b841ed46935bffbcf96d5e0a509b4c933a4efa3dced245eecabdcab5d0451dba559bc5786c24b5f5f4d5d36f7cde65df271a811b"),
        Signed(
            message: "hello", address: "0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A",
            signature:
                "9208d5f86a1f5d9c1908dbb42969925675ceb388616fc5b186c248e4967a03e02e9d28a1adcb8cce60ebcef9756dee20522a2987afea3055f4edd8380d425f891b"),
        Signed(
            message: siwe, address: "0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A",
            signature:
                "fda0fbfe26839491c2a22c0d5337a36f56fa45fc75f447f97a33dd3dde17e4777c61aba8c5a1fc72aca683c0270ee463ba43115033ec5d54ccd22e2a0039fd2f1b"),
        Signed(
            message: "hello", address: "0xe239cdc5fbe977a8a141B72194D3CF8c41bC5BC6",
            signature:
                "c7fe3bb105e378d907b37d6cba544a324250967a0b5b5f46ff37c8e00709b2da4259fd6b8a4a2bf918655ef618715c3c028ca8d0acf2587c625728caa1bb96541c"),
        Signed(
            message: "é ünïcode ✓", address: "0xe239cdc5fbe977a8a141B72194D3CF8c41bC5BC6",
            signature:
                "0d0eee7008cf0f6413dcf60b23fe7cdfab2ab697d70b01c73342eb943deb128b4aecc98666e4ec27ccf234c64509349a4c4aac1549cafa115d230605fc783ff51c")
    ]

    @Test(arguments: ethAccount) func recoversEthAccountSigner(_ vector: Signed) throws {
        let signature = Self.bytes(vector.signature)
        #expect(Ethereum.recoverSigner(message: Array(vector.message.utf8), signature: signature) == vector.address.lowercased())
        // v as 0/1 recovers the same key; the other parity recovers another one.
        var raw = signature
        raw[64] -= 27
        #expect(Ethereum.recoverSigner(message: Array(vector.message.utf8), signature: raw) == vector.address.lowercased())
        raw[64] ^= 1
        #expect(Ethereum.recoverSigner(message: Array(vector.message.utf8), signature: raw) != vector.address.lowercased())
        // Another message, or a changed s, recovers someone else.
        #expect(Ethereum.recoverSigner(message: Array((vector.message + " ").utf8), signature: signature) != vector.address.lowercased())
        var changed = signature
        changed[40] ^= 0x01
        #expect(Ethereum.recoverSigner(message: Array(vector.message.utf8), signature: changed) != vector.address.lowercased())
    }

    @Test func refusesSignaturesOutsideTheCurve() {
        let message = Array("hello".utf8)
        let good = Self.bytes(Self.ethAccount[0].signature)
        // r = 0, s = 0, r ≥ n, v out of range, a short signature.
        var zeroR = good
        for index in 0..<32 { zeroR[index] = 0 }
        #expect(Ethereum.recoverSigner(message: message, signature: zeroR) == nil)
        var zeroS = good
        for index in 32..<64 { zeroS[index] = 0 }
        #expect(Ethereum.recoverSigner(message: message, signature: zeroS) == nil)
        var bigR = good
        for index in 0..<32 { bigR[index] = 0xff }
        #expect(Ethereum.recoverSigner(message: message, signature: bigR) == nil)
        var badV = good
        badV[64] = 35
        #expect(Ethereum.recoverSigner(message: message, signature: badV) == nil)
        badV[64] = 8
        #expect(Ethereum.recoverSigner(message: message, signature: badV) == nil)
        #expect(Ethereum.recoverSigner(message: message, signature: Array(good.prefix(64))) == nil)
    }

    @Test func hexAsGoEthereumReadsIt() {
        #expect(Ethereum.decodeHex("0x00fF") == [0x00, 0xff])
        #expect(Ethereum.decodeHex("0X0a") == [0x0a])
        #expect(Ethereum.decodeHex("0x") == [])
        #expect(Ethereum.decodeHex("00ff") == nil)
        #expect(Ethereum.decodeHex("0x0") == nil)
        #expect(Ethereum.decodeHex("0xzz") == nil)
    }

    @Test func ed25519RFC8032() {
        let key = Self.bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let signature = Self.bytes(
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        #expect(Ed25519.verify(publicKey: key, message: [], signature: signature))
        #expect(!Ed25519.verify(publicKey: key, message: [0], signature: signature))
        var flipped = signature
        flipped[0] ^= 1
        #expect(!Ed25519.verify(publicKey: key, message: [], signature: flipped))
        #expect(!Ed25519.verify(publicKey: Array(key.prefix(31)), message: [], signature: signature))
        #expect(!Ed25519.verify(publicKey: key, message: [], signature: Array(signature.prefix(63))))
    }

    @Test func base58AsBitcoinWritesIt() {
        let key = Self.bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        #expect(Base58.encode(key) == "FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z")
        #expect(Base58.decode("FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z") == key)
        let zeros: [UInt8] = [0, 0] + [UInt8](repeating: 0xff, count: 30)
        #expect(Base58.encode(zeros) == "11tJ93RwaVfE1PEMxd5rpZZuPtLCwbEaDCrNBhAy8Cv")
        #expect(Base58.decode("11tJ93RwaVfE1PEMxd5rpZZuPtLCwbEaDCrNBhAy8Cv") == zeros)
        #expect(Base58.encode([0]) == "1" && Base58.decode("1") == [0])
        #expect(Base58.encode([]) == "" && Base58.decode("") == [])
        // 0, O, I and l are not in the alphabet.
        #expect(Base58.decode("0OIl") == nil)
    }
}
