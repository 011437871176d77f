import Foundation
import Identity
import TestSupport
import Testing

/// What an attacker tries against `grant_type=web3`, each refused with GoTrue's status and body:
/// a message for another app, outside its time window, replayed, signed by another key, a
/// malformed signature, a chain the server does not offer, and the providers switched off.
@Suite("Web3 sign-in: the attacker's view", .serialized)
struct Web3RefusalTests {
    let server: TestServer
    let ethereum = EthereumTestWallet()
    let solana = SolanaTestWallet()

    init() throws {
        server = try TestServer.web3()
    }

    func post(_ chain: String, _ message: String, _ signature: String) throws -> TestResponse {
        try post(server, chain, message, signature)
    }

    func post(_ server: TestServer, _ chain: String, _ message: String, _ signature: String) throws -> TestResponse {
        try server.post("/auth/v1/token?grant_type=web3", Web3Text.body(chain, message, signature))
    }

    /// A message (Ethereum, then the same for Solana) and the description GoTrue refuses it with.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let description: String
        let ethereum: @Sendable (String) -> String
        let solana: @Sendable (String) -> String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "signed for another app's domain and URI",
            description: "Signed %@ message is using URI which is not allowed on this server, message was signed for another app",
            ethereum: { Web3Text.siwe(address: $0, domain: "evil.example", uri: "https://evil.example/") },
            solana: { Web3Text.siws(address: $0, domain: "evil.example", uri: "https://evil.example/") }),
        Case(
            name: "another domain with this app's URI",
            description: "Signed %@ message is using a Domain that does not match the one in URI which is not allowed on this server",
            ethereum: { Web3Text.siwe(address: $0, domain: "evil.example") }, solana: { Web3Text.siws(address: $0, domain: "evil.example") }),
        Case(
            name: "plain HTTP", description: "Signed %@ message is using URI which does not use HTTPS",
            ethereum: { Web3Text.siwe(address: $0, uri: "http://app.example/") }, solana: { Web3Text.siws(address: $0, uri: "http://app.example/") }),
        Case(
            name: "expired", description: "Signed %@ message is expired",
            ethereum: { Web3Text.siwe(address: $0, issuedAt: -120, expiresIn: -60) }, solana: { Web3Text.siws(address: $0, issuedAt: -120, expiresIn: -60) }),
        Case(
            name: "not yet valid", description: "Signed %@ message becomes valid in the future",
            ethereum: { Web3Text.siwe(address: $0, notBefore: 60) }, solana: { Web3Text.siws(address: $0, notBefore: 60) }),
        Case(
            name: "issued too long ago", description: "%@ message was issued too long ago",
            ethereum: { Web3Text.siwe(address: $0, issuedAt: -601) }, solana: { Web3Text.siws(address: $0, issuedAt: -601) }),
        Case(
            name: "issued in the future", description: "%@ message was issued too far in the future",
            ethereum: { Web3Text.siwe(address: $0, issuedAt: 660) }, solana: { Web3Text.siws(address: $0, issuedAt: 660) })
    ]

    @Test(arguments: cases) func refused(_ attack: Case) throws {
        let ethereumMessage = attack.ethereum(ethereum.address)
        let refusedEthereum = try post("ethereum", ethereumMessage, ethereum.sign(ethereumMessage))
        #expect(refusedEthereum.status == 400)
        #expect(Web3Text.fields(refusedEthereum) == Web3Text.invalidGrant(attack.description.replacingOccurrences(of: "%@", with: "Ethereum")))
        let solanaMessage = attack.solana(solana.address)
        let refusedSolana = try post("solana", solanaMessage, solana.sign(solanaMessage))
        #expect(refusedSolana.status == 400)
        #expect(Web3Text.fields(refusedSolana) == Web3Text.invalidGrant(attack.description.replacingOccurrences(of: "%@", with: "Solana")))
    }

    @Test func aMessageSignsInOnce() throws {
        let message = Web3Text.siwe(address: ethereum.address)
        let signature = ethereum.sign(message)
        #expect(try post("ethereum", message, signature).status == 200)
        let replayed = try post("ethereum", message, signature)
        #expect(replayed.status == 400)
        #expect(Web3Text.fields(replayed) == Web3Text.invalidGrant("Signed Ethereum message has already been used"))
        // ECDSA's twin of the signature (s → n − s, v flipped) still recovers the wallet: the
        // message, not the signature, is what is used up.
        let twin = Self.twin(signature)
        #expect(twin != signature)
        #expect(Web3Text.fields(try post("ethereum", message, twin)) == Web3Text.invalidGrant("Signed Ethereum message has already been used"))
        // A Solana message, replayed URL-safe and to another server over the same database.
        let solanaMessage = Web3Text.siws(address: solana.address)
        let solanaSignature = solana.sign(solanaMessage)
        #expect(try post("solana", solanaMessage, solanaSignature).status == 200)
        let urlSafe = Base64URL.encode(solana.signature(Array(solanaMessage.utf8)))
        let other = try TestServer(databaseURL: server.databaseURL) { config in
            config.auth.siteURL = Web3Text.site
            config.auth.web3.solanaEnabled = true
        }
        let again = try post(other, "solana", solanaMessage, urlSafe)
        #expect(again.status == 400)
        #expect(Web3Text.fields(again) == Web3Text.invalidGrant("Signed Solana message has already been used"))
    }

    /// The other valid form of a `0x` r ‖ s ‖ v signature: n − s, and the other v.
    static func twin(_ signature: String) -> String {
        let order = Ethereum.decodeHex("0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")!
        var bytes = Ethereum.decodeHex(signature)!
        var borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(order[index]) - Int(bytes[32 + index]) - borrow
            bytes[32 + index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        bytes[64] = bytes[64] == 27 ? 28 : 27
        return "0x" + Crypto.hex(bytes)
    }

    @Test func anotherKeysSignatureIsRefused() throws {
        let message = Web3Text.siwe(address: ethereum.address)
        let forged = try post("ethereum", message, EthereumTestWallet().sign(message))
        #expect(forged.status == 400)
        #expect(Web3Text.fields(forged) == Web3Text.invalidGrant("Signature does not match address in message"))
        let solanaMessage = Web3Text.siws(address: solana.address)
        let forgedSolana = try post("solana", solanaMessage, SolanaTestWallet().sign(solanaMessage))
        #expect(Web3Text.fields(forgedSolana) == Web3Text.invalidGrant("Signature does not match address in message"))
        // Signed by the right key, then changed: the address no longer recovers.
        let changed = message.replacingOccurrences(of: "Sign in to the app", with: "Sign in to the bank")
        #expect(Web3Text.fields(try post("ethereum", changed, ethereum.sign(message))) == Web3Text.invalidGrant("Signature does not match address in message"))
    }

    @Test func malformedSignaturesAreRefused() throws {
        let message = Web3Text.siwe(address: ethereum.address)
        let short = try post("ethereum", message, "0x1234")
        #expect(short.status == 400)
        #expect(
            Web3Text.fields(short)
                == Web3Text.error("validation_failed", "signature must be 65 bytes long, encoded as a 130 character-long hexadecimal string"))
        // 130 characters that are not hex, and 130 hex digits without the 0x prefix.
        let notHex = try post("ethereum", message, "0x" + String(repeating: "zz", count: 65))
        #expect(Web3Text.fields(notHex) == Web3Text.invalidGrant("Signature does not match address in message"))
        let unprefixed = try post("ethereum", message, String(ethereum.sign(message).dropFirst(2)))
        #expect(Web3Text.fields(unprefixed) == Web3Text.invalidGrant("Signature does not match address in message"))
        let solanaMessage = Web3Text.siws(address: solana.address)
        let wrongLength = try post("solana", solanaMessage, "AAAA")
        #expect(
            Web3Text.fields(wrongLength) == Web3Text.error("validation_failed", "signature must be 64 bytes encoded as base64 with or without padding"))
        let notBase64 = try post("solana", solanaMessage, String(repeating: "!", count: 86))
        #expect(Web3Text.fields(notBase64) == Web3Text.error("validation_failed", "signature does not contain valid base64 characters"))
        let tooShort = try post("ethereum", "hello", ethereum.sign("hello"))
        #expect(Web3Text.fields(tooShort) == Web3Text.error("validation_failed", "message is too short"))
    }

    @Test func chainsAndChainIDsTheServerDoesNotOffer() throws {
        let message = Web3Text.siwe(address: ethereum.address)
        let bitcoin = try post("bitcoin", message, ethereum.sign(message))
        #expect(bitcoin.status == 400)
        #expect(Web3Text.fields(bitcoin) == Web3Text.error("web3_unsupported_chain", "Unsupported chain"))
        let zero = Web3Text.siwe(address: ethereum.address, chainID: "0")
        #expect(Web3Text.fields(try post("ethereum", zero, ethereum.sign(zero))) == Web3Text.error("validation_failed", "siwe: Chain ID is not valid"))
        let devnet = Web3Text.siws(address: solana.address, chainID: "solana:othernet")
        #expect(Web3Text.fields(try post("solana", devnet, solana.sign(devnet))) == Web3Text.error("validation_failed", "siws: Chain ID is not valid"))
        // An Ethereum message presented as Solana's.
        let crossed = try post("solana", message, solana.sign(message))
        #expect(
            Web3Text.fields(crossed)
                == Web3Text.error("validation_failed", #"siws: message first line does not end in " wants you to sign in with your Solana account:""#))
    }

    @Test func providersSwitchedOff() throws {
        let off = try TestServer.web3 { $0 = Web3Switches(ethereum: false, solana: false) }
        let message = Web3Text.siwe(address: ethereum.address)
        for chain in ["ethereum", "solana", "bitcoin"] {
            let refused = try post(off, chain, message, ethereum.sign(message))
            #expect(refused.status == 422)
            #expect(Web3Text.fields(refused) == Web3Text.error("web3_provider_disabled", "Web3 provider is disabled"))
        }
        // GoTrue refuses before it reads the body.
        let unread = try off.post("/auth/v1/token?grant_type=web3", "not json")
        #expect(unread.status == 422)
        let ethereumOnly = try TestServer.web3 { $0.solana = false }
        let solanaMessage = Web3Text.siws(address: solana.address)
        let refused = try post(ethereumOnly, "solana", solanaMessage, solana.sign(solanaMessage))
        #expect(refused.status == 422)
        #expect(Web3Text.fields(refused) == Web3Text.error("web3_provider_disabled", "Solana Web3 provider is disabled"))
        #expect(try post(ethereumOnly, "ethereum", message, ethereum.sign(message)).status == 200)
    }
}
