import Foundation
import HTTP
import Identity

/// One event checked and normalized for `product_analytics.ingest` (its JSON object).
struct CapturedEvent: Equatable, Sendable {
    var uuid: String
    var event: String
    var distinctID: String
    var properties: [String: JSON]
    var timestamp: String?
    var sentAt: String?
    var offset: Double?
    var set: [String: JSON]?
    var setOnce: [String: JSON]?

    var json: JSON {
        var members: [String: JSON] = [
            "uuid": .string(uuid), "event": .string(event), "distinct_id": .string(distinctID), "properties": .object(properties)
        ]
        if let timestamp { members["timestamp"] = .string(timestamp) }
        if let sentAt { members["sent_at"] = .string(sentAt) }
        if let offset { members["offset"] = .number(offset) }
        if let set { members["set"] = .object(set) }
        if let setOnce { members["set_once"] = .object(setOnce) }
        return .object(members)
    }
}

/// A capture request's body as PostHog's SDKs send it: one event, `{"api_key", "batch": […]}`
/// or a bare array; JSON, gzip (`Content-Encoding: gzip`, `?compression=gzip-js`) or a form's
/// base64 `data=` field.
struct CaptureRequest: Equatable, Sendable {
    var events: [CapturedEvent]

    /// `defaultEvent`: the name of an event that has none (`/engage/`'s person updates are `$set`).
    init(_ request: HTTPRequest, config: AnalyticsConfig, defaultEvent: String? = nil) throws(AnalyticsError) {
        let body = try Self.decodedBody(request, config: config)
        guard let json = JSON.parse(body) else { throw .invalidPayload("the body is not JSON") }
        let top: [String: JSON]
        let items: [JSON]
        switch json {
        case .array(let list):
            top = [:]
            items = list
        case .object(let members):
            top = members
            if let batch = members["batch"] {
                guard let list = batch.array else { throw .invalidPayload("batch must be an array") }
                items = list
            } else {
                items = [json]
            }
        case .null, .bool, .number, .string:
            throw .invalidPayload("the body must be an event, a batch or an array of events")
        }
        guard !items.isEmpty else { throw .invalidPayload("no events") }
        guard items.count <= config.maxBatchEvents else { throw .payloadTooLarge("a batch holds at most \(config.maxBatchEvents) events") }

        // Every key named anywhere must be the project's: a batch is one project's.
        var keys: [String] = [top["api_key"], top["token"]].compactMap { $0?.string }
        for item in items {
            keys += [item["api_key"], item["token"], item["$token"], item["properties"]?["token"]].compactMap { $0?.string }
        }
        keys += [request.queryValue("api_key"), request.queryValue("token")].compactMap { $0 }
        guard !keys.isEmpty else { throw .missingAPIKey }
        guard keys.allSatisfy({ Crypto.constantTimeEquals($0, config.projectKey) }) else { throw .invalidAPIKey }

        let sentAt = top["sent_at"]?.string
        events = try items.map { item throws(AnalyticsError) in
            var item = item
            if case .object(var members) = item, members["event"] == nil, let defaultEvent {
                members["event"] = .string(defaultEvent)
                item = .object(members)
            }
            return try Self.event(item, sentAt: sentAt, ip: config.dropIP ? nil : request.remoteAddress, config: config)
        }
    }

    /// The body with its compression and encoding undone.
    static func decodedBody(_ request: HTTPRequest, config: AnalyticsConfig) throws(AnalyticsError) -> [UInt8] {
        var body = request.body
        let compression = request.queryValue("compression")?.lowercased()
        let contentType = request.headers["Content-Type"]?.lowercased() ?? ""
        if contentType.hasPrefix("application/x-www-form-urlencoded") || body.starts(with: Array("data=".utf8)) {
            let form = HTTPRequest(method: .post, target: "/?" + String(decoding: body, as: UTF8.self))
            guard let data = form.queryValue("data") else { throw .invalidPayload("a form body needs a data field") }
            guard compression != "lz64" else { throw .invalidPayload("lz64 compression is not supported; use gzip-js") }
            guard let decoded = Data(base64Encoded: data, options: .ignoreUnknownCharacters) else { throw .invalidPayload("data is not base64") }
            body = Array(decoded)
        }
        let gzipped =
            request.headers["Content-Encoding"]?.lowercased() == "gzip" || compression == "gzip" || compression == "gzip-js" || Gzip.isGzip(body)
        if gzipped {
            do {
                body = try Gzip.inflate(body, limit: config.maxDecodedBodyBytes)
            } catch {
                switch error {
                case .tooLarge: throw .payloadTooLarge("the body inflates to more than \(config.maxDecodedBodyBytes) bytes")
                case .corrupt: throw .invalidPayload("the body is not valid gzip")
                }
            }
        }
        guard body.count <= config.maxDecodedBodyBytes else { throw .payloadTooLarge("the body is larger than \(config.maxDecodedBodyBytes) bytes") }
        return body
    }

    /// One event checked: a name, a distinct id (a string or number, in the event or its
    /// properties), an object of properties, a uuid (made when absent: such an event cannot be
    /// told from its retry).
    static func event(_ item: JSON, sentAt: String?, ip: String?, config: AnalyticsConfig) throws(AnalyticsError) -> CapturedEvent {
        guard case .object(let members) = item else { throw .invalidPayload("an event must be an object") }
        guard let name = members["event"]?.string, !name.isEmpty, name.count <= 200 else {
            throw .invalidPayload("every event needs an event name of 1 to 200 characters")
        }
        var properties: [String: JSON]
        switch members["properties"] {
        case .none, .some(.null): properties = [:]
        case .some(.object(let object)): properties = object
        case .some(.bool), .some(.number), .some(.string), .some(.array): throw .invalidPayload("properties must be an object")
        }
        let distinct = members["distinct_id"] ?? members["$distinct_id"] ?? properties["distinct_id"] ?? properties["$distinct_id"]
        guard let distinctID = distinct.flatMap(Self.distinctID), !distinctID.isEmpty, distinctID.count <= 200 else {
            throw .invalidPayload("every event needs a distinct_id of 1 to 200 characters")
        }
        let uuid: String
        switch members["uuid"] ?? properties["$uuid"] {
        case .none, .some(.null): uuid = UUID().uuidString.lowercased()
        case .some(.string(let text)):
            guard let parsed = UUID(uuidString: text) else { throw .invalidPayload("uuid is not a UUID") }
            uuid = parsed.uuidString.lowercased()
        case .some(.bool), .some(.number), .some(.array), .some(.object): throw .invalidPayload("uuid is not a UUID")
        }
        if let ip, !ip.isEmpty, properties["$ip"] == nil { properties["$ip"] = .string(ip) }
        if ip == nil { properties["$ip"] = nil }
        properties.removeValue(forKey: "token")
        var event = CapturedEvent(uuid: uuid, event: name, distinctID: distinctID, properties: properties)
        event.timestamp = members["timestamp"]?.string
        event.sentAt = members["sent_at"]?.string ?? sentAt
        event.offset = members["offset"]?.number
        event.set = try Self.merged(members["$set"], properties["$set"], name: "$set")
        event.setOnce = try Self.merged(members["$set_once"], properties["$set_once"], name: "$set_once")
        guard event.json.text.utf8.count <= config.maxEventBytes else {
            throw .payloadTooLarge("an event is larger than \(config.maxEventBytes) bytes")
        }
        return event
    }

    /// A distinct id as text: PostHog accepts numbers too, as their decimal text.
    static func distinctID(_ value: JSON) -> String? {
        switch value {
        case .string(let text): return text.trimmingCharacters(in: .whitespaces)
        case .number: return value.plainText
        case .null, .bool, .array, .object: return nil
        }
    }

    /// `$set` (or `$set_once`) from the event and from its properties, the properties' winning.
    static func merged(_ outer: JSON?, _ inner: JSON?, name: String) throws(AnalyticsError) -> [String: JSON]? {
        var result: [String: JSON]?
        for value in [outer, inner] {
            switch value {
            case .none, .some(.null): continue
            case .some(.object(let object)): result = (result ?? [:]).merging(object) { _, new in new }
            case .some(.bool), .some(.number), .some(.string), .some(.array): throw .invalidPayload("\(name) must be an object")
            }
        }
        return result
    }
}
