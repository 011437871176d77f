/// PostgREST's query grammar (QueryParams.hs), hand-written. Errors carry PostgREST's shape:
/// message `"failed to parse filter (…)" (line 1, column n)`, details `unexpected … expecting …`.
public enum QueryGrammar {
    static func message(_ what: String, _ input: String, column: Int) -> String {
        "\"failed to parse \(what) (\(input))\" (line 1, column \(column))"
    }

    static func unexpected(_ characters: [Character], at index: Int) -> String {
        index < characters.count ? "unexpected \"\(characters[index])\"" : "unexpected end of input"
    }

    // MARK: order

    /// `order=created_at.desc.nullslast,name` (PostgREST's pOrder).
    public static func parseOrder(_ text: String) throws(RESTError) -> [OrderTerm] {
        let chars = Array(text)
        var index = 0
        var terms: [OrderTerm] = []
        func fail(_ expecting: String) -> RESTError {
            .parse(message: message("order", text, column: index + 1), details: "\(unexpected(chars, at: index)) expecting \(expecting)")
        }
        while true {
            skipSpaces(chars, &index)
            guard let field = try field(chars, &index, what: "order", input: text) else { throw fail("field name (* or [a..z0..9_$])") }
            var term = OrderTerm(column: field.name, jsonPath: field.path)
            // `rel(col->path)`: a column of an embedded resource (PostgREST's pOrderRelationTerm;
            // anything else after `rel(` fails as a plain term would, at the `(`).
            if field.path.isEmpty, index < chars.count, chars[index] == "(" {
                var inner = index + 1
                if let related = try? Self.field(chars, &inner, what: "order", input: text), inner < chars.count, chars[inner] == ")" {
                    term = OrderTerm(column: related.name, jsonPath: related.path, relation: field.name)
                    index = inner + 1
                }
            }
            var expectDirection = true
            var modified = false
            while index < chars.count, chars[index] == "." {
                index += 1
                // Each modifier is matched as a whole word's beginning, as PostgREST's `string`
                // parsers do: `nullslasttt` is `nullslast`, then `tt` where "," was expected.
                let rest = String(chars[index...])
                let word = ["asc", "desc", "nullsfirst", "nullslast"].first { rest.hasPrefix($0) } ?? ""
                switch word {
                case "asc" where expectDirection: term.descending = false
                case "desc" where expectDirection: term.descending = true
                case "nullsfirst" where term.nulls == nil: term.nulls = .first
                case "nullslast" where term.nulls == nil: term.nulls = .last
                default:
                    throw fail(expectDirection && term.nulls == nil ? "\"asc\", \"desc\", \"nullsfirst\" or \"nullslast\"" : "\"nullsfirst\" or \"nullslast\"")
                }
                index += word.count
                modified = true
                expectDirection = false
                if term.nulls != nil { break }
            }
            terms.append(term)
            skipSpaces(chars, &index)
            if index == chars.count { return terms }
            guard chars[index] == "," else {
                // After a modifier the character is what failed (parsec quotes it as a character).
                if modified {
                    throw .parse(
                        message: message("order", text, column: index + 1), details: "unexpected '\(chars[index])' expecting \",\" or end of input")
                }
                throw fail("\",\" or end of input")
            }
            index += 1
        }
    }

    // MARK: columns / on_conflict

    public static func parseColumns(_ text: String, what: String) throws(RESTError) -> [String] {
        let chars = Array(text)
        var index = 0
        var names: [String] = []
        while true {
            skipSpaces(chars, &index)
            guard let name = fieldName(chars, &index) else {
                throw .parse(
                    message: message(what, text, column: index + 1),
                    details: "\(unexpected(chars, at: index)) expecting field name (* or [a..z0..9_$])")
            }
            names.append(name)
            skipSpaces(chars, &index)
            if index == chars.count { return names }
            guard chars[index] == "," else {
                throw .parse(message: message(what, text, column: index + 1), details: "\(unexpected(chars, at: index)) expecting \",\" or end of input")
            }
            index += 1
        }
    }

    // MARK: filters

    static let plainOperators: Set<FilterOperator> = [
        .eq, .neq, .gt, .gte, .lt, .lte, .like, .ilike, .match, .imatch, .isdistinct, .cs, .cd, .ov, .sl, .sr, .nxl, .nxr, .adj
    ]

    /// `column=[not.]op.value` (PostgREST's pOpExpr with pSingleVal: the rest of the value is
    /// the operand, quotes included, except for `in.(…)` lists).
    public static func parseFilter(column: String, _ expression: String) throws(RESTError) -> Condition {
        let (name, path) = try filterKey(column)
        // Fast path for the common `op.value` with a plain operator: the value is the rest as
        // written, so no character-level parse is needed.
        if let dot = expression.utf8.firstIndex(of: UInt8(ascii: ".")) {
            let opText = expression[..<dot]
            if opText.utf8.count <= 6, let op = FilterOperator(rawValue: String(opText)), Self.plainOperators.contains(op) {
                let value = String(expression[expression.utf8.index(after: dot)...])
                return .filter(Filter(column: name, op: op, operand: .value(value), jsonPath: path))
            }
        }
        let chars = Array(expression)
        var index = 0
        let condition = try operation(chars, &index, column: name, jsonPath: path, input: expression, what: "filter", inLogicTree: false)
        if index != chars.count {
            throw .parse(message: message("filter", expression, column: index + 1), details: "\(unexpected(chars, at: index)) expecting end of input")
        }
        return condition
    }

    /// `or=(a.eq.1,and(b.gt.2,c.is.null))`, `not.and=(…)`.
    public static func parseLogicTree(key: String, _ value: String) throws(RESTError) -> Condition {
        let negated = key.hasPrefix("not.")
        let op = negated ? String(key.dropFirst(4)) : key
        let text = op + value
        let chars = Array(text)
        var index = 0
        // What follows the tree is ignored (`and=(id.eq.1))`), as PostgREST parses it without
        // asking for the end of input.
        let tree = try logicTree(chars, &index, input: value, forceLogic: true)
        return negated ? .not(tree) : tree
    }

    private static func logicTree(_ chars: [Character], _ index: inout Int, input: String, forceLogic: Bool) throws(RESTError) -> Condition {
        func fail(_ expecting: String) -> RESTError {
            .parse(message: message("logic tree", input, column: index + 1), details: "\(unexpected(chars, at: index)) expecting \(expecting)")
        }
        // `[not.](and|or)(…)` or, inside a tree, `field.[not.]op.value`.
        let start = index
        var negated = false
        if matches(chars, index, "not.") {
            negated = true
            index += 4
        }
        // `and(` / `or(`, spaces allowed before the parenthesis (PostgREST's lexemes).
        func opening(_ word: String) -> Int? {
            guard matches(chars, index, word) else { return nil }
            var position = index + word.count
            while position < chars.count, chars[position] == " " { position += 1 }
            return position < chars.count && chars[position] == "(" ? position : nil
        }
        var logic: String? = nil
        if let open = opening("and") {
            logic = "and"
            index = open
        } else if let open = opening("or") {
            logic = "or"
            index = open
        }
        if let logic {
            index += 1  // "("
            var items: [Condition] = []
            while true {
                skipSpaces(chars, &index)
                items.append(try logicTree(chars, &index, input: input, forceLogic: false))
                skipSpaces(chars, &index)
                guard index < chars.count else { throw fail("\",\" or \")\"") }
                if chars[index] == "," {
                    index += 1
                    continue
                }
                if chars[index] == ")" {
                    index += 1
                    break
                }
                throw fail("\",\" or \")\"")
            }
            let tree: Condition = logic == "and" ? .and(items) : .or(items)
            return negated ? .not(tree) : tree
        }
        if forceLogic {
            // PostgREST parses `or` + the value: the error points just after the operator.
            index = start + (negated ? 4 : 0)
            if matches(chars, index, "and") { index += 3 } else if matches(chars, index, "or") { index += 2 }
            throw fail("\"(\"")
        }
        index = start
        guard let field = try field(chars, &index, what: "logic tree", input: input) else {
            throw fail("field name (* or [a..z0..9_$]), negation operator (not) or logic operator (and, or)")
        }
        guard index < chars.count, chars[index] == "." else { throw fail("delimiter (.)") }
        index += 1
        return try operation(chars, &index, column: field.name, jsonPath: field.path, input: input, what: "logic tree", inLogicTree: true)
    }

    /// `[not.]op.operand` from `index`.
    private static func operation(
        _ chars: [Character], _ index: inout Int, column: String, jsonPath: [JSONPathStep], input: String,
        what: String, inLogicTree: Bool
    ) throws(RESTError) -> Condition {
        func failAt(_ position: Int, _ expecting: String) -> RESTError {
            .parse(message: message(what, input, column: position + 1), details: "\(unexpected(chars, at: position)) expecting \(expecting)")
        }
        func fail(_ expecting: String) -> RESTError { failAt(index, expecting) }
        var negated = false
        if matches(chars, index, "not.") {
            negated = true
            index += 4
        }
        let opStart = index
        while index < chars.count, chars[index].isLetter { index += 1 }
        let opName = String(chars[opStart..<index])
        guard let op = FilterOperator(rawValue: opName) else {
            index = opStart
            throw fail(negated ? "operator (eq, gt, ...)" : "\"not\" or operator (eq, gt, ...)")
        }
        var language: String? = nil
        if [.fts, .plfts, .phfts, .wfts].contains(op), index < chars.count, chars[index] == "(" {
            let langStart = index + 1
            guard let close = chars[langStart...].firstIndex(of: ")"), close > langStart,
                chars[langStart..<close].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
            else {
                index = langStart
                throw fail("operator (eq, gt, ...)")
            }
            language = String(chars[langStart..<close])
            index = close + 1
        }
        var quantifier: Filter.Quantifier? = nil
        if Filter.quantifiable.contains(op), index < chars.count, chars[index] == "(" {
            if matches(chars, index, "(any)") {
                quantifier = .any
            } else if matches(chars, index, "(all)") {
                quantifier = .all
            } else {
                index += 1
                throw fail("\"any\" or \"all\"")
            }
            index += 5
        }
        guard index < chars.count, chars[index] == "." else { throw fail("delimiter (.)") }
        index += 1
        let operand: FilterOperand
        switch op {
        case .in:
            operand = .list(try list(chars, &index, failAt: failAt))
        case .is:
            let valueStart = index
            let word = inLogicTree ? rawValue(chars, &index) : String(chars[index...])
            if !inLogicTree { index = chars.count }
            guard let value = IsValue(rawValue: word.lowercased()) else {
                index = valueStart
                throw fail("isVal: (null, not_null, true, false, unknown)")
            }
            operand = .isValue(value)
        default:
            if inLogicTree {
                operand = .value(try logicValue(chars, &index, failAt: failAt))
            } else {
                operand = .value(String(chars[index...]))
                index = chars.count
            }
        }
        let condition = Condition.filter(Filter(column: column, op: op, operand: operand, language: language, quantifier: quantifier, jsonPath: jsonPath))
        return negated ? .not(condition) : condition
    }

    /// `(a,"b, c","q\"uote")`: elements quoted with `"` and backslash escapes, else raw up to `,` or `)`.
    static func list(_ chars: [Character], _ index: inout Int, failAt: (Int, String) -> RESTError) throws(RESTError) -> [String] {
        skipSpaces(chars, &index)
        guard index < chars.count, chars[index] == "(" else { throw failAt(index, "\"(\"") }
        index += 1
        skipSpaces(chars, &index)
        var items: [String] = []
        if index < chars.count, chars[index] == ")" {
            index += 1
            return items
        }
        while true {
            let start = index
            if index < chars.count, chars[index] == "\"", let quoted = quotedValue(chars, &index),
                index < chars.count, chars[index] == "," || chars[index] == ")"
            {
                items.append(quoted)
            } else {
                index = start
                items.append(rawValue(chars, &index))
            }
            guard index < chars.count else { throw failAt(index, "\",\" or \")\"") }
            if chars[index] == "," {
                index += 1
                continue
            }
            index += 1  // ")"
            skipSpaces(chars, &index)
            return items
        }
    }

    /// A value inside a logic tree: quoted, a `{…}` array literal, or raw up to `,` or `)`.
    static func logicValue(_ chars: [Character], _ index: inout Int, failAt: (Int, String) -> RESTError) throws(RESTError) -> String {
        let start = index
        if index < chars.count, chars[index] == "\"", let quoted = quotedValue(chars, &index),
            index == chars.count || chars[index] == "," || chars[index] == ")"
        {
            return quoted
        }
        index = start
        if index < chars.count, chars[index] == "{", let close = chars[index...].firstIndex(of: "}"),
            !chars[(index + 1)..<close].contains("{")
        {
            index = close + 1
            return String(chars[start..<index])
        }
        return rawValue(chars, &index)
    }

    static func rawValue(_ chars: [Character], _ index: inout Int) -> String {
        let start = index
        while index < chars.count, chars[index] != ",", chars[index] != ")" { index += 1 }
        return String(chars[start..<index])
    }

    /// `"…"` with `\x` escapes; nil if unterminated.
    static func quotedValue(_ chars: [Character], _ index: inout Int) -> String? {
        var out = ""
        var i = index + 1
        while i < chars.count {
            let c = chars[i]
            if c == "\\" {
                guard i + 1 < chars.count else { return nil }
                out.append(chars[i + 1])
                i += 2
                continue
            }
            if c == "\"" {
                index = i + 1
                return out
            }
            out.append(c)
            i += 1
        }
        return nil
    }

    /// A field name: `"quoted"` or identifier characters (PostgREST's pFieldName: letters, digits,
    /// `_`, `$`, spaces, `-` not followed by `>`).
    static func fieldName(_ chars: [Character], _ index: inout Int) -> String? {
        if index < chars.count, chars[index] == "\"" {
            var i = index
            guard let name = quotedValue(chars, &i), !name.isEmpty else { return nil }
            index = i
            return name
        }
        let start = index
        while index < chars.count {
            let c = chars[index]
            if c.isLetter || c.isNumber || c == "_" || c == "$" || c == " " {
                index += 1
            } else if c == "-", index + 1 < chars.count, chars[index + 1] != ">" {
                index += 1
            } else {
                break
            }
        }
        let name = String(chars[start..<index]).trimmedOWS
        return name.isEmpty ? nil : name
    }

    /// A query key naming a column may be quoted too.
    static func unquoteName(_ text: String) -> String {
        if !text.utf8.contains(UInt8(ascii: "\"")) && !text.utf8.contains(UInt8(ascii: " ")) { return text }
        let chars = Array(text)
        var index = 0
        if let name = fieldName(chars, &index), index == chars.count { return name }
        return text
    }

    static func skipSpaces(_ chars: [Character], _ index: inout Int) {
        while index < chars.count, chars[index] == " " || chars[index] == "\t" { index += 1 }
    }

    static func matches(_ chars: [Character], _ index: Int, _ word: String) -> Bool {
        var i = index
        for c in word {
            guard i < chars.count, chars[i] == c else { return false }
            i += 1
        }
        return true
    }
}
