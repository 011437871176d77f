/// A SQL statement whose values travel as bound parameters, never as text in the statement.
///
/// Interpolating a value appends a bind, as postgres-nio's `PostgresQuery` does:
/// `let q: SQL = "SELECT * FROM children WHERE user_id = \(id)"`. Identifiers go through
/// `\(ident:)` (quoted), and raw text only through the explicitly named `\(unsafeRaw:)` and
/// `init(unsafeSQL:)`, so review only has to check those call sites.
///
/// A bind is a position between two pieces of text, not a `$n` in it: fragments compose (`+`,
/// `append`, `\(fragment)`) by joining their pieces, and `$1…$n` are written only when `text`
/// is read, so no statement is ever scanned or renumbered.
public struct SQL: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The trusted text around the binds: `pieces[i]` precedes bind `i`, the last follows them
    /// all (`pieces.count == binds.count + 1`).
    private var pieces: [String]
    /// Parameter values in text format; `nil` is SQL NULL. Sent with type OID 0 (unknown), so
    /// PostgreSQL infers each one's type from its context, as PostgREST's binds do, unless
    /// `types` names one.
    public private(set) var binds: [String?]
    /// Each bind's type OID, 0 for "inferred from the context" (empty: all inferred). A typed
    /// bind is parsed by that type's input function, e.g. a column's value as logical
    /// replication sends it, in the column's own type.
    public private(set) var types: [UInt32]
    /// The text, written once by `finished()` for a statement sent many times (a kept plan, a
    /// template); any change to the pieces forgets it. Not part of the statement's identity.
    private var written: String?

    /// Trusted statement text without binds (no `$n` in it is treated as a placeholder).
    public init(unsafeSQL text: String) {
        self.pieces = [text]
        self.binds = []
        self.types = []
    }

    public init(stringLiteral value: String) {
        self.init(unsafeSQL: value)
    }

    public init(stringInterpolation: Interpolation) {
        self.pieces = stringInterpolation.pieces
        self.binds = stringInterpolation.binds
        self.types = stringInterpolation.types.contains(where: { $0 != 0 }) ? stringInterpolation.types : []
    }

    /// The statement text, the binds numbered `$1…$n` in order.
    public var text: String { written ?? render() }

    /// This statement with its text written now, so that reading `text` costs nothing after.
    public func finished() -> SQL {
        var copy = self
        copy.written = render()
        return copy
    }

    /// The same statement (and text, if written) with other values, as many as it has binds.
    public func with(binds values: [String?]) -> SQL {
        precondition(values.count == binds.count, "a statement's binds are replaced one for one")
        var copy = self
        copy.binds = values
        return copy
    }

    public static func == (lhs: SQL, rhs: SQL) -> Bool {
        lhs.pieces == rhs.pieces && lhs.binds == rhs.binds && lhs.types == rhs.types
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(pieces)
        hasher.combine(binds)
        hasher.combine(types)
    }

    private func render() -> String {
        guard pieces.count > 1 else { return pieces[0] }
        var out = pieces[0]
        out.reserveCapacity(pieces.reduce(0) { $0 + $1.utf8.count } + binds.count * 3)
        for index in 1..<pieces.count {
            out += "$"
            out += String(index)
            out += pieces[index]
        }
        return out
    }

    /// The text before the first bind (all of it when there is none): what a statement starts
    /// with, read without writing the whole text.
    public var leadingText: String { pieces[0] }

    /// The type OID of every bind (0: inferred).
    public var bindTypes: [UInt32] { types.isEmpty ? [UInt32](repeating: 0, count: binds.count) : types }

    /// Whether the statement has no text at all.
    public var isEmpty: Bool { binds.isEmpty && pieces[0].isEmpty }

    /// Appends another fragment: its binds follow this one's.
    public mutating func append(_ other: SQL) {
        written = nil
        pieces[pieces.count - 1] += other.pieces[0]
        guard !other.binds.isEmpty else { return }
        pieces += other.pieces.dropFirst()
        if !types.isEmpty || !other.types.isEmpty { types = bindTypes + other.bindTypes }
        binds += other.binds
    }

    /// Appends trusted text (keywords, identifiers quoted from the schema cache). Never user input.
    public mutating func append(unsafeRaw raw: String) {
        written = nil
        pieces[pieces.count - 1] += raw
    }

    /// Appends a value as a bind (its type inferred from the context).
    public mutating func append(bind value: String?) {
        written = nil
        if !types.isEmpty { types.append(0) }
        binds.append(value)
        pieces.append("")
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
            if index > 0 { result.append(unsafeRaw: separator) }
            result.append(part)
        }
        return result
    }

    /// Binds are never printed: they may hold claims, e-mails or passwords.
    public var description: String { "\(text) [\(binds.count) binds]" }

    public struct Interpolation: StringInterpolationProtocol {
        var pieces = [""]
        var binds: [String?] = []
        var types: [UInt32] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            pieces[0].reserveCapacity(literalCapacity)
        }

        public mutating func appendLiteral(_ literal: String) { pieces[pieces.count - 1] += literal }

        /// A value: becomes a bind.
        public mutating func appendInterpolation(_ value: String?) {
            appendInterpolation(value, type: 0)
        }

        /// A value in the type with OID `type` (its text as that type's input function reads it).
        public mutating func appendInterpolation(_ value: String?, type: UInt32) {
            binds.append(value)
            types.append(type)
            pieces.append("")
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
            pieces[pieces.count - 1] += quoteIdentifier(name)
        }

        /// A nested fragment: its binds follow those so far.
        public mutating func appendInterpolation(_ fragment: SQL) {
            pieces[pieces.count - 1] += fragment.pieces[0]
            pieces += fragment.pieces.dropFirst()
            binds += fragment.binds
            types += fragment.bindTypes
        }

        /// Trusted text (keywords from the planner's own enums). Never user input.
        public mutating func appendInterpolation(unsafeRaw raw: String) {
            pieces[pieces.count - 1] += raw
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
