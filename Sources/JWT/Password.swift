import COpenSSL
import Foundation

/// bcrypt password hashes (`$2b$`), compatible with GoTrue's (Go's bcrypt writes `$2a$`), through
/// libxcrypt's `crypt_r`.
public enum Password {
    /// GoTrue's default cost.
    public static let defaultCost = 10

    public static func hash(_ password: String, cost: Int = defaultCost) -> String {
        let salt = Crypto.randomBytes(16)
        var setting = [CChar](repeating: 0, count: 64)
        let made = salt.withUnsafeBytes { saltBytes in
            crypt_gensalt_rn("$2b$", UInt(cost), saltBytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(salt.count), &setting, Int32(setting.count))
        }
        precondition(made != nil, "crypt_gensalt_rn failed for bcrypt cost \(cost)")
        return crypt(password, setting: setting) ?? ""
    }

    /// True when `password` matches `hash` ($2a$/$2b$/$2y$); false for a malformed hash.
    public static func verify(_ password: String, hash: String) -> Bool {
        guard hash.hasPrefix("$2a$") || hash.hasPrefix("$2b$") || hash.hasPrefix("$2y$"), hash.utf8.count == 60 else {
            return false
        }
        guard let computed = crypt(password, setting: Array(hash.utf8CString)) else { return false }
        return Crypto.constantTimeEquals(Array(computed.utf8), Array(hash.utf8))
    }

    /// A valid hash of a random password: verifying against it costs the same as a real check,
    /// so an unknown e-mail answers in about the time of a wrong password.
    public static let dummyHash: String = hash(Base64URL.encode(Crypto.randomBytes(24)))

    private static func crypt(_ password: String, setting: [CChar]) -> String? {
        // bcrypt reads at most 72 bytes; longer passwords are cut, as in Go's bcrypt < 0.23.
        var data = crypt_data()
        return withUnsafeMutablePointer(to: &data) { pointer -> String? in
            guard let result = crypt_r(password, setting, pointer) else { return nil }
            let text = String(cString: result)
            return text.hasPrefix("*") ? nil : text  // "*0"/"*1" mark failure
        }
    }
}
