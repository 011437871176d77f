import Foundation
import Identity

/// What GoTrue accepts as a password and an e-mail address.
extension AuthService {
    /// The password policy for new passwords: GoTrue's minimum length, and at most bcrypt's 72
    /// bytes (bcrypt ignores the rest, so a longer password would match any with its prefix).
    func checkedPassword(_ password: String?) throws -> String {
        guard let password, password.count >= config.minimumPasswordLength else {
            throw AuthError.weakPassword("Password should be at least \(config.minimumPasswordLength) characters.", reasons: ["length"])
        }
        guard password.utf8.count <= Password.maxBytes else {
            throw AuthError.weakPassword("Password cannot be longer than \(Password.maxBytes) bytes.", reasons: ["length"])
        }
        return password
    }

    static func isValidEmail(_ email: String) -> Bool {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            email.count <= 255, !email.contains(where: { $0.isWhitespace })
        else { return false }
        return true
    }
}
