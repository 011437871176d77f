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
