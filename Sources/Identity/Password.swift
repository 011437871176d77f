import COpenSSL
import Foundation

/// bcrypt password hashes (`$2b$`), compatible with GoTrue's (Go's bcrypt writes `$2a$`), through
/// libxcrypt's `crypt_r`.
public enum Password {
    /// GoTrue's default cost.
    public static let defaultCost = 10

    /// bcrypt reads at most this many bytes of a password.
    public static let maxBytes = 72

    public struct HashError: Error, CustomStringConvertible {
        public let description: String
    }

    /// A new `$2b$` hash. Throws rather than return anything but a well-formed 60-character hash:
    /// libxcrypt refuses some inputs (a password of 512 bytes or more), and an empty hash stored
    /// for a user would lock them out for good. A NUL is refused too: libxcrypt would stop there.
    public static func hash(_ password: String, cost: Int = defaultCost) throws -> String {
        guard !password.utf8.contains(0) else { throw HashError(description: "password contains NUL") }
        let salt = Crypto.randomBytes(16)
        var setting = [CChar](repeating: 0, count: 64)
        let made = salt.withUnsafeBytes { saltBytes in
            crypt_gensalt_rn("$2b$", UInt(cost), saltBytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(salt.count), &setting, Int32(setting.count))
        }
        guard made != nil else { throw HashError(description: "crypt_gensalt_rn failed for bcrypt cost \(cost)") }
        guard let hash = crypt(password, setting: setting), isWellFormed(hash) else {
            throw HashError(description: "bcrypt produced no hash")
        }
        return hash
    }

    /// `$2a$`/`$2b$`/`$2y$`, a two-digit cost, and 53 characters of salt and digest.
    static func isWellFormed(_ hash: String) -> Bool {
        (hash.hasPrefix("$2a$") || hash.hasPrefix("$2b$") || hash.hasPrefix("$2y$")) && hash.utf8.count == 60
    }

    /// True when `password` matches `hash` ($2a$/$2b$/$2y$); false for a malformed hash and for a
    /// password holding a NUL (libxcrypt would compare only what precedes it).
    public static func verify(_ password: String, hash: String) -> Bool {
        guard isWellFormed(hash), !password.utf8.contains(0) else {
            return false
        }
        guard let computed = crypt(password, setting: Array(hash.utf8CString)) else { return false }
        return Crypto.constantTimeEquals(Array(computed.utf8), Array(hash.utf8))
    }

    /// A valid hash of a random password: verifying against it costs the same as a real check,
    /// so an unknown e-mail answers in about the time of a wrong password.
    public static let dummyHash: String = (try? hash(Base64URL.encode(Crypto.randomBytes(24)))) ?? ""

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
