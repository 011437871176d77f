/// A SQL statement whose values travel as bound parameters, never as text in the statement.
///
/// Interpolating a value appends a bind and writes `$n`, as postgres-nio's `PostgresQuery` does:
/// `let q: SQL = "SELECT * FROM children WHERE user_id = \(id)"`. Identifiers go through
/// `\(ident:)` (quoted), and raw text only through the explicitly named `\(unsafeRaw:)` and
/// `init(unsafeSQL:)`, so review only has to check those call sites.
public struct SQL: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// Statement text with `$1…$n` placeholders.
    public private(set) var text: String
    /// Parameter values in text format; `nil` is SQL NULL. Sent with type OID 0 (unknown), so
    /// PostgreSQL infers each one's type from its context, as PostgREST's binds do, unless
    /// `types` names one.
    public private(set) var binds: [String?]
    /// Each bind's type OID, 0 for "inferred from the context" (empty: all inferred). A typed
    /// bind is parsed by that type's input function, e.g. a column's value as logical
    /// replication sends it, in the column's own type.
    public private(set) var types: [UInt32]

    public init(unsafeSQL text: String, binds: [String?] = []) {
        self.text = text
        self.binds = binds
        self.types = []
    }

    public init(stringLiteral value: String) {
        self.text = value
        self.binds = []
        self.types = []
    }

    public init(stringInterpolation: Interpolation) {
        self.text = stringInterpolation.text
        self.binds = stringInterpolation.binds
        self.types = stringInterpolation.types.contains(where: { $0 != 0 }) ? stringInterpolation.types : []
    }

    /// The type OID of every bind (0: inferred).
    public var bindTypes: [UInt32] { types.isEmpty ? [UInt32](repeating: 0, count: binds.count) : types }

    /// Appends another fragment, renumbering its placeholders after this one's.
    public mutating func append(_ other: SQL) {
        if other.binds.isEmpty {
            text += other.text
        } else {
            text += Self.renumber(other.text, offset: binds.count)
            if !types.isEmpty || !other.types.isEmpty { types = bindTypes + other.bindTypes }
            binds += other.binds
        }
    }

    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var result = lhs
        result.append(rhs)
        return result
    }

    /// Joins fragments with a separator (the separator is trusted text).
    public static func join(_ parts: [SQL], separator: String) -> SQL {
        var result = SQL(unsafeSQL: "")
        for (index, part) in parts.enumerated() {
            if index > 0 { result.text += separator }
            result.append(part)
        }
        return result
    }

    /// Binds are never printed: they may hold claims, e-mails or passwords.
    public var description: String { "\(text) [\(binds.count) binds]" }

    /// Shifts every `$n` placeholder outside quotes by `offset`.
    static func renumber(_ text: String, offset: Int) -> String {
        guard offset > 0 else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        var chars = Array(text.unicodeScalars)[...]
        var quote: Unicode.Scalar? = nil
        while let c = chars.popFirst() {
            if let q = quote {
                out.unicodeScalars.append(c)
                if c == q { quote = nil }
                continue
            }
            if c == "'" || c == "\"" {
                quote = c
                out.unicodeScalars.append(c)
            } else if c == "$", let first = chars.first, ("0"..."9").contains(first) {
                var digits = ""
                while let d = chars.first, ("0"..."9").contains(d) {
                    digits.unicodeScalars.append(d)
                    chars.removeFirst()
                }
                out += "$\(Int(digits)! + offset)"
            } else {
                out.unicodeScalars.append(c)
            }
        }
        return out
    }

    public struct Interpolation: StringInterpolationProtocol {
        var text = ""
        var binds: [String?] = []
        var types: [UInt32] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount * 3)
        }

        public mutating func appendLiteral(_ literal: String) { text += literal }

        /// A value: becomes `$n`.
        public mutating func appendInterpolation(_ value: String?) {
            appendInterpolation(value, type: 0)
        }

        /// A value in the type with OID `type` (its text as that type's input function reads it).
        public mutating func appendInterpolation(_ value: String?, type: UInt32) {
            binds.append(value)
            types.append(type)
            text += "$\(binds.count)"
        }

        public mutating func appendInterpolation<T: BinaryInteger>(_ value: T?) {
            appendInterpolation(value.map { String($0) })
        }

        public mutating func appendInterpolation(_ value: Bool?) {
            appendInterpolation(value.map { $0 ? "true" : "false" })
        }

        public mutating func appendInterpolation(_ value: Double?) {
            appendInterpolation(value.map { String($0) })
        }

        /// A text array bound as a PostgreSQL array literal (`{"a","b"}`).
        public mutating func appendInterpolation(array: [String?]) {
            appendInterpolation(SQL.arrayLiteral(array))
        }

        /// An identifier (table, column, role): double-quoted.
        public mutating func appendInterpolation(ident name: String) {
            text += quoteIdentifier(name)
        }

        /// A nested fragment, its binds renumbered.
        public mutating func appendInterpolation(_ fragment: SQL) {
            text += SQL.renumber(fragment.text, offset: binds.count)
            binds += fragment.binds
            types += fragment.bindTypes
        }

        /// Trusted text (keywords from the planner's own enums). Never user input.
        public mutating func appendInterpolation(unsafeRaw raw: String) {
            text += raw
        }
    }

    /// PostgreSQL's array literal for text values: every element double-quoted and escaped.
    public static func arrayLiteral(_ values: [String?]) -> String {
        var out = "{"
        for (index, value) in values.enumerated() {
            if index > 0 { out += "," }
            guard let value else {
                out += "NULL"
                continue
            }
            out += "\""
            for scalar in value.unicodeScalars {
                if scalar == "\"" || scalar == "\\" { out += "\\" }
                out.unicodeScalars.append(scalar)
            }
            out += "\""
        }
        return out + "}"
    }
}

/// Quotes an identifier the way PostgreSQL (and PostgREST's `escapeIdent`) does: wrapped in
/// double quotes, embedded quotes doubled, NUL characters dropped.
public func quoteIdentifier(_ name: String) -> String {
    var out = "\""
    for scalar in name.unicodeScalars where scalar != "\0" {
        if scalar == "\"" { out += "\"\"" } else { out.unicodeScalars.append(scalar) }
    }
    return out + "\""
}
