import Foundation
import HTTP
import Identity
import Postgres

extension RealtimeService {
    /// `POST /realtime/v1/api/broadcast` `{"messages":[{topic, event, payload, private}]}`:
    /// Realtime's BroadcastController. The caller is the bearer token, else the apikey (one of
    /// the project's keys, as the gateway requires); a private message is sent only when the
    /// caller's insert policy on realtime.messages allows it for its topic (others are skipped,
    /// as Realtime skips them). 202 with no body; invalid messages: 422 with the errors by
    /// message, nothing sent.
    public func broadcastOverHTTP(_ request: HTTPRequest) -> HTTPResponse {
        let caller: Caller
        switch httpCaller(request) {
        case .success(let granted): caller = granted
        case .failure(let refusal): return refusal.response
        }
        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            return .json(.badRequest, #"{"message":"The request body is not a JSON object"}"#)
        }
        guard let list = body["messages"] as? [Any], !list.isEmpty else {
            let reason = body["messages"] == nil || (body["messages"] as? [Any])?.isEmpty == true ? "can't be blank" : "is invalid"
            return .json(.unprocessableContent, #"{"errors":{"messages":[\#(jsonString(reason))]}}"#)
        }
        var messages: [(key: TopicKey, event: String, payloadJSON: String)] = []
        var errors: [String] = []
        for item in list {
            guard let message = item as? [String: Any] else {
                errors.append(#"{"message":["is invalid"]}"#)
                continue
            }
            var fields: [String] = []
            func fail(_ name: String, _ text: String) { fields.append(#"\#(jsonString(name)):[\#(jsonString(text))]"#) }
            let topic = message["topic"] as? String
            let event = message["event"] as? String
            let payload = message["payload"] as? [String: Any]
            if message["topic"] != nil && topic == nil { fail("topic", "is invalid") } else if topic?.isEmpty ?? true { fail("topic", "can't be blank") }
            if message["event"] != nil && event == nil { fail("event", "is invalid") } else if event?.isEmpty ?? true { fail("event", "can't be blank") }
            var payloadJSON = "{}"
            if message["payload"] != nil && payload == nil {
                fail("payload", "is invalid")
            } else if let payload, !payload.isEmpty {
                payloadJSON = JWT.serialize(payload)
                if payloadJSON.utf8.count > config.maxPayloadBytes { fail("payload", "Payload size exceeds tenant limit") }
            } else {
                fail("payload", "can't be blank")
            }
            let isPrivate: Bool
            switch message["private"] {
            case nil, is NSNull: isPrivate = false
            case let flag as NSNumber where String(cString: flag.objCType) == "c" || flag === NSNumber(value: true) || flag === NSNumber(value: false):
                isPrivate = flag.boolValue
            default:
                isPrivate = false
                fail("private", "is invalid")
            }
            errors.append("{" + fields.joined(separator: ",") + "}")
            if fields.isEmpty, let topic, let event { messages.append((TopicKey(name: topic, isPrivate: isPrivate), event, payloadJSON)) }
        }
        guard messages.count == list.count else {
            return .json(.unprocessableContent, #"{"errors":{"messages":[\#(errors.joined(separator: ","))]}}"#)
        }

        if let refusal = spendHTTPMessages(messages.count) { return refusal }
        var allowed: [String: Bool] = [:]
        for message in messages {
            if message.key.isPrivate {
                if allowed[message.key.name] == nil {
                    do {
                        allowed[message.key.name] = try mayWrite(topic: message.key.name, extension: "broadcast", caller: caller)
                    } catch {
                        logger.error("realtime: could not check a write policy", metadata: ["topic": "\(message.key.name)", "error": "\(logText(error))"])
                        allowed[message.key.name] = false
                    }
                }
                guard allowed[message.key.name] == true else { continue }
            }
            broadcast(message.key, event: message.event, payloadJSON: message.payloadJSON, sender: nil)
        }
        return HTTPResponse(status: HTTPStatus(code: 202))
    }

    /// `POST /realtime/v1/api/broadcast/{topic}/events/{event}[?private=true]` with the payload
    /// as the body (realtime-py's `http_send`): Realtime's BroadcastSingleController. A private
    /// topic the caller may not write: 403.
    public func broadcastOneOverHTTP(_ request: HTTPRequest) -> HTTPResponse {
        let caller: Caller
        switch httpCaller(request) {
        case .success(let granted): caller = granted
        case .failure(let refusal): return refusal.response
        }
        let parts = request.path.dropFirst("/realtime/v1/api/broadcast/".count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1] == "events", !parts[0].isEmpty, !parts[2].isEmpty,
            let topic = String(parts[0]).removingPercentEncoding, let event = String(parts[2]).removingPercentEncoding
        else { return .json(.notFound, #"{"message":"not found"}"#) }
        let isPrivate = request.queryValue("private") == "true"
        guard !request.body.isEmpty, let payload = try? JSONSerialization.jsonObject(with: Data(request.body), options: [.fragmentsAllowed]),
            !(payload is NSNull)
        else { return .json(.unprocessableContent, #"{"errors":{"payload":["can't be blank"]}}"#) }
        let payloadJSON = JWT.serialize(payload)
        guard payloadJSON.utf8.count <= config.maxPayloadBytes else {
            return .json(.unprocessableContent, #"{"errors":{"payload":["Payload size exceeds tenant limit"]}}"#)
        }
        if isPrivate {
            let allowed: Bool
            do {
                allowed = try mayWrite(topic: topic, extension: "broadcast", caller: caller)
            } catch {
                logger.error("realtime: could not check a write policy", metadata: ["topic": "\(topic)", "error": "\(logText(error))"])
                return .json(.unprocessableContent, #"{"message":"RLS policy error"}"#)
            }
            guard allowed else { return .json(.forbidden, #"{"message":"Unauthorized"}"#) }
        }
        if let refusal = spendHTTPMessages(1) { return refusal }
        broadcast(TopicKey(name: topic, isPrivate: isPrivate), event: event, payloadJSON: payloadJSON, sender: nil)
        return HTTPResponse(status: HTTPStatus(code: 202))
    }

    /// Realtime's tenant budget for messages sent over HTTP (`maxEventsPerSecond` a second, on
    /// this server): nil when `count` more fit, else its 429, and none of them is sent.
    private func spendHTTPMessages(_ count: Int) -> HTTPResponse? {
        let now = Date().timeIntervalSince1970
        let fits = httpMessages.withLock { window -> Bool in
            if now - window.start >= 1 { window = (now, 0) }
            guard window.count + count <= config.maxEventsPerSecond else { return false }
            window.count += count
            return true
        }
        guard !fits else { return nil }
        var response = HTTPResponse.json(.tooManyRequests, #"{"message":"You have exceeded your rate limit"}"#)
        response.headers.replace("Retry-After", "1")
        return response
    }

    struct HTTPRefusal: Error {
        let response: HTTPResponse
    }

    /// The caller of a broadcast request: the bearer token, else the apikey, which must be one
    /// of the project's keys (as the gateway requires). Realtime's 401 otherwise.
    private func httpCaller(_ request: HTTPRequest) -> Result<Caller, HTTPRefusal> {
        let unauthorized = HTTPRefusal(response: .json(.unauthorized, #"{"message":"Unauthorized"}"#))
        guard let apikey = request.headers["apikey"],
            Crypto.constantTimeEquals(Array(apikey.utf8), Array(config.keys.anonKey.utf8))
                || Crypto.constantTimeEquals(Array(apikey.utf8), Array(config.keys.serviceRoleKey.utf8))
        else { return .failure(unauthorized) }
        var token = apikey
        if let header = request.headers["authorization"], !header.isEmpty {
            let parts = header.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return .failure(unauthorized) }
            token = String(parts[1])
        }
        guard case .success(let granted) = authorize(token) else { return .failure(unauthorized) }
        return .success(granted.caller)
    }
}
