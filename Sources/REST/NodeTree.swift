/// PostgreSQL's text form of a parse tree (`pg_node_tree`, as `pg_rewrite.ev_action` holds a
/// view's query), read far enough to find where each column of a view comes from: nodes
/// `{TYPE :field value …}`, lists `(…)`, `<>` for null, and every other token an atom. Tokens are
/// split at whitespace and at `(`, `)`, `{`, `}` unless a backslash escapes them, as PostgreSQL's
/// own reader (`pg_strtok`) splits them.
indirect enum NodeTree: Equatable {
    case node(type: String, fields: [String: NodeTree])
    case list([NodeTree])
    case atom(String)
    case null

    /// Parses the text; nil when it is not a node tree.
    static func parse(_ text: String) -> NodeTree? {
        var reader = Reader(bytes: Array(text.utf8))
        return reader.value(keep: { _ in true })
    }

    /// A field of a node.
    subscript(field: String) -> NodeTree? {
        guard case .node(_, let fields) = self else { return nil }
        return fields[field]
    }

    /// The items of a list (empty for anything else).
    var items: [NodeTree] {
        guard case .list(let items) = self else { return [] }
        return items
    }

    /// An atom read as an integer (an oid, a column number).
    var integer: Int? {
        guard case .atom(let text) = self else { return nil }
        return Int(text)
    }

    /// Where each output column of a view's query (`pg_rewrite.ev_action`) comes from, by its
    /// number: the relation and column a plain column reference reads (PostgreSQL's
    /// `resorigtbl` / `resorigcol`, already followed through subqueries and joins, not into views).
    /// Only the query's `targetList` is built; the rest (range table, join tree: most of the
    /// text) is skipped token by token.
    static func viewColumnOrigins(_ definition: String) -> [Int: (relation: Int, column: Int)] {
        let wanted = Array(":targetList".utf8)
        var reader = Reader(bytes: Array(definition.utf8))
        guard reader.token() == .open(.list), let query = reader.value(keep: { $0.elementsEqual(wanted) }), let targets = query["targetList"] else {
            return [:]
        }
        var origins: [Int: (relation: Int, column: Int)] = [:]
        for entry in targets.items {
            guard let number = entry["resno"]?.integer, let relation = entry["resorigtbl"]?.integer, relation != 0,
                let column = entry["resorigcol"]?.integer, column > 0
            else { continue }
            origins[number] = (relation, column)
        }
        return origins
    }

    /// Reads tokens off the bytes as they are needed.
    private struct Reader {
        enum Bracket: Equatable { case list, node }
        enum Token: Equatable {
            case open(Bracket)
            case close(Bracket)
            case atom(Range<Int>)
        }

        let bytes: [UInt8]
        var index = 0

        static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D }

        static func bracket(_ byte: UInt8) -> Token? {
            switch byte {
            case UInt8(ascii: "("): return .open(.list)
            case UInt8(ascii: ")"): return .close(.list)
            case UInt8(ascii: "{"): return .open(.node)
            case UInt8(ascii: "}"): return .close(.node)
            default: return nil
            }
        }

        mutating func token() -> Token? {
            while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
            guard index < bytes.count else { return nil }
            if let bracket = Self.bracket(bytes[index]) {
                index += 1
                return bracket
            }
            let start = index
            while index < bytes.count, !Self.isSpace(bytes[index]), Self.bracket(bytes[index]) == nil {
                index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
            }
            index = min(index, bytes.count)
            return .atom(start..<index)
        }

        mutating func peek() -> Token? {
            let saved = index
            defer { index = saved }
            return token()
        }

        func isField(_ token: Token?) -> Bool {
            guard case .atom(let range) = token else { return false }
            return bytes[range.lowerBound] == UInt8(ascii: ":")
        }

        /// Reads one value, building the fields of its nodes that `keep` names (`:field`) and
        /// skipping the others; nil when the text is not a node tree.
        mutating func value(keep: (ArraySlice<UInt8>) -> Bool) -> NodeTree? {
            switch token() {
            case .open(.node)?:
                guard case .atom(let type)? = token() else { return nil }
                var fields: [String: NodeTree] = [:]
                while let next = peek(), next != .close(.node) {
                    guard case .atom(let field) = token(), bytes[field.lowerBound] == UInt8(ascii: ":") else { return nil }
                    let kept = keep(bytes[field])
                    // A field's first value is read whatever it looks like (a column may be named
                    // `:x`); more atoms (a constant's bytes, `4 [ 1 0 0 0 ]`) up to the next field.
                    var values: [NodeTree] = []
                    repeat {
                        if kept {
                            guard let item = value(keep: { _ in true }) else { return nil }
                            values.append(item)
                        } else if !skip() {
                            return nil
                        }
                    } while peek().map { !isField($0) && $0 != .close(.node) } ?? false
                    if kept { fields[String(decoding: bytes[field].dropFirst(), as: UTF8.self)] = values.count == 1 ? values[0] : .list(values) }
                }
                guard token() == .close(.node) else { return nil }
                return .node(type: String(decoding: bytes[type], as: UTF8.self), fields: fields)
            case .open(.list)?:
                var items: [NodeTree] = []
                while let next = peek(), next != .close(.list) {
                    guard let item = value(keep: keep) else { return nil }
                    items.append(item)
                }
                guard token() == .close(.list) else { return nil }
                return .list(items)
            case .atom(let range)?:
                let text = String(decoding: bytes[range], as: UTF8.self)
                return text == "<>" ? .null : .atom(text)
            case .close?, nil:
                return nil
            }
        }

        /// Reads past one value without building it; false when the brackets do not balance.
        mutating func skip() -> Bool {
            var depth = 0
            repeat {
                switch token() {
                case .open?: depth += 1
                case .close?:
                    depth -= 1
                    if depth < 0 { return false }
                case .atom?: break
                case nil: return false
                }
            } while depth > 0
            return true
        }
    }
}
