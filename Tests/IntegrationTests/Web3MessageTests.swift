import Auth
import Foundation
import Testing

/// The Sign-In with Ethereum / Solana parsers and checks without a server: messages and
/// signatures made by real wallets (MetaMask, Phantom, a Ledger; the vectors of GoTrue's
/// `web3_test.go`), verified at the moment GoTrue's tests pin, and the grammar's refusals in
/// GoTrue's words.
@Suite("Web3 messages: grammar, signatures and windows")
struct Web3MessageTests {
    static let redirects = RedirectPolicy(
        siteURL: "https://example.netlify.com", allowList: ["http://localhost:3000", "https://supabase.com/", "http://localhost:5173/", "https://supabase.com"])

    struct Wallet: Sendable, CustomTestStringConvertible {
        let now: String
        let chain: Web3Chain
        let message: String
        let signature: String
        var testDescription: String { "\(chain) \(message.prefix(20))" }
    }

    static let signedByWallets: [Wallet] = [
        Wallet(
            now: "2025-03-29T00:09:59Z", chain: .solana,
            message:
                "supabase.com wants you to sign in with your Solana account:\n2EZEiBdw47VHT6SpZSW9VnuSvBe7DxuYHBTxj19gxvv8\n\nStatement\n\nURI: https://supabase.com/\nVersion: 1\nIssued At: 2025-03-29T00:00:00Z\nExpiration Time: 2025-03-29T00:10:00Z\nNot Before: 2025-03-29T00:00:00Z",
            signature: "aiKn+PAoB1OoXxS8H34HrB456YD4sKAVjeTjsxgkaQy3bkdV51WBTmUUE9lBU9kuXr0hTLI+1aTn5TFRbIF8CA=="),
        Wallet(
            now: "2025-05-16T15:01:59Z", chain: .solana,
            message:
                "localhost:5173 wants you to sign in with your Solana account:\n4UPcfLX6rHuunkDiCnrVdN2BxnaKUAT1m2KCrzaAAct6\n\nSign in on localhost\n\nURI: http://localhost:5173/\nVersion: 1\nIssued At: 2025-05-16T14:52:03.613Z",
            signature: "RT2JCFpZQtPwGONApGZn1dZnxOBB3zJZHAQPr+cOaI+eQ4ecw/N6zJ6TNw8a+g8n6Xm/Ky1TVZRuWHSxMU1jDg=="),
        // Signed on a Ledger: Solana's off-chain message envelope around the text.
        Wallet(
            now: "2025-07-29T22:30:52.235Z", chain: .solana,
            message:
                "supabase.com wants you to sign in with your Solana account:\nEqzxWVyBpLD34SV9w1FFpPPvbfrfAXdiDVg1cyHTR1Rv\n\nI confirm ownership of this wallet\n\nVersion: 1\nURI: https://supabase.com/\nIssued At: 2025-07-29T22:29:52.235Z",
            signature: "9slc0BBJw16TzWYs4/op8na3vt9E0CKt0FL5pqhzTDxvqF/txpbdo+ULDCeSzrDE/uJWmpMQw+hF0rkDj4Q0Bw=="),
        Wallet(
            now: "2025-07-29T22:36:10.473Z", chain: .solana,
            message:
                "localhost:5173 wants you to sign in with your Solana account:\nEqzxWVyBpLD34SV9w1FFpPPvbfrfAXdiDVg1cyHTR1Rv\n\nI confirm ownership of this wallet\n\nVersion: 1\nURI: http://localhost:5173/\nIssued At: 2025-07-29T22:35:10.473Z",
            signature: "28d9ntDE8iPkxPvzg7A+8/6QFSq8FoPIdV4O5Or6nMDRFrEip/UJKIlLlKXM/SKUeLZmnTcc+V7Y6qnQymUDDg=="),
        Wallet(
            now: "2025-03-29T00:09:59Z", chain: .ethereum,
            message:
                "supabase.com wants you to sign in with your Ethereum account:\n0xa1E993d09257291470e86778399D79A0864F327E\n\nStatement\n\nURI: https://supabase.com\nVersion: 1\nIssued At: 2025-03-29T00:00:00.000Z\nExpiration Time: 2025-03-29T00:10:00Z\nNot Before: 2025-03-29T00:00:00Z",
            signature:
                "0x37495c9ac73f7a3acb589820699db39e1ab290f6756e41e16c2ddeb8588669440c9df95027597d518e3afb7db6f692fb63c44f56d266b2c65ac78a5d317bf5ef1c"),
        Wallet(
            now: "2025-05-16T15:01:59Z", chain: .ethereum,
            message:
                "localhost:5173 wants you to sign in with your Ethereum account:\n0x57c039062a750c7fe197b20E12406dB4f7d8833B\n\nSign in on localhost\n\nURI: http://localhost:5173/\nVersion: 1\nIssued At: 2025-05-16T14:52:03.613Z\n",
            signature:
                "0x0ca657558a144c88d768acb48e31f92bae195d3c7feb4496bd43ad6211ff904e733a0ccc29ed96da5b9f941b2a6b4363f7551d40d3fedb9b239819301c5c42731b"),
        Wallet(
            now: "2025-03-29T00:09:59Z", chain: .ethereum,
            message:
                "supabase.com wants you to sign in with your Ethereum account:\n0xD1FfC6bdfacf333C2B08F88f2f50ddcD87eaCa57\n\nStatement\n\nURI: https://supabase.com/\nVersion: 1\nIssued At: 2025-03-29T00:00:00Z",
            signature:
                "0xd8dad96466536aca351702766ce1ca321317ef1e7c355b2cf19a166828f78854197ae34e3cdff0a6be1e6317f654ef458623433f14ed55f79f183e7a56c458f51b")
    ]

    static func seconds(_ time: String) -> Double {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = time.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return formatter.date(from: time)!.timeIntervalSince1970
    }

    @Test(arguments: signedByWallets) func aWalletsSignatureIsAccepted(_ wallet: Wallet) throws {
        let checks = Web3SignIn(redirects: Self.redirects, maximumValidity: 600)
        let message = try checks.verify(chain: wallet.chain, message: wallet.message, signature: wallet.signature, now: Self.seconds(wallet.now))
        #expect(wallet.message.contains(message.address))
        // One changed character in the signed text, and the same signature no longer holds.
        let changed = wallet.message.replacingOccurrences(of: "Version: 1", with: "Version: 1 ")
        #expect(throws: AuthError.oauth("invalid_grant", description: "Signature does not match address in message")) {
            _ = try checks.verify(chain: wallet.chain, message: changed, signature: wallet.signature, now: Self.seconds(wallet.now))
        }
        // An hour later, too late: past its Expiration Time when it has one, else its window.
        let name = wallet.chain == .ethereum ? "Ethereum" : "Solana"
        let late = wallet.message.contains("Expiration Time") ? "Signed \(name) message is expired" : "\(name) message was issued too long ago"
        #expect(throws: AuthError.oauth("invalid_grant", description: late)) {
            _ = try checks.verify(chain: wallet.chain, message: wallet.message, signature: wallet.signature, now: Self.seconds(wallet.now) + 3600)
        }
    }

    @Test func theFieldsAreRead() throws {
        let text =
            "app.example:8443 wants you to sign in with your Ethereum account:\n0xa1E993d09257291470e86778399D79A0864F327E\n\nA statement\n\n"
            + "URI: https://app.example:8443/login\nVersion: 1\nChain ID: 10\nNonce: abcdef123\nIssued At: 2025-03-29T00:00:00.5+02:00\n"
            + "Expiration Time: 2025-03-29T01:00:00Z\nRequest ID: r-1\nSomething Else: ignored\nResources:\n- https://a.example/1\n- ipfs://b"
        let message = try Web3Message.parse(text, chain: .ethereum)
        #expect(message.domain == "app.example:8443")
        #expect(message.statement == "A statement")
        #expect(message.uri.scheme == "https" && message.uri.host == "app.example:8443" && message.uri.hostname == "app.example")
        #expect(message.chainID == "10" && message.nonce == "abcdef123" && message.requestID == "r-1")
        #expect(message.issuedAt == Self.seconds("2025-03-28T22:00:00Z") + 0.5)
        #expect(message.resources == ["https://a.example/1", "ipfs://b"])
        let bare = try Web3Message.parse(
            "localhost wants you to sign in with your Solana account:\n2EZEiBdw47VHT6SpZSW9VnuSvBe7DxuYHBTxj19gxvv8\n\nURI: http://localhost/\nVersion: 1\nIssued At: 2025-03-29T00:00:00Z",
            chain: .solana)
        #expect(bare.statement == nil && bare.chainID == "" && bare.expirationTime == nil)
    }

    static let header = "a.example wants you to sign in with your Ethereum account:\n0xa1E993d09257291470e86778399D79A0864F327E\n\n"

    static let grammar: [(String, String)] = [
        ("a.example wants you to sign in with your Ethereum account:\n0x0\n\n", "siwe: message needs at least 6 lines"),
        (
            "a.example wants you to sign in with Ethereum:\n\n\n\n\n",
            #"siwe: message first line does not end in " wants you to sign in with your Ethereum account:""#
        ),
        ("a_b wants you to sign in with your Ethereum account:\n\n\n\n\n", "siwe: domain in first line of message is not valid"),
        // Lines end at "\n" only: with "\r\n" the header keeps its "\r".
        (
            "a.example wants you to sign in with your Ethereum account:\r\n0x0\r\n\r\n\r\n\r\n\r\n",
            #"siwe: message first line does not end in " wants you to sign in with your Ethereum account:""#
        ),
        ("a.example wants you to sign in with your Ethereum account:\n0x12\n\n\n\n", "siwe: wallet address is not a valid Ethereum address"),
        ("a.example wants you to sign in with your Ethereum account:\n0xa1E993d09257291470e86778399D79A0864F327E\nx\n\n\n", "siwe: third line must be empty"),
        (header + "URI: https://a.example/\nVersion: 1\nno colon here\n", "siwe: encountered unparsable line at index 5"),
        (header + "URI: nope\nVersion: 1\nIssued At: 2025-03-29T00:00:00Z\n", "siwe: URI is not valid"),
        (header + "URI: https://a.example/\nVersion: 2\nIssued At: 2025-03-29T00:00:00Z\n", #"siwe: Version value is not supported, expected 1 got "2""#),
        (header + "URI: https://a.example/\nVersion: 1\nIssued At: yesterday\n", "siwe: Issued At is not a valid ISO8601 timestamp"),
        (header + "URI: https://a.example/\nVersion: 1\nIssued At: 2025-02-30T00:00:00Z\n", "siwe: Issued At is not a valid ISO8601 timestamp"),
        (header + "URI: https://a.example/\nVersion: 1\nExpiration Time: soon\n", "siwe: Expiration Time is not a valid ISO8601 timestamp"),
        (header + "URI: https://a.example/\nVersion: 1\nNot Before: 2025-03-29\n", "siwe: Not Before is not a valid ISO8601 timestamp"),
        (header + "URI: https://a.example/\nVersion: 1\nChain ID: -1\n", "siwe: Chain ID is not valid"),
        (header + "URI: https://a.example/\nVersion: 1\nChain ID: \n", "siwe: Chain ID is not valid"),
        (header + "URI: https://a.example/\nVersion: 1\n\n\n", "siwe: Issued At is not specified"),
        (header + "Version: 1\nIssued At: 2025-03-29T00:00:00Z\n\n", "siwe: URI is not specified"),
        (
            header + "URI: https://a.example/\nVersion: 1\nIssued At: 2025-03-29T00:00:00Z\nExpiration Time: 2025-03-28T00:00:00Z",
            "siwe: Issued At is after Expiration Time"
        ),
        (
            header
                + "URI: https://a.example/\nVersion: 1\nIssued At: 2025-03-29T00:00:00Z\nNot Before: 2025-03-30T00:00:00Z\nExpiration Time: 2025-03-29T12:00:00Z",
            "siwe: Not Before is after Expiration Time"
        ),
        (
            header + "URI: https://a.example/\nVersion: 1\nIssued At: 2025-03-29T00:00:00Z\nResources:\n- not a uri",
            "siwe: Resource at position 0 has invalid URI"
        )
    ]

    @Test(arguments: grammar) func grammarRefusals(_ text: String, _ refusal: String) {
        #expect(throws: AuthError.validationFailed(refusal)) { _ = try Web3Message.parse(text, chain: .ethereum) }
    }

    @Test func solanasOwnRules() {
        let header = "a.example wants you to sign in with your Solana account:\n"
        #expect(throws: AuthError.validationFailed("siws: wallet address is not in base58 format")) {
            _ = try Web3Message.parse(header + "not-base58-address-with-dashes-in-it\n\n\n\n", chain: .solana)
        }
        #expect(throws: AuthError.validationFailed("siws: Chain ID is not valid")) {
            _ = try Web3Message.parse(
                header + "2EZEiBdw47VHT6SpZSW9VnuSvBe7DxuYHBTxj19gxvv8\n\nURI: https://a.example/\nChain ID: 1\nVersion: 1\n", chain: .solana)
        }
    }
}
