/// The `select` parameter's grammar (PostgREST's pFieldSelect, pRelationSelect, pSpreadRelationSelect
/// and their JSON paths); the lexing pieces are shared with the filters' grammar in QueryGrammar.swift.
extension QueryGrammar {
    /// `select=id,name,alias:col,col::text,"quoted col",data->a->>b,age.sum()::int,count(),
    /// rel!hint!inner(col,…),...rel(col)` (PostgREST's pFieldSelect, pRelationSelect and
    /// pSpreadRelationSelect; embeds nest).
    public static func parseSelect(_ text: String) throws(RESTError) -> [SelectItem] {
        let chars = Array(text)
        var index = 0
        skipSpaces(chars, &index)
        if index == chars.count { return [SelectItem(column: "*")] }
        let items = try selectList(chars, &index, text: text, nested: false)
        return items
    }

    private static func selectList(_ chars: [Character], _ index: inout Int, text: String, nested: Bool) throws(RESTError) -> [SelectItem] {
        var items: [SelectItem] = []
        while true {
            skipSpaces(chars, &index)
            guard index < chars.count else { throw selectFailure(chars, index, text, expecting: "field name (* or [a..z0..9_$])") }
            // `rel()`: PostgREST's empty embed, which selects nothing (it only filters).
            if nested, items.isEmpty, chars[index] == ")" { return [] }
            items.append(try selectItem(chars, &index, text: text))
            skipSpaces(chars, &index)
            if index == chars.count {
                if nested { throw selectFailure(chars, index, text, expecting: "\",\" or \")\"") }
                return items
            }
            if nested, chars[index] == ")" { return items }
            // At the top level, anything but `,` after a whole item ends the list and the rest is
            // not read, as PostgREST's parser does not ask for the end of the parameter
            // (`select=name,projects(count)'` selects `name,projects(count)`).
            guard nested else {
                if chars[index] != "," { return items }
                index += 1
                continue
            }
            guard chars[index] == "," else { throw selectFailure(chars, index, text, expecting: "\",\" or \")\"") }
            index += 1
        }
    }

    /// PostgREST's error for a `select` it cannot read: the position and what it expected there.
    private static func selectFailure(_ chars: [Character], _ index: Int, _ text: String, expecting: String) -> RESTError {
        .parse(message: message("select parameter", text, column: index + 1), details: "\(unexpected(chars, at: index)) expecting \(expecting)")
    }

    /// One item: `*`, a spread `...rel(…)`, or a named one (`selectNamed`).
    private static func selectItem(_ chars: [Character], _ index: inout Int, text: String) throws(RESTError) -> SelectItem {
        if chars[index] == "*" {
            index += 1
            return SelectItem(column: "*")
        }
        if matches(chars, index, "...") {
            // `...rel!hint!inner(…)`: a spread embed (no alias: its columns keep their names).
            index += 3
            guard let name = fieldName(chars, &index) else { throw selectFailure(chars, index, text, expecting: "field name (* or [a..z0..9_$])") }
            var embed = SelectItem.Embed(hint: nil, inner: false, select: [], spread: true)
            try embedParameters(chars, &index, text: text, into: &embed)
            try embedBody(chars, &index, text: text, into: &embed)
            var item = SelectItem(column: name)
            item.embed = embed
            return item
        }
        guard var name = fieldName(chars, &index) else { throw selectFailure(chars, index, text, expecting: "field name (* or [a..z0..9_$])") }
        var alias: String? = nil
        if index < chars.count, chars[index] == ":", index + 1 < chars.count, chars[index + 1] != ":" {
            index += 1
            alias = name
            skipSpaces(chars, &index)
            guard let real = fieldName(chars, &index) else { throw selectFailure(chars, index, text, expecting: "field name (* or [a..z0..9_$])") }
            name = real
        }
        if name == "count", matches(chars, index, "()") {
            // `count()`: the rows counted (PostgREST's COUNT(*)).
            index += 2
            var item = SelectItem(column: "*", alias: alias, aggregate: .count)
            item.aggregateCast = try castName(chars, &index, text: text)
            return item
        }
        if index < chars.count, chars[index] == "(" || chars[index] == "!" {
            // PostgREST never reads `count(…)` as an embed.
            if name == "count", chars[index] == "(" {
                index += 1
                throw selectFailure(chars, index, text, expecting: "\")\"")
            }
            var embed = SelectItem.Embed(hint: nil, inner: false, select: [])
            try embedParameters(chars, &index, text: text, into: &embed)
            try embedBody(chars, &index, text: text, into: &embed)
            var item = SelectItem(column: name, alias: alias)
            item.embed = embed
            return item
        }
        let path = try jsonPath(chars, &index, what: "select parameter", input: text)
        var item = SelectItem(column: name, alias: alias, cast: try castName(chars, &index, text: text), jsonPath: path)
        if index < chars.count, chars[index] == "." {
            // `col.sum()`: an aggregate, with its own cast after.
            index += 1
            let start = index
            while index < chars.count, chars[index].isLetter { index += 1 }
            guard let aggregate = SelectItem.Aggregate(rawValue: String(chars[start..<index])), matches(chars, index, "()") else {
                throw selectFailure(chars, start, text, expecting: "aggregate function (count, sum, avg, min, max)")
            }
            index += 2
            item.aggregate = aggregate
            item.aggregateCast = try castName(chars, &index, text: text)
        }
        return item
    }

    /// `!hint`, `!inner`, `!left` after an embed's name.
    private static func embedParameters(_ chars: [Character], _ index: inout Int, text: String, into embed: inout SelectItem.Embed) throws(RESTError) {
        while index < chars.count, chars[index] == "!" {
            index += 1
            guard let word = fieldName(chars, &index) else { throw selectFailure(chars, index, text, expecting: "hint or join type (inner, left)") }
            switch word {
            case "inner": embed.inner = true
            case "left": embed.inner = false
            default: embed.hint = word
            }
        }
    }

    /// `(…)`: an embed's own select list (`()`: nothing, the embed only filters).
    private static func embedBody(_ chars: [Character], _ index: inout Int, text: String, into embed: inout SelectItem.Embed) throws(RESTError) {
        guard index < chars.count, chars[index] == "(" else { throw selectFailure(chars, index, text, expecting: "\"(\"") }
        index += 1
        skipSpaces(chars, &index)
        embed.select = index < chars.count && chars[index] == ")" ? [] : try selectList(chars, &index, text: text, nested: true)
        guard index < chars.count, chars[index] == ")" else { throw selectFailure(chars, index, text, expecting: "\",\" or \")\"") }
        index += 1
    }

    /// `::type`: letters, digits, `_`, ` `, `[]` (nil when no cast follows).
    private static func castName(_ chars: [Character], _ index: inout Int, text: String) throws(RESTError) -> String? {
        guard index + 1 < chars.count, chars[index] == ":", chars[index + 1] == ":" else { return nil }
        index += 2
        let start = index
        while index < chars.count,
            chars[index].isLetter || chars[index].isNumber || chars[index] == "_" || chars[index] == " " || chars[index] == "[" || chars[index] == "]"
        {
            index += 1
        }
        let castText = String(chars[start..<index]).trimmedOWS
        guard !castText.isEmpty else { throw selectFailure(chars, index, text, expecting: "letter or digit") }
        return castText
    }

    // MARK: JSON paths

    /// `->key`, `->>key`, `->0`, `->>-1`, `->"quoted.key"`, repeated (PostgREST's pJsonPath): a
    /// number is an array index only when the path, a cast, a `.`, `,` or `)` follows it; a key
    /// is any text without `(`, `)`, `-`, `:`, `.`, `,`, `>` (dashes inside are kept).
    static func jsonPath(_ chars: [Character], _ index: inout Int, what: String, input: String) throws(RESTError) -> [JSONPathStep] {
        var steps: [JSONPathStep] = []
        while matches(chars, index, "->") {
            index += 2
            let asText = index < chars.count && chars[index] == ">"
            if asText { index += 1 }
            steps.append(JSONPathStep(asText: asText, try jsonOperand(chars, &index, what: what, input: input)))
        }
        return steps
    }

    private static func jsonOperand(_ chars: [Character], _ index: inout Int, what: String, input: String) throws(RESTError) -> JSONPathStep.Operand {
        if index < chars.count, chars[index] == "\"" {
            var i = index
            if let key = quotedValue(chars, &i) {
                index = i
                return .key(key)
            }
        }
        // An index: -?digits, then the end of the operand.
        var i = index
        if i < chars.count, chars[i] == "-" { i += 1 }
        let digitsStart = i
        while i < chars.count, chars[i].isASCII, chars[i].isNumber { i += 1 }
        if i > digitsStart, i == chars.count || matches(chars, i, "->") || matches(chars, i, "::") || [".", ",", ")"].contains(chars[i]) {
            let text = String(chars[index..<i])
            index = i
            return .index(text)
        }
        // A key: identifiers joined by dashes that no `>` follows.
        let reserved: Set<Character> = ["(", ")", "-", ":", ".", ",", ">"]
        var parts: [String] = []
        while true {
            let start = index
            while index < chars.count, !reserved.contains(chars[index]) { index += 1 }
            guard index > start else {
                throw .parse(
                    message: message(what, input, column: index + 1),
                    details: "\(unexpected(chars, at: index)) expecting \"-\", digit or any non reserved character different from: .,>()")
            }
            parts.append(String(chars[start..<index]).trimmedOWS)
            guard index + 1 < chars.count, chars[index] == "-", chars[index + 1] != ">" else { break }
            index += 1
        }
        return .key(parts.joined(separator: "-"))
    }

    /// A filter's or order's field: a name and its JSON path (PostgREST's pField).
    static func field(_ chars: [Character], _ index: inout Int, what: String, input: String) throws(RESTError) -> (name: String, path: [JSONPathStep])? {
        guard let name = fieldName(chars, &index) else { return nil }
        return (name, try jsonPath(chars, &index, what: what, input: input))
    }

    /// The query key of a filter: `column`, `"quoted"`, `data->a->>b`. A key that is no field
    /// (odd characters) stays the column name, which the planner then finds unknown (42703).
    static func filterKey(_ text: String) throws(RESTError) -> (name: String, path: [JSONPathStep]) {
        guard text.contains("->") else { return (unquoteName(text), []) }
        let chars = Array(text)
        var index = 0
        func fail(_ expecting: String) -> RESTError {
            .parse(message: message("tree path", text, column: index + 1), details: "\(unexpected(chars, at: index)) expecting \(expecting)")
        }
        skipSpaces(chars, &index)
        guard let field = try field(chars, &index, what: "tree path", input: text) else { throw fail("field name (* or [a..z0..9_$])") }
        skipSpaces(chars, &index)
        guard index == chars.count else { throw fail("\"->>\", \"->\" or end of input") }
        return field
    }

    /// Splits a query key at its last `.` before any JSON path and outside quotes:
    /// `children.metadata->>a.b` → (`children`, `metadata->>a.b`); nil when there is none.
    static func splitEmbedPath(_ key: String) -> (path: String, last: String)? {
        let chars = Array(key)
        var quoted = false
        var lastDot: Int? = nil
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c == "\\", quoted {
                i += 2
                continue
            }
            if c == "\"" {
                quoted.toggle()
            } else if !quoted {
                if c == "-", i + 1 < chars.count, chars[i + 1] == ">" { break }
                if c == "." { lastDot = i }
            }
            i += 1
        }
        guard let dot = lastDot else { return nil }
        return (String(chars[..<dot]), String(chars[(dot + 1)...]))
    }
}
