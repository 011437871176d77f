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
        var reader = Reader(tokens: tokens(Array(text.utf8)))
        return reader.value()
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

    private static func tokens(_ bytes: [UInt8]) -> [String] {
        var tokens: [String] = []
        var index = 0
        let delimiters: Set<UInt8> = [UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "{"), UInt8(ascii: "}")]
        let spaces: Set<UInt8> = [UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r")]
        while index < bytes.count {
            let byte = bytes[index]
            if spaces.contains(byte) {
                index += 1
            } else if delimiters.contains(byte) {
                tokens.append(String(decoding: [byte], as: UTF8.self))
                index += 1
            } else {
                let start = index
                while index < bytes.count, !spaces.contains(bytes[index]), !delimiters.contains(bytes[index]) {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index = min(index, bytes.count)
                tokens.append(String(decoding: bytes[start..<index], as: UTF8.self))
            }
        }
        return tokens
    }

    private struct Reader {
        let tokens: [String]
        var position = 0

        var next: String? { position < tokens.count ? tokens[position] : nil }

        mutating func value() -> NodeTree? {
            guard let token = next else { return nil }
            position += 1
            switch token {
            case "{":
                guard let type = next else { return nil }
                position += 1
                var fields: [String: NodeTree] = [:]
                while let field = next, field != "}" {
                    position += 1
                    // A field's first value is read whatever it looks like (a column may be named
                    // `:x`); more atoms (a constant's bytes, `4 [ 1 0 0 0 ]`) up to the next field.
                    guard field.hasPrefix(":"), let first = value() else { return nil }
                    var extra: [NodeTree] = []
                    while let more = next, !more.hasPrefix(":"), more != "}" {
                        guard let item = value() else { return nil }
                        extra.append(item)
                    }
                    fields[String(field.dropFirst())] = extra.isEmpty ? first : .list([first] + extra)
                }
                guard next == "}" else { return nil }
                position += 1
                return .node(type: type, fields: fields)
            case "(":
                var items: [NodeTree] = []
                while let item = next, item != ")" {
                    guard let parsed = value() else { return nil }
                    items.append(parsed)
                }
                guard next == ")" else { return nil }
                position += 1
                return .list(items)
            case ")", "}": return nil
            case "<>": return .null
            default: return .atom(token)
            }
        }
    }
}

extension NodeTree {
    /// Where each output column of a view's query (`pg_rewrite.ev_action`) comes from, by its
    /// number: the relation and column a plain column reference reads (PostgreSQL's
    /// `resorigtbl` / `resorigcol`, already followed through subqueries and joins, not into views).
    static func viewColumnOrigins(_ definition: String) -> [Int: (relation: Int, column: Int)] {
        guard let tree = parse(definition), let query = tree.items.first, let targets = query["targetList"] else { return [:] }
        var origins: [Int: (relation: Int, column: Int)] = [:]
        for entry in targets.items {
            guard let number = entry["resno"]?.integer, let relation = entry["resorigtbl"]?.integer, relation != 0,
                let column = entry["resorigcol"]?.integer, column > 0
            else { continue }
            origins[number] = (relation, column)
        }
        return origins
    }
}
