import Foundation
import Identity

/// TOTP secrets at rest, in GoTrue's encrypted-string form: AES-256-GCM under a key derived with
/// HKDF-SHA-256 from the encryption key and the factor's id (so a sealed secret is bound to its
/// row), stored as `{"key_id","alg":"aes-gcm-hkdf","data","nonce"}` with base64 `data` (the
/// ciphertext and its tag) and `nonce`.
struct FactorSecrets {
    /// The keys by name; `current` seals.
    let keys: [String: [UInt8]]
    let current: String

    static let derivedKeyID = "jwt"

    init(config: MFAConfig, jwtSecret: [UInt8]) {
        var keys = [Self.derivedKeyID: Crypto.hmacSHA256(key: jwtSecret, data: Array("onboard: MFA secret encryption".utf8))]
        if let configured = config.encryptionKey {
            keys[configured.id] = configured.key
            current = configured.id
        } else {
            current = Self.derivedKeyID
        }
        self.keys = keys
    }

    func seal(_ secret: String, factorID: String) throws -> String {
        let nonce = Crypto.randomBytes(12)
        let key = Crypto.hkdfSHA256(key: keys[current]!, info: Array(factorID.utf8))
        guard let sealed = Crypto.aesGCMSeal(key: key, nonce: nonce, plaintext: Array(secret.utf8)) else {
            throw AuthError.unexpected("AES-GCM seal failed")
        }
        return JWT.serialize([
            "key_id": current, "alg": "aes-gcm-hkdf", "data": Data(sealed).base64EncodedString(), "nonce": Data(nonce).base64EncodedString()
        ])
    }

    /// The secret; an error when the text is not sealed under a known key for this factor.
    func open(_ stored: String, factorID: String) throws -> String {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(stored.utf8))) as? [String: Any],
            object["alg"] as? String == "aes-gcm-hkdf", let keyID = object["key_id"] as? String, let master = keys[keyID],
            let data = (object["data"] as? String).flatMap({ Data(base64Encoded: $0) }),
            let nonce = (object["nonce"] as? String).flatMap({ Data(base64Encoded: $0) }),
            let plain = Crypto.aesGCMOpen(key: Crypto.hkdfSHA256(key: master, info: Array(factorID.utf8)), nonce: Array(nonce), sealed: Array(data))
        else {
            throw AuthError.unexpected("the factor's secret cannot be opened with the configured keys")
        }
        return String(decoding: plain, as: UTF8.self)
    }
}
