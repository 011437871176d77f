import Foundation
import Identity

/// The parts of a WebAuthn ceremony's answer (W3C Web Authentication, level 2) the server
/// checks: the client data, the authenticator data and the credential's COSE public key. Pure:
/// bytes in, a value or a `Refusal` out.
enum WebAuthn {
    /// Why an answer was refused (GoTrue answers every one `Credential verification failed`).
    struct Refusal: Error, Equatable {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// `clientDataJSON`: its type, challenge and origin checked against the ceremony's.
    static func checkClientData(_ bytes: [UInt8], type: String, challenge: String, origins: [String]) throws(Refusal) {
        guard bytes.count <= 8192, let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw Refusal("client data is not a JSON object")
        }
        guard object["type"] as? String == type else { throw Refusal("client data type is not \(type)") }
        guard let given = object["challenge"] as? String, let givenBytes = Base64URL.decode(Substring(given)),
            let expected = Base64URL.decode(Substring(challenge)), Crypto.constantTimeEquals(givenBytes, expected)
        else { throw Refusal("challenge mismatch") }
        guard let origin = object["origin"] as? String, origins.contains(origin) else { throw Refusal("origin not allowed") }
    }

    /// The authenticator data: RP id hash, flags, signature counter, and (registration) the
    /// attested credential.
    struct AuthenticatorData {
        var rpIDHash: [UInt8]
        var flags: UInt8
        var signCount: UInt32
        var credential: AttestedCredential?

        var userPresent: Bool { flags & 0x01 != 0 }
        var userVerified: Bool { flags & 0x04 != 0 }
        var backupEligible: Bool { flags & 0x08 != 0 }
        var backedUp: Bool { flags & 0x10 != 0 }
    }

    struct AttestedCredential {
        var aaguid: [UInt8]
        var id: [UInt8]
        /// The COSE key as the authenticator encoded it (stored as `public_key`).
        var publicKeyCOSE: [UInt8]
        var key: CredentialKey
    }

    /// A credential's public key and its COSE algorithm.
    struct CredentialKey {
        var algorithm: Int
        var key: PublicKey

        /// The COSE_Key (RFC 9053): EC2 P-256 with ES256 (-7), or RSA with RS256 (-257).
        init(cose: CBOR) throws(Refusal) {
            guard let kty = cose[1]?.int, let alg = cose[3]?.int else { throw Refusal("COSE key without kty or alg") }
            switch (kty, alg) {
            case (2, -7):
                guard cose[-1]?.int == 1, case .bytes(let x)? = cose[-2], case .bytes(let y)? = cose[-3],
                    let key = PublicKey(p256X: x, y: y)
                else { throw Refusal("not a P-256 point") }
                self.key = key
            case (3, -257):
                guard case .bytes(let n)? = cose[-1], case .bytes(let e)? = cose[-2], n.count >= 256, n.count <= 1024, !e.isEmpty, e.count <= 8,
                    let key = PublicKey(rsaModulus: n, exponent: e)
                else { throw Refusal("not an RSA key of 2048 bits or more") }
                self.key = key
            default:
                throw Refusal("unsupported COSE key type \(kty) with algorithm \(alg)")
            }
            algorithm = alg
        }

        /// An assertion's signature over authenticator data ‖ SHA-256(client data): ASN.1 DER
        /// for ES256, PKCS #1 v1.5 for RS256.
        func verify(signature: [UInt8], data: [UInt8]) -> Bool {
            switch key.kind {
            case .rsa: return key.verify(signature: signature, data: data)
            case .p256:
                // ECDSA-Sig-Value in DER, nothing before or after it.
                var reader = DER.Reader(signature)
                guard var sequence = reader.read(tag: 0x30), DER.element(0x30, sequence.bytes) == signature, let r = sequence.read(tag: 0x02)?.bytes,
                    let s = sequence.read(tag: 0x02)?.bytes, DER.element(0x02, r) + DER.element(0x02, s) == sequence.bytes
                else { return false }
                let (rr, ss) = (DER.unsigned(r), DER.unsigned(s))
                guard rr.count <= 32, ss.count <= 32 else { return false }
                return key.verify(signature: [UInt8](repeating: 0, count: 32 - rr.count) + rr + [UInt8](repeating: 0, count: 32 - ss.count) + ss, data: data)
            }
        }
    }

    static func parseAuthenticatorData(_ bytes: [UInt8]) throws(Refusal) -> AuthenticatorData {
        guard bytes.count >= 37 else { throw Refusal("authenticator data too short") }
        let flags = bytes[32]
        let count = bytes[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var data = AuthenticatorData(rpIDHash: Array(bytes[0..<32]), flags: flags, signCount: count)
        var offset = 37
        if flags & 0x40 != 0 {
            guard bytes.count >= offset + 18 else { throw Refusal("attested credential data too short") }
            let aaguid = Array(bytes[offset..<offset + 16])
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard length >= 1, length <= 1023, bytes.count >= offset + length else { throw Refusal("credential id too long or truncated") }
            let id = Array(bytes[offset..<offset + length])
            offset += length
            var reader = CBORReader(bytes, offset: offset)
            let cose: CBOR
            do throws(CBORError) { cose = try reader.read() } catch { throw Refusal("COSE key: \(error.reason)") }
            let coseBytes = Array(bytes[offset..<reader.offset])
            offset = reader.offset
            data.credential = AttestedCredential(aaguid: aaguid, id: id, publicKeyCOSE: coseBytes, key: try CredentialKey(cose: cose))
        }
        if flags & 0x80 != 0 {
            var reader = CBORReader(bytes, offset: offset)
            let extensions: CBOR
            do throws(CBORError) { extensions = try reader.read() } catch { throw Refusal("extensions: \(error.reason)") }
            guard case .map = extensions else { throw Refusal("extensions are not a map") }
            offset = reader.offset
        }
        guard offset == bytes.count else { throw Refusal("bytes after the authenticator data") }
        return data
    }

    /// The checks common to both ceremonies: the RP id's hash, user presence, and the backup
    /// flags consistent.
    static func checkAuthenticatorData(_ data: AuthenticatorData, rpID: String) throws(Refusal) {
        guard Crypto.constantTimeEquals(data.rpIDHash, Crypto.sha256(Array(rpID.utf8))) else { throw Refusal("RP id hash mismatch") }
        guard data.userPresent else { throw Refusal("user not present") }
        guard data.backupEligible || !data.backedUp else { throw Refusal("backed up but not backup eligible") }
    }
}
