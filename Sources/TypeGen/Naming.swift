/// How database names become identifiers of the client languages.
enum Naming {
    /// The words of a database name: split at `_`, `-`, spaces and anything not a letter or digit.
    static func words(_ name: String) -> [String] {
        var words: [String] = []
        var current = ""
        for character in name {
            if character.isLetter || character.isNumber {
                current.append(character)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// `user_profiles` → `UserProfiles`, `NOT_STARTED` → `NotStarted`.
    static func upperCamel(_ name: String) -> String {
        let result = words(name).map { word -> String in
            let lower = word.uppercased() == word ? word.lowercased() : word
            return lower.prefix(1).uppercased() + lower.dropFirst()
        }.joined()
        return result.isEmpty ? "Value" : (result.first!.isNumber ? "_" + result : result)
    }

    /// `created_at` → `createdAt`, `NOT_STARTED` → `notStarted`.
    static func lowerCamel(_ name: String) -> String {
        let upper = upperCamel(name)
        if upper.hasPrefix("_") { return upper }
        return upper.prefix(1).lowercased() + upper.dropFirst()
    }

    /// Each name made unique by a number after its second use (`name`, `name2`, …).
    static func unique(_ names: [String]) -> [String] {
        var seen: [String: Int] = [:]
        return names.map { name in
            seen[name, default: 0] += 1
            let count = seen[name]!
            return count == 1 ? name : name + String(count)
        }
    }

    /// A string literal with `"`, `\` and control characters escaped: Swift's `\u{1f}`, else
    /// TypeScript's and Python's `\u001f`.
    static func quoted(_ text: String, swift: Bool = false) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    result += swift ? "\\u{" + hex + "}" : "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
