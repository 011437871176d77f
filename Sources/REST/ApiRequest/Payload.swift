import HTTP

/// A write or RPC body: the raw JSON (handed to PostgreSQL as one bind) and what Swift looks at.
struct Payload: Sendable, Equatable {
    var json: JSONValue
    /// The raw bytes, sent to PostgreSQL as they came (no re-serialisation on the hot path).
    var raw: String
    /// The rows: one for an object, the elements for an array of objects.
    var rows: [JSONValue]
    /// The columns the body writes: the keys (all rows share them, as PostgREST requires).
    var keys: [String]
    var isArray: Bool
}

extension ApiRequest {
    /// PostgREST's Payload.hs: a JSON object, or (for inserts) an array of objects with the same keys.
    /// With `columns=` the rows may differ (a missing key is NULL, or the default with `missing=default`).
    static func parsePayload(_ body: [UInt8], allowArray: Bool, sameKeys: Bool = true, emptyIsObject: Bool = false) throws(RESTError) -> Payload {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            if emptyIsObject { return Payload(json: .object([]), raw: "{}", rows: [.object([])], keys: [], isArray: false) }
            throw .invalidBody("Empty or invalid json")
        }
        guard let json = JSONValue.parse(body) else { throw .invalidBody("Empty or invalid json") }
        let raw = String(decoding: body, as: UTF8.self)
        switch json {
        case .object:
            return Payload(json: json, raw: raw, rows: [json], keys: json.keys, isArray: false)
        case .array(let items) where allowArray:
            var keys: [String]? = nil
            for item in items {
                guard case .object = item else { throw .invalidBody("All object keys must match") }
                let itemKeys = item.keys
                if sameKeys, let keys, Set(keys) != Set(itemKeys) { throw .invalidBody("All object keys must match") }
                if keys == nil { keys = itemKeys }
            }
            return Payload(json: json, raw: raw, rows: items, keys: keys ?? [], isArray: true)
        default:
            throw .invalidBody("Empty or invalid json")
        }
    }
}

extension Payload {
    /// A CSV body (RFC 4180: a header row of column names, then one row per line; `"…"` quotes
    /// with `""` for a quote) as the JSON array PostgREST builds from it: every value a string,
    /// an empty field the empty string, the word NULL the SQL null.
    static func csvAsJSON(_ body: [UInt8]) throws(RESTError) -> String {
        var rows: [[String?]] = []
        var row: [String?] = []
        var field: [UInt8] = []
        var quoted = false
        var wasQuoted = false
        var index = 0
        func endField() {
            let text = String(decoding: field, as: UTF8.self)
            row.append(!wasQuoted && text == "NULL" ? nil : text)
            field = []
            wasQuoted = false
        }
        func endRow() {
            endField()
            if !(row.count == 1 && row[0] == "") { rows.append(row) }  // blank lines
            row = []
        }
        while index < body.count {
            let byte = body[index]
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < body.count, body[index + 1] == UInt8(ascii: "\"") {
                        field.append(byte)
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(byte)
                }
            } else {
                switch byte {
                case UInt8(ascii: "\"") where field.isEmpty:
                    quoted = true
                    wasQuoted = true
                case UInt8(ascii: ","): endField()
                case 0x0A: endRow()
                case 0x0D where index + 1 < body.count && body[index + 1] == 0x0A: break
                default: field.append(byte)
                }
            }
            index += 1
        }
        guard !quoted else { throw .invalidBody("Unterminated quoted field in CSV") }
        if !field.isEmpty || !row.isEmpty || wasQuoted { endRow() }
        guard let header = rows.first else { throw .invalidBody("Empty CSV") }
        let names = header.map { $0 ?? "NULL" }
        var objects: [String] = []
        for values in rows.dropFirst() {
            guard values.count == names.count else {
                throw .invalidBody("All lines of the CSV must have as many fields as its header (\(names.count))")
            }
            objects.append("{" + zip(names, values).map { jsonString($0) + ":" + ($1.map(jsonString) ?? "null") }.joined(separator: ",") + "}")
        }
        return "[" + objects.joined(separator: ",") + "]"
    }
}
