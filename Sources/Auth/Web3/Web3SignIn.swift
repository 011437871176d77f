import Foundation
import Identity

/// GoTrue's `web3GrantEthereum` and `web3GrantSolana` short of the database: the body's sizes and
/// encodings, the message's grammar, the signature, the URI and domain against SITE_URL and
/// URI_ALLOW_LIST, and the time windows, each refused in GoTrue's words and in its order.
public struct Web3SignIn: Sendable {
    public var redirects: RedirectPolicy
    /// Seconds a message is accepted before and after its Issued At.
    public var maximumValidity: Double

    public init(redirects: RedirectPolicy, maximumValidity: Double) {
        self.redirects = redirects
        self.maximumValidity = maximumValidity
    }

    /// The verified message, signed by its address, for this server, and valid at `now`
    /// (seconds since 1970).
    public func verify(chain: Web3Chain, message raw: String, signature: String, now: Double) throws(AuthError) -> Web3Message {
        let size = raw.utf8.count
        guard size >= 64 else { throw .validationFailed("message is too short") }
        guard size <= 20 * 1024 else { throw .validationFailed("message must not exceed 20KB") }
        let message: Web3Message
        let signed: Bool
        switch chain {
        case .ethereum:
            let hex = signature.hasPrefix("0x") ? signature.utf8.dropFirst(2) : signature.utf8[...]
            guard hex.count == 130 else { throw .validationFailed("signature must be 65 bytes long, encoded as a 130 character-long hexadecimal string") }
            message = try Web3Message.parse(raw, chain: chain)
            signed = Self.ethereumSigned(message, signature: signature)
        case .solana:
            guard signature.utf8.count == 86 || signature.utf8.count == 88 else {
                throw .validationFailed("signature must be 64 bytes encoded as base64 with or without padding")
            }
            // Standard or URL-safe base64, padded or not, as GoTrue reads it.
            var text = Substring(signature)
            while text.hasSuffix("=") { text = text.dropLast() }
            let urlSafe = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            guard let bytes = Base64URL.decode(Substring(urlSafe)) else { throw .validationFailed("signature does not contain valid base64 characters") }
            message = try Web3Message.parse(raw, chain: chain)
            signed = Self.solanaSigned(message, signature: bytes)
        }
        guard signed else { throw .oauth("invalid_grant", description: "Signature does not match address in message") }
        try check(message, now: now)
        return message
    }

    /// The URI, the domain and the time windows.
    func check(_ message: Web3Message, now: Double) throws(AuthError) {
        let name = message.chain.displayName
        func refuse(_ text: String) -> AuthError { .oauth("invalid_grant", description: text) }
        let uri = message.uri
        let local = uri.hostname == "localhost"
        guard uri.scheme == "https" || local else { throw refuse("Signed \(name) message is using URI which does not use HTTPS") }
        guard redirects.allows(uri.text) else {
            throw refuse("Signed \(name) message is using URI which is not allowed on this server, message was signed for another app")
        }
        if !local && (uri.host != message.domain || !redirects.allows("https://\(message.domain)/")) {
            throw refuse("Signed \(name) message is using a Domain that does not match the one in URI which is not allowed on this server")
        }
        if let notBefore = message.notBefore, now < notBefore { throw refuse("Signed \(name) message becomes valid in the future") }
        // GoTrue checks an Ethereum message's Expiration Time only when it also has a Not Before;
        // here every Expiration Time is checked.
        if let expiration = message.expirationTime, now > expiration { throw refuse("Signed \(name) message is expired") }
        guard now <= message.issuedAt + maximumValidity else { throw refuse("\(name) message was issued too long ago") }
        guard now >= message.issuedAt - maximumValidity else { throw refuse("\(name) message was issued too far in the future") }
    }

    /// When the message can no longer pass `check`: its Issued At plus the validity, or its
    /// Expiration Time if earlier.
    func lastValidMoment(_ message: Web3Message) -> Double {
        min(message.issuedAt + maximumValidity, message.expirationTime ?? .infinity)
    }

    /// The message's address recovered from the `0x`-prefixed hex signature (compared without
    /// regard to case, as GoTrue's `strings.EqualFold`).
    static func ethereumSigned(_ message: Web3Message, signature: String) -> Bool {
        guard let bytes = Ethereum.decodeHex(signature), bytes.count == 65,
            let signer = Ethereum.recoverSigner(message: Array(message.raw.utf8), signature: bytes)
        else { return false }
        return signer == message.address.lowercased()
    }

    /// The Ed25519 signature of the message's address over the message, as a wallet signs it or
    /// as a Ledger signs it (Solana's off-chain message format, version 0).
    static func solanaSigned(_ message: Web3Message, signature: [UInt8]) -> Bool {
        guard let key = Base58.decode(message.address), key.count == 32 else { return false }
        let raw = Array(message.raw.utf8)
        if Ed25519.verify(publicKey: key, message: raw, signature: signature) { return true }
        guard raw.count <= Int(UInt16.max) else { return false }
        // "\xffsolana offchain", version 0, the domain in 32 bytes (cut or zero-padded), format 0
        // (ASCII), one signer, its key, the length (little-endian) and the message.
        var envelope: [UInt8] = [0xff] + Array("solana offchain".utf8) + [0x00]
        let domain = Array(message.domain.utf8.prefix(32))
        envelope += domain + [UInt8](repeating: 0, count: 32 - domain.count)
        envelope += [0x00, 0x01] + key + [UInt8(raw.count & 0xff), UInt8(raw.count >> 8)] + raw
        return Ed25519.verify(publicKey: key, message: envelope, signature: signature)
    }
}
