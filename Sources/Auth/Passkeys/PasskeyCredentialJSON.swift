import Foundation
import Identity

extension WebAuthn {
    /// The `credential` of a verify request: a `PublicKeyCredential` as the browser's JSON
    /// serialization gives it (`id`, `rawId`, `type`, and `response` with base64url members).
    struct Credential {
        var rawID: [UInt8]
        var clientDataJSON: [UInt8]
        /// Registration: `response.attestationObject`.
        var attestationObject: [UInt8] = []
        /// Authentication: `response.authenticatorData`, `signature` and `userHandle`.
        var authenticatorData: [UInt8] = []
        var signature: [UInt8] = []
        var userHandle: [UInt8] = []
        /// Registration: `response.transports`.
        var transports: [String] = []

        /// Base64url with or without padding.
        static func bytes(_ value: Any?) -> [UInt8]? {
            guard let text = value as? String else { return nil }
            var trimmed = Substring(text)
            while trimmed.hasSuffix("=") { trimmed = trimmed.dropLast() }
            return Base64URL.decode(trimmed)
        }

        /// Refused as GoTrue refuses an answer it cannot parse (`Invalid credential response`).
        init(json: String, assertion: Bool) throws(Refusal) {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else { throw Refusal("not an object") }
            guard let id = Self.bytes(object["id"]), !id.isEmpty else { throw Refusal("missing or malformed id") }
            guard object["type"] as? String == "public-key" else { throw Refusal("type is not public-key") }
            guard let raw = Self.bytes(object["rawId"]), raw == id else { throw Refusal("rawId differs from id") }
            guard let response = object["response"] as? [String: Any], let clientData = Self.bytes(response["clientDataJSON"]) else {
                throw Refusal("missing clientDataJSON")
            }
            rawID = raw
            clientDataJSON = clientData
            if assertion {
                guard let data = Self.bytes(response["authenticatorData"]), let signature = Self.bytes(response["signature"]) else {
                    throw Refusal("missing authenticatorData or signature")
                }
                authenticatorData = data
                self.signature = signature
                userHandle = Self.bytes(response["userHandle"]) ?? []
            } else {
                guard let attestation = Self.bytes(response["attestationObject"]) else { throw Refusal("missing attestationObject") }
                attestationObject = attestation
                transports = (response["transports"] as? [Any] ?? []).compactMap { $0 as? String }.filter { $0.utf8.count <= 32 }.prefix(8).map { $0 }
            }
        }
    }

    /// A verified registration: what the credential row keeps.
    struct Registration {
        var format: String
        var data: AuthenticatorData
        var credential: AttestedCredential
    }

    /// The attestation object (`fmt`, `attStmt`, `authData`) checked for a registration with
    /// `rpID`: format `none` (no statement) or `packed` self-attestation (the credential's own
    /// signature over authData ‖ SHA-256(clientDataJSON)), user presence, and an attested
    /// credential whose id is the answer's.
    static func verifyAttestation(_ bytes: [UInt8], clientDataJSON: [UInt8], rawID: [UInt8], rpID: String) throws(Refusal) -> Registration {
        let object: CBOR
        do throws(CBORError) { object = try CBORReader.decode(bytes) } catch { throw Refusal("attestation object: \(error.reason)") }
        guard case .text(let format)? = object["fmt"], case .bytes(let authData)? = object["authData"], case .map(let statement)? = object["attStmt"]
        else { throw Refusal("attestation object without fmt, attStmt or authData") }
        let data = try parseAuthenticatorData(authData)
        try checkAuthenticatorData(data, rpID: rpID)
        guard let credential = data.credential else { throw Refusal("no attested credential") }
        guard credential.id == rawID else { throw Refusal("credential id differs from rawId") }
        switch format {
        case "none":
            guard statement.isEmpty else { throw Refusal("statement given with format none") }
        case "packed":
            guard statement.count == 2, object["attStmt"]?["alg"]?.int == credential.key.algorithm, case .bytes(let signature)? = object["attStmt"]?["sig"],
                credential.key.verify(signature: signature, data: authData + Crypto.sha256(clientDataJSON))
            else { throw Refusal("packed self-attestation does not verify (certificates are not accepted)") }
        default:
            throw Refusal("attestation format \(format) is not accepted")
        }
        return Registration(format: format, data: data, credential: credential)
    }
}
