import Foundation
import HTTP
import Identity

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// GoTrue's HTTP hooks: the event POSTed as JSON with Standard Webhooks' headers (`webhook-id`,
/// `webhook-timestamp`, `webhook-signature`: one `v1,<HMAC-SHA256>` per secret), up to
/// `attempts` tries within `timeout` seconds (a failed connection waits `backoff`; a 429 or 503
/// with `Retry-After` tries again at once), and the answer read as GoTrue reads it.
struct HTTPHookClient {
    let url: URL
    let keys: [[UInt8]]
    let timeout: Double
    let attempts: Int
    let backoff: Double

    /// The largest answer read (GoTrue's 200 KB).
    static let responseLimit = 200 * 1024

    /// The answer's JSON (`.null` for 204), or GoTrue's error for what went wrong. `messageID`:
    /// the `webhook-id` of every attempt (a new one when nil), for an event sent again later.
    func post(_ event: JSON, messageID: String? = nil) throws -> JSON {
        let id = messageID ?? UUID().uuidString.lowercased()
        let body = Array(event.text.utf8)
        let deadline = Date().addingTimeInterval(timeout)
        let timedOut = AuthError.hook(
            status: .unprocessableContent, message: "Failed to reach hook within maximum time of \(String(format: "%f", timeout)) seconds",
            code: "hook_timeout")
        for attempt in 0..<attempts {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw timedOut }
            let answer: BlockingFetch.Answer
            switch BlockingFetch.exchange(request(body, id: id, timeout: remaining)) {
            case .success(let received):
                answer = received
            case .failure(let error):
                if error.code == .timedOut || deadline.timeIntervalSinceNow <= 0 { throw timedOut }
                guard attempt < attempts - 1 else {
                    throw AuthError.hook(status: .unprocessableContent, message: "Failed to reach hook after maximum retries", code: "hook_timeout_after_retry")
                }
                Thread.sleep(forTimeInterval: min(backoff, max(0, deadline.timeIntervalSinceNow)))
                continue
            }
            switch answer.status {
            case 204:
                return .null
            case 200, 202:
                return try Self.output(answer)
            case 429, 503:
                if let retryAfter = answer.response?.value(forHTTPHeaderField: "Retry-After"), !retryAfter.isEmpty { continue }
                throw AuthError.hook(status: .internalServerError, message: "Service currently unavailable due to hook")
            case 400:
                throw AuthError.hook(status: .internalServerError, message: "Invalid payload sent to hook")
            case 401:
                throw AuthError.hook(status: .internalServerError, message: "Hook requires authorization token")
            default:
                throw AuthError.hook(status: .internalServerError, message: "Unexpected status code returned from hook: \(answer.status)")
            }
        }
        throw AuthError.hook(status: .internalServerError, message: "Service currently unavailable due to hook")
    }

    /// A 200 or 202: JSON by its `Content-Type`, at most `responseLimit` bytes.
    static func output(_ answer: BlockingFetch.Answer) throws -> JSON {
        guard let contentType = answer.response?.value(forHTTPHeaderField: "Content-Type") else {
            throw AuthError.hook(status: .badRequest, message: "Invalid Content-Type: Missing Content-Type header", code: "hook_payload_invalid_content_type")
        }
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard mediaType == "application/json" else {
            throw AuthError.hook(
                status: .badRequest, message: "Invalid JSON response. Received content-type: \(contentType)", code: "hook_payload_invalid_content_type")
        }
        guard answer.body.count <= responseLimit else {
            throw AuthError.hook(
                status: .unprocessableContent, message: "Payload size exceeded size limit of \(responseLimit) bytes", code: "hook_payload_over_size_limit")
        }
        return try AuthHook.output(answer.body)
    }

    /// The request, signed now under the message id `id`.
    func request(_ body: [UInt8], id: String, timeout: Double) -> URLRequest {
        let timestamp = String(Int(Date().timeIntervalSince1970))
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        request.setValue(id, forHTTPHeaderField: "webhook-id")
        request.setValue(timestamp, forHTTPHeaderField: "webhook-timestamp")
        if !keys.isEmpty { request.setValue(Self.signatures(keys: keys, id: id, timestamp: timestamp, body: body), forHTTPHeaderField: "webhook-signature") }
        return request
    }

    /// Standard Webhooks' signatures: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`
    /// under each key, separated by ", ".
    static func signatures(keys: [[UInt8]], id: String, timestamp: String, body: [UInt8]) -> String {
        let signed = Array("\(id).\(timestamp).".utf8) + body
        return keys.map { "v1," + Data(Crypto.hmacSHA256(key: $0, data: signed)).base64EncodedString() }.joined(separator: ", ")
    }
}
